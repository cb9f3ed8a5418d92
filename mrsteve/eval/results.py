"""Summaries of per-episode records: metrics with standard errors, JSON files, text tables.

The summary file format is shared by every ``mrsteve eval`` experiment::

    {"task": ..., "agent": ..., "episodes": N, "config": {...},
     "metrics": {name: {"mean": float, "stderr": float, "n": int,
                        "by_seed": {"42": float, ...}}}}

with the per-episode records as JSON lines beside it (``<name>.episodes.jsonl``; not kept in
version control, so ``by_seed``, each episode's value by its seed, is what pairs two groups run on
the same seeds once the records are gone; summaries written before it have none).
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

from mrsteve.fileio import write_json

Metric = dict[str, Any]


def mean_stderr(values: Sequence[float]) -> Metric:
    """Mean and standard error of the mean (sample std / sqrt(n); 0 for a single value)."""
    finite = [float(v) for v in values if v is not None and math.isfinite(float(v))]
    n = len(finite)
    if n == 0:
        return {"mean": float("nan"), "stderr": float("nan"), "n": 0}
    mean = sum(finite) / n
    if n == 1:
        return {"mean": mean, "stderr": 0.0, "n": 1}
    var = sum((v - mean) ** 2 for v in finite) / (n - 1)
    return {"mean": mean, "stderr": math.sqrt(var / n), "n": n}


def summarize(records: Iterable[Mapping[str, Any]], metric_names: Sequence[str]) -> dict[str, Metric]:
    """Mean and standard error of each named metric over the records that report it, and, where
    each of those records has a seed of its own, the finite values by seed (``by_seed``)."""
    records = list(records)
    summary = {}
    for name in metric_names:
        reporting = [r for r in records if r.get(name) is not None]
        metric = mean_stderr([r[name] for r in reporting])
        seeds = [r.get("seed") for r in reporting]
        if reporting and all(isinstance(seed, int) for seed in seeds) \
                and len(set(seeds)) == len(seeds):
            metric["by_seed"] = {str(seed): float(r[name]) for seed, r in zip(seeds, reporting)
                                 if math.isfinite(float(r[name]))}
        summary[name] = metric
    return summary


def with_values_by_seed(summary: Mapping[str, Any], records: Sequence[Mapping[str, Any]],
                        where: str) -> dict[str, Any] | None:
    """``summary`` (a summary file's object) with ``by_seed`` added to every metric that lacks
    it, from ``records``, its group's episode records; ``None`` when no metric lacks it. The
    records must give each such metric's count, mean and standard error as the summary holds
    them, or a ``ValueError`` naming ``where`` (the summary file) says how they differ: records
    of other episodes (a group resumed after its records were lost, a re-run of another commit)
    cannot stand for the summary's."""
    metrics = summary.get("metrics")
    if not isinstance(metrics, dict):
        raise ValueError(f"{where}: a summary without its metrics")
    lacking = [name for name, metric in metrics.items()
               if isinstance(metric, dict) and "by_seed" not in metric]
    if not lacking:
        return None
    again = summarize(records, lacking)
    for name in lacking:
        kept, redone = metrics[name], again[name]
        differs = [f"{field} {kept.get(field)!r} against {redone[field]!r}"
                   for field in ("n", "mean", "stderr")
                   if not same_number(kept.get(field), redone[field])]
        if differs:
            raise ValueError(f"{where}: its records ({len(records)}) do not give the summary's "
                             f"{name}: {'; '.join(differs)} (the summary against the records)")
        if "by_seed" not in redone:
            raise ValueError(f"{where}: its records have no distinct seed each, so their values "
                             "cannot be kept by seed")
    return {**summary, "metrics": {name: ({**metric, "by_seed": again[name]["by_seed"]}
                                          if name in lacking else metric)
                                   for name, metric in metrics.items()}}


def same_number(kept: Any, redone: float) -> bool:
    """Whether a summary's stored number ``kept`` is ``redone`` (to the rounding of another
    order of the sums; NaN equals NaN)."""
    if not isinstance(kept, (int, float)) or isinstance(kept, bool):
        return False
    if math.isnan(kept) or math.isnan(redone):
        return math.isnan(kept) and math.isnan(redone)
    return math.isclose(kept, redone, rel_tol=1e-9, abs_tol=1e-12)


def records_path_for(summary_path: Path) -> Path:
    """Where the per-episode records of a summary file live: ``x.json`` -> ``x.episodes.jsonl``."""
    summary_path = Path(summary_path)
    return summary_path.with_name(summary_path.stem + ".episodes.jsonl")


def write_summary(
    path: Path,
    *,
    task: str,
    agent: str,
    episodes: int,
    config: Mapping[str, Any],
    metrics: Mapping[str, Metric],
) -> None:
    """Write the summary JSON (atomically)."""
    write_json(
        Path(path),
        {
            "task": task,
            "agent": agent,
            "episodes": episodes,
            "config": dict(config),
            "metrics": {name: dict(value) for name, value in metrics.items()},
        },
    )


def finished_summary(path: Path | None, config: Mapping[str, Any], episodes: int,
                     metric_names: Sequence[str]) -> dict[str, Metric] | None:
    """The metrics of the summary at ``path`` when it is a finished group's of exactly this
    ``config`` (as :func:`write_summary` wrote it: the same settings, episodes and seeds) with
    ``episodes`` episodes and every metric in ``metric_names``; ``None`` otherwise. A group so
    summarised is done even when its records file is gone (records are not kept with a run's
    committed files)."""
    if path is None or not Path(path).is_file():
        return None
    try:
        kept = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if (not isinstance(kept, dict) or kept.get("episodes") != episodes
            or kept.get("config") != json.loads(json.dumps(dict(config)))):
        return None
    metrics = kept.get("metrics")
    if not isinstance(metrics, dict) or any(
        not isinstance(metrics.get(name), dict) or metrics[name].get("n", 0) > episodes
        for name in metric_names
    ):  # fmt: skip
        return None
    return {name: dict(metrics[name]) for name in metric_names}


def format_metric(metric: Metric | None, digits: int = 2) -> str:
    """``mean ± stderr``, the mean alone for one value (it has no standard error), or ``-`` when
    missing."""
    if metric is None or metric.get("n", 1) == 0 or math.isnan(metric["mean"]):
        return "-"
    if metric.get("n", 2) == 1:
        return f"{metric['mean']:.{digits}f}"
    return f"{metric['mean']:.{digits}f} ± {metric['stderr']:.{digits}f}"


def format_table(headers: Sequence[str], rows: Sequence[Sequence[Any]]) -> str:
    """A plain-text table with aligned columns (first column left, the rest right aligned)."""
    cells = [[str(h) for h in headers]] + [[str(c) for c in row] for row in rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]

    def line(row: Sequence[str]) -> str:
        return "  ".join(
            cell.ljust(w) if i == 0 else cell.rjust(w) for i, (cell, w) in enumerate(zip(row, widths))
        )

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(cells[0]), rule, *(line(row) for row in cells[1:])])


def by_look(groups: Sequence[Any], summaries: Mapping[str, Any],
            row: Callable[[Any], tuple[str, ...]],
            cells: Callable[[Any, Mapping[str, Any]], Sequence[str]]
            ) -> tuple[list[str], list[list[str]]]:
    """A run's groups in several looks as one row per ``row(group)`` (its cells without the
    look) and ``cells(group, summary)`` per look, in the looks' order of first appearance: the
    looks side by side. Returns the looks and the rows (``-`` where a look lacks the row)."""
    looks = list(dict.fromkeys(group.spec.task.look for group in groups))
    table: dict[tuple[str, ...], dict[str, Sequence[str]]] = {}
    widths = 0
    for group in groups:
        values = cells(group, summaries[group.label])
        widths = len(values)
        table.setdefault(row(group), {})[group.spec.task.look] = values
    rows = [[*key, *(cell for look in looks for cell in seen.get(look, ["-"] * widths))]
            for key, seen in table.items()]
    return looks, rows
