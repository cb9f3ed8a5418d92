"""What the agent may know: its parts receive exactly the agent observation
(the frame's images, the pose relative to the start, the inventory) and never reach the world.

The environment below leaks extra keys into every observation and ``info``; every part of every
agent is spied on for the keys it is handed, and the agent's object graph is searched for the
world after an episode.
"""

from __future__ import annotations

from collections.abc import Mapping

import gymnasium as gym
import numpy as np
import pytest

from mrsteve.agent.factory import AGENTS, make_agent
from mrsteve.env import make_env
from mrsteve.spaces import AGENT_OBSERVATION_KEYS
from mrsteve.tasks.episode import run_tasks
from mrsteve.world.chunks import ChunkGenerator, ChunkWindow
from mrsteve.world.world import World


class LeakyObservations(gym.Wrapper):
    """Adds what an agent must not see to every observation and ``info``."""

    def reset(self, **kwargs):
        obs, info = self.env.reset(**kwargs)
        return self._leak(obs), {**info, "world": self.env.unwrapped.world}

    def step(self, action):
        obs, reward, terminated, truncated, info = self.env.step(action)
        return self._leak(obs), reward, terminated, truncated, {**info, "world": 1}

    def _leak(self, obs):
        return {**obs, "world_blocks": self.env.unwrapped.world.blocks, "true_pose": obs["pose"]}


class KeySpy:
    """Wraps the methods of a part that take observations and records the keys handed over."""

    def __init__(self, part, methods, seen):
        self._part, self._seen = part, seen
        for name in methods:
            if hasattr(part, name):
                setattr(self, name, self._spy(getattr(part, name)))

    def _spy(self, method):
        def spied(*args, **kwargs):
            for value in (*args, *kwargs.values()):
                if isinstance(value, Mapping) and "pose" in value:
                    self._seen.append(frozenset(value))
            return method(*args, **kwargs)
        return spied

    def __getattr__(self, name):
        return getattr(self._part, name)


def reaches(root, kind, limit=200_000) -> bool:
    """Whether an instance of ``kind`` is reachable from ``root`` through attributes and
    containers."""
    seen, stack = set(), [root]
    while stack and len(seen) < limit:
        obj = stack.pop()
        if id(obj) in seen or isinstance(obj, (str, bytes, int, float, np.ndarray, type)):
            continue
        seen.add(id(obj))
        if isinstance(obj, kind):
            return True
        if isinstance(obj, Mapping):
            stack.extend(obj.values())
        elif isinstance(obj, (list, tuple, set, frozenset)):
            stack.extend(obj)
        if hasattr(obj, "__dict__"):
            stack.extend(vars(obj).values())
    return False


@pytest.mark.parametrize(("name", "world", "navigator", "policy"), [
    *((name, world, "depth", "scripted") for world in ("map2", "plains_unbounded")
      for name in ("mrsteve", "mrsteve-tc", "pmc-fm", "steve1")),
    ("mrsteve", "map2", "learned", "scripted"),
    ("mrsteve", "map2", "learned", "learned"),
    ("steve1", "map2", "depth", "learned"),
])
def test_agent_parts_receive_only_the_agent_observation_and_never_the_world(name, world,
                                                                            navigator, policy):
    assert name in AGENTS
    # the learned parts' weights take the environment's default frame size
    learned = "learned" in (navigator, policy)
    obs_size = (40, 64) if learned else (24, 40)
    env = LeakyObservations(make_env(world=world, obs_size=obs_size))
    agent = make_agent(name, parts="stand-in", navigator=navigator, instruction_policy=policy)
    seen: list[frozenset[str]] = []
    for part, methods in [("explorer", ("reset", "observe", "act")),
                          ("navigator", ("observe", "act", "reached", "blocked")),
                          ("policy", ("act",)), ("encoder", ("observe",))]:
        if hasattr(agent, part):
            setattr(agent, part, KeySpy(getattr(agent, part), methods, seen))
    spied_agent = KeySpy(agent, ("reset", "act"), seen)
    spied_agent.name = agent.name
    result = run_tasks(env, spied_agent, ["beef", "log"], seed=0, max_steps=300)
    assert result.steps == 300 or result.successes
    assert seen and set(seen) == {frozenset(AGENT_OBSERVATION_KEYS)}
    assert not reaches(agent, (World, gym.Env, ChunkGenerator, ChunkWindow))


def test_the_pose_an_agent_sees_is_relative_to_the_block_it_started_in():
    env = make_env(world="map1", obs_size=(24, 40))
    poses = []

    class Recorder:
        name = "recorder"

        def reset(self, obs, rng, camera):
            poses.append(np.array(obs["pose"]))

        def set_task(self, task, t):
            pass

        def act(self, obs, t):
            poses.append(np.array(obs["pose"]))
            return {"forward": 1, "camera": np.zeros(2, np.float32)}

    run_tasks(env, Recorder(), ["beef"], seed=0, max_steps=40)
    world_start = env.unwrapped.world.layout.spawn
    assert np.all((0.0 <= poses[0][[0, 2]]) & (poses[0][[0, 2]] < 1.0))  # within its first block
    assert abs(world_start[0]) > 1.0  # while the map's own coordinates are elsewhere
    assert np.linalg.norm(poses[-1][[0, 2]] - poses[0][[0, 2]]) > 1.0  # and it moves with it


def test_a_planner_over_the_agent_sees_only_the_agent_observation_and_never_the_world():
    from dataclasses import replace

    from mrsteve.agent.factory import agent_config, build_agent, hierarchical_agent_config
    from mrsteve.agent.planners import PlannerConfig
    from mrsteve.eval.llm_planner import mining_instructions
    from mrsteve.tasks.crafting import crafting_env_kwargs, find_crafting, run_crafting

    task = replace(find_crafting("bed")[0], max_steps=300)
    env = LeakyObservations(make_env(**crafting_env_kwargs(task),
                                     obs_size=(24, 40)))
    agent = build_agent(hierarchical_agent_config(
        agent_config("mrsteve", parts="stand-in", patch_size=19.0),
        PlannerConfig("gt", memory_access=True),
        mining_instructions()))
    seen: list[frozenset[str]] = []
    agent.controller = KeySpy(agent.controller, ("reset", "observe", "act", "sighting"), seen)
    spied_agent = KeySpy(agent, ("reset", "act"), seen)
    spied_agent.name = agent.name
    run_crafting(env, spied_agent, task, seed=0)
    assert seen and set(seen) == {frozenset(AGENT_OBSERVATION_KEYS)}
    assert not reaches(agent, (World, gym.Env))
