"""The Memory Tasks (paper Section 4.3, Figure 6) at small scale: the scripted exploration phase
is the same for every agent and seed, the image goal is a clip the agent saw, success needs the
player at the location of that clip when the task phase ends (the same rule for every agent), and
each memory keeps or loses the goal's frames as the paper says."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from mrsteve.agent.factory import make_agent, make_navigator
from mrsteve.control.navigation import NavigatorConfig
from mrsteve.env import make_env
from mrsteve.eval.memory_tasks import MemoryTasksConfig, ScriptedRoute
from mrsteve.eval.registry import EXPERIMENTS
from mrsteve.perception import SemanticEncoder
from mrsteve.spaces import AgentFrame
from mrsteve.tasks.memory_tasks import Stay, arrival, kept_goal, memory_task, run_memory_task

OBS = (24, 40)


def episode(task, agent, seed, *, explore_steps, task_steps=1, dwell=1):
    env = make_env(world=task.world, obs_size=OBS)
    try:
        return run_memory_task(env, agent, task, ScriptedRoute(task), SemanticEncoder(),
                               seed=seed, explore_steps=explore_steps, task_steps=task_steps,
                               dwell=dwell)
    finally:
        env.close()


class Watchers:
    """Several agents watching one route (each writes its own memory)."""

    name = "watchers"

    def __init__(self, agents):
        self.agents = agents

    def reset(self, obs, rng, camera):
        for agent, stream in zip(self.agents, rng.spawn(len(self.agents))):
            agent.reset(obs, stream, camera)

    def observe(self, obs, t):
        for agent in self.agents:
            agent.observe(obs, t)

    def set_goal(self, embedding, threshold, t):
        self.goal = embedding

    def recall(self, embedding, threshold):
        return np.empty((0, 2))

    def act(self, obs, t):
        return {"camera": np.zeros(2, np.float32)}


def test_the_route_is_the_same_for_every_agent_and_seed():
    task = memory_task("find-water")
    runs = [episode(task, make_agent(name, parts="stand-in", capacity=200), seed, explore_steps=560)
            for name, seed in (("fm", 3), ("steve1", 3), ("mrsteve", 4))]
    np.testing.assert_array_equal(runs[0].trajectory[:561], runs[1].trajectory[:561])
    assert runs[0].goal_t == runs[1].goal_t
    np.testing.assert_array_equal(runs[0].goal, runs[1].goal)
    assert not np.allclose(runs[0].trajectory[560], runs[2].trajectory[560])  # travel differs


def test_the_image_goal_is_a_clip_the_agent_saw():
    task = memory_task("first-house")
    agent = make_agent("mrsteve", parts="stand-in")  # unlimited memory keeps every frame
    run = episode(task, agent, 0, explore_steps=160)
    assert 15 <= run.goal_t < task.goal_window
    found = agent.memory.read(run.goal, 0.9999)
    assert run.goal_t in set(found.t.tolist())  # the agent's own write of that step
    # success is judged around where that clip was seen: the watching spot, 8 blocks from the
    # house on the spawn's side
    np.testing.assert_array_equal(run.goal_place, run.trajectory[run.goal_t])
    with make_env(world=task.world, obs_size=OBS) as env:
        env.reset(seed=0)
        house = np.asarray(env.unwrapped.world.layout.landmarks["house_1"], np.float64)
    assert 6.0 <= np.hypot(*(np.asarray(run.goal_place) - house)) <= 13.0
    assert run.landmark == pytest.approx(house)


def test_arrival_is_the_step_the_player_came_to_stay_at_the_goals_place():
    place = (10.0, 10.0)
    x = np.array([0.0, 8.0, 10.0, 12.0, 20.0, 14.0, 20.0, 11.0, 10.0, 10.0, 10.0])
    positions = np.stack([x, np.full_like(x, 10.0)], axis=1)  # inside at 1-3, then 7-10
    assert arrival(positions, place, 3.0, dwell=3) == 1
    assert arrival(positions, place, 3.0, dwell=4) == 7  # the first pass walked on
    assert arrival(positions, place, 3.0, dwell=5) is None  # nor stayed long enough at the end
    assert arrival(positions[:5], place, 3.0, dwell=1) == 1  # dwell 1: reaching counts
    assert arrival(np.array([[10.0, 13.0]]), place, 3.0, dwell=1) == 0  # the disc's edge counts
    assert arrival(positions[:3], place, 3.0, dwell=4) is None  # shorter than the dwell


class Walker:
    """A test controller: walks to ``points`` one after another with the depth navigator, then
    stands still (as STEVE-1's wanderer, or as an agent; it has no memory)."""

    def __init__(self, points):
        self.points = points
        self.navigator = make_navigator("depth", NavigatorConfig(success_radius=1.0))

    def reset(self, obs, rng, camera):
        self.navigator.reset(rng, camera)
        self.left = list(self.points)

    def observe(self, obs):
        self.navigator.observe(obs)

    def act(self, obs):
        while self.left and self.navigator.reached(obs, self.left[0]):
            self.left.pop(0)
        if not self.left:
            self.navigator.observe(obs)
            return {"camera": np.zeros(2, np.float32)}
        return self.navigator.act(obs, self.left[0])


def test_success_needs_the_player_to_stay_at_the_goals_place():
    """The evaluator judges every agent from the player's positions, STEVE-1 included: walking
    through where the goal's clip was seen and on fails; walking there and staying succeeds, and
    the task phase ends once the player has stayed ``dwell`` steps."""
    task = replace(memory_task("find-water"), stays=(Stay("water", 100),), goal_window=100)
    explore = 180
    # where the goal is
    first = episode(task, make_agent("steve1", parts="stand-in"), 5, explore_steps=explore)
    place = np.asarray(first.goal_place)
    away = place + 2.0 * (place - first.trajectory[explore])  # beyond it, from where travel ended
    x0, z0 = first.trajectory[0]
    origin = np.asarray(AgentFrame((x0, 0.0, z0)).origin)[[0, 2]]

    def judged(points):
        # no memory: it wanders (here: walks) when given the goal
        agent = make_agent("steve1", parts="stand-in")
        agent.wanderer = Walker([tuple(p - origin) for p in points])  # in the agent's frame
        run = episode(task, agent, 5, explore_steps=explore, task_steps=400, dwell=100)
        assert run.goal_place == first.goal_place
        return run, np.hypot(*(run.trajectory[explore:] - place).T)

    stays, distance = judged([place])
    arrived = stays.metrics["task_steps"]
    assert stays.metrics["success_rate"] == 100.0 and 0 < arrived < 300
    assert len(distance) == arrived + 100 and np.all(distance[int(arrived):] <= 3.0)
    assert distance[int(arrived) - 1] > 3.0
    passes, distance = judged([place, away])
    assert len(distance) == 401 and distance.min() <= 1.0  # it was there, then walked on
    assert passes.metrics["success_rate"] == 0.0 and passes.metrics["task_steps"] is None


SMALL = {
    # the paper's schedules scaled down; the zombies burn for 500 steps whatever the scale, so
    # their task runs at the paper's scale
    "find-water": (dict(stays=(Stay("water", 100),), goal_window=100), 600, 400,
                   {"mrsteve", "pm", "em"}),
    "first-house": (dict(stays=(Stay("house_1", 40), Stay("house_2", 640)), goal_window=40), 900,
                    600, {"mrsteve", "pm"}),
    "zombie-spot": ({}, 3000, 2000, {"mrsteve", "em"}),
}


@pytest.mark.parametrize("name", list(SMALL))
def test_which_memories_keep_the_goal(name):
    """Find Water: FIFO forgets the pond; Zombies' Death Spot: Place Memory drops the burning
    zombies (its largest place) and FIFO the first frames; First-Visited House: Event Memory
    merges the look-alike houses and loses the first, FIFO the first frames."""
    changes, steps, capacity, keepers = SMALL[name]
    task = replace(memory_task(name), **changes)
    agents = {kind: make_agent(kind, parts="stand-in", capacity=capacity)
              for kind in ("mrsteve", "pm", "em", "fm")}
    watchers = Watchers(list(agents.values()))
    run = episode(task, watchers, 0, explore_steps=steps)
    frame = AgentFrame((run.trajectory[0][0], 0.0, run.trajectory[0][1]))
    threshold = SemanticEncoder().thresholds.image_goal
    kept = {kind for kind, agent in agents.items()
            if kept_goal(agent, frame, run.goal, threshold, (run.goal_place,), 3.0)}
    assert kept == keepers


def test_experiment_is_registered_with_the_papers_agents():
    experiment = EXPERIMENTS["memory-tasks"]
    config = MemoryTasksConfig()
    groups = experiment.groups(config)
    assert {g.agent for g in groups} == {"mrsteve", "pm", "em", "fm", "steve1"}
    assert {g.task for g in groups} == {"memory-tasks/find-water", "memory-tasks/zombie-spot",
                                        "memory-tasks/first-house"}
    assert groups[0].spec.task.radius == 3.0 and groups[0].spec.agent.memory.capacity == 2000
    assert (groups[0].spec.task.task_steps, groups[0].spec.task.dwell) == (3000, 1)  # reaching
    with pytest.raises(ValueError, match="task"):
        MemoryTasksConfig(task="find-lava")
    with pytest.raises(ValueError, match="explore_steps"):
        MemoryTasksConfig(explore_steps=500)
    with pytest.raises(ValueError, match="dwell"):
        MemoryTasksConfig(task_steps=50, dwell=100)


def test_the_route_watches_each_stay_from_its_spot_swaying():
    """At each stay the route stands at its spot (8 blocks from the landmark) and sways the
    camera 40 degrees either side of the landmark, as its configuration says."""
    task = replace(memory_task("first-house"), stays=(Stay("house_1", 100), Stay("house_2", 700)),
                   goal_window=100)
    route = ScriptedRoute(task)
    with make_env(world=task.world, obs_size=OBS) as env:
        obs, info = env.reset(seed=0)
        route.reset(obs, env.unwrapped.world, np.random.default_rng(0), info["camera"])
        poses = []
        for t in range(700):
            poses.append(obs["pose"].copy())
            obs, *_ = env.step(route.act(obs, t))
    poses = np.array(poses)
    radius, sway = route.config.spot_radius, route.config.sway
    (_, first_spot, _), (until, spot, _) = route.stays
    assert np.hypot(*(poses[99, [0, 2]] - first_spot)) <= radius
    watching = poses[until - route.config.sway_period:until]
    assert np.all(np.hypot(*(watching[:, [0, 2]] - spot).T) <= radius)
    yaw = np.degrees(np.unwrap(np.radians(watching[:, 3])))
    assert np.ptp(yaw) >= 2 * sway - 2 * route.config.max_turn
