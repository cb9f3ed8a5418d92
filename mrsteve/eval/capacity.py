"""The memory-constraint grid of the sequential item experiments (appendix "ABA-Sparse Tasks with
Memory Constraints"): ``--capacity`` with several values runs every task for every (agent,
capacity) cell; this module holds the paper's grid (its tasks, agents and capacities, the
defaults of ``mrsteve eval aba-sparse --capacity ...``), its table and its figure, success and A'
duration against memory capacity per agent. An agent without a memory (STEVE-1) runs once and is
drawn as a flat line; a capacity for such agents alone is refused
(:meth:`~mrsteve.eval.experiment.AgentOptions.cells`).

The episodes are the paper's ABA-Sparse ones (A, then B, then A again on the task's map, 12K
steps: "capacities ranging from 0.1K to 12K, which is the maximum episode length"); memory shows
in A', when the agent must find A again.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mrsteve.eval.experiment import UNLIMITED, Summaries
from mrsteve.eval.results import format_metric, format_table, mean_stderr
from mrsteve.eval.spec import Group
from mrsteve.tasks.sequential import SequentialTask


def capacity_of(group: Group) -> int | str | None:
    """The group's memory capacity as tables show it (``-``: no memory)."""
    memory = getattr(group.spec.agent, "memory", None)
    return "-" if memory is None else (memory.capacity or UNLIMITED)


GRID_TASKS = ("beef-log-beef", "beef-leaves-beef", "wool-sand-wool", "wool-dirt-wool",
              "milk-sand-milk", "milk-leaves-milk")
"""The ABA-Sparse tasks of the grid when ``--task`` is not given. The figure's caption names
Beef-Log-Beef and Beef-Leaves-Beef among "all tasks" it shows; these six are the ABA-Sparse tasks
the paper reports by name outside its full-results figure (the appendix table "Task-Conditioned
Hierarchical Episodic Exploration"), the two named ones among them."""

GRID_AGENTS = ("mrsteve", "pm", "em", "fm", "steve1")
"""The figure's agents: MrSteve (Place Event Memory), its Place, Event and FIFO Memory variants,
and STEVE-1 (no memory: one run per task, a flat line)."""

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
