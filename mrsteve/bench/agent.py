"""``mrsteve bench agent``: steps per second of the whole agent, and where the time goes.

The agent runs its tasks on one core (world, renderer, encoder, memory, control), cycling through
the task's items until ``steps`` steps have passed. Each part is wrapped in a timing proxy, so the
breakdown needs no instrumentation inside the agent or the loop. A short untimed warm-up run first
compiles (or loads from numba's cache) every jitted kernel, so the figure is the agent's steady
speed; the warm-up's time is reported apart (in a fresh clone it is mostly compilation).
"""

from __future__ import annotations

import time
from collections import defaultdict
from typing import Any

import gymnasium as gym

from mrsteve.agent.factory import make_agent
from mrsteve.env import make_env
from mrsteve.tasks.catalog import exploration_patch_size
from mrsteve.tasks.episode import run_tasks
from mrsteve.tasks.sequential import task_by_key

PAPER_STEPS_PER_SECOND = 11.0
"""The paper's agent on one RTX 4090: a 20K-step episode in about 30 minutes."""

WARM_UP_STEPS = 300
"""Untimed steps run first, on another seed, so that every jitted kernel is compiled."""


class TimedSteps(gym.Wrapper):
    """Adds the wall time of the environment's steps to ``totals[label]``."""

    def __init__(self, env: gym.Env, totals: dict[str, float], label: str):
        super().__init__(env)
        self.totals, self.label = totals, label

    def step(self, action: Any):
        start = time.perf_counter()
        try:
            return self.env.step(action)
        finally:
            self.totals[self.label] += time.perf_counter() - start


class Timed:
    """Delegates to ``target``, adding the wall time of calls to ``methods`` to ``totals[label]``."""

    def __init__(self, target: Any, methods: dict[str, str], totals: dict[str, float]):
        self._target = target
        self._methods = methods
        self._totals = totals

    def __getattr__(self, name: str) -> Any:
        value = getattr(self._target, name)
        label = self._methods.get(name)
        if label is None or not callable(value):
            return value

        def timed(*args, **kwargs):
            start = time.perf_counter()
            try:
                return value(*args, **kwargs)
            finally:
                self._totals[label] += time.perf_counter() - start

        return timed

    def __len__(self) -> int:
        return len(self._target)


def bench_agent(
    agent_name: str = "mrsteve",
    task_key: str = "aba-sparse/water-log-water",
    steps: int = 3000,
    seed: int = 0,
    obs_size: tuple[int, int] | None = None,
    *,
    encoder: str,
    navigator: str,
    instruction_policy: str,
) -> dict[str, Any]:
    """Run ``agent_name`` with ``encoder``, ``navigator`` and ``instruction_policy`` (the parts
    ``mrsteve bench agent --parts`` names, :data:`mrsteve.eval.experiment.PARTS`) for ``steps``
    steps on the task's world; steps/s and a breakdown."""
    task = task_by_key(task_key)
    kwargs: dict[str, Any] = {"world": task.world}
    if obs_size is not None:
        kwargs["obs_size"] = tuple(obs_size)

    def cycle(index: int, rng) -> str:
        return task.items[index % len(task.items)]

    start = time.perf_counter()
    with make_env(**kwargs) as warm_env:
        warm_agent = make_agent(agent_name, patch_size=exploration_patch_size(task.world),
                                encoder=encoder, navigator=navigator,
                                instruction_policy=instruction_policy)
        run_tasks(warm_env, warm_agent, cycle, seed=seed + 1, max_steps=WARM_UP_STEPS)
    warm_up_seconds = time.perf_counter() - start

    env = make_env(**kwargs)
    agent = make_agent(agent_name, patch_size=exploration_patch_size(task.world), encoder=encoder,
                       navigator=navigator, instruction_policy=instruction_policy)
    totals: dict[str, float] = defaultdict(float)
    parts = {
        "memory": {"write": "memory write", "read": "memory read"},
        "encoder": {"observe": "encoder"},
        "explorer": {"act": "explorer", "observe": "explorer"},
        "navigator": {"act": "navigator"},
        "policy": {"act": "instruction policy"},
    }
    for attribute, methods in parts.items():
        if hasattr(agent, attribute):
            setattr(agent, attribute, Timed(getattr(agent, attribute), methods, totals))
    timed_env = TimedSteps(env, totals, "world and renderer")
    start = time.perf_counter()
    result = run_tasks(timed_env, agent, cycle, seed=seed, max_steps=steps)
    elapsed = time.perf_counter() - start
    env.close()
    breakdown = {label: 1e6 * total / result.steps for label, total in sorted(totals.items())}
    breakdown["agent loop (rest)"] = 1e6 * elapsed / result.steps - sum(breakdown.values())
    stats = agent.memory.stats() if agent.config_tree.memory is not None else None
    return {
        "agent": agent_name,
        "encoder": encoder,
        "encoder_weights": agent.config_tree.encoder.weights_sha256,
        "navigator": navigator,
        "instruction_policy": instruction_policy,
        "task": task_key,
        "world": task.world,
        "obs_size": list(env.unwrapped.obs_size),
        "steps": result.steps,
        "seconds": elapsed,
        "steps_per_second": result.steps / elapsed,
        "tasks_completed": result.successes,
        "microseconds_per_step": breakdown,
        "memory_frames": None if stats is None else stats.frames,
        "memory_clusters": None if stats is None else stats.clusters,
        "warm_up_steps": WARM_UP_STEPS,
        "warm_up_seconds": warm_up_seconds,
        "paper_steps_per_second": PAPER_STEPS_PER_SECOND,
    }
