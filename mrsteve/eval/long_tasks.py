"""The long-horizon experiments (paper Section 4.4, Figure 7): Long-Instruction and
Long-Navigation, 500K steps on 200 x 200 maps with 20K frames of memory.

One episode is one record of the sweep (:mod:`mrsteve.eval.sweep`), so a sweep resumes episode by
episode; each record holds the per-task (per-goal) outcomes and, with ``--rss-every``, the
process's resident memory along the episode.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import gymnasium as gym

import mrsteve.env  # noqa: F401  (registers mrsteve/Voxel-v0)
from mrsteve.agent.config import AgentConfig
from mrsteve.agent.factory import AGENTS, make_agent
from mrsteve.agent.mrsteve import IMAGE_GOAL_TARGETS
from mrsteve.eval.experiment import AgentOptions, Experiment, agent_on_world, config_from_options
from mrsteve.eval.results import format_metric, format_table
from mrsteve.eval.sweep import EpisodeSpec, Group, Record
from mrsteve.naming import check_name, choose
from mrsteve.perception import make_encoder
from mrsteve.tasks import long_instruction as li
from mrsteve.tasks import long_navigation as ln

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
    """mrsteve, mrsteve-tc, center-embed, pm, em, fm, pmc-fm, steve1 (comma-separated, or 'all')."""
    steps: int = 500_000
    """Steps per episode (the paper: 500K)."""
    capacity: int = 20_000
    """Memory capacity in frames (the paper: 20K)."""
    task_limit: int = 20_000
    """Steps after which a task (a goal) is given up and the next one given (the paper: 20K)."""
    radius: float = 5.0
    """Long-Navigation: a goal is reached within this many blocks of where its frame was seen."""
    rss_every: int = 0
    """Sample the resident memory every this many steps into each record (0: never)."""
    image_goal_target: str = "best"
    """Long-Navigation: which frame matching the image goal the agent targets: best (the
    highest-scoring) or nearest (nearest the agent, the release's rule for text tasks; the paper
    states none)."""

    def __post_init__(self) -> None:
        choose(self.agent, list(AGENTS), "agent")
        super().__post_init__()
        check_name(self.image_goal_target, IMAGE_GOAL_TARGETS, "image_goal_target")
        if min(self.steps, self.capacity, self.task_limit) < 1 or self.rss_every < 0:
            raise ValueError(f"steps, capacity and task_limit must be >= 1 and rss_every >= 0, "
                             f"got {self}")
        if not self.radius > 0:
            raise ValueError(f"radius must be positive, got {self.radius}")

    @property
    def agents(self) -> list[str]:
        return choose(self.agent, list(AGENTS), "agent")

    def agent_tree(self, agent: str, world: str) -> AgentConfig:
        """The configuration tree of ``agent`` on ``world``."""
        return agent_on_world(agent, world, capacity=self.capacity, encoder=self.encoder,
                              image_goal_target=self.image_goal_target,
                              searched_radius=self.searched_radius)


def _agent(name: str, world: str, config: LongTaskConfig):
    return make_agent(name, config=config.agent_tree(name, world))


def long_instruction_episode(spec: EpisodeSpec) -> Record:
    """One Long-Instruction episode: tasks solved, and each task's item, start and duration."""
    config = config_from_options(LongTaskConfig, dict(spec.options), agent=spec.agent)
    env = gym.make("mrsteve/Voxel-v0", world=li.WORLD, noop_steps=li.NOOP_STEPS)
    try:
        return li.run_long_instruction(env, _agent(spec.agent, li.WORLD, config),
                                       spec.seed, steps=config.steps,
                                       task_limit=config.task_limit,
                                       rss_every=config.rss_every or None)
    finally:
        env.close()


