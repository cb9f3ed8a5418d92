"""Line plots of a metric against a swept setting (memory capacity, top-k, place cell size), with
standard errors as whiskers: the appendix figures of the memory-constraint and ablation
experiments."""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from pathlib import Path

from mrsteve.eval.plots import save_figure

Series = Mapping[str, Sequence[tuple[float, Mapping[str, float]]]]
"""``series[name] = [(x, {"mean", "stderr", ...}), ...]`` in x order."""


def save_curves(path: str | Path, panels: Mapping[str, Series], *, xlabel: str,
                logx: bool = False, title: str = "", columns: int = 3) -> Path:
    """One panel per entry of ``panels`` (its title -> its series), one line per series; a
    point whose metric has no value (no successful episode) is left out, and a panel left with
    no point says so. A panel whose title has a ``%`` spans 0 to 100; the legend is in the first
    panel with a line."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    if not panels:
        raise ValueError("save_curves needs at least one panel")
    columns = max(1, min(columns, len(panels)))
    rows = math.ceil(len(panels) / columns)
    figure = Figure(figsize=(3.6 * columns, 2.7 * rows + 0.4))
    FigureCanvasAgg(figure)
    legend = False
    for index, (name, series) in enumerate(panels.items()):
        axes = figure.add_subplot(rows, columns, index + 1)
        for label, points in series.items():
            kept = [(x, m) for x, m in points if m.get("n", 1) and not math.isnan(m["mean"])]
            if not kept:
                continue
            axes.errorbar([x for x, _ in kept], [m["mean"] for _, m in kept],
                          yerr=[m.get("stderr", 0.0) for _, m in kept], marker="o", ms=3,
                          capsize=2, lw=1.2, label=label)
        if not axes.lines:
            axes.text(0.5, 0.5, "no values\n(no successful episode)", ha="center", va="center",
                      transform=axes.transAxes, fontsize=7, color="0.4")
        if logx:
            axes.set_xscale("log")
        if "%" in name:
            axes.set_ylim(0, 105)
        axes.set_title(name, fontsize=8)
        axes.set_xlabel(xlabel, fontsize=7)
        axes.tick_params(labelsize=7)
        if axes.lines and not legend:
            axes.legend(fontsize=6)
            legend = True
    if title:
        figure.suptitle(title, fontsize=9)
    figure.tight_layout()
    return save_figure(figure, path)
