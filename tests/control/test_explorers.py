"""Explorers: valid actions for every explorer, count-based exploration covers more ground than
the memoryless wanderer and the short-memory direction picker (the paper's Table 1), and no
explorer is told the map: goals behind the walls are given up early, and the visitation map grows
past what it started with."""

from __future__ import annotations

import numpy as np
import pytest

from mrsteve.control.explorers import Explorer, HierarchicalExplorer
from mrsteve.control.goals import (
    CountBasedGoalSelector,
    DirectionConfig,
    DirectionGoalSelector,
    ExplorationConfig,
)
from mrsteve.control.navigation import DepthNavigator, StraightNavigator
from mrsteve.control.visitation import VisitationConfig
from mrsteve.control.wander import WanderExplorer
from mrsteve.env import make_env
from mrsteve.memory import FIFOMemory
from mrsteve.spaces import AgentFrame
from mrsteve.tasks.metrics import exploration_score

WALKABLE = (1.0, 1.0, 63.0, 63.0)
"""Inside the walls of the 64 x 64 navigation worlds (the evaluator's knowledge, not theirs)."""

EXPLORERS = {
    "count-based": lambda: HierarchicalExplorer(
        CountBasedGoalSelector(ExplorationConfig(patch_size=10.0)), DepthNavigator()),
    "count-based-straight": lambda: HierarchicalExplorer(
        lambda: CountBasedGoalSelector(ExplorationConfig(patch_size=10.0)), StraightNavigator()),
    "plan4mc": lambda: HierarchicalExplorer(
        DirectionGoalSelector(DirectionConfig(cell_size=62 / 11)), DepthNavigator()),
    "go-explore": WanderExplorer,
}


def explore(explorer: Explorer, steps: int, world: str = "plains_nav", seed: int = 0):
    """Run an explorer on what the agent frame shows it; returns its world positions
    ``[steps + 1, 2]``, the actions it took and its goals in world coordinates (one per step)."""
    env = make_env(world=world, obs_size=(24, 40))
    obs, info = env.reset(seed=seed)
    frame = AgentFrame.of(obs)
    explorer.reset(frame.view(obs), np.random.default_rng(seed), info["camera"])
    positions, actions, goals = [obs["pose"][[0, 2]]], [], []
    for _ in range(steps):
        view = frame.view(obs)
        explorer.observe(view)
        action = explorer.act(view)
        actions.append(action)
        goals.append(None if explorer.goal is None else frame.to_world(*explorer.goal))
        obs, *_ = env.step(action)
        positions.append(obs["pose"][[0, 2]])
    return np.array(positions), actions, goals


def coverage(positions: np.ndarray) -> float:
    return exploration_score(positions, WALKABLE[:2], (62.0, 62.0), grid=8).map_coverage


@pytest.mark.parametrize("name", EXPLORERS)
def test_explorers_give_valid_actions_and_report_their_goal(name):
    explorer = EXPLORERS[name]()
    assert isinstance(explorer, Explorer)
    positions, actions, goals = explore(explorer, 60)
    space = make_env(world="flat").action_space
    for action in actions:
        assert set(action) <= set(space.spaces)
        assert all(action[key] in (0, 1) for key in action if key != "camera")
        assert np.all(np.abs(action["camera"]) <= 180)
    assert np.ptp(positions, axis=0).max() > 2.0  # it went somewhere
    if name == "go-explore":
        assert explorer.goal is None
    else:
        assert all(goal is not None for goal in goals)


def test_goals_behind_the_walls_are_given_up_early():
    """The count-based explorer knows nothing of the walls: patches beyond them are proposed, and
    given up once the navigator sees the wall, long before the 2,000-step timeout."""
    _, _, goals = explore(EXPLORERS["count-based"](), 1500)
    spans: dict[tuple[float, float], int] = {}
    for goal in goals:
        spans[goal] = spans.get(goal, 0) + 1
    x_min, z_min, x_max, z_max = WALKABLE
    outside = {goal: steps for goal, steps in spans.items()
               if not (x_min <= goal[0] <= x_max and z_min <= goal[1] <= z_max)}
    assert outside  # the walls were not told
    assert max(outside.values()) < 400


def test_the_visitation_map_grows_past_where_it_started():
    """A world larger than the explorer's first map (16 x 16 around the start): it explores past
    it, its map growing."""
    explorer = HierarchicalExplorer(
        CountBasedGoalSelector(ExplorationConfig(patch_size=10.0), VisitationConfig(size=16)),
        DepthNavigator())
    positions, _, _ = explore(explorer, 600)
    assert np.abs(positions - positions[0]).max() > 16
    x_min, z_min, x_max, z_max = explorer.selector.visitation.extent
    assert max(x_max - x_min, z_max - z_min) > 16


def test_count_based_exploration_covers_more_than_the_wanderer_and_the_direction_picker():
    covered = {name: coverage(explore(EXPLORERS[name](), 1200)[0])
               for name in ("count-based", "go-explore", "plan4mc")}
    assert covered["count-based"] > covered["go-explore"] + 10
    assert covered["count-based"] > covered["plan4mc"] + 10