def long_navigation_episode(spec: EpisodeSpec) -> Record:
    """One Long-Navigation episode: goals reached, and each goal's scene, frame and duration."""
    config = config_from_options(LongTaskConfig, dict(spec.options), agent=spec.agent)
    env = gym.make("mrsteve/Voxel-v0", world=ln.WORLD)
    try:
        agent = _agent(spec.agent, ln.WORLD, config)
        return ln.run_long_navigation(env, agent, make_encoder(config.encoder), spec.seed,
                                      steps=config.steps, goal_limit=config.task_limit,
                                      radius=config.radius, rss_every=config.rss_every or None)
    finally:
        env.close()


class LongTaskExperiment(Experiment):
    """Shared by the two long-horizon experiments."""

    config_type = LongTaskConfig
    default_episodes = 5  # the paper: 5 episodes per agent
    world: str
    metric: str
    paper: dict[str, str]

    def groups(self, config: LongTaskConfig) -> list[Group]:
        options = {k: v for k, v in asdict(config).items() if k != "agent"}
        return [
            Group(self.name, name, name,
                  {"task": {**options, "world": self.world},
                   "agent": asdict(config.agent_tree(name, self.world))}, options)
            for name in config.agents
        ]

    def metrics(self, config: LongTaskConfig) -> tuple[str, ...]:
        return (self.metric, self.metric.replace("_solved", "_given").replace("_reached",
                                                                              "_given"),
                "mean_duration")

    def table(self, config, groups, summaries) -> str:
        given = self.metrics(config)[1]
        rows = [[group.agent, format_metric(summaries[(group.task, group.agent)][self.metric], 1),
                 format_metric(summaries[(group.task, group.agent)][given], 1),
                 format_metric(summaries[(group.task, group.agent)]["mean_duration"], 0),
                 self.paper.get(group.agent, "-")] for group in groups]
        return format_table(["agent", self.metric.replace("_", " "), given.replace("_", " "),
                             "steps per success", "paper (500K steps)"], rows)

    def plot_summary(self, config, summaries, plots):
        """Figure 7's bars: the metric per agent, standard errors as whiskers."""
        from matplotlib.backends.backend_agg import FigureCanvasAgg
        from matplotlib.figure import Figure

        from mrsteve.eval.plots import save_figure

        figure = Figure(figsize=(max(4.0, 0.8 * len(config.agents)), 3.2))
        FigureCanvasAgg(figure)
        axes = figure.add_subplot()
        values = [summaries[(self.name, name)][self.metric] for name in config.agents]
        axes.bar(config.agents, [v["mean"] for v in values],
                 yerr=[v["stderr"] for v in values], capsize=3)
        axes.set_ylabel(self.metric.replace("_", " "))
        axes.set_title(f"{self.name}, {config.steps // 1000}K steps", fontsize=9)
        figure.tight_layout()
        return save_figure(figure, plots / f"{self.name}.png")


class LongInstruction(LongTaskExperiment):
    """Long-Instruction (paper Section 4.4, Figure 7): random "Obtain X" tasks, X in water, beef,
    wool, log, dirt, seeds, one after another on the 200 x 200 long_instruction map; a task
    changes on success or after --task-limit steps. Metric: tasks solved in --steps steps."""

    name = "long-instruction"
    options = ("agent", "steps", "capacity", "task_limit", "rss_every", "encoder",
               "searched_radius")
    episode = staticmethod(long_instruction_episode)
    world, metric, paper = li.WORLD, "tasks_solved", PAPER_TASKS_SOLVED


class LongNavigation(LongTaskExperiment):
    """Long-Navigation (paper Section 4.4, Figure 7): a scripted exploration phase of 2K steps at
    each of six scenes (burning zombies, water, sugar cane that blows up, spider spawn, trees, a
    house) on the long_navigation map, then image goals drawn from each scene's early frames,
    one after another until --steps. Metric: goals reached (within --radius blocks)."""

    name = "long-navigation"
    options = ("agent", "steps", "capacity", "task_limit", "radius", "rss_every", "encoder",
               "image_goal_target", "searched_radius")
    episode = staticmethod(long_navigation_episode)
    world, metric, paper = ln.WORLD, "goals_reached", PAPER_GOALS_REACHED


LONG_INSTRUCTION, LONG_NAVIGATION = LongInstruction(), LongNavigation()
