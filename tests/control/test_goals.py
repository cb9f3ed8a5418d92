"""Goal selectors: count-based and task-conditioned selection over the visitation map, and
Plan4MC-style direction selection; one protocol."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mrsteve.control import (
    CountBasedGoalSelector,
    DirectionConfig,
    DirectionGoalSelector,
    ExplorationConfig,
    GoalSelector,
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


POINT = VisitationConfig(view_distance=0.0)
"""A map whose paint marks only the agent's own cell, to paint patches exactly."""
SMALL = VisitationConfig(size=48, view_distance=0.0)
"""Like :data:`POINT`, 48 x 48 cells: 3 x 3 patches of 15 blocks around the start."""


def pose(x: float, z: float, yaw: float = 0.0) -> tuple[float, ...]:
    return (x, 64.0, z, yaw, 0.0)


SELECTORS = [
    pytest.param(
        lambda visitation=POINT, config=None: CountBasedGoalSelector(config, visitation),
        id="count-based",
    ),
    pytest.param(
        lambda visitation=POINT, config=None: TaskConditionedGoalSelector(
            FakeEvents([[1.0, 0.0]], [[20.0, 64.0, 20.0, 0.0, 0.0]]), config, visitation),
        id="task-conditioned-without-task",
    ),
]


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
    """``make(rng, centre=(0, 0), **kw)``: a selector reset at ``centre`` (point paint)."""

    def build(rng, centre=(0.0, 0.0), **kw):
        selector = request.param(**kw)
        selector.reset(pose(*centre), rng)
        return selector

    return build


def test_goal_is_the_centre_of_the_nearest_unpainted_patch(make):
    selector = make(np.random.default_rng(0))
    for x, z in ((0, 0), (-15, 0), (0, 15), (0, -15)):
        mark(selector.visitation, x, z)
    assert selector.select(0.0, 0.0) == pytest.approx((15.0, 0.0))
    assert selector.select(-40.0, 3.0) == pytest.approx((-45.0, 0.0))


def test_ties_are_broken_by_the_seeded_rng(make):
    def goal(seed):
        selector = make(np.random.default_rng(seed))
        mark(selector.visitation, 0, 0)
        return selector.select(0.0, 0.0)

    goals = [goal(seed) for seed in range(24)]
    assert set(goals) == {(15.0, 0.0), (-15.0, 0.0), (0.0, 15.0), (0.0, -15.0)}
    assert goals == [goal(seed) for seed in range(24)]


def test_when_every_patch_is_painted_the_least_painted_one_is_the_goal(make):
    selector = make(np.random.default_rng(0), visitation=SMALL)
    visitation = selector.visitation
    fill(visitation, -23, -23, 46, times=2)
    # make patch (15, -15) the least painted by painting every other patch once more
    for px in (-15.0, 0.0, 15.0):
        for pz in (-15.0, 0.0, 15.0):
            if (px, pz) != (15.0, -15.0):
                fill(visitation, px - 7.5, pz - 7.5, 15, times=1)
    assert selector.select(-15.0, 15.0) == pytest.approx((15.0, -15.0))


def test_equally_painted_patches_go_to_the_nearest(make):
    selector = make(np.random.default_rng(0), visitation=SMALL)
    fill(selector.visitation, -23, -23, 46, times=1)
    assert selector.select(13.0, 16.0) == pytest.approx((15.0, 15.0))


def test_patches_tile_the_visitation_map_around_the_start_knowing_no_walls(make):
    """The release's 128 x 128 map around the start: 9 x 9 patches of G = 15 centred on it; the
    selector is told nothing of the world, so goals lie anywhere on the map (which grows)."""
    stats = patch_stats(VisitationMap(VisitationConfig(), (50.5, 50.5)), 15.0)
    assert stats.centre_x.tolist() == [50.5 + 15 * k for k in range(-4, 5)]
    selector = make(np.random.default_rng(1), visitation=VisitationConfig())
    visitation = selector.visitation
    rng = np.random.default_rng(2)
    for _ in range(40):
        x, z = rng.uniform(-60, 60, size=2)
        visitation.paint(x, z, rng.uniform(0, 360))
        gx, gz = selector.select(x, z)
        x_min, z_min, x_max, z_max = visitation.extent  # grows as the agent nears its edge
        assert x_min < gx < x_max and z_min < gz < z_max


def test_a_goal_given_up_is_not_chosen_again(make):
    selector = make(np.random.default_rng(0))
    start = pose(0.0, 0.0)
    selector.observe(start)
    goal = selector.propose(start, 0)
    selector.give_up(5)
    assert selector.goal is None
    others = {selector.propose(start, 6)}
    for t in range(7, 40):
        selector.give_up(t)
        others.add(selector.propose(start, t))
    assert goal not in others


