"""The episode loop: success read from the inventory, tools handed over, limits, callbacks."""

import numpy as np
import pytest

from mrsteve.env import make_env
from mrsteve.protocols import Agent
from mrsteve.tasks.catalog import load_catalog
from mrsteve.tasks.driver import EpisodeCallback
from mrsteve.tasks.episode import run_tasks


class DigDown:
    """Looks straight down and holds attack: breaks the grass block under its feet -> dirt."""

    name = "dig-down"

    def reset(self, obs, rng, camera):
        self.items = []

    def set_task(self, task, t):
        self.items.append((task.item, t))
        self.prompts = task

    def act(self, obs, t):
        return {"attack": 1, "camera": np.array([90.0 - obs["pose"][4], 0.0], np.float32)}


class Recorder(EpisodeCallback):
    def __init__(self):
        self.started, self.ended, self.steps = [], [], 0
        self.inventory_at_start = []

    def on_reset(self, env, obs, frame):
        self.env = env

    def on_task_start(self, task):
        self.started.append(task.item)
        self.inventory_at_start.append(self.env.unwrapped.world.inventory.as_dict())

    def on_step(self, step):
        self.steps += 1

    def on_task_end(self, task):
        self.ended.append((task.item, task.success))


@pytest.fixture
def env():
    return make_env(world="flat")


def test_success_is_read_from_the_inventory_and_the_next_task_gets_its_tool(env):
    recorder = Recorder()
    agent = DigDown()
    result = run_tasks(env, agent, ["dirt", "water_bucket"], seed=0, max_steps=200,
                       callbacks=[recorder])
    dirt, water = result.tasks
    assert dirt.success and dirt.duration < 60, "a grass block breaks into dirt in well under 3 s"
    assert not water.success and water.end == 200, "no water on the flat world"
    assert recorder.started == ["dirt", "water_bucket"]
    assert recorder.inventory_at_start[1].get("bucket") == 1, "a water task starts with a bucket"
    assert env.unwrapped.world.inventory.held_item == "bucket"
    assert agent.items == [("dirt", 0), ("water_bucket", dirt.end)]
    assert recorder.steps == result.steps == 200


def test_a_task_limit_gives_up_and_moves_on(env):
    # 10 steps are too few to break the grass block (0.9 s = 18 steps) for the water task.
    result = run_tasks(env, DigDown(), ["water_bucket", "dirt"], seed=0, max_steps=300,
                       task_limit=10)
    assert [(t.item, t.success) for t in result.tasks] == [("water_bucket", False), ("dirt", True)]
    assert result.tasks[0].duration == 10


def test_endless_random_tasks_come_from_the_seeded_generator(env):
    def pick(index, rng):
        return ["dirt", "water_bucket"][int(rng.integers(2))]

    first = run_tasks(env, DigDown(), pick, seed=3, max_steps=150, task_limit=50)
    second = run_tasks(env, DigDown(), pick, seed=3, max_steps=150, task_limit=50)
    assert [t.item for t in first.tasks] == [t.item for t in second.tasks]
    assert len(first.tasks) >= 3


def test_bad_task_lists_are_rejected(env):
    with pytest.raises(ValueError, match="unknown task item 'diamond'; known: log"):
        run_tasks(env, DigDown(), ["diamond"], seed=0, max_steps=10)
    with pytest.raises(ValueError, match="items"):
        run_tasks(env, DigDown(), [], seed=0, max_steps=10)
    with pytest.raises(ValueError, match="max_steps"):
        run_tasks(env, DigDown(), ["dirt"], seed=0, max_steps=0)


def test_the_agent_is_told_the_tasks_prompts(env):
    agent = DigDown()
    assert isinstance(agent, Agent)
    run_tasks(env, agent, ["dirt"], seed=0, max_steps=5)
    assert agent.prompts == load_catalog().prompts("dirt")
    assert (agent.prompts.explore, agent.prompts.execute) == ("near dirt", "get dirt")


def test_the_agent_generator_is_the_episode_stream(env):
    from mrsteve.seeding import episode_rng

    class Draw(DigDown):
        def reset(self, obs, rng, camera):
            super().reset(obs, rng, camera)
            self.draw = rng.random()

    agent = Draw()
    run_tasks(env, agent, ["dirt"], seed=5, max_steps=1)
    assert agent.draw == episode_rng(5).random()
    assert agent.draw == np.random.default_rng([5, 1]).random(), "the generator runs had before"


def test_the_wrapper_keeps_the_tasks_with_the_environment(env):
    from mrsteve.tasks import ItemTasks

    tasks = ItemTasks(env, ["dirt", "water_bucket"], task_limit=100)
    obs, info = tasks.reset(seed=0)
    assert info["task"].item == "dirt" and info["task"].prompts.execute == "get dirt"
    agent = DigDown()
    agent.reset(obs, None, info["camera"])
    ends = []
    for t in range(200):
        obs, _, terminated, _, info = tasks.step(agent.act(obs, t))
        if "task_end" in info:
            ends.append((info["task_end"].item, info["task_end"].success))
            assert "task" in info or terminated
        if "task" in info:
            assert info["task"].tool == "bucket"
            assert env.unwrapped.world.inventory.held_item == "bucket"
        if terminated:
            break
    assert ends == [("dirt", True), ("water_bucket", False)], "the water task is given up"
    assert terminated and tasks.task is None and tasks.close_tasks() is None
