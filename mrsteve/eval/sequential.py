"""The sequential item experiments: ABA-Sparse (Section 4.2), ABA-Random and SEQ(4) (appendix).

Each runs the tasks of one suite (:mod:`mrsteve.tasks.sequential`, data in
``mrsteve/tasks/data/tasks.toml``) for the agents of :data:`mrsteve.agent.factory.AGENTS`. Each
group's run spec holds the task and the agent's configuration tree; one episode builds the
environment and the agent from it (:func:`sequential_episode`); the task hands over tools, tells
the agent its prompts and reads success from the inventory. Every record holds the steps each
sub-task spent in the Explore mode (``explore_<label>``, :class:`ModeSteps`).

``--capacity`` takes one memory capacity or a comma-separated grid (appendix "ABA-Sparse Tasks with
Memory Constraints": 100,500,1000,2000,12000): one group per task, capacity and agent (labelled
``<task>.<agent>.c<capacity>``, plain ``<task>.<agent>`` when unlimited; an agent without a
memory, STEVE-1, once); the grid's table and figure (:mod:`mrsteve.eval.capacity`) show success
and A' duration against capacity per agent. Without ``--task`` and ``--agent`` an ABA-Sparse grid
runs the figure's tasks and agents (:data:`~mrsteve.eval.capacity.GRID_TASKS`,
:data:`~mrsteve.eval.capacity.GRID_AGENTS`).

``--world minecraft`` runs the tasks the authors' release sets up in Minecraft (water-log-water,
beef-log-beef, wool-log-wool on random plains) in MineStudio's simulator with the same agent code
(:func:`minecraft_episode`, :mod:`mrsteve.minecraft.sim`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar

from mrsteve.agent.factory import AGENTS, build_agent
from mrsteve.env import make_env
from mrsteve.eval.capacity import GRID_AGENTS, GRID_TASKS, capacity_table, save_capacity_plot
from mrsteve.eval.experiment import (
    AGENT_PARTS,
    MODE_SELECTOR_OPTIONS,
    AgentOptions,
    Experiment,
    Summaries,
)
from mrsteve.eval.records import Record
from mrsteve.eval.results import format_metric, format_table, mean_stderr
from mrsteve.eval.spec import Group, RunSpec
from mrsteve.eval.trace import keep_trace, requested_trace
from mrsteve.naming import check_name, choose
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

    task: str | None = None
    """Task(s) of the suite, e.g. water-log-water (comma-separated, or 'all'; default: all, or
    with a --capacity grid on aba-sparse the six of the paper's memory-constraint figure)."""
    agent: str | None = None
    """The agents to run, or 'all' (default: mrsteve, or with a --capacity grid the figure's:
    mrsteve, pm, em, fm, steve1)."""
    obs_size: tuple[int, int] | None = None
    """``(height, width)`` of the observations (default: the environment's)."""
    world: str = "voxel"
    """voxel (the package's world) or minecraft (MineStudio's simulator with the release's ABA
    tasks on random plains; needs MineStudio, Java 8 and the Minecraft engine)."""

    def __post_init__(self) -> None:
        self.agents  # noqa: B018 (its checks, its messages)
        super().__post_init__()
        self.cells(self.agents)  # a capacity for agents without a memory: refused now
        check_name(self.world, WORLDS, "world")
        if self.world == "minecraft":
            check_minecraft(self)

    @property
    def agents(self) -> list[str]:
        if self.agent is None:
            return list(GRID_AGENTS) if self.grid else ["mrsteve"]
        return choose(self.agent, list(AGENTS), "agent")

    @property
    def grid(self) -> bool:
        """Several capacities: the memory-constraint grid."""
        return len(self.capacities) > 1


def sequential_episode(spec: RunSpec) -> Record:
    """One episode of ``spec.task`` (a :class:`SequentialRun`) for the agent its tree describes:
    success, duration and Explore-mode steps of each sub-task."""
    task = spec.task
    if isinstance(task, MinecraftRun):
        return minecraft_episode(spec)
    modes = ModeSteps(has_modes=spec.agent.memory is not None)
    trace = requested_trace()
    agent = build_agent(spec.agent)
    with make_env(**env_kwargs(task, task.obs_size)) as env:
        result = run_tasks(env, agent, task.items, seed=spec.seed, max_steps=task.max_steps,
                           callbacks=[modes, *([trace] if trace is not None else [])])
        record = {**sequential_record(task, result), **modes.record(task.labels)}
        return keep_trace(record, trace, agent, env, spec)


WORLDS = ("voxel", "minecraft")
"""Where sequential tasks run (``--world``)."""

GROUND_TRUTH = frozenset({"depth", "semantic"})
"""The frames the embedded world renders and Minecraft does not."""

MINECRAFT_WORLD = "plains_unbounded"
"""The package's world recipe that stands for Minecraft's random plains in a Minecraft run's
spec (it sets the agent's exploration patch for an unbounded world)."""


@dataclass(frozen=True)
class MinecraftRun(SequentialRun):
    """A sequential task run in Minecraft: the release's set-up of the task
    (:func:`mrsteve.minecraft.sim.aba_tasks`) in MineStudio's simulator."""

    simulator: str = "minecraft"

    @classmethod
    def of_run(cls, run: SequentialRun) -> MinecraftRun:
        return cls(**{field.name: getattr(run, field.name) for field in dataclasses.fields(run)})


def check_minecraft(config: SequentialConfig) -> None:
    """A ``ValueError`` (one line) when ``config`` cannot run in Minecraft: MineStudio, Java or
    the engine missing (checked first, before any work), a part that reads depth or semantic
    frames, or a task the release does not set up there."""
    from mrsteve.minecraft.sim import aba_tasks, minecraft_unavailable

    problem = minecraft_unavailable()
    if problem is not None:
        raise ValueError(problem)
    ground_truth = [f"--{option.replace('_', '-')} {name}"
                    for option, registry in config.one_of.items()
                    if GROUND_TRUTH & set(registry[(name := getattr(config, option))].reads)]
    if ground_truth:
        raise ValueError(f"--world minecraft renders no depth or semantic frame: replace "
                         f"{', '.join(ground_truth)} by parts that read the frame alone (those "
                         f"of --parts learned, the default)")
    if config.task not in (None, "all"):
        choose(config.task, list(aba_tasks()), "Minecraft task")


def minecraft_groups(experiment: str, tasks: list[SequentialTask],
                     config: SequentialConfig) -> list[Group]:
    """The groups of ``tasks`` in Minecraft: those the release sets up there, on its random plains
    (the exploration patch of an unbounded world, :data:`MINECRAFT_WORLD`)."""
    from mrsteve.minecraft.sim import aba_tasks

    tasks = [dataclasses.replace(task, world=MINECRAFT_WORLD) for task in tasks
             if task.name in aba_tasks()]
    groups = sequential_groups(experiment, tasks, config, config.agents, config.obs_size)
    return [dataclasses.replace(group, spec=dataclasses.replace(
        group.spec, task=MinecraftRun.of_run(group.spec.task))) for group in groups]


def minecraft_episode(spec: RunSpec, make_sim: Callable[[Any, int], Any] | None = None
                      ) -> Record:
    """One episode of a :class:`MinecraftRun` in MineStudio's simulator (``make_sim(task, seed)``,
    by default :func:`mrsteve.minecraft.sim.make_minecraft_sim`): the record of
    :func:`sequential_episode`."""
    from mrsteve.minecraft.sim import aba_subtasks, aba_tasks, make_minecraft_sim, run_item_tasks

    task = spec.task
    setup = aba_tasks()[task.name]
    modes = ModeSteps(has_modes=spec.agent.memory is not None)
    sim = (make_sim or make_minecraft_sim)(setup, spec.seed)
    try:
        result = run_item_tasks(sim, build_agent(spec.agent), aba_subtasks(setup),
                                seed=spec.seed, max_steps=task.max_steps, callbacks=[modes])
    finally:
        sim.close()
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


class SequentialExperiment(Experiment):
    """A suite of sequential item tasks."""

    suite: ClassVar[str]
    grid_tasks: ClassVar[tuple[str, ...] | None] = None
    """The tasks of a --capacity grid when --task is not given (``None``: all)."""
    config_type = SequentialConfig
    choices = {"agent": AGENTS}
    options = ("task", "agent", "capacity", *AGENT_PARTS, *MODE_SELECTOR_OPTIONS, "world")
    default_episodes = 10
    traces = True
    episode = staticmethod(sequential_episode)

    def tasks(self, config: SequentialConfig) -> list[SequentialTask]:
        names = config.task
        if names is None:
            names = ",".join(self.grid_tasks) if config.grid and self.grid_tasks else "all"
        return find_tasks(self.suite, names)

    def groups(self, config: SequentialConfig) -> list[Group]:
        if config.world == "minecraft":
            return minecraft_groups(self.name, self.tasks(config), config)
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


class AbaSparse(SequentialExperiment):
    """ABA-Sparse (paper Section 4.2): obtain A, then B, then A again within 12K steps.

    A is sparse (water, beef, wool, milk) and B dense (log, dirt, seeds, leaves, sand); map1 for
    water, map2 for beef, wool and milk, map3 when B is sand. The task changes only on success and
    each task starts with the item it needs; success is read from the inventory.

    --capacity with several values is the memory-constraint grid (appendix "ABA-Sparse Tasks with
    Memory Constraints"): by default on the six tasks and five agents of its figure.
    """

    name = suite = "aba-sparse"
    grid_tasks = GRID_TASKS
    examples = ("--task water-log-water --agent mrsteve,steve1 --episodes 5",
                "--capacity 100,500,1000,2000,12000 --episodes 20 --workers 2 --out runs/capacity")


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
    options = ("agent", "capacity", *AGENT_PARTS)


ABA_SPARSE, ABA_RANDOM, SEQ4 = AbaSparse(), AbaRandom(), Seq4()