def test_patches_stay_on_one_lattice_as_the_map_grows(make):
    selector = make(np.random.default_rng(0), centre=(3.0, 4.0), visitation=VisitationConfig())
    visitation = selector.visitation
    for step in range(40):
        visitation.paint(3.0 + 5 * step, 4.0, -90.0)  # walk +x far off the initial map
    gx, gz = selector.select(3.0 + 5 * 39, 4.0)
    assert (gx - 3.0) / 15 == pytest.approx(round((gx - 3.0) / 15))
    assert (gz - 4.0) / 15 == pytest.approx(round((gz - 4.0) / 15))
    assert visitation.extent[2] > 3.0 + 5 * 39


def test_a_goal_is_kept_until_reached_within_3_blocks(make):
    selector = make(np.random.default_rng(0))
    visitation = selector.visitation
    mark(visitation, 0, 0)
    goal = selector.propose((0.0, 64.0, 0.0, 0.0, 0.0), 0)
    assert selector.goal == goal
    near = (goal[0] - 3.1, 64.0, goal[1], 0.0, 0.0)
    mark(visitation, near[0], near[2])
    assert selector.propose(near, 10) == goal
    at = (goal[0] - 2.9, 64.0, goal[1], 0.0, 0.0)
    mark(visitation, at[0], at[2])
    new = selector.propose(at, 11)
    assert new != goal
    assert selector.propose(at, 12) == new


def test_a_goal_is_abandoned_after_2000_steps_and_retried_2000_steps_later(make):
    selector = make(np.random.default_rng(0))
    start = (0.0, 64.0, 0.0, 0.0, 0.0)

    def paint():
        for x, z in ((0, 0), (-15, 0), (0, 15), (0, -15)):
            selector.observe(pose(x, z))

    paint()
    goal = selector.propose(start, 100)
    assert goal == pytest.approx((15.0, 0.0))  # the one nearest unpainted patch
    assert selector.propose(start, 100 + 1999) == goal
    other = selector.propose(start, 100 + 2000)
    assert other != goal
    selector.give_up(100 + 2001)
    assert selector.propose(start, 100 + 2002) not in (goal, other)
    # the abandoned patch is a candidate again retry_after steps after it was abandoned
    selector.give_up(100 + 3999)
    assert selector.propose(start, 100 + 3999) != goal
    selector.give_up(100 + 4000)
    assert selector.propose(start, 100 + 4000) == goal
    selector.reset(start, np.random.default_rng(0))  # a new episode forgets the abandoned patch
    assert selector.goal is None
    paint()
    assert selector.propose(start, 0) == goal


def test_a_patch_given_up_from_one_place_is_retried_from_another(make):
    """A navigator's verdict (a ridge it cannot see over) holds where it was made: the patch is
    not proposed again for ``retry_after`` steps, then it is, from wherever the agent stands."""
    selector = make(np.random.default_rng(0), config=ExplorationConfig(retry_after=50))
    start = pose(0.0, 0.0)
    selector.observe(start)
    goal = selector.propose(start, 0)
    selector.give_up(0)
    for t in range(1, 50):
        assert selector.propose(start, t) != goal
        selector.give_up(t)
    assert selector.propose(start, 50) == goal  # the nearest again; the others wait on


def test_bad_arguments_raise():
    with pytest.raises(ValueError, match="patch_size"):
        ExplorationConfig(patch_size=0.0)
    with pytest.raises(ValueError, match="retry_after >= 1"):
        ExplorationConfig(retry_after=0)
    with pytest.raises(ValueError, match="frontier.*known: nearest, rings"):
        ExplorationConfig(frontier="outward")


RINGS = ExplorationConfig(frontier="rings")


def test_with_rings_the_patches_beyond_a_painted_map_are_offered(make):
    """The paper's selector knows only the patches its map covers: with each of them painted it
    returns to the least painted; ``rings`` (an unbounded world) offers the ring just beyond the
    edge, unpainted, the patch nearest the agent first."""
    nearest = make(np.random.default_rng(0), visitation=SMALL)
    rings = make(np.random.default_rng(0), visitation=SMALL, config=RINGS)
    for selector in (nearest, rings):
        fill(selector.visitation, -22, -22, 44, times=1)  # every cell of the 3 x 3 patches
    assert max(abs(v) for v in nearest.select(13.0, 16.0)) <= 15.0
    assert rings.select(13.0, 16.0) == pytest.approx((15.0, 30.0))


def test_with_rings_the_innermost_ring_around_the_start_comes_first(make):
    """An unpainted patch of the first ring far from the agent before an unpainted one of the
    second ring beside it: the square around the start is filled from the inside out."""
    selector = make(np.random.default_rng(0), visitation=SMALL, config=RINGS)
    for x, z in ((0, 0), (15, 15), (15, 0), (0, 15), (-15, 15), (-15, 0), (-15, -15), (0, -15)):
        mark(selector.visitation, x, z)
    assert selector.select(25.0, 5.0) == pytest.approx((15.0, -15.0))
    mark(selector.visitation, 15, -15)
    assert max(abs(v) for v in selector.select(25.0, 5.0)) == pytest.approx(30.0)


