"""Ablation of Place Event Memory (paper appendix "Ablation Studies on Place Event Memory"):
MrSteve on Wool-Log-Wool with the mode selector's top-k in {1, 2, 4, 10, 30}, or the place cell
size C in {1, 2, 4, 6, 12} blocks.

The varied value goes into the agent's configuration tree (``mode_selector.top_k`` or
``memory.cell_size``), from which the episode builds the agent, so every summary says which value
produced it. The appendix gives no memory capacity for the ablation: its Wool-Log-Wool is the
ABA-Sparse task, run with unlimited memory (Section 4.2), which is the default here; ``--capacity``
constrains it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from mrsteve.agent.config import AgentConfig
from mrsteve.agent.factory import agent_config
from mrsteve.eval.experiment import Experiment, Summaries, agent_on_world
from mrsteve.eval.results import format_metric, format_table
from mrsteve.eval.sequential import sequential_run
from mrsteve.eval.sweep import EpisodeSpec, Group, Record
from mrsteve.naming import check_name
from mrsteve.tasks.sequential import SequentialTask, find_tasks, task_by_key

VARIED = {"top-k": (1, 2, 4, 10, 30), "cell-size": (1, 2, 4, 6, 12)}
"""What the ablation varies, with the paper's values."""

DEFAULTS = {"top-k": 30, "cell-size": 6}
"""MrSteve's own values (the paper's Table "Specifications")."""

PAPER_FINDING = {
    "top-k": "paper: a small k does not largely affect the success rate",
    "cell-size": "paper: bigger place cells slightly lower the success rate (a large cell's centre "
                 "embedding summarises its place poorly)",
}
"""The appendix's findings (its figure has no numbers in the text)."""


@dataclass(frozen=True)
class AblationConfig:
    """An ablation sweep (the paper's settings)."""

    vary: str = "top-k"
    """What to vary: top-k (the mode selector's clusters per read) or cell-size (the place cell
    side C, blocks)."""
    values: str = "paper"
    """Comma-separated values, or 'paper' (top-k: 1,2,4,10,30; cell-size: 1,2,4,6,12)."""
    task: str = "wool-log-wool"
    """The ABA-Sparse task (the paper: wool-log-wool; comma-separated for several)."""
    agent: str = "mrsteve"
    """The agent (the paper: mrsteve, Place Event Memory)."""
    capacity: int | None = None
    """Memory capacity in frames (default: unlimited, as the ABA-Sparse task)."""
    encoder: str = "semantic"
    """The agent's encoder: semantic (the renderer's semantic frame) or pixels (the learned
    encoder over RGB frames)."""

    def __post_init__(self) -> None:
        check_name(self.vary, VARIED, "ablation (--vary)")
        self.points  # noqa: B018 (checks the values)
        find_tasks("aba-sparse", self.task)
        agent_config(self.agent, encoder=self.encoder)
        if self.capacity is not None and (isinstance(self.capacity, bool) or self.capacity < 1):
            raise ValueError(f"capacity must be >= 1 frames or None, got {self.capacity!r}")

    @property
    def points(self) -> tuple[float, ...]:
        """The varied values (ints for top-k, blocks for cell-size)."""
        if self.values.strip() == "paper":
            return VARIED[self.vary]
        kind = int if self.vary == "top-k" else float
        accepted = (f"comma-separated {'integers >= 1' if kind is int else 'sizes > 0 blocks'} "
                    f"or 'paper' ({','.join(map(str, VARIED[self.vary]))})")
        points = []
        for part in self.values.split(","):
            try:
                value = kind(part.strip())
            except ValueError:
                value = 0
            if not value > 0:
                raise ValueError(f"--values for {self.vary} must be {accepted}, got {part!r}")
            if value in points:
                raise ValueError(f"--values: {part.strip()} is given twice")
            points.append(int(value) if kind is int or float(value).is_integer() else value)
        return tuple(points)


