"""A trained navigator's weights file in place of the shipped one (``--navigator-weights``): the
agent's tree names the file by its hash, every learned navigator of the built agent runs it, the
agents that do not walk with it are left as they were, and a bad, stale or misplaced file is
refused with the reason before anything runs."""

from __future__ import annotations

import json
from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from mrsteve.agent.config import ExplorerAgentConfig, ExplorerConfig
from mrsteve.agent.factory import agent_config, build_agent, explorer_agent_config
from mrsteve.control.learned_navigator import (
    SHIPPED_NAVIGATOR,
    LearnedNavigator,
    NavigatorArchitecture,
    NavigatorWeights,
    load_shipped_navigator,
)
from mrsteve.eval.exploration import ExplorationTaskConfig
from mrsteve.eval.memory_tasks import MemoryTasksConfig


def small_weights(seed: int = 0) -> NavigatorWeights:
    architecture = NavigatorArchitecture(channels=(4, 8), strides=(4, 4), dim=16, context=4,
                                         heads=2, mlp_dim=16, goal_hidden=8)
    rng = np.random.default_rng(seed)
    parameters = {name: rng.normal(0.0, 0.2, shape).astype(np.float32)
                  for name, shape in architecture.parameter_shapes().items()}
    return NavigatorWeights(architecture, parameters, {"made by": "the test"})


@pytest.fixture
def trained(tmp_path):
    weights = small_weights()
    path = tmp_path.resolve() / "navigator.npz"
    weights.save(path)
    return str(path), weights.sha256


def learned_navigators(agent) -> list[LearnedNavigator]:
    parts = [getattr(agent, "navigator", None), agent.explorer.navigator]
    return [part for part in parts if isinstance(part, LearnedNavigator)]


def data_files(tree) -> list[str]:
    return [path for path, _ in tree.data]


@pytest.mark.parametrize(("name", "walkers"), [("mrsteve", 2), ("mrsteve-tc", 2), ("pmc-fm", 1)])
def test_every_learned_navigator_of_the_agent_runs_the_given_weights(trained, name, walkers,
                                                                    monkeypatch):
    """Travel and the explorer's low level alike (the Plan4MC-style explorer keeps its straight
    walking, so only the travel runs the file); the tree names the file by its absolute path, so
    a worker started elsewhere finds it."""
    path, sha256 = trained
    monkeypatch.chdir(Path(path).parent)
    tree = agent_config(name, parts="stand-in", navigator="learned",
                        navigator_weights=Path(path).name)
    assert (tree.navigator_weights, tree.navigator_weights_sha256) == (path, sha256)
    assert SHIPPED_NAVIGATOR not in data_files(tree) and path in tree.description
    navigators = learned_navigators(build_agent(tree))
    assert len(navigators) == walkers
    assert {navigator.weights.sha256 for navigator in navigators} == {sha256}
    shipped = agent_config(name, parts="stand-in", navigator="learned")
    assert shipped.navigator_weights is None and SHIPPED_NAVIGATOR in data_files(shipped)
    assert {navigator.weights.sha256 for navigator in learned_navigators(build_agent(shipped))} \
        == {load_shipped_navigator().sha256}


def test_the_explorers_that_walk_with_the_learned_navigator_run_the_weights_others_ignore_them(
        trained):
    path, sha256 = trained
    tree = explorer_agent_config("count-based", navigator="learned", navigator_weights=path)
    assert tree.navigator_weights_sha256 == sha256 and SHIPPED_NAVIGATOR not in data_files(tree)
    assert [n.weights.sha256 for n in learned_navigators(build_agent(tree))] == [sha256]
    for name in ("count-based-straight", "plan4mc-straight", "go-explore"):
        other = explorer_agent_config(name, navigator="learned", navigator_weights=path)
        assert other == explorer_agent_config(name, navigator="learned")
    assert agent_config("steve1", parts="stand-in", navigator="learned",
                        navigator_weights=path) == agent_config(
        "steve1", parts="stand-in", navigator="learned")


def test_weights_for_an_agent_that_walks_with_the_depth_navigator_are_refused(trained):
    path, _ = trained
    with pytest.raises(ValueError, match="for the learned navigator; give navigator 'learned'"):
        agent_config("mrsteve", parts="stand-in", navigator_weights=path)
    with pytest.raises(ValueError, match="for the learned navigator; give navigator 'learned'"):
        MemoryTasksConfig(parts="stand-in", navigator_weights=path)
    with pytest.raises(ValueError, match="for the learned navigator; give navigator 'learned'"):
        ExplorationTaskConfig(parts="stand-in", navigator_weights=path)
    with pytest.raises(ValueError, match="but the agent walks with depth"):
        replace(agent_config("mrsteve", parts="stand-in"), navigator_weights=path)
    with pytest.raises(ValueError, match="but the agent walks with straight"):
        ExplorerAgentConfig("plan4mc-straight", explorer=ExplorerConfig("plan4mc", "straight"),
                            navigator_weights=path)


def test_a_bad_file_is_refused_and_a_file_changed_after_its_tree_was_made_too(trained, tmp_path):
    bad = tmp_path / "bad.npz"
    bad.write_text("not an archive")
    with pytest.raises(ValueError, match="not a navigator weights file"):
        MemoryTasksConfig(navigator="learned", navigator_weights=str(bad))
    with pytest.raises(ValueError, match="not a navigator weights file"):
        ExplorationTaskConfig(navigator="learned", navigator_weights=str(bad))
    path, sha256 = trained
    tree = agent_config("mrsteve", parts="stand-in", navigator="learned", navigator_weights=path)
    small_weights(seed=1).save(path)  # retrained in place after the sweep was set up
    with pytest.raises(ValueError, match=f"holds other weights .* than the configuration names "
                                         f"\\({sha256}\\)"):
        build_agent(tree)


def test_eval_runs_an_explorer_on_the_weights_and_its_summary_names_them(trained, tmp_path):
    from mrsteve.cli import app

    path, sha256 = trained
    summary_path = tmp_path / "explore.json"
    result = CliRunner().invoke(app, [
        "eval", "exploration", "--navigator", "learned", "--navigator-weights", path,
        "--episodes", "1", "--steps", "40", "--json", str(summary_path), "--no-progress"])
    assert result.exit_code == 0, result.output
    agent = json.loads(summary_path.read_text())["config"]["agent"]
    assert (agent["navigator_weights"], agent["navigator_weights_sha256"]) == (path, sha256)
    assert agent["explorer"]["navigator"] == "learned"
    refused = CliRunner().invoke(app, [
        "eval", "exploration", "--parts", "stand-in", "--navigator-weights", path, "--out",
        str(tmp_path / "run"), "--no-progress"])
    assert refused.exit_code == 2 and "give navigator 'learned'" in refused.output
    assert "Traceback" not in refused.output and not (tmp_path / "run").exists()


@pytest.mark.parametrize("option", [("exploration", "--navigator", "learned",
                                     "--navigator-weights"), ("navigation", "--navigator-weights")])
def test_a_missing_weights_file_is_named_before_any_episode_runs(tmp_path, option):
    from mrsteve.cli import app

    missing = str(tmp_path / "nope.npz")
    result = CliRunner().invoke(app, ["eval", *option, missing, "--out", str(tmp_path / "run"),
                                      "--no-progress"])
    assert result.exit_code == 2 and f"no navigator weights file: {missing}" in result.output
    assert "could not write" not in result.output and "Traceback" not in result.output
    assert not (tmp_path / "run").exists()
