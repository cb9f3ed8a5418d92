"""Training Plan4MC's high level (torch): the grid it learns on, numpy inference matching torch,
and a tiny PPO run that learns, resumes and repeats itself."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from mrsteve.control.direction_policy import DirectionArchitecture, DirectionPolicy
from mrsteve.train.direction import (
    DirectionTrainingConfig,
    GridWalks,
    build_direction_model,
    export_weights,
    grid_cells,
    train_direction_policy,
)

TINY = DirectionTrainingConfig(iterations=100, envs=64, decisions=10, grid=5, recurrent=32,
                               hidden=32, learning_rate=3e-3, validation_episodes=64)


def test_a_walk_earns_one_per_new_cell_nothing_for_a_visited_one_and_pays_off_the_grid():
    walks = GridWalks(envs=1, grid=3, off_grid_penalty=10.0)
    walks.reset()
    east, west, north = 2, 3, 0
    rewards = [float(walks.step(np.array([action]))[1][0])
               for action in (east, west, west, west, east, north)]
    # east: new; back to the start: seen; west: new; west: off the grid; east: back, seen;
    # north: new
    assert rewards == [1.0, 0.0, 1.0, -10.0, 0.0, 1.0]
    assert walks.cells.tolist() == [4]


def test_numpy_inference_matches_the_torch_model():
    architecture = DirectionArchitecture(recurrent=24, hidden=16)
    torch.manual_seed(3)
    model = build_direction_model(architecture).eval()
    positions = np.random.default_rng(0).integers(-6, 7, (4, 30, 2)).astype(np.float32)
    with torch.no_grad():
        expected = model(torch.from_numpy(positions))[0].numpy()
    policy = DirectionPolicy(export_weights(model, architecture, {}), batch=4)
    got = np.stack([policy.logits(positions[:, t]) for t in range(30)], axis=1)
    np.testing.assert_allclose(got, expected, atol=1e-5)


def test_a_tiny_run_learns_to_visit_more_cells_than_random_directions(tmp_path):
    result = train_direction_policy(tmp_path / "run", TINY, progress=False, say=lambda _: None)
    assert (tmp_path / "run" / "direction.npz").exists()
    assert (tmp_path / "run" / "curve.png").exists()
    trained = grid_cells(result.weights, 256, TINY.decisions, seed=99).mean()
    untrained = build_direction_model(result.weights.architecture)
    for parameter in untrained.parameters():
        torch.nn.init.zeros_(parameter)  # zero logits: every direction alike
    uniform = grid_cells(export_weights(untrained, result.weights.architecture, {}), 256,
                         TINY.decisions, seed=99).mean()
    assert trained > uniform + 2.0  # of at most 11
    validation = [row for row in result.history if row["stage"] == "validation"]
    assert [row["epoch"] for row in validation] == [10, 30]


def test_a_run_resumes_from_its_checkpoint_and_the_same_recipe_gives_the_same_weights(tmp_path):
    said = []
    short = dataclasses.replace(TINY, iterations=4, validation_episodes=0)
    train_direction_policy(tmp_path / "a", short, progress=False, say=said.append)
    resumed = train_direction_policy(tmp_path / "a", dataclasses.replace(short, iterations=6),
                                     progress=False, say=said.append)
    assert any("resuming after iteration 4" in line for line in said)
    assert [row["epoch"] for row in resumed.history] == list(range(1, 7))
    again = train_direction_policy(tmp_path / "b", dataclasses.replace(short, iterations=6),
                                   progress=False, say=lambda _: None)
    assert again.weights.sha256 == resumed.weights.sha256


@pytest.mark.parametrize("changes", [{"grid": 4}, {"minibatches": 65}, {"decisions": 0},
                                     {"learning_rate": 0.0}])
def test_a_bad_recipe_is_refused_with_what_is_accepted(changes):
    with pytest.raises(ValueError, match="|".join(changes)):
        dataclasses.replace(TINY, **changes)
