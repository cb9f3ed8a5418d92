"""Task-conditioned exploration (paper appendix "Task-Conditioned Hierarchical Episodic
Exploration"): MrSteve's task-free count-based explorer (``mrsteve``) against the
task-conditioned one (``mrsteve-tc``, goals near Place Event Memory events that match a place
prompt such as "near pasture").

Two measurements, one experiment (``--task``):

- the appendix table: on six ABA-Sparse tasks, the success rate and the explore mode length (the
  steps the first sub-task A spent in the Explore mode, :class:`~mrsteve.eval.sequential.ModeSteps`);
- the appendix figure (``find-cow``): on Map 2, told to obtain beef (its explore prompt "near
  cow", its place prompt "near pasture"), the share of pasture among the block columns the agent
  has entered in the Explore mode, every ``--every`` steps up to ``--steps``. The pasture is read
  by the evaluator from the world's layout: the columns within roaming distance of where a cow or
  a sheep was placed. Once the agent stops exploring (it found a cow) its explored places, and so
  the ratio, stay as they were; ``explore_A`` says how long it explored.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from mrsteve.agent.factory import AGENTS, build_agent
from mrsteve.env import make_env
from mrsteve.eval.experiment import AGENT_PARTS, AgentOptions, Experiment, Summaries
from mrsteve.eval.records import Record
from mrsteve.eval.results import format_metric, format_table
from mrsteve.eval.sequential import ModeSteps, sequential_episode, sequential_groups
from mrsteve.eval.spec import Group, RunSpec
from mrsteve.naming import choose
from mrsteve.tasks.episode import run_tasks
from mrsteve.tasks.sequential import NOOP_STEPS, task_by_key

FIND_COW = "find-cow"
"""The pasture-ratio measurement's task name (key ``tc/find-cow``)."""
FIND_COW_WORLD, FIND_COW_ITEM = "map2", "beef"

PASTURE_MOBS = ("cow", "sheep")
"""The grazing mobs whose roaming areas make the pasture."""

PAPER_TABLE = {  # task: (TC success %, TC length, stderr, task-free success %, length, stderr)
    "beef-log-beef": (93, 1202.64, 67.49, 92, 1512.00, 62.37),
    "beef-leaves-beef": (90, 1269.23, 66.57, 91, 1496.10, 69.43),
    "wool-sand-wool": (98, 924.98, 56.85, 93, 1350.00, 78.80),
    "wool-dirt-wool": (84, 1303.21, 117.04, 84, 1452.00, 89.92),
    "milk-sand-milk": (86, 1197.29, 71.44, 83, 1526.48, 63.31),
    "milk-leaves-milk": (59, 1224.24, 68.79, 62, 1579.35, 64.61),
}
"""The appendix table: success rate and explore mode length, task-conditioned then task-free."""

PAPER_COLUMNS = {"mrsteve-tc": slice(0, 3), "mrsteve": slice(3, 6)}
"""Each agent's figures in :data:`PAPER_TABLE` (task-conditioned, task-free)."""

PAPER_FIGURE = ("paper (figure): task-conditioned exploration explores pastures more in the early "
                "steps; after about 2,000 steps both explore alike")
TASKS = (*PAPER_TABLE, FIND_COW)


@dataclass(frozen=True)
class TcExplorationConfig(AgentOptions):
    """The task-conditioned exploration experiment (the paper's settings)."""

    task: str = "all"
    """beef-log-beef, beef-leaves-beef, wool-sand-wool, wool-dirt-wool, milk-sand-milk,
    milk-leaves-milk (the appendix table) and find-cow (the figure), comma-separated or 'all'."""
    agent: str = "mrsteve,mrsteve-tc"
    """Agents (task-free: mrsteve; task-conditioned: mrsteve-tc), comma-separated or 'all'."""
    steps: int = 3000
    """Steps of a find-cow episode."""
    every: int = 100
    """find-cow: the pasture ratio is recorded every this many steps."""

    def __post_init__(self) -> None:
        choose(self.task, TASKS, "tc-exploration task")
        choose(self.agent, list(AGENTS), "agent")
        super().__post_init__()
        if min(self.steps, self.every) < 1 or self.every > self.steps:
            raise ValueError(f"steps and every must be >= 1 with every <= steps, got "
                             f"{self.steps} and {self.every}")

    @property
    def tasks(self) -> list[str]:
        return choose(self.task, TASKS, "tc-exploration task")

    @property
    def agents(self) -> list[str]:
        return choose(self.agent, list(AGENTS), "agent")

    @property
    def checkpoints(self) -> list[int]:
        return list(range(self.every, self.steps + 1, self.every))


