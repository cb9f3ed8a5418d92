"""Count-based and task-conditioned goal selection over the visitation map."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mrsteve.control import (
    CountBasedGoalSelector,
    ExplorationConfig,
    TaskConditionedGoalSelector,
    VisitationConfig,
    VisitationMap,
)
from mrsteve.control.goals import box_blur, patch_stats


class FakeEvents:
    """An EventSource holding fixed event-cluster centres."""

    def __init__(self, embeddings, poses):
        self.embeddings = np.asarray(embeddings, dtype=np.float32)
        self.poses = np.asarray(poses, dtype=np.float64)

    def event_centres(self):
        return self.embeddings, self.poses


SELECTORS = [
    pytest.param(
        lambda visitation, rng, **kw: CountBasedGoalSelector(visitation, rng, **kw),
        id="count-based",
    ),
    pytest.param(
        lambda visitation, rng, **kw: TaskConditionedGoalSelector(
            visitation, FakeEvents([[1.0, 0.0]], [[20.0, 64.0, 20.0, 0.0, 0.0]]), rng, **kw
        ),
        id="task-conditioned-without-task",
    ),
]


def point_map() -> VisitationMap:
    """A map whose paint marks only the agent's own cell, to paint patches exactly."""
    return VisitationMap(VisitationConfig(view_distance=0.0))


def mark(visitation: VisitationMap, x: float, z: float, times: int = 1) -> None:
    for _ in range(times):
        visitation.paint(x, z, 0.0)


def fill(visitation: VisitationMap, x0: float, z0: float, size: int, times: int) -> None:
    """Paint every cell of the square ``[x0, x0 + size) x [z0, z0 + size)`` ``times`` times."""
    for x in range(size):
        for z in range(size):
            mark(visitation, x0 + x + 0.5, z0 + z + 0.5, times)


@pytest.fixture(params=SELECTORS)
def make(request):
    return request.param


def test_goal_is_the_centre_of_the_nearest_unpainted_patch(make):
    visitation = point_map()
    for x, z in ((0, 0), (-15, 0), (0, 15), (0, -15)):
        mark(visitation, x, z)
    selector = make(visitation, np.random.default_rng(0))
    assert selector.select(0.0, 0.0) == pytest.approx((15.0, 0.0))
    assert selector.select(-40.0, 3.0) == pytest.approx((-45.0, 0.0))


def test_ties_are_broken_by_the_seeded_rng(make):
    visitation = point_map()
    mark(visitation, 0, 0)
    goals = [make(visitation, np.random.default_rng(seed)).select(0.0, 0.0) for seed in range(24)]
    assert set(goals) == {(15.0, 0.0), (-15.0, 0.0), (0.0, 15.0), (0.0, -15.0)}
    again = [make(visitation, np.random.default_rng(seed)).select(0.0, 0.0) for seed in range(24)]
    assert goals == again


def test_when_every_patch_is_painted_the_least_painted_one_is_the_goal(make):
    visitation = point_map()
    bounds = (-22.5, -22.5, 22.5, 22.5)
    fill(visitation, -23, -23, 46, times=2)
    selector = make(visitation, np.random.default_rng(0), bounds=bounds)
    # make patch (15, -15) the least painted by painting every other patch once more
    for px in (-15.0, 0.0, 15.0):
        for pz in (-15.0, 0.0, 15.0):
            if (px, pz) != (15.0, -15.0):
                fill(visitation, px - 7.5, pz - 7.5, 15, times=1)
    assert selector.select(-15.0, 15.0) == pytest.approx((15.0, -15.0))


def test_equally_painted_patches_go_to_the_nearest(make):
    visitation = point_map()
    fill(visitation, -23, -23, 46, times=1)
    selector = make(visitation, np.random.default_rng(0), bounds=(-22.5, -22.5, 22.5, 22.5))
    assert selector.select(13.0, 16.0) == pytest.approx((15.0, 15.0))


def test_patches_tile_the_bounds_so_goals_stay_inside_the_walls(make):
    visitation = VisitationMap()
    bounds = (-50.0, -50.0, 50.0, 50.0)
    stats = patch_stats(visitation, 15.0, bounds)
    assert len(stats.centre_x) == len(stats.centre_z) == 7
    assert stats.centre_x[0] == pytest.approx(-50 + 100 / 14)
    selector = make(visitation, np.random.default_rng(1), bounds=bounds)
    rng = np.random.default_rng(2)
    for _ in range(40):
        x, z = rng.uniform(-49, 49, size=2)
        visitation.paint(x, z, rng.uniform(0, 360))
        gx, gz = selector.select(x, z)
        assert -50 < gx < 50 and -50 < gz < 50


def test_patches_stay_on_one_lattice_as_the_map_grows(make):
    visitation = VisitationMap(centre=(3.0, 4.0))
    selector = make(visitation, np.random.default_rng(0))
    for step in range(40):
        visitation.paint(3.0 + 5 * step, 4.0, -90.0)  # walk +x far off the initial map
    gx, gz = selector.select(3.0 + 5 * 39, 4.0)
    assert (gx - 3.0) / 15 == pytest.approx(round((gx - 3.0) / 15))
    assert (gz - 4.0) / 15 == pytest.approx(round((gz - 4.0) / 15))
    assert visitation.extent[2] > 3.0 + 5 * 39


