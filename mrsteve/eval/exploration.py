"""The Exploration experiment (Section 4.1, Table 1; appendix "Exploration Experiments Details").

An explorer starts at the centre of Map 1 (``map1``: 100 x 100 blocks inside a wall, a stone
mountain, a pond in a hollow, trees) and explores for 6,000 steps; the task
(:mod:`mrsteve.tasks.exploration`) scores Map Coverage and Revisit Count.

Explorers (:data:`EXPLORERS`, the columns of Table 1 with the paper's figures in
:data:`PAPER_RESULTS`): ``count-based`` (MrSteve: count-based goals over our VPT-Nav, the
navigator ``--parts`` names: by default the learned one over the RGB frame and the pose, with
``--parts stand-in`` the depth one), ``count-based-straight`` (count-based goals over a navigator
without terrain skills, for the paper's DQN low level), ``plan4mc`` (Plan4MC's direction-picking
high level over our VPT-Nav),
``plan4mc-straight`` (Plan4MC: both its levels' stand-ins), ``rnn`` and ``rnn-straight`` (the
same two with Plan4MC's high level as trained, an LSTM, :mod:`mrsteve.control.direction_policy`)
and ``go-explore`` (STEVE-1 told to
"go explore": the instruction policy ``--parts`` names, by default the learned one over the RGB
frame; beside the scripted skills the wanderer, which reads the depth frame). See :mod:`mrsteve.control.explorers` for how each stands in for the original. No
explorer knows the map: the count-based ones tile the visitation map (128 x 128 around the start,
growing) with G = 15 patches (the paper's setting for 100 x 100 maps) and give up goals their
navigator finds out of reach (behind the walls); the metrics are measured by the task on the
walkable area inside the walls.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from mrsteve.agent.factory import EXPLORERS, build_agent, explorer_agent_config
from mrsteve.agent.parts import AgentParts
from mrsteve.control.goals import FRONTIERS
from mrsteve.digests import OMITTED_WHEN_DEFAULT
from mrsteve.env import make_env
from mrsteve.env.voxel_env import DEFAULT_OBS_SIZE
from mrsteve.eval.experiment import Experiment, LookOption
from mrsteve.eval.records import Record
from mrsteve.eval.results import format_metric, format_table
from mrsteve.eval.spec import Group, RunSpec
from mrsteve.naming import check_name, choose
from mrsteve.tasks.driver import compact_trajectory
from mrsteve.tasks.exploration import METRICS, run_exploration
from mrsteve.world.recipes import WORLD_RECIPES

PAPER_RESULTS = {
    "count-based": (84.42, 0.38),  # Count-based + VPT-Nav (ours)
    "count-based-straight": (31.83, 4.47),  # Count-based + DQN
    "plan4mc": (29.82, 4.72),  # RNN-based + VPT-Nav
    "plan4mc-straight": (16.36, 6.2),  # RNN-based + DQN (Plan4MC)
    "count-based-dqn": (31.83, 4.47),
    "rnn": (29.82, 4.72),
    "rnn-straight": (16.36, 6.2),
    "rnn-dqn": (16.36, 6.2),
    "go-explore": (50.77, 2.68),  # STEVE-1 "go explore"
}
"""Table 1 of the paper, ``(map coverage %, revisit count)`` for the column each agent stands in
for (the RNN-based columns twice: Plan4MC's trained high level, ``rnn``, and its scripted
stand-in, ``plan4mc``); an agent of another package's has none."""

WISE_COVERAGE = {"count-based": 69.0}
"""Coverage % of the 384 x 384 square around the start after 40K steps that WISE (TMLR 2026)
reports for MrSteve's explorer."""
WISE_OWN_COVERAGE = 83.0
"""... and for WISE's own explorer."""

PAPER_SETUP = {"world": "map1", "area": None, "steps": 6000, "grid": 11, "linger_steps": 300}
"""Table 1's set-up: its figures stand beside a run only when the run's config matches it."""
WISE_SETUP = {"world": "plains_unbounded", "area": 384.0, "steps": 40000}
"""WISE's set-up (coverage of 384 x 384 around the start after 40K steps), likewise."""


