"""Long-Instruction and Long-Navigation at tiny scale: task switching on success and on the
timeout, the scripted route's determinism, goal frames that the agent saw."""

from __future__ import annotations

import json

import numpy as np
import pytest

from mrsteve.env import make_env
from mrsteve.perception import SemanticEncoder
from mrsteve.seeding import episode_rng
from mrsteve.tasks import long_instruction as li
from mrsteve.tasks import long_navigation as ln
from mrsteve.tasks.episode import EpisodeCallback

WAIT = {"camera": np.zeros(2, dtype=np.float32)}


class Idle:
    """Stands still: never solves a task by itself; records what it is told and sees."""

    name = "idle"

    def __init__(self):
        self.encoder = SemanticEncoder()
        self.seen: dict[int, tuple[np.ndarray, np.ndarray]] = {}
        self.goals: list[tuple[np.ndarray, float, int]] = []

    def reset(self, obs, rng, camera):
        self.encoder.reset()

    def set_task(self, task, t):
        pass

    def observe(self, obs, t):
        self.seen[t] = (self.encoder.observe(obs), np.array(obs["pose"]))

    def set_goal(self, embedding, threshold, t):
        self.goals.append((embedding, threshold, t))

    def act(self, obs, t):
        return WAIT


class GiveAt(EpisodeCallback):
    """Hands over the running task's item after the given steps (the success checker sees it)."""

    def __init__(self, steps):
        self.steps, self.env, self.item = set(steps), None, None

    def on_reset(self, env, obs, frame):
        self.env = env

    def on_task_start(self, task):
        self.item = task.item

    def on_step(self, step):
        if step.t in self.steps:
            self.env.unwrapped.apply_commands({"give": {self.item: 1}})


@pytest.fixture(scope="module")
def instruction_env():
    env = make_env(world=li.WORLD, obs_size=(16, 24))
    yield env
    env.close()


def test_long_instruction_switches_on_success_and_on_the_timeout(instruction_env):
    sampler = li.ResidentMemory(25)
    record = li.run_long_instruction(instruction_env, Idle(), 3, steps=100, task_limit=30,
                                     callbacks=[GiveAt({5, 12}), sampler])
    tasks = record["tasks"]
    # given at steps 5 and 12: solved at 6 and 13; then cancelled every 30 steps
    assert [(start, duration, success) for _, start, duration, success in tasks] == [
        (0, 6, True), (6, 7, True), (13, 30, False), (43, 30, False), (73, 27, False)]
    assert record["tasks_solved"] == 2 and record["tasks_given"] == 5
    assert {item for item, *_ in tasks} <= set(li.ITEMS)
    assert record["mean_duration"] == 6.5
    assert [step for step, *_ in sampler.samples] == [25, 50, 75, 100]
    assert all(mb > 0 for _, mb, _ in sampler.samples)


def test_long_instruction_items_come_from_the_seed(instruction_env):
    def items(seed):
        record = li.run_long_instruction(instruction_env, Idle(), seed, steps=40, task_limit=5)
        return [item for item, *_ in record["tasks"]]

    assert items(1) == items(1)
    assert items(1) != items(2)


