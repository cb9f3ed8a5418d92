"""Every named agent of the paper, and MrSteve's memory-driven return on a real map."""

import math

import numpy as np
import pytest

from mrsteve.agent.baselines import Steve1
from mrsteve.agent.factory import AGENTS, make_agent
from mrsteve.agent.mrsteve import Mode, MrSteve
from mrsteve.env import make_env
from mrsteve.memory import EventMemory, FIFOMemory, PlaceEventMemory, PlaceMemory
from mrsteve.spaces import AgentFrame
from mrsteve.tasks.catalog import exploration_patch_size
from mrsteve.tasks.episode import EpisodeCallback, run_tasks

MEMORY_OF = {
    "mrsteve": PlaceEventMemory,
    "mrsteve-tc": PlaceEventMemory,
    "center-embed": PlaceEventMemory,
    "pm": PlaceMemory,
    "em": EventMemory,
    "fm": FIFOMemory,
    "pmc-fm": FIFOMemory,
}


@pytest.mark.parametrize("name", sorted(AGENTS))
def test_every_named_agent_is_built_with_its_memory(name):
    agent = make_agent(name, parts="stand-in", capacity=2000)
    assert agent.name == name
    if name == "steve1":
        assert isinstance(agent, Steve1) and not hasattr(agent, "memory"), "STEVE-1 has no memory"
    else:
        assert isinstance(agent, MrSteve)
        assert type(agent.memory) is MEMORY_OF[name]
        assert agent.memory.capacity == 2000
    if name == "center-embed":
        assert agent.memory.config.center_only


def test_make_agent_builds_the_config_tree_with_the_papers_defaults():
    from dataclasses import asdict, replace

    from mrsteve.agent.config import MemoryPart
    from mrsteve.agent.factory import agent_config
    from mrsteve.agent.mrsteve import ModeSelectorConfig
    from mrsteve.memory import MemoryConfig

    agent = make_agent("pmc-fm", parts="stand-in", capacity=500)
    tree = agent.config_tree
    assert tree == agent_config("pmc-fm", parts="stand-in", capacity=500)
    assert tree.memory == MemoryPart("fifo", 500, MemoryConfig())
    assert (tree.explorer.kind, tree.explorer.navigator) == ("plan4mc", "straight")
    assert tree.explorer.goals.patch_size == 15.0 and tree.explorer.direction.cell_size == 9.0
    assert tree.mode_selector == ModeSelectorConfig() and tree.mode_selector.requery_interval == 600
    mrsteve = agent_config("mrsteve", parts="stand-in",
                           patch_size=exploration_patch_size("long_instruction"))
    assert mrsteve.explorer.goals.patch_size == 30.0, "G = 30 on 200 x 200"
    assert exploration_patch_size("map1") == 15.0
    assert mrsteve.memory.capacity is None, "unlimited, as in ABA-Sparse"
    assert agent_config("steve1", parts="stand-in").memory is None
    assert asdict(tree)["explorer"]["kind"] == "plan4mc"  # what summaries save
    custom = make_agent("mrsteve", parts="stand-in", config=ModeSelectorConfig(requery_interval=50))
    assert custom.config.requery_interval == 50
    tree = agent_config("pm", parts="stand-in")
    rebuilt = make_agent("mrsteve", config=tree)
    assert rebuilt.config_tree == replace(tree, name="mrsteve"), "the tree's parts, the new name"


def test_agents_are_told_their_prompts_by_the_task():
    from mrsteve.tasks import task_prompts

    steve1 = make_agent("steve1", parts="stand-in")
    steve1.set_task(task_prompts("beef"), 0)
    assert steve1.prompt == "kill cow"
    mrsteve = make_agent("mrsteve", parts="stand-in")
    mrsteve.set_task(task_prompts("water_bucket"), 0)
    assert mrsteve.task.explore == "near water"


def test_unknown_agent_lists_the_known_ones():
    with pytest.raises(ValueError, match="known: mrsteve"):
        make_agent("mr-steve", parts="stand-in")


class ModeTrace(EpisodeCallback):
    """Records the mode, the query target (in world coordinates) and the position at every
    step, as the agent's decisions say."""

    def __init__(self):
        self.modes, self.targets, self.xz = [], [], []

    def on_reset(self, env, obs, frame):
        self.frame = frame

    def on_step(self, step):
        self.modes.append(step.decision.mode)
        target = step.decision.target
        self.targets.append(None if target is None else self.frame.to_world(target[0], target[2]))
        self.xz.append((float(step.obs["pose"][0]), float(step.obs["pose"][2])))


def test_after_A_and_B_mrsteve_walks_back_to_where_it_found_A():
    world = "map1"
    env = make_env(world=world)
    agent = make_agent("mrsteve", parts="stand-in", patch_size=exploration_patch_size(world))
    trace = ModeTrace()
    result = run_tasks(env, agent, ["water_bucket", "log", "water_bucket"], seed=0,
                       max_steps=12000, callbacks=[trace])
    a, _, a2 = result.tasks
    assert [task.success for task in result.tasks] == [True, True, True]

    # The second A starts by navigating (memory has the water) to where the water was seen from,
    # and ends, like the first, at the pond (radius 5, its rim 3 more).
    assert trace.modes[a2.start] is Mode.NAVIGATE
    water = env.unwrapped.world.layout.landmarks["water"]
    target = trace.targets[a2.start]
    assert math.dist(target, water) < 16
    assert math.dist(trace.xz[a.end - 1], water) < 9
    assert math.dist(trace.xz[a2.end - 1], water) < 9
    # ... and it walks there about straight.
    path = np.asarray(trace.xz[a2.start:a2.end])
    walked = np.sum(np.linalg.norm(np.diff(path, axis=0), axis=1))
    straight = np.linalg.norm(path[-1] - path[0])
    assert walked < 1.6 * straight + 10


