"""Planning on the height map by the game's walking rules (mrsteve.control.path_planning)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from nav_worlds import floor, river

from mrsteve.control.heightmap import HeightMap
from mrsteve.control.path_planning import GEOMETRIC, distance_to_disc, find_path, plan_path


def test_planner_climbs_single_steps_and_goes_around_walls():
    levels = np.full((12, 12), 4, dtype=np.int16)
    levels[:, 6] = 6  # a two-block wall across ...
    levels[10:, 6] = 5  # ... with a one-block step at the end
    water = np.zeros(levels.shape, dtype=np.bool_)
    penalty = np.zeros(levels.shape, dtype=np.float32)
    points, reached = find_path(levels, water, penalty, (0, 0), (2.5, 2.5), (2.5, 10.5), 0.5,
                                GEOMETRIC, smooth=1000)
    assert reached
    cells = np.floor(points).astype(int)
    assert (cells[:, 0] >= 9).any()  # it went round by the step
    assert math.dist(points[-1], (2.5, 10.5)) <= 0.5

    levels[10:, 6] = 6  # no way across any more: the nearest reachable column instead
    points, reached = find_path(levels, water, penalty, (0, 0), (2.5, 2.5), (2.5, 10.5), 0.5)
    assert not reached
    assert math.floor(points[-1][1]) == 5


def test_planner_leaves_water_only_where_the_bank_is_level_with_the_surface():
    truth = HeightMap.from_blocks(river(floor(), exit_x=24))
    points, reached = plan_path(truth, (16.5, 8.5), (16.5, 25.5), 0.5, GEOMETRIC, smooth=1000)
    assert reached
    (leg,) = [n for n in range(len(points) - 1) if points[n, 1] < 19 <= points[n + 1, 1]]
    (x0, z0), (x1, z1) = points[leg], points[leg + 1]
    assert 24 <= x0 + (x1 - x0) * (19 - z0) / (z1 - z0) < 27  # out of the water at the shore
    walled = HeightMap.from_blocks(river(floor(), exit_x=None))
    _, reached = plan_path(walled, (16.5, 8.5), (16.5, 25.5), 0.5, GEOMETRIC)
    assert not reached


def test_planner_crosses_open_ground_in_a_straight_line():
    levels = np.full((30, 30), 4, dtype=np.int16)
    water = np.zeros(levels.shape, dtype=np.bool_)
    points, reached = find_path(levels, water, np.zeros(levels.shape, np.float32), (0, 0),
                                (3.2, 4.1), (25.5, 17.5), 3.0, GEOMETRIC, smooth=1000)
    assert reached and len(points) == 2
    assert distance_to_disc(points, (25.5, 17.5), 3.0) == pytest.approx(
        math.dist((3.2, 4.1), (25.5, 17.5)) - 3.0, abs=0.75)


def test_distance_to_disc_stops_where_the_path_enters_it():
    path = np.array([[0.0, 0.0], [10.0, 0.0], [10.0, 10.0]])
    assert distance_to_disc(path, (10.0, 10.0), 3.0) == pytest.approx(17.0)
    assert distance_to_disc(path, (0.5, 0.0), 3.0) == 0.0
