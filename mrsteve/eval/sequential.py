"""The sequential item experiments: ABA-Sparse (Section 4.2), ABA-Random and SEQ(4) (appendix).

Each runs the tasks of one suite (:mod:`mrsteve.tasks.sequential`, data in
``mrsteve/tasks/data/tasks.toml``) for the agents of :data:`mrsteve.agent.factory.AGENTS`. Each
group's run spec holds the task and the agent's configuration tree; one episode builds the
environment and the agent from it (:func:`sequential_episode`); the task hands over tools, tells
the agent its prompts and reads success from the inventory. Every record holds the steps each
sub-task spent in the Explore mode (``explore_<label>``, :class:`ModeSteps`).

``--capacity`` takes one memory capacity or a comma-separated grid (appendix "ABA-Sparse Tasks with
Memory Constraints": 100,500,1000,2000,12000): one group per task, capacity and agent (labelled
``<task>.<agent>.c<capacity>``, plain ``<task>.<agent>`` when unlimited); the grid's table and
figure show success and A' duration against capacity per agent.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

import gymnasium as gym

import mrsteve.env  # noqa: F401  (registers mrsteve/Voxel-v0)
from mrsteve.agent.factory import AGENTS, build_agent
from mrsteve.eval.experiment import UNLIMITED, AgentOptions, Experiment, Summaries
from mrsteve.eval.results import format_metric, format_table, mean_stderr
from mrsteve.eval.spec import Group, RunSpec
from mrsteve.eval.sweep import Record
from mrsteve.naming import choose
from mrsteve.protocols import Mode
from mrsteve.tasks.driver import EpisodeCallback, Step
from mrsteve.tasks.episode import run_tasks
from mrsteve.tasks.sequential import SequentialTask, env_kwargs, find_tasks, sequential_record


class ModeSteps(EpisodeCallback):
    """Counts the steps of each sub-task that the agent spent in the Explore mode (the appendix
    table "Task-Conditioned Hierarchical Episodic Exploration": explore mode length), as its
    decisions say, and keeps the world ``(t, x, z)`` of each such step when ``positions`` is set.
    An agent without modes (STEVE-1, ``has_modes=False``) reports ``None``."""

    def __init__(self, has_modes: bool = True, positions: bool = False) -> None:
        self.has_modes = has_modes
        self.explore_steps: list[int | None] = []
        self.positions: list[tuple[int, float, float]] | None = [] if positions else None

    def on_task_start(self, task) -> None:
        self.explore_steps.append(0 if self.has_modes else None)

    def on_step(self, step: Step) -> None:
        if self.has_modes and step.decision.mode is Mode.EXPLORE:
            self.explore_steps[-1] += 1
            if self.positions is not None:
                self.positions.append((step.t, float(step.obs["pose"][0]),
                                       float(step.obs["pose"][2])))

    def record(self, labels: tuple[str, ...]) -> dict[str, int | None]:
        """``explore_<label>`` for each sub-task (``None`` for those never started)."""
        steps = self.explore_steps + [None] * (len(labels) - len(self.explore_steps))
        return {f"explore_{label}": value for label, value in zip(labels, steps)}


@dataclass(frozen=True)
class SequentialRun(SequentialTask):
    """The task part of a sequential episode's run spec: the task, and how it is observed."""

    obs_size: tuple[int, int] | None = None
    """``(height, width)`` of the observations (``None``: the environment's)."""

    @classmethod
    def of(cls, task: SequentialTask, obs_size: tuple[int, int] | None = None,
           **more: Any) -> SequentialRun:
        """``task`` run with observations of ``obs_size`` (and ``more`` fields of a subclass)."""
        fields = {field.name: getattr(task, field.name) for field in dataclasses.fields(task)}
        return cls(**fields, obs_size=None if obs_size is None else tuple(obs_size), **more)


@dataclass(frozen=True)
class SequentialConfig(AgentOptions):
    """A sweep of sequential item tasks (the paper's settings)."""

    task: str = "all"
    """Task(s) of the suite, e.g. water-log-water (comma-separated, or 'all')."""
    agent: str = "mrsteve"
    """mrsteve, mrsteve-tc, center-embed, pm, em, fm, pmc-fm, steve1 (comma-separated, or 'all')."""
    obs_size: tuple[int, int] | None = None
    """``(height, width)`` of the observations (default: the environment's)."""

    def __post_init__(self) -> None:
        choose(self.agent, list(AGENTS), "agent")
        super().__post_init__()

    @property
    def agents(self) -> list[str]:
        return choose(self.agent, list(AGENTS), "agent")

    @property
    def grid(self) -> bool:
        """Several capacities: the memory-constraint grid."""
        return len(self.capacities) > 1