class Hunt(EpisodeCallback):
    """Kills a cow or a sheep every ``every`` steps (beef and wool tasks, far faster than an
    agent) and records, every step, how many of each species live and how many stand outside
    the map's quarter of the paper's figure (sheep upper left, cows lower right)."""

    def __init__(self, every):
        self.every, self.world = every, None
        self.alive = {"cow": [], "sheep": []}
        self.strays = {"cow": 0, "sheep": 0}

    def on_reset(self, env, obs, frame):
        self.world = env.unwrapped.world

    def on_step(self, step):
        mobs = self.world.mobs
        kinds = {name: self.world.content.mob(name).id for name in self.alive}
        if step.t % self.every == 0:
            kind = ("cow", "sheep")[step.t // self.every % 2]
            mobs.remove(np.flatnonzero(mobs.records["kind"] == kinds[kind])[:1])
        records = mobs.records
        for name, kind in kinds.items():
            mine = records[records["kind"] == kind]
            upper_left = (mine["x"] < 100) & (mine["z"] < 100)
            lower_right = (mine["x"] >= 100) & (mine["z"] >= 100)
            self.alive[name].append(len(mine))
            self.strays[name] += int((~(upper_left if name == "sheep" else lower_right)).sum())


def test_hunted_herds_stay_in_their_quarters_and_never_run_out():
    with make_env(world=li.WORLD, obs_size=(16, 24), spawn_cycle=True) as env:
        hunt = Hunt(every=100)  # 20 kills of each species in 4,000 steps
        li.run_long_instruction(env, Idle(), 0, steps=4000, task_limit=4000, callbacks=[hunt])
    assert hunt.strays == {"cow": 0, "sheep": 0}
    assert min(hunt.alive["cow"]) >= 12 - 4 and min(hunt.alive["sheep"]) >= 12 - 4


@pytest.fixture(scope="module")
def navigation_world():
    env = make_env(world=ln.WORLD, obs_size=(16, 24))
    env.reset(seed=0)
    yield env
    env.close()


def test_the_route_is_deterministic_per_seed_and_times_the_goal_frames(navigation_world):
    world = navigation_world.unwrapped.world

    def route(seed):
        return ln.plan_route(world, episode_rng(seed, "task"), offset=1)

    assert route(4) == route(4)
    assert [v.viewpoint for v in route(4)] != [v.viewpoint for v in route(5)]
    visits = {v.scene: v for v in route(4)}
    assert [v.scene for v in route(4)] == list(ln.SCENES)
    # the sugar cane's goal frames end before it blows up, the spiders' start after they spawn
    events = {event.kind: event.step - 1 for event in world.pending_events}
    assert visits["sugar_cane"].goal_window[1] <= events["explode"]
    assert visits["spiders"].goal_window[0] >= events["spawn_mob"]
    for visit in visits.values():
        x, z = visit.viewpoint
        sx, sz = world.layout.landmarks[visit.scene]
        assert np.hypot(x - sx, z - sz) == pytest.approx(ln.RouteConfig().standoff)


def test_goals_are_frames_the_agent_saw():
    env = make_env(world=ln.WORLD, obs_size=(16, 24))
    route = ln.RouteConfig(visit_steps=60, settle_steps=20, goal_steps=10, sky_steps=20)
    agent = Idle()
    record = ln.run_long_navigation(env, agent, SemanticEncoder(), 2, steps=route.steps + 50,
                                    goal_limit=20, route=route)
    env.close()
    assert len(agent.seen) == route.steps  # the agent observed every step of the route
    assert record["goals_given"] == len(agent.goals) >= 3  # 50 steps, 20 at most each
    origin = np.array(record["origin"])[[0, 2]]
    for (embedding, threshold, t), (scene, step, start, duration, reached) in zip(
            agent.goals, record["goals"]):
        assert t == start and threshold == SemanticEncoder().thresholds.image_goal
        # it stands where it saw the house (the route's end): only house goals are reached
        assert reached == (scene == "house") and (duration == 1 or duration <= 20)
        seen, pose = agent.seen[step]
        np.testing.assert_allclose(embedding, seen, atol=1e-6)
        visit = next(v for v in record["route"] if v[0] == scene)
        assert visit[4][0] <= step < visit[4][1]
        assert np.hypot(*(pose[[0, 2]] + origin - np.array(visit[2:4]))) < 1.0  # seen from the viewpoint
    json.dumps(record)  # a sweep record


class Lumberjack(EpisodeCallback):
    """Breaks one of the map's oak logs through the hands every ``every`` steps (the drops go to
    the inventory as a chop's would), counting the logs on the map."""

    def __init__(self, every):
        self.every, self.env, self.logs = every, None, []

    def on_reset(self, env, obs, frame):
        self.env = env

    def on_step(self, step):
        world = self.env.unwrapped.world
        log = world.content.block("oak_log").id
        standing = np.argwhere(world.blocks == log)
        self.logs.append(len(standing))
        if step.t % self.every == 0:
            i, j, k = standing[len(standing) // 2]
            world.hands.break_block(world, int(i), int(j), int(k), [])


@pytest.mark.parametrize("regrowth", [0, 100])
def test_with_log_regrowth_the_map_never_runs_out_of_logs(regrowth):
    with make_env(world=li.WORLD, obs_size=(16, 24), log_regrowth=regrowth) as env:
        chop = Lumberjack(every=5)  # 80 logs in 400 steps: over a third of the map's
        li.run_long_instruction(env, Idle(), 0, steps=400, task_limit=400, callbacks=[chop])
    start, lowest, end = chop.logs[0], min(chop.logs), chop.logs[-1]
    if regrowth:  # a log chopped at step n is back at step n + 101: only the last 20 are away
        assert start - lowest <= 21 and end == start - 20
    else:
        assert end == start - 79  # the step-400 chop comes after the last count
