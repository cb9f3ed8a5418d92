"""One registry per kind of part: an entry is the whole of a part's name (the command line's
choices and errors, the tree's validation, its data files and the factory's dispatch read it),
and the weights a tree's learned navigator runs with are read once per process from the path the
tree records."""

from __future__ import annotations

import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

import mrsteve.nn
from mrsteve.agent.config import AgentConfig, NavigatorAgentConfig
from mrsteve.agent.factory import (
    agent_config,
    build_agent,
    explorer_agent_config,
    navigator_agent_config,
)
from mrsteve.agent.registry import AGENTS, EXPLORERS, INSTRUCTION_POLICIES
from mrsteve.control.learned_navigator import (
    SHIPPED_NAVIGATOR,
    LearnedNavigator,
    NavigatorWeights,
    load_shipped_navigator,
)
from mrsteve.control.navigation import StraightNavigator
from mrsteve.control.registry import (
    AGENT_NAVIGATORS,
    EXPLORER_KINDS,
    LEARNED_NAVIGATORS,
    NAVIGATORS,
    NavigatorSpec,
)
from mrsteve.digests import PACKAGE_ROOT
from mrsteve.eval.memory_tasks import MemoryTasksConfig
from mrsteve.naming import Selection, described
from mrsteve.perception import ENCODERS


class CarefulNavigator(StraightNavigator):
    """A navigator that is not shipped: walks straight, by another name."""


CAREFUL = NavigatorSpec("careful", "A test navigator: the heuristic by another name",
                        CarefulNavigator)


@pytest.fixture
def careful():
    """The careful navigator, registered for the test only."""
    NAVIGATORS.register(CAREFUL)
    yield CAREFUL.name
    NAVIGATORS.unregister(CAREFUL.name)


def weights_file(path: Path, scale: float = 1.0) -> str:
    """The shipped navigator's weights scaled by ``scale``, saved at ``path`` (a trained file)."""
    shipped = load_shipped_navigator()
    scaled = {name: value * np.float32(scale) for name, value in shipped.parameters.items()}
    NavigatorWeights(shipped.architecture, scaled, {"made by": "the test"}).save(path)
    return str(path)


@pytest.fixture
def reads(monkeypatch):
    """The weights files read from disk from now on (a fresh per-process cache)."""
    monkeypatch.setattr(mrsteve.nn, "_read", {})
    paths: list[Path] = []
    read = mrsteve.nn.read_weights

    def counting(path, *args, **kwargs):
        paths.append(Path(path).resolve())
        return read(path, *args, **kwargs)

    monkeypatch.setattr(mrsteve.nn, "read_weights", counting)
    return paths


def test_each_registry_holds_the_names_descriptions_and_data_of_its_parts():
    assert list(NAVIGATORS) == ["depth", "straight", "learned", "dqn", "vpt-nav"]
    assert list(AGENT_NAVIGATORS) == ["depth", "learned", "vpt-nav"]
    assert list(LEARNED_NAVIGATORS) == ["learned", "dqn"]
    assert list(EXPLORER_KINDS) == ["count-based", "task-conditioned", "plan4mc", "rnn",
                                    "go-explore"]
    assert list(INSTRUCTION_POLICIES) == ["scripted", "learned", "steve1"]
    assert list(ENCODERS) == ["semantic", "pixels", "mineclip"]
    released = {name: entry.files for registry in (NAVIGATORS, INSTRUCTION_POLICIES, ENCODERS)
                for name, entry in registry.items() if entry.files}
    assert released == {"vpt-nav": ("vpt-nav",), "steve1": ("steve1", "steve1-prior", "mineclip"),
                        "mineclip": ("mineclip",)}  # the parts of mrsteve.minecraft
    registries = (NAVIGATORS, EXPLORER_KINDS, INSTRUCTION_POLICIES, ENCODERS, AGENTS, EXPLORERS)
    for registry in registries:
        for name, entry in registry.items():
            assert entry.name == name and entry.description
    for registry in (ENCODERS, INSTRUCTION_POLICIES):
        for entry in registry.values():
            assert all((PACKAGE_ROOT / path).is_file() for path in entry.data)
    for entry in EXPLORER_KINDS.values():
        assert all((PACKAGE_ROOT / path).is_file() for path in entry.data_files())
    assert NAVIGATORS["learned"].data_files() == (SHIPPED_NAVIGATOR,)
    assert NAVIGATORS["learned"].data_files(trained=True) == ()
    assert described(AGENT_NAVIGATORS).startswith("depth (The VPT-Nav stand-in")
    assert ", learned (VPT-Nav's recipe" in described(AGENT_NAVIGATORS)


def test_a_selection_follows_its_registry():
    table = {"a": 1, "b": 2}
    odd = Selection(table, lambda value: value % 2 == 1)
    assert list(odd) == ["a"] and "b" not in odd and len(odd) == 1
    table["c"] = 3
    assert list(odd) == ["a", "c"] and odd["c"] == 3
    with pytest.raises(KeyError):
        odd["b"]  # noqa: B018


def test_a_navigator_entry_is_all_it_takes_to_build_agents_with_it(careful):
    """Validation, the tree and the factory's dispatch of every kind of agent read the one
    entry."""
    assert careful in AGENT_NAVIGATORS and careful not in LEARNED_NAVIGATORS
    MemoryTasksConfig(navigator=careful)  # the experiments' options accept it
    tree = agent_config("mrsteve", parts="stand-in", navigator=careful)
    assert (tree.navigator_kind, tree.explorer.navigator) == (careful, careful)
    agent = build_agent(tree)
    assert type(agent.navigator) is CarefulNavigator
    assert type(agent.explorer.navigator) is CarefulNavigator
    explorer = explorer_agent_config("count-based", navigator=careful)
    assert explorer.explorer.navigator == careful and "careful navigator" in explorer.description
    assert type(build_agent(explorer).explorer.navigator) is CarefulNavigator
    alone = navigator_agent_config(careful)
    assert alone.description == CAREFUL.description
    assert type(build_agent(alone).navigator) is CarefulNavigator
    with pytest.raises(ValueError, match="only a learned navigator \\(learned, dqn\\) takes weights"):
        NavigatorAgentConfig(careful, weights="nav.npz")


