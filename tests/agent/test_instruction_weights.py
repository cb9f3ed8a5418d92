"""A trained instruction policy's weights file in place of the shipped one
(``--instruction-weights``): the tree names the file by its path and hash instead of the shipped
file, the built policy runs it, trees without it keep their digests, and a misplaced or changed
file is refused with the reason."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from mrsteve.agent.factory import agent_config, build_agent
from mrsteve.control.instruction import (
    SHIPPED_INSTRUCTION_POLICY,
    InstructionWeights,
    load_shipped_instruction_policy,
)
from mrsteve.digests import plain
from mrsteve.eval.instruction import INSTRUCTION, InstructionTaskConfig
from mrsteve.eval.memory_tasks import MemoryTasksConfig


def retrained(seed: int) -> InstructionWeights:
    """The shipped policy with its parameters nudged: another file of the same architecture."""
    shipped = load_shipped_instruction_policy()
    rng = np.random.default_rng(seed)
    parameters = {name: value + rng.normal(0.0, 1e-3, value.shape).astype(np.float32)
                  for name, value in shipped.parameters.items()}
    return InstructionWeights(shipped.architecture, parameters, dict(shipped.info))


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    weights = retrained(0)
    path = tmp_path_factory.mktemp("instruction").resolve() / "instruction.npz"
    weights.save(path)
    return str(path), weights.sha256


@pytest.mark.parametrize("name", ["steve1", "mrsteve"])
def test_the_tree_names_the_file_and_the_policy_runs_it(trained, name):
    path, sha256 = trained
    tree = agent_config(name, instruction_weights=path)
    assert (tree.instruction.weights, tree.instruction.weights_sha256) == (path, sha256)
    assert SHIPPED_INSTRUCTION_POLICY not in dict(tree.data)
    assert path in tree.description
    agent = build_agent(tree)
    assert agent.policy.weights.sha256 == sha256


def test_trees_without_a_file_are_those_of_before():
    tree = agent_config("steve1")
    assert SHIPPED_INSTRUCTION_POLICY in dict(tree.data)
    assert "weights" not in plain(tree.instruction)


def test_a_file_changed_after_the_tree_was_made_is_refused(trained, tmp_path):
    path = tmp_path / "instruction.npz"
    retrained(1).save(path)
    tree = agent_config("steve1", instruction_weights=str(path))
    changed = replace(tree, instruction=replace(tree.instruction, weights_sha256=trained[1]))
    with pytest.raises(ValueError, match="holds other weights"):
        build_agent(changed)


def test_weights_for_another_policy_are_refused(trained):
    with pytest.raises(ValueError, match="for the learned instruction policy"):
        agent_config("steve1", instruction_policy="scripted", instruction_weights=trained[0])
    with pytest.raises(ValueError, match="for the learned instruction policy"):
        MemoryTasksConfig(parts="stand-in", instruction_weights=trained[0])
    with pytest.raises(ValueError, match="leaves out"):
        InstructionTaskConfig(instruction_policy="scripted", instruction_weights=trained[0])


def test_the_instruction_experiment_runs_the_file_in_the_learned_rows_only(trained):
    config = InstructionTaskConfig(item="log", placement="near", parts="stand-in",
                                   instruction_policy="scripted,learned",
                                   instruction_weights=trained[0])
    trees = {g.spec.agent.instruction_policy: g.spec.agent for g in INSTRUCTION.groups(config)}
    assert trees["learned"].instruction.weights == trained[0]
    assert trees["scripted"].instruction.weights is None