def ablation_tree(task: SequentialTask, agent: str, vary: str, value: float,
                  capacity: int | None = None, encoder: str = "semantic") -> AgentConfig:
    """The configuration tree of ``agent`` on ``task`` with ``vary`` set to ``value``."""
    tree = agent_on_world(agent, task.world, capacity=capacity, encoder=encoder)
    if vary == "top-k":
        return replace(tree, mode_selector=replace(tree.mode_selector, top_k=int(value)))
    if tree.memory is None:
        raise ValueError(f"agent {agent!r} has no memory: no place cells to vary")
    return replace(tree, memory=replace(tree.memory, cell_size=float(value)))


def ablation_episode(spec: EpisodeSpec) -> Record:
    """The episode function: one ABA-Sparse episode of the agent built from the ablated tree."""
    options = dict(spec.options)
    task = task_by_key(spec.task)
    tree = ablation_tree(task, options["agent"], options["vary"], options["value"],
                         options.get("capacity"), options.get("encoder", "semantic"))
    return sequential_run(task, tree, spec.seed)


class Ablation(Experiment):
    """Ablation of Place Event Memory (paper appendix): MrSteve on Wool-Log-Wool with the mode
    selector's top-k or the place cell size varied.

    --vary top-k runs k in 1, 2, 4, 10, 30; --vary cell-size runs place cells of 1, 2, 4, 6, 12
    blocks. The table and the figure show the success rate and the duration of the last sub-task
    against the value.
    """

    name = "ablation"
    config_type = AblationConfig
    options = ("vary", "values", "task", "agent", "capacity", "encoder")
    default_episodes = 20
    episode = staticmethod(ablation_episode)

    def groups(self, config: AblationConfig) -> list[Group]:
        short = {"top-k": "k", "cell-size": "c"}[config.vary]
        groups = []
        for task in find_tasks("aba-sparse", config.task):
            for value in config.points:
                tree = ablation_tree(task, config.agent, config.vary, value, config.capacity,
                                     config.encoder)
                cell = f"{config.agent}@{short}{value}"
                groups.append(Group(
                    task.key, cell, f"{task.name}.{config.agent}.{short}{value}",
                    {"task": asdict(task), "agent": asdict(tree), "vary": config.vary,
                     "value": value},
                    {"agent": config.agent, "vary": config.vary, "value": value,
                     "capacity": config.capacity, "encoder": config.encoder},
                ))  # fmt: skip
        return groups

    def metrics(self, config: AblationConfig) -> tuple[str, ...]:
        task = find_tasks("aba-sparse", config.task)[0]
        return (*task.metric_names, *(f"explore_{label}" for label in task.labels))

    def table(self, config, groups, summaries) -> str:
        rows = []
        for group in groups:
            task = task_by_key(group.task)
            summary = summaries[(group.task, group.agent)]
            value = group.config["value"]
            rows.append([task.name, f"{value}{' (default)' if value == DEFAULTS[config.vary] else ''}",
                         format_metric(summary["success_rate"], 1),
                         format_metric(summary[f"duration_{task.labels[-1]}"], 0),
                         format_metric(summary[f"explore_{task.labels[0]}"], 0)])
        labels = task_by_key(groups[0].task).labels
        first, last = labels[0], labels[-1]
        capacity = config.capacity or "unlimited"
        return (format_table(["task", config.vary, "success %", f"steps {last}",
                              f"explore steps {first}"], rows)
                + f"\n{config.agent}, memory capacity {capacity}; {PAPER_FINDING[config.vary]}")

    def plot_summary(self, config: AblationConfig, summaries: Summaries, plots: Path) -> Path:
        from mrsteve.eval.curves import save_curves

        groups = self.groups(config)
        panels: dict[str, Any] = {}
        for metric, label in (("success_rate", "success %"), (None, "steps A'")):
            for group in groups:
                task = task_by_key(group.task)
                name = metric or f"duration_{task.labels[-1]}"
                point = (float(group.config["value"]), summaries[(group.task, group.agent)][name])
                panels.setdefault(f"{task.name}: {label}", {}).setdefault(config.agent, []).append(point)
        return save_curves(plots / f"ablation-{config.vary}.png", panels,
                           xlabel=f"{config.vary}", logx=config.vary == "top-k",
                           title=f"Place Event Memory ablation: {config.vary}", columns=2)


ABLATION = Ablation()
