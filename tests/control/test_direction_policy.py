"""Plan4MC's high level as trained: an LSTM over the position relative to the start picks one of
four directions (appendix "Exploration Experiments Details"), run by numpy."""

from __future__ import annotations

import numpy as np
import pytest

from mrsteve.agent.factory import explorer_agent_config
from mrsteve.control.direction_policy import (
    DIRECTIONS,
    SHIPPED_DIRECTION_POLICY,
    DirectionPolicy,
    load_shipped_direction_policy,
)
from mrsteve.control.goals import DirectionConfig, LearnedDirectionGoalSelector
from mrsteve.digests import data_digest
from mrsteve.train.direction import grid_cells


def test_the_trained_policy_enters_a_new_cell_nearly_every_decision_of_its_training_horizon():
    """PPO maximised distinct cells over 40 decisions (Plan4MC's episodes) on the 11 x 11 grid."""
    weights = load_shipped_direction_policy()
    horizon = weights.info["training"]["decisions"]
    cells = grid_cells(weights, episodes=128, decisions=horizon, seed=2024)
    assert weights.architecture.grid == 11 and horizon == 40
    assert cells.mean() >= 0.9 * (horizon + 1)


def test_the_trained_policy_loses_track_of_visited_cells_beyond_its_training_horizon():
    """The paper: the LSTM "struggled to keep track of visited locations as the trajectory grew
    longer"; past its 40 decisions most of its decisions enter cells it has visited."""
    weights = load_shipped_direction_policy()
    within = grid_cells(weights, episodes=128, decisions=40, seed=2024).mean()
    beyond = grid_cells(weights, episodes=128, decisions=120, seed=2024).mean()
    assert (beyond - within) / 80 < 0.5 and beyond < 0.75 * 121


def test_the_selector_feeds_the_lstm_the_position_from_the_start_in_cells(monkeypatch):
    read = []

    def choose(self, position, rng):
        read.append(position)
        return 2  # east

    monkeypatch.setattr(DirectionPolicy, "choose", choose)
    selector = LearnedDirectionGoalSelector(load_shipped_direction_policy(),
                                            DirectionConfig(cell_size=10.0))
    start = (55.0, 64.0, 55.0, 0.0, 0.0)
    selector.reset(start, np.random.default_rng(0))
    assert selector.propose(start, 0) == (65.0, 55.0)  # the eastern neighbour's centre
    selector.give_up(1)
    assert selector.propose((75.0, 64.0, 50.0, 0.0, 0.0), 2) == (85.0, 55.0)
    assert read == [(0.0, 0.0), (2.0, -0.5)]


def test_the_selector_goes_to_neighbouring_cell_centres_and_repeats_itself_under_a_seed():
    weights = load_shipped_direction_policy()

    def goals(seed: int) -> list[tuple[float, float]]:
        selector = LearnedDirectionGoalSelector(weights, DirectionConfig(cell_size=9.0))
        x, z = 50.5, 50.5
        selector.reset((x, 64.0, z, 0.0, 0.0), np.random.default_rng(seed))
        out = []
        for t in range(60):
            goal = selector.propose((x, 64.0, z, 0.0, 0.0), t)
            step = (round((goal[0] - x) / 9.0), round((goal[1] - z) / 9.0))
            assert step in DIRECTIONS  # one cell away, from a cell centre
            x, z = goal  # the low level arrives
            out.append(goal)
        return out

    first = goals(7)
    assert first == goals(7) and first != goals(8)
    assert len(set(first)) > 30  # it explores, as on the grid it was trained on


def test_the_explorer_tree_names_the_weights_it_runs():
    tree = explorer_agent_config("rnn", navigator="learned")
    assert (SHIPPED_DIRECTION_POLICY, data_digest(SHIPPED_DIRECTION_POLICY)) in tree.data
    assert tree.explorer.kind == "rnn"
    straight = explorer_agent_config("rnn-straight", navigator="learned")
    assert straight.explorer.navigator == "straight"
    plan4mc = explorer_agent_config("plan4mc", navigator="learned")
    assert all(path != SHIPPED_DIRECTION_POLICY for path, _ in plan4mc.data)


@pytest.mark.parametrize("batch", [1, 5])
def test_a_batch_reads_each_agent_apart(batch):
    weights = load_shipped_direction_policy()
    positions = np.random.default_rng(0).uniform(-5, 5, (12, batch, 2)).astype(np.float32)
    together = DirectionPolicy(weights, batch=batch)
    joint = np.stack([together.logits(p) for p in positions])
    for agent in range(batch):
        alone = DirectionPolicy(weights)
        single = np.stack([alone.logits(p[agent:agent + 1])[0] for p in positions])
        np.testing.assert_allclose(single, joint[:, agent], atol=1e-5)


def test_a_trained_file_takes_the_shipped_weights_place_and_the_tree_names_it(tmp_path):
    from mrsteve.agent.config import ExplorerConfig
    from mrsteve.control.direction_policy import DirectionWeights
    from mrsteve.control.registry import explorer_spec
    from mrsteve.digests import plain

    shipped = load_shipped_direction_policy()
    trained = DirectionWeights(shipped.architecture,
                               {name: value * np.float32(0.5)
                                for name, value in shipped.parameters.items()}, {})
    path = tmp_path / "direction.npz"
    trained.save(path)
    tree = explorer_agent_config("rnn", navigator="learned", direction_weights=str(path))
    assert tree.explorer.direction.weights == str(path.resolve())
    assert tree.explorer.direction.weights_sha256 == trained.sha256
    assert all(file != SHIPPED_DIRECTION_POLICY for file, _ in tree.data)
    explorer = explorer_spec("rnn").make(tree.explorer, navigator=None)
    assert isinstance(tree.explorer, ExplorerConfig)
    assert explorer.selector._policy.weights.sha256 == trained.sha256
    # the default tree has no trace of the option; the scripted picker ignores the file
    assert "weights" not in plain(explorer_agent_config("rnn").explorer.direction)
    assert (explorer_agent_config("plan4mc", direction_weights=str(path))
            == explorer_agent_config("plan4mc"))
    with pytest.raises(ValueError, match="no direction policy weights file"):
        explorer_agent_config("rnn", direction_weights=str(tmp_path / "missing.npz"))
