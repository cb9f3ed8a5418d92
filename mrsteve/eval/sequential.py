"""The sequential item experiments: ABA-Sparse (Section 4.2), ABA-Random and SEQ(4) (appendix).

Each runs the tasks of one suite (:mod:`mrsteve.tasks.sequential`, data in
``mrsteve/tasks/data/tasks.toml``) for the agents of :data:`mrsteve.agent.factory.AGENTS`. One
episode builds the environment and the agent (:func:`sequential_run`); the task hands over tools,
tells the agent its prompts and reads success from the inventory. Every summary saves the agent's
configuration tree (:class:`mrsteve.agent.config.AgentConfig`) and every record the steps each
sub-task spent in the Explore mode (``explore_<label>``, :class:`ModeSteps`).

``--capacity`` takes one memory capacity or a comma-separated grid (appendix "ABA-Sparse Tasks with
Memory Constraints": 100,500,1000,2000,12000): one group per task, capacity and agent, each agent
named ``<agent>@<capacity>`` in the records (plain ``<agent>`` when unlimited), so a cell resumes
whatever list it was run in; the grid's table and figure show success and A' duration against
capacity per agent.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any, ClassVar

import gymnasium as gym

import mrsteve.env  # noqa: F401  (registers mrsteve/Voxel-v0)
from mrsteve.agent.config import AgentConfig
from mrsteve.agent.factory import AGENTS, build_agent
from mrsteve.agent.mrsteve import Mode
from mrsteve.eval.experiment import AgentOptions, Experiment, Summaries, agent_on_world
from mrsteve.eval.results import format_metric, format_table, mean_stderr
from mrsteve.eval.sweep import EpisodeSpec, Group, Record
from mrsteve.naming import choose
from mrsteve.tasks.episode import EpisodeCallback, run_tasks
from mrsteve.tasks.sequential import (
    SequentialTask,
    env_kwargs,
    find_tasks,
    sequential_record,
    task_by_key,
)

UNLIMITED = "unlimited"
"""The word for no capacity in a ``--capacity`` list."""

PAPER_CAPACITIES = (100, 500, 1000, 2000, 12000)
"""The capacities of the paper's memory-constraint figure (0.1K to 12K, the episode length)."""


def parse_capacities(value: str | int | None) -> tuple[int | None, ...]:
    """The memory capacities of ``--capacity``: ``None`` (unlimited), one number of frames, or a
    comma-separated list of numbers and ``unlimited`` (e.g. ``100,500,1000,2000,12000``);
    anything else is a ``ValueError`` naming the bad entry and what is accepted."""
    if value is None:
        return (None,)
    accepted = (f"a number of frames >= 1, {UNLIMITED!r}, or a comma-separated list of them "
                f"(e.g. {','.join(map(str, PAPER_CAPACITIES))})")
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise ValueError(f"capacity must be {accepted}, got {value!r}")
    parts = [value] if isinstance(value, int) else [p.strip() for p in value.split(",")]
    capacities: list[int | None] = []
    for part in parts:
        if isinstance(part, str) and part.lower() in (UNLIMITED, "none"):
            capacity = None
        else:
            try:
                capacity = int(part)
            except ValueError:
                capacity = 0
            if capacity < 1:
                where = "" if len(parts) == 1 else f" in {value!r}"
                raise ValueError(f"capacity must be {accepted}, got {part!r}{where}")
        if capacity in capacities:
            raise ValueError(f"capacity {part!r} is given twice in {value!r}")
        capacities.append(capacity)
    return tuple(capacities)


def cell_agent(agent: str, capacity: int | None) -> str:
    """The name a capacity grid's cell gives ``agent`` in records and summaries:
    ``agent@capacity``, or ``agent`` when the memory is unlimited."""
    return agent if capacity is None else f"{agent}@{capacity}"


def agent_of(cell: str) -> str:
    """The agent of a cell name (:func:`cell_agent`)."""
    return cell.partition("@")[0]


