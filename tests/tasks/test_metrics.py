"""Exploration and navigation metrics as the paper defines them."""

import numpy as np
import pytest

from mrsteve.tasks.metrics import exploration_score, path_length, spl


def test_coverage_counts_the_grid_cells_the_trajectory_enters():
    # A straight walk along x through the middle row of a 110 x 110 map: one row of 11 cells.
    xz = np.stack([np.linspace(0, 109.9, 1000), np.full(1000, 55.0)], axis=1)
    score = exploration_score(xz, origin=(0, 0), size=(110, 110))
    assert score.map_coverage == pytest.approx(100 * 11 / 121)
    assert score.revisit_count == 0.0  # no cell held the agent for more than 300 steps


def test_revisits_count_returns_to_cells_where_the_agent_lingered():
    stay_a = np.tile([[5.0, 5.0]], (400, 1))
    stay_b = np.tile([[95.0, 95.0]], (400, 1))
    xz = np.concatenate([stay_a, stay_b, stay_a, stay_b, stay_a])  # A three times, B twice
    score = exploration_score(xz, origin=(0, 0), size=(100, 100))
    assert score.revisit_count == pytest.approx(((3 - 1) + (2 - 1)) / 2)
    assert score.steps_per_cell.sum() == len(xz)


def test_positions_outside_the_map_are_clipped_to_border_cells():
    score = exploration_score(np.array([[-5.0, 200.0]]), origin=(0, 0), size=(100, 100))
    assert score.steps_per_cell[0, 10] == 1


def test_bad_trajectory_is_rejected():
    with pytest.raises(ValueError, match="N x 2"):
        exploration_score(np.zeros((3, 3)), origin=(0, 0), size=(100, 100))


def test_spl_weights_success_by_path_efficiency():
    assert spl(True, 10.0, 20.0) == 0.5
    assert spl(True, 10.0, 10.0) == 1.0
    assert spl(False, 10.0, 10.0) == 0.0
    assert path_length(np.array([[0, 0], [3, 4], [3, 10]])) == 11.0
