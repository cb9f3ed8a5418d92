"""Training Plan4MC's low level (torch): the replay memory, the walks' rewards, numpy inference
matching torch, and a tiny run that resumes."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from mrsteve.control.dqn_navigator import DQN_ACTIONS, DQNArchitecture, QNetwork
from mrsteve.train.dqn import (
    DQNTrainingConfig,
    GoalWalker,
    ReplayMemory,
    build_q_network,
    export_weights,
    train_dqn_navigator,
)

TINY = DQNTrainingConfig(steps=400, round_steps=200, goals_per_world=2, max_goal_steps=60,
                         replay=300, warm_up=50, batch=8, target_every=100, epsilon_steps=300,
                         validation_goals=2)


def test_numpy_inference_matches_the_torch_q_network():
    architecture = DQNArchitecture()
    torch.manual_seed(0)
    model = build_q_network(architecture).eval()
    rng = np.random.default_rng(0)
    rgb = rng.integers(0, 256, (3, 40, 64, 3), dtype=np.uint8)
    goal = rng.normal(size=(3, 6)).astype(np.float32)
    with torch.no_grad():
        expected = model(torch.from_numpy(rgb), torch.from_numpy(goal)).numpy()
    got = QNetwork(export_weights(model, architecture, {}))(rgb, goal)
    np.testing.assert_allclose(got, expected, atol=1e-4)


def test_the_replay_memory_keeps_the_last_transitions_in_a_ring():
    memory = ReplayMemory(3, (2, 2))
    for i in range(5):
        frame = np.full((2, 2, 3), i, np.uint8)
        memory.add(frame, np.full(6, i, np.float32), i % 2, float(i), frame + 1,
                   np.zeros(6, np.float32), i == 4)
    assert memory.size == 3 and sorted(memory.reward.tolist()) == [2.0, 3.0, 4.0]
    batch = memory.sample(np.random.default_rng(0), 50)
    assert set(batch["reward"].tolist()) <= {2.0, 3.0, 4.0}
    assert np.all(batch["next_rgb"][:, 0, 0, 0] == batch["rgb"][:, 0, 0, 0] + 1)
    assert np.all(batch["terminal"] == (batch["reward"] == 4.0))


def test_a_walk_is_rewarded_for_progress_and_arrival_and_arrival_ends_the_goal():
    transitions = []
    config = dataclasses.replace(TINY, max_goal_steps=200)
    walker = GoalWalker(config, np.random.default_rng(3),
                        lambda rgb, goal, step: 0,  # always forward
                        lambda *transition: transitions.append(transition))
    walker.walk_goals(4)
    assert walker.goals == 4 and len(transitions) == walker.steps > 0
    rewards = np.array([t[3] for t in transitions])
    terminal = np.array([t[6] for t in transitions])
    assert np.all(np.abs(rewards[~terminal]) < 1.0)  # a step moves well under a block
    assert np.all(rewards[terminal] > config.success_reward - 1.0)
    assert terminal.sum() == walker.reached
    assert all(t[2] == 0 and t[0].shape == (40, 64, 3) and t[1].shape == (6,)
               for t in transitions)


def test_a_tiny_run_writes_its_weights_and_resumes_after_its_last_round(tmp_path):
    said = []
    short = dataclasses.replace(TINY, steps=200, validation_goals=0)
    train_dqn_navigator(tmp_path / "run", short, progress=False, say=said.append)
    result = train_dqn_navigator(tmp_path / "run", TINY, progress=False, say=said.append)
    assert any("resuming after round 1" in line for line in said)
    rounds = [row for row in result.history if row["stage"] == "dqn"]
    assert [row["steps"] for row in rounds] == [200, 400]
    assert [row["stage"] for row in result.history][-1] == "validation"
    assert (tmp_path / "run" / "dqn_navigator.npz").exists()
    assert result.weights.architecture.actions == len(DQN_ACTIONS)


@pytest.mark.parametrize("changes", [{"steps": 0}, {"batch": 400}, {"epsilon_end": 1.5}])
def test_a_bad_recipe_is_refused(changes):
    with pytest.raises(ValueError):
        dataclasses.replace(TINY, **changes)