@dataclass(frozen=True)
class FindCowTask:
    """The task part of a find-cow episode's run spec."""

    world: str
    item: str
    steps: int
    every: int
    pasture_mobs: tuple[str, ...]


def pasture_mask(layout: Any, mobs: tuple[str, ...] = PASTURE_MOBS) -> np.ndarray:
    """``bool[x, z]``: the block columns within roaming distance of a grazing mob's spawn."""
    size_x, size_z = layout.size
    xs, zs = np.meshgrid(np.arange(size_x) + 0.5, np.arange(size_z) + 0.5, indexing="ij")
    mask = np.zeros((size_x, size_z), dtype=bool)
    for mob in layout.mobs:
        if mob.kind in mobs:
            reach = mob.roam if mob.roam is not None else max(size_x, size_z)
            mask |= (xs - mob.x) ** 2 + (zs - mob.z) ** 2 <= reach * reach
    return mask


def pasture_ratios(positions: list[tuple[int, float, float]], mask: np.ndarray,
                   checkpoints: list[int]) -> list[float | None]:
    """At each checkpoint step, the share of the distinct block columns entered in the Explore
    mode so far that lie in the pasture (``None`` before the first)."""
    columns = np.array([(t, int(np.floor(x)), int(np.floor(z))) for t, x, z in positions],
                       dtype=np.int64).reshape(-1, 3)
    ratios: list[float | None] = []
    for step in checkpoints:
        seen = np.unique(columns[columns[:, 0] <= step, 1:], axis=0)
        if len(seen) == 0:
            ratios.append(None)
            continue
        x = np.clip(seen[:, 0], 0, mask.shape[0] - 1)
        z = np.clip(seen[:, 1], 0, mask.shape[1] - 1)
        ratios.append(float(mask[x, z].mean()))
    return ratios


class PastureTrace(ModeSteps):
    """:class:`ModeSteps` with the Explore-mode positions, and the episode's pasture (read by
    the evaluator from the world's layout)."""

    def __init__(self, mobs: tuple[str, ...] = PASTURE_MOBS, has_modes: bool = True) -> None:
        super().__init__(has_modes, positions=True)
        self.mobs = mobs
        self.mask: np.ndarray | None = None

    def on_reset(self, env, obs, frame) -> None:
        self.mask = pasture_mask(env.unwrapped.world.layout, self.mobs)


def find_cow_episode(spec: RunSpec) -> Record:
    """One find-cow episode: the agent told to obtain beef on Map 2 for ``steps`` steps."""
    task = spec.task
    trace = PastureTrace(task.pasture_mobs, has_modes=spec.agent.memory is not None)
    with make_env(world=task.world, noop_steps=NOOP_STEPS) as env:
        result = run_tasks(env, build_agent(spec.agent), (task.item,), seed=spec.seed,
                           max_steps=task.steps, callbacks=[trace])
    checkpoints = list(range(task.every, task.steps + 1, task.every))
    ratios = pasture_ratios(trace.positions, trace.mask, checkpoints)
    return {
        "steps": result.steps,
        "success_rate": 100.0 if result.successes else 0.0,
        **trace.record(("A",)),
        "pasture_share_of_map": float(trace.mask[1:-1, 1:-1].mean()),
        **{f"pasture_t{step}": ratio for step, ratio in zip(checkpoints, ratios)},
    }


def tc_episode(spec: RunSpec) -> Record:
    """The episode function: a find-cow episode, or an ABA-Sparse one."""
    if isinstance(spec.task, FindCowTask):
        return find_cow_episode(spec)
    return sequential_episode(spec)