@dataclass(frozen=True)
class ExplorationTaskConfig(AgentParts, LookOption):
    """The Exploration experiment's set-up (the paper's values). Of the agent's parts
    (:class:`~mrsteve.agent.parts.AgentParts`) the explorers that walk with VPT-Nav take the
    navigator, and STEVE-1 ("go explore") the instruction policy: learned by default, the
    wanderer beside the scripted skills."""

    agent: str = "count-based"
    """The explorers to run (Table 1's columns), or 'all'."""
    direction_weights: str | None = None
    """A weights file (`mrsteve train direction-policy`) Plan4MC's learned high level (the rnn
    explorers) runs with in place of the shipped one."""
    steps: int = 6000
    """Steps per episode (the paper: 6K)."""
    world: str = "map1"
    """The world recipe (the paper: Map 1, 100 x 100 with walls; WISE's follow-up: 384 x 384 of
    an unbounded world, e.g. plains_unbounded with --area 384 --steps 40000)."""
    area: float | None = None
    """Measure coverage on the square of this side (blocks) centred on the start instead of the
    walkable area inside the walls (needed on an unbounded world)."""
    patch_size: float | None = None
    """Goal patch side G of the count-based selector; by default 15 % of the map's side or of
    --area (the paper: 15 on 100 x 100 maps, 30 on 200 x 200)."""
    frontier: str = field(default="nearest", metadata=OMITTED_WHEN_DEFAULT)
    """How the count-based explorers pick among unpainted patches: nearest (the paper's: the
    one nearest the agent, among the patches the visitation map covers) or rings (for an
    unbounded world, beyond the paper: also the patches just beyond the map's edge, filling
    square rings around the start from the inside out)."""
    grid: int = 11
    """Cells per side of the coverage grid (the paper: 11 x 11)."""
    linger_steps: int = 300
    """Revisit Count counts the cells where the agent spent more steps than this (the paper:
    300)."""
    trajectory_every: int = 5
    """The record keeps every this-many-th position of the trajectory (for plots)."""
    obs_size: tuple[int, int] = DEFAULT_OBS_SIZE
    """``(height, width)`` of the observations."""

    def __post_init__(self) -> None:
        choose(self.agent, list(EXPLORERS), "agent")
        check_name(self.frontier, FRONTIERS, "frontier")
        super().__post_init__()
        check_name(self.world, WORLD_RECIPES, "world")
        self.looks  # noqa: B018 (its checks, its messages)
        if min(self.steps, self.grid, self.trajectory_every) < 1:
            raise ValueError(f"steps, grid and trajectory_every must be >= 1, got {self}")
        for name in ("patch_size", "area"):
            value = getattr(self, name)
            if value is not None and not value > 0:
                raise ValueError(f"{name} must be positive, got {value}")
        if self.area is None and WORLD_RECIPES[self.world].size is None:
            raise ValueError(f"world {self.world!r} is unbounded: give --area, the side of the "
                             f"square around the start to measure coverage on (e.g. 384)")

    @property
    def goal_patch(self) -> float:
        """G: as given, or 15 % of the measured square's side, rounded to a block."""
        if self.patch_size is not None:
            return self.patch_size
        side = self.area if self.area is not None else min(WORLD_RECIPES[self.world].size) - 2
        return float(round(0.15 * side))

    @property
    def agents(self) -> list[str]:
        return choose(self.agent, list(EXPLORERS), "agent")

    def matches(self, setup: dict) -> bool:
        """Whether this set-up measures what ``setup`` did (:data:`PAPER_SETUP`,
        :data:`WISE_SETUP`): the same world, area, steps (and grid)."""
        return self.look == "day" and all(getattr(self, name) == value
                                          for name, value in setup.items())


@dataclass(frozen=True)
class ExplorationTask:
    """The task part of an exploration episode's run spec."""

    world: str
    steps: int
    grid: int
    linger_steps: int
    trajectory_every: int
    obs_size: tuple[int, int]
    area: float | None = None
    look: str = field(default="day", metadata=OMITTED_WHEN_DEFAULT)


def not_comparable(source: str, setup: dict) -> str:
    """The line saying why ``source``'s figures are left out of a table."""
    words = ", ".join(f"{name.replace('_', ' ')} {value:g}" if isinstance(value, float)
                      else f"{name.replace('_', ' ')} {value}"
                      for name, value in setup.items() if value is not None)
    return (f"{source}'s figures are left out: not comparable, this run's set-up differs from "
            f"theirs ({words}).")


def exploration_episode(spec: RunSpec) -> Record:
    """One episode of the explorer the spec's tree describes: metrics, goals and the trajectory
    (every ``trajectory_every``-th position, rounded to 0.01 block)."""
    task = spec.task
    with make_env(world=task.world, obs_size=task.obs_size, look=task.look) as env:
        episode = run_exploration(env, build_agent(spec.agent), seed=spec.seed, steps=task.steps,
                                  grid=task.grid, linger_steps=task.linger_steps, area=task.area)
    return {
        **episode.metrics,
        "trajectory": compact_trajectory(episode.trajectory, task.trajectory_every),
        "goals": np.round(episode.goals, 2).tolist(),
    }


