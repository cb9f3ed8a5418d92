"""The long-horizon experiments (paper Section 4.4, Figure 7): Long-Instruction and
Long-Navigation, 500K steps on 200 x 200 maps with 20K frames of memory.

One episode is one record of the sweep (:mod:`mrsteve.eval.sweep`), so a sweep resumes episode by
episode; each record holds the per-task (per-goal) outcomes and, with ``--rss-every``, the
process's resident memory along the episode.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mrsteve.agent.factory import AGENTS, build_agent
from mrsteve.digests import OMITTED_WHEN_DEFAULT
from mrsteve.env import make_env
from mrsteve.eval.experiment import AGENT_PARTS, MODE_SELECTOR_OPTIONS, AgentOptions, Experiment
from mrsteve.eval.records import Record
from mrsteve.eval.results import format_metric, format_table
from mrsteve.eval.spec import Group, RunSpec
from mrsteve.eval.trace import keep_trace, requested_trace
from mrsteve.naming import check_name, choose
from mrsteve.perception import make_encoder
from mrsteve.protocols import Agent
from mrsteve.tasks import long_instruction as li
from mrsteve.tasks import long_navigation as ln
from mrsteve.tasks.driver import EpisodeCallback
from mrsteve.world.world import HERDS

DEFAULT_AGENTS = "mrsteve,pm,em,fm,steve1"

PAPER_TASKS_SOLVED = {"mrsteve": "> 80", "pm": "> 80", "em": "~ 50", "fm": "< 50",
                      "steve1": "< 50", "center-embed": "< 50", "pmc-fm": "< 50"}
"""Figure 7 (left), tasks solved in 500K steps (read off the bars; the text: Place Event and Place
over 80, Event about 50, the rest under 50)."""

PAPER_GOALS_REACHED = {"mrsteve": "~ 70", "em": "~ 70", "pm": "< 20", "fm": "< 10",
                       "steve1": "< 10", "center-embed": "< 10", "pmc-fm": "< 10"}
"""Figure 7 (right), goals reached (the text: Place Event and Event about 70, Place under 20, the
rest under 10)."""


@dataclass(frozen=True)
class LongTaskConfig(AgentOptions):
    """A long-horizon sweep (the paper's settings)."""

    agent: str = DEFAULT_AGENTS
    """The agents to run, or 'all'."""
    capacity: str | None = "20000"
    """Memory capacity in frames (the paper: 20K), or a comma-separated grid of them."""
    steps: int = 500_000
    """Steps per episode (the paper: 500K)."""
    task_limit: int = 20_000
    """Steps after which a task (a goal) is given up and the next one given (the paper: 20K)."""
    radius: float = 5.0
    """Long-Navigation: a goal is reached within this many blocks of where its frame was seen."""
    rss_every: int = 0
    """Sample the resident memory every this many steps into each record (0: never)."""
    spawn_cycle: str = "on"
    """Long-Instruction: Minecraft 1.11's passive spawn cycle on the map (on, as the paper's
    episodes ran in Minecraft: killed cows and sheep come back to their pastures; off: killed
    animals never come back)."""
    log_regrowth: int = 0
    """Long-Instruction, a diagnostic beyond Minecraft and the paper: a broken oak log comes back
    in its cell after this many steps, so the map's logs cannot run out (0: never, as in
    Minecraft). A run with it does not compare with the paper's figures."""
    herds: str = "wander"
    """Long-Instruction: how the cows and sheep move (wander: as in Minecraft; static, a
    diagnostic beyond Minecraft and the paper: each stands where it first stood and a killed one
    comes back at that spot, so a sighting stays true however old it is; a run with it does not
    compare with the paper's figures)."""

    def __post_init__(self) -> None:
        choose(self.agent, list(AGENTS), "agent")
        check_name(self.spawn_cycle, ("on", "off"), "spawn_cycle")
        check_name(self.herds, HERDS, "herds")
        super().__post_init__()
        if min(self.steps, self.task_limit) < 1 or self.rss_every < 0:
            raise ValueError(f"steps and task_limit must be >= 1 and rss_every >= 0, got "
                             f"{self.steps}, {self.task_limit}, {self.rss_every}")
        if isinstance(self.log_regrowth, bool) or not isinstance(self.log_regrowth, int) \
                or self.log_regrowth < 0:
            raise ValueError(f"log_regrowth must be a non-negative integer (steps; 0: never), "
                             f"got {self.log_regrowth!r}")
        if not self.radius > 0:
            raise ValueError(f"radius must be positive, got {self.radius}")

    @property
    def agents(self) -> list[str]:
        return choose(self.agent, list(AGENTS), "agent")


@dataclass(frozen=True)
class LongInstructionTask:
    """The task part of a Long-Instruction episode's run spec."""

    world: str
    steps: int
    task_limit: int
    noop_steps: int
    rss_every: int
    spawn_cycle: bool = False
    """Minecraft's passive spawn cycle runs on the map."""
    log_regrowth: int = field(default=0, metadata=OMITTED_WHEN_DEFAULT)
    """Steps after which a broken oak log comes back (0: never; a diagnostic)."""
    herds: str = field(default="wander", metadata=OMITTED_WHEN_DEFAULT)
    """How the pastures' animals move (wander, or static: a diagnostic)."""


@dataclass(frozen=True)
class LongNavigationTask:
    """The task part of a Long-Navigation episode's run spec."""

    world: str
    steps: int
    goal_limit: int
    radius: float
    rss_every: int
    route: ln.RouteConfig


def resident_memory(spec: RunSpec, agent: Agent) -> list[EpisodeCallback]:
    """The resident-memory sampler of a task that asks for one (``rss_every``), counting the
    frames of the agent's memory when its tree has one."""
    if not spec.task.rss_every:
        return []
    frames = (lambda: len(agent.memory)) if spec.agent.memory is not None else (lambda: None)
    return [li.ResidentMemory(spec.task.rss_every, frames)]


def long_instruction_episode(spec: RunSpec) -> Record:
    """One Long-Instruction episode: tasks solved, and each task's item, start and duration."""
    task = spec.task
    trace = requested_trace()
    with make_env(world=task.world, noop_steps=task.noop_steps,
                  spawn_cycle=task.spawn_cycle, log_regrowth=task.log_regrowth,
                  herds=task.herds) as env:
        agent = build_agent(spec.agent)
        sampler = resident_memory(spec, agent)
        record = li.run_long_instruction(env, agent, spec.seed, steps=task.steps,
                                         task_limit=task.task_limit,
                                         callbacks=[*sampler, *([trace] if trace else [])])
        keep_trace(record, trace, agent, env, spec)
    if sampler:
        record["rss"] = sampler[0].samples
    return record


def long_navigation_episode(spec: RunSpec) -> Record:
    """One Long-Navigation episode: goals reached, and each goal's scene, frame and duration."""
    task = spec.task
    trace = requested_trace()
    with make_env(world=task.world) as env:
        agent = build_agent(spec.agent)
        sampler = resident_memory(spec, agent)
        record = ln.run_long_navigation(env, agent, make_encoder(spec.agent.encoder.kind),
                                        spec.seed, steps=task.steps, goal_limit=task.goal_limit,
                                        radius=task.radius, route=task.route,
                                        callbacks=[*sampler, *([trace] if trace else [])])
        keep_trace(record, trace, agent, env, spec)
    if sampler:
        record["rss"] = sampler[0].samples
    return record


class LongTaskExperiment(Experiment):
    """Shared by the two long-horizon experiments."""

    config_type = LongTaskConfig
    choices = {"agent": AGENTS}
    default_episodes = 5  # the paper: 5 episodes per agent
    world: str
    metric: str
    paper: dict[str, str]

    def task(self, config: LongTaskConfig):
        """The task part of the run specs."""
        raise NotImplementedError

    def groups(self, config: LongTaskConfig) -> list[Group]:
        task = self.task(config)
        return [Group(RunSpec(self.name, config.cell_label(agent, capacity), self.name, task,
                              config.agent_tree(agent, self.world, capacity)), cost=config.steps)
                for agent, capacity in config.cells(config.agents)]

    def metrics(self, config: LongTaskConfig) -> tuple[str, ...]:
        return (self.metric, self.metric.replace("_solved", "_given").replace("_reached",
                                                                              "_given"),
                "mean_duration")

    def table(self, config, groups, summaries) -> str:
        """Each group's counts beside the paper's figure; a run in a world the paper's lacks
        (logs that grow back, static herds: diagnostics) gets none."""
        given = self.metrics(config)[1]
        header = ["agent", self.metric.replace("_", " "), given.replace("_", " "),
                  "steps per success"]
        rows = [[group.label, format_metric(summaries[group.label][self.metric], 1),
                 format_metric(summaries[group.label][given], 1),
                 format_metric(summaries[group.label]["mean_duration"], 0)] for group in groups]
        diagnostics = [*(["logs grow back"] if getattr(config, "log_regrowth", 0) else []),
                       *(["static herds"] if getattr(config, "herds", "wander") != "wander"
                         else [])]
        if diagnostics:
            return (format_table(header, rows)
                    + f"\n({', '.join(diagnostics)}: not the paper's world, no figure)")
        return format_table([*header, "paper (500K steps)"],
                            [[*row, self.paper.get(group.agent, "-")]
                             for row, group in zip(rows, groups, strict=True)])

    def plot_summary(self, config, groups, summaries, plots):
        """Figure 7's bars: the metric per agent, standard errors as whiskers."""
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        from mrsteve.eval.plots import save_figure

        figure = Figure(figsize=(max(4.0, 0.8 * len(groups)), 3.2))
        FigureCanvasAgg(figure)
        axes = figure.add_subplot()
        values = [summaries[group.label][self.metric] for group in groups]
        axes.bar([group.label for group in groups], [v["mean"] for v in values],
                 yerr=[v["stderr"] for v in values], capsize=3)
        axes.set_ylabel(self.metric.replace("_", " "))
        axes.set_title(f"{self.name}, {config.steps // 1000}K steps", fontsize=9)
        figure.tight_layout()
        return save_figure(figure, plots / f"{self.name}.png")


class LongInstruction(LongTaskExperiment):
    """Long-Instruction (paper Section 4.4, Figure 7): random "Obtain X" tasks, X in water, beef,
    wool, log, dirt, seeds, one after another on the 200 x 200 long_instruction map with
    Minecraft's passive spawn cycle (--spawn-cycle); a task changes on success or after
    --task-limit steps. Metric: tasks solved in --steps steps."""

    name = "long-instruction"
    examples = ("--agent mrsteve,fm --steps 100000 --episodes 1 --workers 2",
                "--steps 500000 --rss-every 10000 --workers 2 --out runs/long-instruction")
    options = ("agent", "steps", "capacity", "task_limit", "rss_every", "spawn_cycle",
               "log_regrowth", "herds", *AGENT_PARTS, *MODE_SELECTOR_OPTIONS)
    episode = staticmethod(long_instruction_episode)
    traces = True
    world, metric, paper = li.WORLD, "tasks_solved", PAPER_TASKS_SOLVED

    def task(self, config: LongTaskConfig) -> LongInstructionTask:
        return LongInstructionTask(li.WORLD, config.steps, config.task_limit, li.NOOP_STEPS,
                                   config.rss_every, config.spawn_cycle == "on",
                                   config.log_regrowth, config.herds)


class LongNavigation(LongTaskExperiment):
    """Long-Navigation (paper Section 4.4, Figure 7): a scripted exploration phase of 2K steps at
    each of six scenes (burning zombies, water, sugar cane that blows up, spider spawn, trees, a
    house) on the long_navigation map, then image goals drawn from each scene's early frames,
    one after another until --steps. Metric: goals reached (within --radius blocks)."""

    name = "long-navigation"
    examples = ("--agent mrsteve,em --steps 100000 --episodes 1 --workers 2",)
    options = ("agent", "steps", "capacity", "task_limit", "radius", "rss_every", *AGENT_PARTS,
               "image_goal_target", *MODE_SELECTOR_OPTIONS)
    episode = staticmethod(long_navigation_episode)
    traces = True
    world, metric, paper = ln.WORLD, "goals_reached", PAPER_GOALS_REACHED

    def task(self, config: LongTaskConfig) -> LongNavigationTask:
        return LongNavigationTask(ln.WORLD, config.steps, config.task_limit, config.radius,
                                  config.rss_every, ln.RouteConfig())


LONG_INSTRUCTION, LONG_NAVIGATION = LongInstruction(), LongNavigation()