def task_world():
    """3 x 3 patches of 15 blocks; all painted but (-15, -15) and (15, 15); the agent is nearer
    (-15, -15). A relevant event stands at (15, 0), next to (15, 15); an irrelevant one at
    (-15, 0), next to (-15, -15)."""
    events = FakeEvents(
        embeddings=[[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0]],
        poses=[[15.0, 0.0, 0.0, 0.0, 0.0], [-15.0, 0.0, 0.0, 0.0, 0.0]],  # start-relative
    )
    selector = TaskConditionedGoalSelector(events, visitation=SMALL)
    selector.reset(pose(0.0, 0.0), np.random.default_rng(0))
    for px in (-15.0, 0.0, 15.0):
        for pz in (-15.0, 0.0, 15.0):
            if (px, pz) not in ((-15.0, -15.0), (15.0, 15.0)):
                mark(selector.visitation, px, pz)
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
    events = FakeEvents([[1.0, 0.0]], [[0.0, 0.0, 0.0, 0.0, 0.0]])  # at the start, facing +z
    selector = TaskConditionedGoalSelector(events)
    selector.reset(pose(0.5, 0.5), np.random.default_rng(0))  # start-relative -> world
    selector.set_task(np.array([1.0, 0.0], dtype=np.float32), 0.5)
    stats = patch_stats(selector.visitation, 15.0)
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


ALL_SELECTORS = {
    "count-based": lambda: CountBasedGoalSelector(),
    "task-conditioned": lambda: TaskConditionedGoalSelector(
        FakeEvents(np.zeros((0, 2)), np.zeros((0, 5)))),
    "direction": lambda: DirectionGoalSelector(),
}


@pytest.mark.parametrize("name", ALL_SELECTORS)
def test_every_selector_follows_the_protocol_and_keeps_its_goal_on_the_map(name):
    selector = ALL_SELECTORS[name]()
    assert isinstance(selector, GoalSelector)
    selector.set_task(np.array([1.0, 0.0], dtype=np.float32), 0.5)  # no-op or task: no error
    start = pose(32.5, 32.5)
    selector.reset(start, np.random.default_rng(0))
    assert selector.goal is None
    selector.observe(start)
    goal = selector.propose(start, 0)
    assert selector.goal == goal and np.hypot(goal[0] - 32.5, goal[1] - 32.5) <= 64 * 1.5
    assert selector.propose(start, 1) == goal  # kept while not reached
    selector.give_up(2)
    assert selector.goal is None and selector.propose(start, 3) != goal


def test_count_based_selector_paints_what_the_agent_sees_and_aims_at_unseen_patches():
    selector = CountBasedGoalSelector(ExplorationConfig(patch_size=10.0))
    start = (32.5, 16.0, 32.5, 0.0, 0.0)  # facing +z
    selector.reset(start, np.random.default_rng(0))
    selector.observe(start)
    visitation = selector.visitation
    assert visitation.count_at(32.5, 38.5) == 1 and visitation.count_at(32.5, 26.5) == 0
    goal = selector.propose(start, 0)
    assert goal != (32.5, 32.5) and np.hypot(goal[0] - 32.5, goal[1] - 32.5) <= 15


def test_direction_selector_moves_to_a_neighbouring_cell_it_has_not_just_visited():
    chosen = set()
    for seed in range(12):
        selector = DirectionGoalSelector(DirectionConfig(cell_size=10.0, memory=4))
        selector.reset((55.0, 0.0, 55.0, 0.0, 0.0), np.random.default_rng(seed))  # cell (0, 0)
        selector.observe((45.0, 0.0, 55.0, 0.0, 0.0))  # then (-1, 0)
        selector.observe((45.0, 0.0, 65.0, 0.0, 0.0))  # then (-1, 1)
        goal = selector.propose((45.0, 0.0, 65.0, 0.0, 0.0), 0)
        cell = selector.cell(*goal)
        assert goal == (55.0 + cell[0] * 10, 55.0 + cell[1] * 10)  # a cell centre
        chosen.add(cell)
    assert chosen == {(-2, 1), (-1, 2), (0, 1)}  # never back north to (-1, 0)


def test_direction_selector_takes_another_direction_after_giving_up():
    for seed in range(8):
        selector = DirectionGoalSelector(DirectionConfig(cell_size=10.0, memory=4))
        start = (5.0, 0.0, 5.0, 0.0, 0.0)
        selector.reset(start, np.random.default_rng(seed))
        blocked = selector.cell(*selector.propose(start, 0))
        selector.give_up(1)
        assert selector.cell(*selector.propose(start, 2)) != blocked