def test_steve1_without_memory_does_not_know_where_A_was():
    env = make_env(world="map1")
    agent = make_agent("steve1", parts="stand-in")
    result = run_tasks(env, agent, ["water_bucket"], seed=0, max_steps=1500)
    (task,) = result.tasks
    assert not task.success, "the pond is hidden: wandering does not find it in 1,500 steps"


def test_task_conditioned_mrsteve_explores_toward_the_tasks_place_prompt():
    from mrsteve.control.goals import TaskConditionedGoalSelector
    from mrsteve.tasks import task_prompts

    env = make_env(world="map2")
    agent = make_agent("mrsteve-tc", parts="stand-in")
    selector = agent.explorer.selector
    assert isinstance(selector, TaskConditionedGoalSelector) and selector.events is agent.memory
    queries = []
    original = TaskConditionedGoalSelector.set_task

    def spy(self, query, threshold):
        queries.append((query, threshold))
        original(self, query, threshold)

    TaskConditionedGoalSelector.set_task = spy
    try:
        result = run_tasks(env, agent, ["beef"], seed=1, max_steps=3000)
    finally:
        TaskConditionedGoalSelector.set_task = original
    place = task_prompts("beef").place
    np.testing.assert_allclose(queries[0][0], agent.encoder.encode_text(place))
    assert queries[0][1] == agent.encoder.task_threshold(place)
    assert result.tasks[0].success
    # The events it reads are the memory's, moved from start-relative to the episode frame.
    centres, poses = selector.episode_events()
    raw_centres, raw_poses = agent.memory.event_centres()
    np.testing.assert_array_equal(centres, raw_centres)
    np.testing.assert_allclose(poses[:, [0, 2]] - raw_poses[:, [0, 2]],
                               np.broadcast_to(agent.episode_pose(np.zeros(5))[[0, 2]],
                                               (len(poses), 2)),
                               atol=1e-4)


def test_an_agent_runs_episode_after_episode_with_a_fresh_memory_unless_it_keeps_it():
    """A second ``run_tasks`` on one agent starts a new episode: the memory is cleared (its
    times never go back); ``keep_memory=True`` carries it over and time goes on."""
    env = make_env(world="map2", obs_size=(24, 40))
    agent = make_agent("mrsteve", parts="stand-in")
    first = run_tasks(env, agent, ["beef"], seed=0, max_steps=150)
    assert len(agent.memory) == first.steps
    second = run_tasks(env, agent, ["beef"], seed=1, max_steps=120)
    assert len(agent.memory) == second.steps  # the first episode's frames are gone
    obs, info = env.reset(seed=2)
    view = AgentFrame.of(obs).view(obs)
    agent.reset(view, np.random.default_rng(0), info["camera"], keep_memory=True)
    agent.act(view, 0)
    assert len(agent.memory) == second.steps + 1
    assert agent.memory.read(np.ones(agent.memory.dim, np.float32) / agent.memory.dim ** 0.5,
                             -1.0).t.max() == second.steps


@pytest.mark.parametrize("name", ["mrsteve", "mrsteve-tc", "fm"])
def test_the_explorers_visitation_map_is_painted_from_the_frames_the_memory_holds(name):
    """pi_H-Nav reads the memory (Algorithm 2, line 30; appendix "Solver Module Details": the
    visitation map is built from Place Event Memory): with a capacity of 100 frames, the map
    holds the fields of view of the 100 frames held, not of every step taken."""
    from mrsteve.control.visitation import VisitationMap
    from mrsteve.memory.base import held_frames

    env = make_env(world="map2", obs_size=(24, 40))
    agent = make_agent(name, parts="stand-in", capacity=100)
    selector = agent.explorer.selector
    assert selector.memory is agent.memory
    result = run_tasks(env, agent, ["wool"], seed=0, max_steps=300)
    assert result.steps > 200
    selector.update_visitation()
    _, poses = held_frames(agent.memory)
    assert len(poses) == 100
    held = VisitationMap(selector.visitation_config, selector.visitation.centre)
    for pose in poses:
        x, _, z, yaw, _ = agent.episode_pose(pose)
        held.paint(x, z, yaw)

    def cells(visitation):
        ox, oz = visitation.origin
        return {(int(i) + ox, int(j) + oz): int(visitation.counts[i, j])
                for i, j in zip(*np.nonzero(visitation.counts))}

    assert cells(selector.visitation) == cells(held)


def test_agents_without_a_count_based_map_keep_their_explorers():
    """STEVE-1 has no memory; PMC-MrSteve-FM's Plan4MC explorer keeps no visitation map; the
    Exploration experiment's count-based explorer, memoryless, paints the steps it observes."""
    from mrsteve.agent.factory import build_agent, explorer_agent_config
    from mrsteve.control.goals import DirectionGoalSelector

    selector = make_agent("pmc-fm", parts="stand-in").explorer.selector
    assert isinstance(selector, DirectionGoalSelector)
    explorer = build_agent(explorer_agent_config("count-based")).explorer
    assert explorer.selector.memory is None