class Exploration(Experiment):
    """Exploration (paper Table 1): Map Coverage and Revisit Count.

    The explorer starts at the centre of Map 1 (or of --world) and explores for --steps steps. Map
    Coverage is the percentage of an 11 x 11 grid over the walkable area (inside the walls), or
    over the --area square centred on the start, that the trajectory enters; Revisit Count the
    mean number of returns to the cells where it spent over 300 steps.
    """

    name = "exploration"
    examples = ('--agent count-based,go-explore --episodes 5 --out runs/exploration', '--agent all --workers 2',
                '--world plains_unbounded --area 384 --steps 40000 --agent count-based --workers 2')
    config_type = ExplorationTaskConfig
    choices = {"agent": EXPLORERS}
    options = ("agent", "parts", "navigator", "navigator_weights", "direction_weights",
               "vpt_nav_weights", "instruction_policy", "steve1_weights", "steve1_prior",
               "mineclip_weights", "steps", "world", "area", "patch_size", "frontier", "look")
    agent_options = ("parts", "navigator", "navigator_weights", "direction_weights",
                     "vpt_nav_weights", "instruction_policy", "steve1_weights", "steve1_prior",
                     "mineclip_weights", "frontier")
    default_episodes = 20
    episode = staticmethod(exploration_episode)

    def groups(self, config: ExplorationTaskConfig) -> list[Group]:
        groups = []
        for look in config.looks:
            task = ExplorationTask(config.world, config.steps, config.grid, config.linger_steps,
                                   config.trajectory_every, tuple(config.obs_size), config.area,
                                   look)
            suffix = "" if look == "day" else f"-{look}"
            groups += [Group(RunSpec(self.name, f"{name}{suffix}", f"exploration{suffix}", task,
                                     explorer_agent_config(
                                         name, patch_size=config.goal_patch,
                                         navigator=config.navigator,
                                         navigator_weights=config.navigator_weights,
                                         direction_weights=config.direction_weights,
                                         instruction_policy=config.instruction_policy,
                                         weights_files=config.weights_files,
                                         frontier=config.frontier)),
                             cost=config.steps)
                       for name in config.agents]
        return groups

    def metrics(self, config: ExplorationTaskConfig) -> tuple[str, ...]:
        return METRICS

    def table(self, config, groups, summaries) -> str:
        if config.area is not None:
            return self._area_table(config, groups, summaries)
        paper = config.matches(PAPER_SETUP)
        rows = []
        for group in groups:
            summary = summaries[group.label]
            reported = PAPER_RESULTS.get(group.agent)
            figures = ([] if not paper else ["-", "-"] if reported is None
                       else [f"{reported[0]:.2f}", f"{reported[1]:.2f}"])
            rows.append([group.label, format_metric(summary["map_coverage"]),
                         format_metric(summary["revisit_count"]), *figures])
        table = format_table(["agent", "map coverage %", "revisit count",
                              *(["paper coverage %", "paper revisits"] if paper else [])], rows)
        return table if paper else f"{table}\n{not_comparable('Table 1', PAPER_SETUP)}"

    @staticmethod
    def _area_table(config, groups, summaries) -> str:
        wise = config.matches(WISE_SETUP)
        rows = []
        for group in groups:
            summary = summaries[group.label]
            reported = WISE_COVERAGE.get(group.agent)
            figure = ["-" if reported is None else f"{reported:.0f}"] if wise else []
            rows.append([group.label, format_metric(summary["map_coverage"]),
                         format_metric(summary["revisit_count"]), *figure])
        table = format_table(["agent", f"coverage % of {config.area:g} x {config.area:g}",
                              "revisit count", *(["WISE's report %"] if wise else [])], rows)
        if not wise:
            return f"{table}\n{not_comparable('WISE (TMLR 2026)', WISE_SETUP)}"
        return (f"{table}\nWISE (TMLR 2026) reports MrSteve's coverage of 384 x 384 after 40K "
                f"steps at {WISE_COVERAGE['count-based']:.0f} % and its own at "
                f"{WISE_OWN_COVERAGE:.0f} %.")

    def plot_episode(self, record: Record, group: Group, path: Path) -> None:
        from mrsteve.eval.plots import save_trajectory_plot, world_blocks

        trajectory, goals = np.asarray(record["trajectory"]), np.asarray(record["goals"])
        blocks, corner = world_blocks(group.spec.task.world, record["seed"],
                                      covering=np.concatenate([trajectory, goals.reshape(-1, 2)]))
        save_trajectory_plot(
            path, blocks, trajectory - corner, goals=goals.reshape(-1, 2) - corner,
            goals_label="exploration goals",
            title=f"{record['agent']}, seed {record['seed']}: coverage "
                  f"{record['map_coverage']:.1f} %, revisits {record['revisit_count']:.2f}",
        )  # fmt: skip


EXPLORATION = Exploration()