def sequential_episode(spec: RunSpec) -> Record:
    """One episode of ``spec.task`` (a :class:`SequentialRun`) for the agent its tree describes:
    success, duration and Explore-mode steps of each sub-task."""
    task = spec.task
    modes = ModeSteps(has_modes=spec.agent.memory is not None)
    with gym.make("mrsteve/Voxel-v0", **env_kwargs(task, task.obs_size)) as env:
        result = run_tasks(env, build_agent(spec.agent), task.items, seed=spec.seed,
                           max_steps=task.max_steps, callbacks=[modes])
    return {**sequential_record(task, result), **modes.record(task.labels)}


def expected_steps(task: SequentialTask, agent: str) -> float:
    """A guess at an episode's steps, to queue the longest first: STEVE-1 alone seldom finishes
    before the limit (its success is the paper's lowest), the agents with a memory mostly within
    a quarter of it (ABA-Sparse: A, B and A' in 1,500-3,000 of 12,000 steps)."""
    return task.max_steps if AGENTS[agent].memory is None else task.max_steps / 4


def sequential_groups(experiment: str, tasks: list[SequentialTask], config: AgentOptions,
                      agents: list[str], obs_size: tuple[int, int] | None = None) -> list[Group]:
    """One group per task and (agent, capacity) cell."""
    groups = []
    for task in tasks:
        for agent, capacity in config.cells(agents):
            label = f"{task.name}.{config.cell_label(agent, capacity)}"
            spec = RunSpec(experiment, label, task.key, SequentialRun.of(task, obs_size),
                           config.agent_tree(agent, task.world, capacity))
            groups.append(Group(spec, cost=expected_steps(task, agent)))
    return groups


def capacity_of(group: Group) -> int | str | None:
    """The group's memory capacity as tables show it (``-``: no memory)."""
    memory = getattr(group.spec.agent, "memory", None)
    return "-" if memory is None else (memory.capacity or UNLIMITED)


class SequentialExperiment(Experiment):
    """A suite of sequential item tasks."""

    suite: ClassVar[str]
    config_type = SequentialConfig
    options = ("task", "agent", "capacity", "encoder", "navigator", "navigator_weights",
               "instruction_policy", "searched_radius")
    default_episodes = 10
    episode = staticmethod(sequential_episode)

    def tasks(self, config: SequentialConfig) -> list[SequentialTask]:
        return find_tasks(self.suite, config.task)

    def groups(self, config: SequentialConfig) -> list[Group]:
        return sequential_groups(self.name, self.tasks(config), config, config.agents,
                                 config.obs_size)

    def metrics(self, config: SequentialConfig) -> tuple[str, ...]:
        labels = self.tasks(config)[0].labels
        return (*self.tasks(config)[0].metric_names, *(f"explore_{label}" for label in labels))

    def table(self, config, groups, summaries) -> str:
        if config.grid:
            return capacity_table(self.tasks(config), groups, summaries)
        tasks = self.tasks(config)
        labels = tasks[0].labels
        rows = []
        for group in groups:
            summary = summaries[group.label]
            rows.append([group.spec.task.name, group.agent,
                         format_metric(summary["success_rate"], 1),
                         *(format_metric(summary[f"duration_{label}"], 0) for label in labels)])
        if len(tasks) > 1:
            for name in config.agents:  # every task weighs the same, as in the paper's averages
                per_task = [summaries[g.label] for g in groups if g.agent == name]
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

    def plot_summary(self, config: SequentialConfig, groups, summaries: Summaries,
                     plots: Path) -> Path:
        if config.grid:
            return save_capacity_plot(plots / f"{self.suite}-capacity.png", self.tasks(config),
                                      groups, summaries, title=self.suite)
        from mrsteve.eval.plots import save_success_bars

        bars = {task.name: {g.agent: summaries[g.label]["success_rate"]
                            for g in groups if g.task == task.key} for task in self.tasks(config)}
        return save_success_bars(plots / f"{self.suite}-success.png", bars,
                                 title=f"{self.suite}: success rate")


PAPER_CAPACITY_FINDING = (
    "paper (appendix \"ABA-Sparse Tasks with Memory Constraints\", 0.1K to 12K frames): FIFO "
    "(fm) degrades as the capacity shrinks on every task; Place (pm) and Event (em) degrade at "
    "0.1K on Beef-Log-Beef and Beef-Leaves-Beef; Place Event (mrsteve) stays robust."
)