class ModeSteps(EpisodeCallback):
    """Counts the steps of each sub-task that the agent spent in the Explore mode (the appendix
    table "Task-Conditioned Hierarchical Episodic Exploration": explore mode length), and keeps
    the world ``(t, x, z)`` of each such step when ``positions`` is set. An agent without modes
    (STEVE-1) reports ``None``."""

    def __init__(self, positions: bool = False) -> None:
        self.explore_steps: list[int | None] = []
        self.positions: list[tuple[int, float, float]] | None = [] if positions else None

    def on_reset(self, env, agent, obs) -> None:
        self._has_modes = hasattr(agent, "mode")

    def on_task_start(self, task) -> None:
        self.explore_steps.append(0 if self._has_modes else None)

    def on_step(self, t, obs, action, agent) -> None:
        if self._has_modes and agent.mode is Mode.EXPLORE:
            self.explore_steps[-1] += 1
            if self.positions is not None:
                self.positions.append((t, float(obs["pose"][0]), float(obs["pose"][2])))

    def record(self, labels: tuple[str, ...]) -> dict[str, int | None]:
        """``explore_<label>`` for each sub-task (``None`` for those never started)."""
        steps = self.explore_steps + [None] * (len(labels) - len(self.explore_steps))
        return {f"explore_{label}": value for label, value in zip(labels, steps)}


@dataclass(frozen=True)
class SequentialConfig(AgentOptions):
    """A sweep of sequential item tasks (the paper's settings)."""

    task: str = "all"
    """Task(s) of the suite, e.g. water-log-water (comma-separated, or 'all')."""
    agent: str = "mrsteve"
    """mrsteve, mrsteve-tc, center-embed, pm, em, fm, pmc-fm, steve1 (comma-separated, or 'all')."""
    capacity: str | None = None
    """Memory capacity in frames (default: unlimited, as in the paper), or a comma-separated grid
    of them, 'unlimited' allowed (the appendix's: 100,500,1000,2000,12000)."""
    obs_size: tuple[int, int] | None = None
    """``(height, width)`` of the observations (default: the environment's)."""

    def __post_init__(self) -> None:
        choose(self.agent, list(AGENTS), "agent")
        parse_capacities(self.capacity)
        super().__post_init__()

    @property
    def agents(self) -> list[str]:
        return choose(self.agent, list(AGENTS), "agent")

    @property
    def capacities(self) -> tuple[int | None, ...]:
        return parse_capacities(self.capacity)

    @property
    def grid(self) -> bool:
        """Several capacities: the memory-constraint grid."""
        return len(self.capacities) > 1


def agent_tree(task: SequentialTask, agent: str, capacity: int | None,
               encoder: str = "semantic", searched_radius: float = 0.0) -> dict[str, Any]:
    """The configuration tree of ``agent`` on ``task``'s world (saved in the summary)."""
    return asdict(agent_on_world(agent, task.world, capacity=capacity, encoder=encoder,
                                 searched_radius=searched_radius))


def sequential_run(task: SequentialTask, agent: str | AgentConfig, seed: int, *,
                   capacity: int | None = None,
                   obs_size: tuple[int, int] | None = None,
                   encoder: str = "semantic",
                   searched_radius: float = 0.0) -> dict[str, Any]:
    """One episode of ``task`` for the agent called ``agent`` (or the agent a configuration tree
    describes): its record of metrics, with the Explore-mode steps of each sub-task."""
    env = gym.make("mrsteve/Voxel-v0", **env_kwargs(task, obs_size))
    config = agent if isinstance(agent, AgentConfig) else agent_on_world(
        agent, task.world, capacity=capacity, encoder=encoder, searched_radius=searched_radius)
    modes = ModeSteps()
    try:
        result = run_tasks(env, build_agent(config), task.items, seed=seed,
                           max_steps=task.max_steps, callbacks=[modes])
    finally:
        env.close()
    return {**sequential_record(task, result), **modes.record(task.labels)}


def sequential_episode(spec: EpisodeSpec) -> Record:
    """The episode function (``spec.task`` is ``suite/name``, e.g.
    ``aba-sparse/water-log-water``; ``spec.agent`` a :func:`cell_agent` name): success, duration
    and Explore-mode steps of each sub-task."""
    options = dict(spec.options)
    obs_size = options.get("obs_size")
    return sequential_run(task_by_key(spec.task), agent_of(spec.agent), spec.seed,
                          capacity=options.get("capacity"),
                          obs_size=None if obs_size is None else tuple(obs_size),
                          encoder=options.get("encoder", "semantic"),
                          searched_radius=options.get("searched_radius", 0.0))