def test_a_goal_is_kept_until_reached_within_3_blocks(make):
    visitation = point_map()
    mark(visitation, 0, 0)
    selector = make(visitation, np.random.default_rng(0))
    goal = selector.update((0.0, 64.0, 0.0, 0.0, 0.0), 0)
    assert selector.goal == goal
    near = (goal[0] - 3.1, 64.0, goal[1], 0.0, 0.0)
    mark(visitation, near[0], near[2])
    assert selector.update(near, 10) == goal
    at = (goal[0] - 2.9, 64.0, goal[1], 0.0, 0.0)
    mark(visitation, at[0], at[2])
    new = selector.update(at, 11)
    assert new != goal
    assert selector.update(at, 12) == new


def test_a_goal_is_abandoned_after_2000_steps_and_not_chosen_again(make):
    visitation = point_map()
    for x, z in ((0, 0), (-15, 0), (0, 15), (0, -15)):
        mark(visitation, x, z)
    selector = make(visitation, np.random.default_rng(0))
    start = (0.0, 64.0, 0.0, 0.0, 0.0)
    goal = selector.update(start, 100)
    assert goal == pytest.approx((15.0, 0.0))  # the one nearest unpainted patch
    assert selector.update(start, 100 + 1999) == goal
    other = selector.update(start, 100 + 2000)
    assert other != goal
    assert selector.update(start, 100 + 4000) != goal
    selector.reset()
    assert selector.goal is None
    assert selector.update(start, 0) == goal


def test_bad_arguments_raise(make):
    with pytest.raises(ValueError, match="bounds"):
        make(VisitationMap(), np.random.default_rng(0), bounds=(10.0, 0.0, -10.0, 5.0))
    with pytest.raises(ValueError, match="patch_size"):
        ExplorationConfig(patch_size=0.0)


def task_world():
    """3 x 3 patches of 15 blocks; all painted but (-15, -15) and (15, 15); the agent is nearer
    (-15, -15). A relevant event stands at (15, 0), next to (15, 15); an irrelevant one at
    (-15, 0), next to (-15, -15)."""
    visitation = point_map()
    for px in (-15.0, 0.0, 15.0):
        for pz in (-15.0, 0.0, 15.0):
            if (px, pz) not in ((-15.0, -15.0), (15.0, 15.0)):
                mark(visitation, px, pz)
    events = FakeEvents(
        embeddings=[[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0]],
        poses=[[15.0, 64.0, 0.0, 0.0, 0.0], [-15.0, 64.0, 0.0, 0.0, 0.0]],
    )
    selector = TaskConditionedGoalSelector(
        visitation, events, np.random.default_rng(0), bounds=(-22.5, -22.5, 22.5, 22.5)
    )
    return selector, (-5.0, -5.0)


def test_task_conditioned_exploration_prefers_patches_near_relevant_events():
    selector, (x, z) = task_world()
    assert selector.select(x, z) == pytest.approx((-15.0, -15.0))
    selector.set_task(np.array([1.0, 0.0, 0.0, 0.0], dtype=np.float32), threshold=0.5)
    assert selector.select(x, z) == pytest.approx((15.0, 15.0))
    selector.set_task(np.array([0.0, 0.0, 1.0, 0.0], dtype=np.float32), threshold=0.5)
    assert selector.select(x, z) == pytest.approx((-15.0, -15.0))
    selector.clear_task()
    assert selector.select(x, z) == pytest.approx((-15.0, -15.0))


def test_task_relevance_paints_event_fields_of_view_and_blurs_over_patches():
    visitation = VisitationMap()
    events = FakeEvents([[1.0, 0.0]], [[0.5, 64.0, 0.5, 0.0, 0.0]])  # at the start, facing +z
    selector = TaskConditionedGoalSelector(visitation, events, np.random.default_rng(0))
    selector.set_task(np.array([1.0, 0.0], dtype=np.float32), 0.5)
    stats = patch_stats(visitation, 15.0)
    relevance = selector.relevance(stats)
    kx = list(stats.index_x).index(0)
    kz = list(stats.index_z).index(0)
    ahead, behind = relevance[kx, kz + 1], relevance[kx, kz - 1]
    assert relevance[kx, kz] > 0 and ahead > behind > 0  # the sector reaches into +z
    assert relevance[kx, kz + 3] == 0 and relevance[kx + 3, kz] == 0
    with pytest.raises(ValueError, match="dim"):
        selector.set_task(np.ones(3, dtype=np.float32), 0.5)
        selector.relevance(stats)


def test_box_blur_is_the_3x3_mean():
    grid = np.zeros((5, 5))
    grid[2, 2] = 9.0
    blurred = box_blur(grid)
    assert blurred[1:4, 1:4] == pytest.approx(np.ones((3, 3)))
    assert blurred.sum() == pytest.approx(9.0)
    assert box_blur(np.ones((3, 3)))[0, 0] == pytest.approx(4 / 9)
    assert math.isclose(box_blur(np.ones((3, 3)))[1, 1], 1.0)
