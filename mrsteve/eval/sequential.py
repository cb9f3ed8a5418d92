"""The sequential item experiments: ABA-Sparse (Section 4.2), ABA-Random and SEQ(4) (appendix).

Each runs the tasks of one suite (:mod:`mrsteve.tasks.sequential`, data in
``mrsteve/tasks/data/tasks.toml``) for the agents of :data:`mrsteve.agent.factory.AGENTS`. One
episode builds the environment and the agent (:func:`sequential_run`); the task hands over tools,
tells the agent its prompts and reads success from the inventory. Every summary saves the agent's
configuration tree (:class:`mrsteve.agent.config.AgentConfig`).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, ClassVar

import gymnasium as gym

import mrsteve.env  # noqa: F401  (registers mrsteve/Voxel-v0)
from mrsteve.agent.factory import AGENTS, agent_config, build_agent
from mrsteve.eval.experiment import Experiment, Summaries
from mrsteve.eval.results import format_metric, format_table, mean_stderr
from mrsteve.eval.sweep import EpisodeSpec, Group, Record
from mrsteve.naming import choose
from mrsteve.tasks.catalog import exploration_patch_size
from mrsteve.tasks.sequential import (
    SequentialTask,
    env_kwargs,
    find_tasks,
    run_sequential,
    task_by_key,
)


@dataclass(frozen=True)
class SequentialConfig:
    """A sweep of sequential item tasks (the paper's settings)."""

    task: str = "all"
    """Task(s) of the suite, e.g. water-log-water (comma-separated, or 'all')."""
    agent: str = "mrsteve"
    """mrsteve, mrsteve-tc, center-embed, pm, em, fm, pmc-fm, steve1 (comma-separated, or 'all')."""
    capacity: int | None = None
    """Memory capacity in frames (default: unlimited, as in the paper)."""
    obs_size: tuple[int, int] | None = None
    """``(height, width)`` of the observations (default: the environment's)."""

    def __post_init__(self) -> None:
        choose(self.agent, list(AGENTS), "agent")
        if self.capacity is not None and self.capacity < 1:
            raise ValueError(f"capacity must be >= 1, got {self.capacity}")

    @property
    def agents(self) -> list[str]:
        return choose(self.agent, list(AGENTS), "agent")


def agent_tree(task: SequentialTask, agent: str, capacity: int | None) -> dict[str, Any]:
    """The configuration tree of ``agent`` on ``task``'s world (saved in the summary)."""
    return asdict(agent_config(agent, patch_size=exploration_patch_size(task.world),
                               capacity=capacity))


def sequential_run(task: SequentialTask, agent: str, seed: int, *, capacity: int | None = None,
                   obs_size: tuple[int, int] | None = None) -> dict[str, Any]:
    """One episode of ``task`` for the agent called ``agent``: its record of metrics."""
    env = gym.make("mrsteve/Voxel-v0", **env_kwargs(task, obs_size))
    config = agent_config(agent, patch_size=exploration_patch_size(task.world), capacity=capacity)
    try:
        return run_sequential(env, build_agent(config), task, seed)
    finally:
        env.close()


def sequential_episode(spec: EpisodeSpec) -> Record:
    """The episode function (``spec.task`` is ``suite/name``, e.g.
    ``aba-sparse/water-log-water``): success and duration of each sub-task."""
    options = dict(spec.options)
    obs_size = options.get("obs_size")
    return sequential_run(task_by_key(spec.task), spec.agent, spec.seed,
                          capacity=options.get("capacity"),
                          obs_size=None if obs_size is None else tuple(obs_size))


class SequentialExperiment(Experiment):
    """A suite of sequential item tasks."""

    suite: ClassVar[str]
    config_type = SequentialConfig
    options = ("task", "agent", "capacity")
    default_episodes = 10
    episode = staticmethod(sequential_episode)

    def tasks(self, config: SequentialConfig) -> list[SequentialTask]:
        return find_tasks(self.suite, config.task)

    def groups(self, config: SequentialConfig) -> list[Group]:
        options = {"capacity": config.capacity, "obs_size": config.obs_size}
        return [
            Group(task.key, name, f"{task.name}.{name}",
                  {"task": asdict(task), "agent": agent_tree(task, name, config.capacity),
                   "obs_size": config.obs_size}, options)
            for task in self.tasks(config)
            for name in config.agents
        ]

    def metrics(self, config: SequentialConfig) -> tuple[str, ...]:
        return self.tasks(config)[0].metric_names

    def table(self, config, groups, summaries) -> str:
        tasks, agents = self.tasks(config), config.agents
        labels = tasks[0].labels
        rows = []
        for task in tasks:
            for name in agents:
                summary = summaries[(task.key, name)]
                rows.append([task.name, name, format_metric(summary["success_rate"], 1),
                             *(format_metric(summary[f"duration_{label}"], 0) for label in labels)])
        if len(tasks) > 1:
            for name in agents:  # every task weighs the same, as in the paper's averages
                per_task = [summaries[(task.key, name)] for task in tasks]
                rows.append([
                    f"all {len(tasks)}", name,
                    format_metric(mean_stderr([s["success_rate"]["mean"] for s in per_task]), 1),
                    *(format_metric(mean_stderr([s[f"duration_{label}"]["mean"]
                                                 for s in per_task]), 0)
                      for label in labels),
                ])  # fmt: skip
        headers = ["task", "agent", "success %", *(f"steps {label}" for label in labels)]
        return (format_table(headers, rows) + "\nsuccess %: all sub-tasks done in time; steps: "
                "mean duration of the successful ones")

    def plot_summary(self, config: SequentialConfig, summaries: Summaries, plots: Path) -> Path:
        from mrsteve.eval.plots import save_success_bars

        bars = {task.name: {name: summaries[(task.key, name)]["success_rate"]
                            for name in config.agents} for task in self.tasks(config)}
        return save_success_bars(plots / f"{self.suite}-success.png", bars,
                                 title=f"{self.suite}: success rate")


class AbaSparse(SequentialExperiment):
    """ABA-Sparse (paper Section 4.2): obtain A, then B, then A again within 12K steps.

    A is sparse (water, beef, wool, milk) and B dense (log, dirt, seeds, leaves, sand); map1 for
    water, map2 for beef, wool and milk, map3 when B is sand. The task changes only on success and
    each task starts with the item it needs; success is read from the inventory.
    """

    name = suite = "aba-sparse"


class AbaRandom(SequentialExperiment):
    """ABA-Random (paper appendix): A-log-A on procedural plains, a new map per seed, 12K steps.

    Tasks: water-log-water, beef-log-beef, wool-log-wool.
    """

    name = suite = "aba-random"


class Seq4(SequentialExperiment):
    """SEQ(4) (paper appendix): log, water, wool and beef in a row on procedural plains, 16K
    steps."""

    name = suite = "seq4"
    options = ("agent", "capacity")


ABA_SPARSE, ABA_RANDOM, SEQ4 = AbaSparse(), AbaRandom(), Seq4()