class SequentialExperiment(Experiment):
    """A suite of sequential item tasks."""

    suite: ClassVar[str]
    config_type = SequentialConfig
    options = ("task", "agent", "capacity", "encoder", "searched_radius")
    default_episodes = 10
    episode = staticmethod(sequential_episode)

    def tasks(self, config: SequentialConfig) -> list[SequentialTask]:
        return find_tasks(self.suite, config.task)

    def cells(self, config: SequentialConfig) -> list[tuple[int | None, str]]:
        """The (capacity, agent) pairs of a sweep: every capacity for the agents with a memory,
        one unlimited cell for those without (a capacity means nothing to them)."""
        cells: list[tuple[int | None, str]] = []
        for capacity in config.capacities:
            for name in config.agents:
                cell = (capacity if AGENTS[name].memory is not None else None, name)
                if cell not in cells:
                    cells.append(cell)
        return cells

    def groups(self, config: SequentialConfig) -> list[Group]:
        groups = []
        for task in self.tasks(config):
            for capacity, name in self.cells(config):
                cell = cell_agent(name, capacity)
                groups.append(Group(
                    task.key, cell, f"{task.name}.{cell.replace('@', '.c')}",
                    {"task": asdict(task),
                     "agent": agent_tree(task, name, capacity, config.encoder,
                                         config.searched_radius),
                     "obs_size": config.obs_size},
                    {"capacity": capacity, "obs_size": config.obs_size,
                     "encoder": config.encoder, "searched_radius": config.searched_radius},
                ))  # fmt: skip
        return groups

    def metrics(self, config: SequentialConfig) -> tuple[str, ...]:
        labels = self.tasks(config)[0].labels
        return (*self.tasks(config)[0].metric_names, *(f"explore_{label}" for label in labels))

    def table(self, config, groups, summaries) -> str:
        if config.grid:
            return capacity_table(self.tasks(config), groups, summaries)
        tasks, agents = self.tasks(config), config.agents
        labels = tasks[0].labels
        cells = {name: next(g.agent for g in groups if agent_of(g.agent) == name)
                 for name in agents}
        rows = []
        for task in tasks:
            for name in agents:
                summary = summaries[(task.key, cells[name])]
                rows.append([task.name, cells[name], format_metric(summary["success_rate"], 1),
                             *(format_metric(summary[f"duration_{label}"], 0) for label in labels)])
        if len(tasks) > 1:
            for name in agents:  # every task weighs the same, as in the paper's averages
                per_task = [summaries[(task.key, cells[name])] for task in tasks]
                rows.append([
                    f"all {len(tasks)}", cells[name],
                    format_metric(mean_stderr([s["success_rate"]["mean"] for s in per_task]), 1),
                    *(format_metric(mean_stderr([s[f"duration_{label}"]["mean"]
                                                 for s in per_task]), 0)
                      for label in labels),
                ])  # fmt: skip
        headers = ["task", "agent", "success %", *(f"steps {label}" for label in labels)]
        return (format_table(headers, rows) + "\nsuccess %: all sub-tasks done in time; steps: "
                "mean duration of the successful ones")

    def plot_summary(self, config: SequentialConfig, summaries: Summaries, plots: Path) -> Path:
        if config.grid:
            return save_capacity_plot(plots / f"{self.suite}-capacity.png", self.tasks(config),
                                      self.groups(config), summaries, title=self.suite)
        from mrsteve.eval.plots import save_success_bars

        groups = self.groups(config)
        bars = {task.name: {g.agent: summaries[(task.key, g.agent)]["success_rate"]
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
        capacities = {g.config["agent"]["memory"]["capacity"] or task.max_steps
                      for g in mine if g.config["agent"].get("memory") is not None}
        per_agent = series.setdefault(task.name, {})
        for group in mine:
            memory = group.config["agent"].get("memory")
            xs = [memory["capacity"] or task.max_steps] if memory else sorted(capacities)
            summary = summaries[(group.task, group.agent)][metric]
            per_agent.setdefault(agent_of(group.agent), []).extend((float(x), summary) for x in xs)
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
        summary = summaries[(group.task, group.agent)]
        capacity = (group.config["agent"].get("memory") or {}).get("capacity")
        shown = "-" if group.config["agent"].get("memory") is None else (capacity or UNLIMITED)
        rows.append([task_by_key(group.task).name, agent_of(group.agent), shown,
                     format_metric(summary["success_rate"], 1),
                     format_metric(summary[f"duration_{last}"], 0)])
        by_agent.setdefault((agent_of(group.agent), str(shown)), []).append(summary)
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


class AbaRandom(SequentialExperiment):
    """ABA-Random (paper appendix): A-log-A on procedural plains, a new map per seed, 12K steps.

    Tasks: water-log-water, beef-log-beef, wool-log-wool.
    """

    name = suite = "aba-random"


class Seq4(SequentialExperiment):
    """SEQ(4) (paper appendix): log, water, wool and beef in a row on procedural plains, 16K
    steps."""

    name = suite = "seq4"
    options = ("agent", "capacity", "encoder")


ABA_SPARSE, ABA_RANDOM, SEQ4 = AbaSparse(), AbaRandom(), Seq4()