def test_hierarchical_explorer_hands_the_task_to_its_selector():
    class Selector(CountBasedGoalSelector):
        tasks = []

        def set_task(self, query, threshold):
            self.tasks.append((query, threshold))

    explorer = HierarchicalExplorer(Selector(), StraightNavigator())
    explorer.set_task(np.ones(2, np.float32), 0.5)
    assert len(Selector.tasks) == 1 and Selector.tasks[0][1] == 0.5
    for name in ("count-based", "plan4mc", "go-explore"):
        EXPLORERS[name]().set_task(np.ones(2, np.float32), 0.5)  # task-free explorers ignore it


# -- the visitation map built from the agent's memory (appendix "Solver Module Details") ----------

START = (10.5, 64.0, 20.5, 0.0, 0.0)
EYE_ONLY = VisitationConfig(view_distance=0.0)
"""Each frame paints its own cell only: counts are frames per cell."""


def frame_selectors(capacity):
    """A selector painting from a memory of ``capacity`` frames and one painting what it
    observes, both reset at :data:`START`, with the memory they read."""
    memory = FIFOMemory(capacity=capacity)
    selectors = [CountBasedGoalSelector(ExplorationConfig(patch_size=10.0), EYE_ONLY, memory),
                 CountBasedGoalSelector(ExplorationConfig(patch_size=10.0), EYE_ONLY)]
    for selector in selectors:
        selector.reset(START, np.random.default_rng(0))
    return memory, *selectors


def step(memory, selectors, t, offset, yaw=0.0):
    """The agent at ``START + offset`` (x, z) writes a frame (pose relative to the start) and
    the selectors observe the step, as MrSteve's ``observe`` does."""
    embedding = np.zeros(4, np.float32)
    embedding[t % 4] = 1.0
    memory.write(embedding, (offset[0], 0.0, offset[1], yaw, 0.0), t)
    pose = (START[0] + offset[0], START[1], START[2] + offset[1], yaw, 0.0)
    for selector in selectors:
        selector.observe(pose)


def test_a_place_whose_frames_the_memory_evicted_is_unvisited_again():
    """50 frames at the start, then 50 six blocks east, in a FIFO memory of 50: the start's
    frames are evicted, so its patch (centred on the start) is unvisited again and, nearest,
    the next goal; the map painted from observed steps still counts it."""
    memory, forgetting, painting = frame_selectors(capacity=50)
    for t in range(100):
        step(memory, (forgetting, painting), t, (0.0, 0.0) if t < 50 else (6.0, 0.0))
    forgetting.update_visitation()
    assert forgetting.visitation.count_at(START[0], START[2]) == 0
    assert forgetting.visitation.count_at(START[0] + 6, START[2]) == 50
    assert painting.visitation.count_at(START[0], START[2]) == 50
    here = (START[0] + 6, START[1], START[2], 0.0, 0.0)
    assert forgetting.propose(here, 100) == (START[0], START[2])
    assert painting.propose(here, 100) != (START[0], START[2])


def test_with_an_unlimited_memory_the_map_is_the_one_painted_from_every_step():
    """Same frames, same map: exactly, for positions the memory stores without rounding (its
    poses are float32, relative to the start; these are multiples of 1/8)."""
    rng = np.random.default_rng(0)
    memory, remembering, painting = frame_selectors(capacity=None)
    remembering.visitation_config = painting.visitation_config = VisitationConfig()
    for selector in (remembering, painting):
        selector.reset(START, np.random.default_rng(0))
    offsets = np.round(np.cumsum(rng.normal(0, 1.5, (300, 2)), axis=0) * 8) / 8
    for t, offset in enumerate(offsets):
        step(memory, (remembering, painting), t, offset, yaw=float(rng.integers(-180, 180)))
        if t % 37 == 0:
            remembering.update_visitation()
    remembering.update_visitation()
    assert remembering.visitation.extent == painting.visitation.extent
    np.testing.assert_array_equal(remembering.visitation.counts, painting.visitation.counts)


def test_steve1_told_to_go_explore_is_its_policy_and_the_wanderer_stands_in_for_the_scripted():
    """Table 1's STEVE-1 row: the learned instruction policy is told "go explore" (it reads the
    RGB frame alone); beside the scripted skills, which take no goals, the wanderer stands in."""
    from mrsteve.agent.factory import build_agent, explorer_agent_config
    from mrsteve.control.explorers import InstructedExplorer
    from mrsteve.control.instruction import LearnedSkills
    from mrsteve.control.skills import GO_EXPLORE

    learned = explorer_agent_config("go-explore", navigator="learned",
                                    instruction_policy="learned")
    assert learned.instruction_policy == "learned" and "depth" not in str(learned.explorer)
    explorer = build_agent(learned).explorer
    assert isinstance(explorer, InstructedExplorer)
    assert isinstance(explorer.policy, LearnedSkills)
    assert not explorer.policy.goal(GO_EXPLORE).any(), "no goal: STEVE-1's zero goal"
    scripted = build_agent(explorer_agent_config("go-explore")).explorer
    assert isinstance(scripted, WanderExplorer)

    class Told:
        def __init__(self):
            self.prompts = []

        def reset(self, rng, camera):
            pass

        def act(self, obs, prompt):
            self.prompts.append(prompt)
            return {"forward": 1}

    told = Told()
    explore(InstructedExplorer(told), 3)
    assert told.prompts == [GO_EXPLORE] * 3
