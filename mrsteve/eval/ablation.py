"""Ablation of Place Event Memory (paper appendix "Ablation Studies on Place Event Memory"):
MrSteve on Wool-Log-Wool with the mode selector's top-k in {1, 2, 4, 10, 30}, or the place cell
size C in {1, 2, 4, 6, 12} blocks.

The varied value goes into the agent's configuration tree in the run spec
(``mode_selector.top_k`` or ``memory.config.cell_size``), from which the episode builds the agent,
so every summary says which value produced it. The appendix gives no memory capacity for the ablation: its Wool-Log-Wool is the
ABA-Sparse task, run with unlimited memory (Section 4.2), which is the default here; ``--capacity``
constrains it.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from mrsteve.agent.config import AgentConfig
from mrsteve.agent.factory import AGENTS, with_memory
from mrsteve.eval.experiment import AGENT_PARTS, AgentOptions, Experiment, Summaries
from mrsteve.eval.results import format_metric, format_table
from mrsteve.eval.sequential import SequentialRun, sequential_episode
from mrsteve.eval.spec import Group, RunSpec
from mrsteve.naming import check_name
from mrsteve.tasks.sequential import find_tasks

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
class AblationConfig(AgentOptions):
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

    def __post_init__(self) -> None:
        check_name(self.vary, VARIED, "ablation (--vary)")
        check_name(self.agent, AGENTS, "agent")
        self.points  # noqa: B018 (checks the values)
        find_tasks("aba-sparse", self.task)
        super().__post_init__()
        if len(self.capacities) > 1:
            raise ValueError("the ablation takes one --capacity (a grid is aba-sparse's)")
        if self.vary == "cell-size" and AGENTS[self.agent].memory in (None, "fifo", "event"):
            raise ValueError(f"agent {self.agent!r} has no place cells to vary")

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

    def ablated_tree(self, world: str, value: float) -> AgentConfig:
        """The agent's configuration tree on ``world`` with :attr:`vary` set to ``value``."""
        tree = self.agent_tree(self.agent, world, self.capacities[0])
        if self.vary == "top-k":
            return replace(tree, mode_selector=replace(tree.mode_selector, top_k=int(value)))
        return with_memory(tree, cell_size=float(value))


@dataclass(frozen=True)
class AblationRun(SequentialRun):
    """The task part of an ablation episode: the ABA-Sparse task and the varied value."""

    vary: str = "top-k"
    value: float = 0


class Ablation(Experiment):
    """Ablation of Place Event Memory (paper appendix): MrSteve on Wool-Log-Wool with the mode
    selector's top-k or the place cell size varied.

    --vary top-k runs k in 1, 2, 4, 10, 30; --vary cell-size runs place cells of 1, 2, 4, 6, 12
    blocks. The table and the figure show the success rate and the duration of the last sub-task
    against the value.
    """

    name = "ablation"
    examples = ('--vary top-k --workers 2', '--vary cell-size --values 2,6,12 --episodes 5',)
    config_type = AblationConfig
    options = ("vary", "values", "task", "agent", "capacity", *AGENT_PARTS)
    default_episodes = 20
    episode = staticmethod(sequential_episode)

    def groups(self, config: AblationConfig) -> list[Group]:
        short = {"top-k": "k", "cell-size": "c"}[config.vary]
        groups = []
        for task in find_tasks("aba-sparse", config.task):
            for value in config.points:
                label = f"{task.name}.{config.agent}.{short}{value}"
                spec = RunSpec(self.name, label, task.key,
                               AblationRun.of(task, vary=config.vary, value=value),
                               config.ablated_tree(task.world, value))
                groups.append(Group(spec, cost=task.max_steps))
        return groups

    def metrics(self, config: AblationConfig) -> tuple[str, ...]:
        task = find_tasks("aba-sparse", config.task)[0]
        return (*task.metric_names, *(f"explore_{label}" for label in task.labels))

    def table(self, config, groups, summaries) -> str:
        rows = []
        for group in groups:
            run = group.spec.task
            summary = summaries[group.label]
            default = " (default)" if run.value == DEFAULTS[config.vary] else ""
            rows.append([run.name, f"{run.value}{default}",
                         format_metric(summary["success_rate"], 1),
                         format_metric(summary[f"duration_{run.labels[-1]}"], 0),
                         format_metric(summary[f"explore_{run.labels[0]}"], 0)])
        labels = groups[0].spec.task.labels
        first, last = labels[0], labels[-1]
        capacity = config.capacities[0] or "unlimited"
        return (format_table(["task", config.vary, "success %", f"steps {last}",
                              f"explore steps {first}"], rows)
                + f"\n{config.agent}, memory capacity {capacity}; {PAPER_FINDING[config.vary]}")

    def plot_summary(self, config: AblationConfig, groups, summaries: Summaries,
                     plots: Path) -> Path:
        from mrsteve.eval.curves import save_curves

        panels: dict[str, Any] = {}
        for metric, label in (("success_rate", "success %"), (None, "steps A'")):
            for group in groups:
                run = group.spec.task
                name = metric or f"duration_{run.labels[-1]}"
                point = (float(run.value), summaries[group.label][name])
                panels.setdefault(f"{run.name}: {label}", {}).setdefault(
                    config.agent, []).append(point)
        return save_curves(plots / f"ablation-{config.vary}.png", panels,
                           xlabel=f"{config.vary}", logx=config.vary == "top-k",
                           title=f"Place Event Memory ablation: {config.vary}", columns=2)


ABLATION = Ablation()