class TcExploration(Experiment):
    """Task-conditioned exploration (paper appendix): explore mode length on ABA-Sparse tasks and
    the pasture ratio of "find cow" on Map 2, for task-free (mrsteve) and task-conditioned
    (mrsteve-tc) exploration.

    The table gives each ABA-Sparse task's success rate and the steps its first sub-task spent in
    the Explore mode beside the paper's; find-cow gives the share of pasture among the places
    explored at a few steps. --plots draws the pasture ratio over time.
    """

    name = "tc-exploration"
    examples = ('--task find-cow --episodes 5', '--task all --workers 2 --out runs/tc',)
    config_type = TcExplorationConfig
    options = ("task", "agent", "steps", "every", *AGENT_PARTS)
    default_episodes = 20
    episode = staticmethod(tc_episode)

    def groups(self, config: TcExplorationConfig) -> list[Group]:
        groups = []
        for name in config.tasks:
            if name == FIND_COW:
                task = FindCowTask(FIND_COW_WORLD, FIND_COW_ITEM, config.steps, config.every,
                                   PASTURE_MOBS)
                groups += [Group(RunSpec(self.name, f"{FIND_COW}.{agent}", f"tc/{FIND_COW}", task,
                                         config.agent_tree(agent, FIND_COW_WORLD, None)),
                                 cost=config.steps)
                           for agent in config.agents]
            else:
                groups += sequential_groups(self.name, [task_by_key(f"aba-sparse/{name}")],
                                            config, config.agents)
        return groups

    def metrics(self, config: TcExplorationConfig) -> tuple[str, ...]:
        labels = task_by_key("aba-sparse/beef-log-beef").labels
        return ("success_rate", *(f"duration_{label}" for label in labels),
                *(f"explore_{label}" for label in labels), "pasture_share_of_map",
                *(f"pasture_t{step}" for step in config.checkpoints))

    def table(self, config, groups, summaries) -> str:
        parts = []
        aba = [g for g in groups if not g.task.startswith("tc/")]
        if aba:
            rows = []
            for group in aba:
                summary, name = summaries[group.label], task_by_key(group.task).name
                column = PAPER_COLUMNS.get(group.agent)
                shown = "-"
                if column is not None:
                    success, length, stderr = PAPER_TABLE[name][column]
                    shown = f"{success}% / {length:.0f} ± {stderr:.0f}"
                rows.append([name, group.agent, format_metric(summary["success_rate"], 1),
                             format_metric(summary["explore_A"], 0), shown])
            parts.append(format_table(["task", "agent", "success %", "explore steps A",
                                       "paper success / explore"], rows)
                         + "\nexplore steps A: steps of the first sub-task in the Explore mode; "
                           "paper: mrsteve-tc = task-conditioned, mrsteve = task-free")
        cow = [g for g in groups if g.task.startswith("tc/")]
        if cow:
            shown = sorted({config.steps, *(s for s in (500, 1000, 2000, 3000)
                                            if s in config.checkpoints)})
            rows = [[group.agent, format_metric(summaries[group.label]["explore_A"], 0),
                     *(format_metric(summaries[group.label][f"pasture_t{s}"], 3)
                       for s in shown)] for group in cow]
            share = summaries[cow[0].label]["pasture_share_of_map"]
            parts.append(format_table(["find cow", "explore steps",
                                       *(f"pasture ratio t={s}" for s in shown)], rows)
                         + f"\npasture: {format_metric(share, 3)} of the map; {PAPER_FIGURE}")
        return "\n\n".join(parts)

    def plot_summary(self, config: TcExplorationConfig, groups, summaries: Summaries,
                     plots: Path) -> Path | None:
        """The appendix figure: the pasture ratio of find-cow over time, one line per agent."""
        from mrsteve.eval.curves import save_curves

        series = {group.agent: [(float(step), summaries[group.label][f"pasture_t{step}"])
                                for step in config.checkpoints]
                  for group in groups if group.task.startswith("tc/")}
        if not series:
            return None
        return save_curves(plots / "tc-exploration-pasture.png",
                           {"find cow on Map 2: pasture share of the explored places": series},
                           xlabel="step")


TC_EXPLORATION = TcExploration()