def capacity_series(tasks: list[SequentialTask], groups: list[Group], summaries: Summaries,
                    metric: str) -> dict[str, dict[str, list[tuple[float, dict[str, float]]]]]:
    """``series[task][agent] = [(capacity, metric summary), ...]`` in capacity order; unlimited
    is plotted at the episode length (the paper's 12K), an agent without memory as a flat line."""
    series: dict[str, dict[str, list[tuple[float, dict[str, float]]]]] = {}
    for task in tasks:
        mine = [g for g in groups if g.task == task.key]
        capacities = {g.spec.agent.memory.capacity or task.max_steps
                      for g in mine if g.spec.agent.memory is not None}
        per_agent = series.setdefault(task.name, {})
        for group in mine:
            memory = group.spec.agent.memory
            xs = [memory.capacity or task.max_steps] if memory else sorted(capacities)
            summary = summaries[group.label][metric]
            per_agent.setdefault(group.agent, []).extend((float(x), summary) for x in xs)
        for points in per_agent.values():
            points.sort(key=lambda point: point[0])
    return series


def capacity_table(tasks: list[SequentialTask], groups: list[Group], summaries: Summaries) -> str:
    """Success % and A' duration per task, agent and capacity (agents without memory: one row),
    then the mean over tasks, beside the paper's finding."""
    last = tasks[0].labels[-1]
    rows = []
    by_agent: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for group in groups:
        summary = summaries[group.label]
        shown = capacity_of(group)
        rows.append([group.spec.task.name, group.agent, shown,
                     format_metric(summary["success_rate"], 1),
                     format_metric(summary[f"duration_{last}"], 0)])
        by_agent.setdefault((group.agent, str(shown)), []).append(summary)
    if len(tasks) > 1:
        for (name, shown), per_task in by_agent.items():
            rows.append([f"all {len(per_task)}", name, shown,
                         format_metric(mean_stderr([s["success_rate"]["mean"] for s in per_task]), 1),
                         format_metric(mean_stderr([s[f"duration_{last}"]["mean"]
                                                    for s in per_task]), 0)])
    headers = ["task", "agent", "capacity", "success %", f"steps {last}"]
    return (format_table(headers, rows) + f"\nsteps {last}: mean duration of the last sub-task "
            f"(A') when it succeeded\n{PAPER_CAPACITY_FINDING}")


def save_capacity_plot(path: Path, tasks: list[SequentialTask], groups: list[Group],
                       summaries: Summaries, *, title: str) -> Path:
    """The appendix figure: success rate and A' duration against memory capacity (log scale),
    one panel per task and metric, one line per agent."""
    from mrsteve.eval.curves import save_curves

    last = tasks[0].labels[-1]
    panels = {}
    for metric, name in (("success_rate", "success %"), (f"duration_{last}", f"steps {last}")):
        for task, series in capacity_series(tasks, groups, summaries, metric).items():
            panels[f"{task}: {name}"] = series
    return save_curves(path, panels, xlabel="memory capacity (frames)", logx=True,
                       title=f"{title}: memory constraints", columns=2)


class AbaSparse(SequentialExperiment):
    """ABA-Sparse (paper Section 4.2): obtain A, then B, then A again within 12K steps.

    A is sparse (water, beef, wool, milk) and B dense (log, dirt, seeds, leaves, sand); map1 for
    water, map2 for beef, wool and milk, map3 when B is sand. The task changes only on success and
    each task starts with the item it needs; success is read from the inventory.
    """

    name = suite = "aba-sparse"
    examples = ("--task water-log-water --agent mrsteve,steve1 --episodes 5",
                ("--task all --agent mrsteve,pm,em,fm,steve1 --capacity 100,500,1000,2000,12000 "
                 "--episodes 20 --workers 2 --out runs/capacity"))


class AbaRandom(SequentialExperiment):
    """ABA-Random (paper appendix): A-log-A on procedural plains, a new map per seed, 12K steps.

    Tasks: water-log-water, beef-log-beef, wool-log-wool.
    """

    name = suite = "aba-random"
    examples = ("--task all --agent mrsteve,steve1 --workers 2",)


class Seq4(SequentialExperiment):
    """SEQ(4) (paper appendix): log, water, wool and beef in a row on procedural plains, 16K
    steps."""

    name = suite = "seq4"
    examples = ("--agent mrsteve,steve1 --episodes 5",)
    options = ("agent", "capacity", "encoder", "navigator", "navigator_weights",
               "instruction_policy")


ABA_SPARSE, ABA_RANDOM, SEQ4 = AbaSparse(), AbaRandom(), Seq4()