def test_the_command_line_offers_a_registered_navigator(careful):
    from mrsteve.cli.eval import make_command
    from mrsteve.eval.registry import EXPERIMENTS

    option = make_command(EXPERIMENTS["navigation"]).__signature__.parameters["navigator"]
    assert "Known: depth, straight, learned, dqn, careful" in option.annotation.__metadata__[0].help


def test_a_navigator_not_registered_is_refused_listing_those_that_are(careful, tmp_path):
    from mrsteve.cli import app

    with pytest.raises(ValueError, match="unknown navigator 'reckless'; known: depth, straight, "
                                         "learned, dqn, vpt-nav, careful"):
        replace(agent_config("mrsteve", parts="stand-in"), navigator_kind="reckless")
    with pytest.raises(ValueError, match="unknown navigator 'straight'; known: depth, learned, "
                                         "vpt-nav, careful"):
        agent_config("mrsteve", parts="stand-in", navigator="straight")
    result = CliRunner().invoke(app, ["eval", "memory-tasks", "--navigator", "reckless",
                                      "--out", str(tmp_path / "run"), "--no-progress"])
    assert result.exit_code == 2
    assert "unknown navigator 'reckless'; known: depth, learned, vpt-nav, careful" in result.output
    assert not (tmp_path / "run").exists()


@pytest.fixture
def second():
    """A second learned navigator, registered for the test only."""
    spec = NAVIGATORS.register(NavigatorSpec("second", "A second learned navigator",
                                             LearnedNavigator, weights=SHIPPED_NAVIGATOR))
    yield spec
    NAVIGATORS.unregister(spec.name)


def test_a_learned_navigator_entry_runs_on_the_weights_it_names(second, tmp_path):
    """A second learned navigator is one entry: its shipped weights are a data file of its trees
    and the weights its navigators run with."""
    path = weights_file(tmp_path / "second.npz", 0.5)
    tree = agent_config("mrsteve", parts="stand-in", navigator="second")
    assert SHIPPED_NAVIGATOR in dict(tree.data)
    assert type(build_agent(tree).navigator) is LearnedNavigator
    trained = agent_config("mrsteve", parts="stand-in", navigator="second", navigator_weights=path)
    agent = build_agent(trained)
    assert agent.navigator.weights.sha256 == trained.navigator_weights_sha256
    assert trained.navigator_weights_sha256 != load_shipped_navigator().sha256
    assert agent.explorer.navigator.weights is agent.navigator.weights


def test_a_weights_file_is_read_once_per_process_for_every_episode(tmp_path, reads):
    """Making the trees and building the agent of every episode (as a worker does) read the file
    once; a file replaced since is read again, and refused if it no longer matches the tree."""
    path = Path(weights_file(tmp_path / "navigator.npz", 0.5))
    trees = [agent_config("mrsteve", parts="stand-in", navigator="learned",
                          navigator_weights=str(path)),
             explorer_agent_config("count-based", navigator="learned",
                                   navigator_weights=str(path)),
             navigator_agent_config("learned", weights=str(path))]
    agents = [build_agent(tree) for _ in range(5) for tree in trees]
    assert reads.count(path.resolve()) == 1
    weights = {id(agent.navigator.weights) for agent in agents if hasattr(agent, "navigator")}
    assert len(weights) == 1  # one copy shared by every episode
    weights_file(path, 0.25)  # retrained in place
    with pytest.raises(ValueError, match="holds other weights"):
        build_agent(trees[0])
    assert reads.count(path.resolve()) == 2


def test_the_shipped_weights_are_read_once_from_the_path_the_tree_records(reads):
    tree = agent_config("mrsteve", parts="stand-in", navigator="learned")
    assert SHIPPED_NAVIGATOR in dict(tree.data)
    for _ in range(4):
        build_agent(tree)
    assert reads.count((PACKAGE_ROOT / SHIPPED_NAVIGATOR).resolve()) == 1
    without = AgentConfig(**{**tree.__dict__, "data": tuple(
        (path, sha) for path, sha in tree.data if path != SHIPPED_NAVIGATOR)})
    with pytest.raises(ValueError, match="records no weights for its learned navigator"):
        build_agent(without)


@pytest.mark.parametrize("first", ["mrsteve.control.registry:NAVIGATORS",
                                   "mrsteve.perception:ENCODERS", "mrsteve.agent.registry:AGENTS"])
def test_every_built_in_plug_in_registers_whichever_registry_is_read_first(first):
    """The package's own plug-ins (the released-weights parts of mrsteve.minecraft) load without
    an import cycle, whichever registry a fresh process reads first."""
    module, registry = first.split(":")
    script = (f"from {module} import {registry}; list({registry}); "
              "from mrsteve.control.registry import NAVIGATORS; "
              "from mrsteve.perception import ENCODERS; "
              "from mrsteve.agent.registry import INSTRUCTION_POLICIES; "
              "assert 'vpt-nav' in NAVIGATORS and 'mineclip' in ENCODERS "
              "and 'steve1' in INSTRUCTION_POLICIES")
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                            cwd=PACKAGE_ROOT.parent, check=False)
    assert result.returncode == 0 and result.stderr == "", result.stderr
