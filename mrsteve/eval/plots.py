"""Trajectory plots like the paper's Figure 4: the top-down map of an episode's world with the path.

The path is coloured by time (dark blue at the start to yellow at the end) over the map image of
:func:`mrsteve.world.topdown.top_down_image`, with the start as a white star, exploration goals as
white crosses and a navigation goal as its success disc.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import numpy as np

from mrsteve.env import make_env
from mrsteve.fileio import atomic_path
from mrsteve.world.topdown import top_down_image


def save_figure(figure, path: str | Path, dpi: int = 120) -> Path:
    """Write a matplotlib figure as a PNG, atomically (no half-written plot after a crash)."""
    path = Path(path)
    with atomic_path(path) as temporary:
        figure.savefig(temporary, dpi=dpi, format="png")
    return path


def world_blocks(world: str, seed: int, covering: np.ndarray | None = None):
    """The blocks an episode of ``world`` seeded with ``seed`` starts with (the environment is
    reset with the same seed, so this is the episode's world).

    With ``covering`` (``[N, 2]`` points in the reported frame) returns ``(blocks, corner)``:
    for an unbounded world, its terrain as generated over the chunks the points lie in, and the
    reported-frame position of ``blocks[0, :, 0]`` (``(0, 0)`` for a bounded map)."""
    env = make_env(world=world, obs_size=(4, 4))
    env.reset(seed=seed)
    world_ = env.unwrapped.world
    blocks, corner = world_.blocks.copy(), np.zeros(2)
    if covering is not None and world_.window is not None and len(covering):
        blocks, corner = world_.window.region(np.min(covering, axis=0), np.max(covering, axis=0))
    env.close()
    return blocks if covering is None else (blocks, corner)


def save_trajectory_plot(
    path: str | Path,
    blocks: np.ndarray,
    trajectory: np.ndarray,
    *,
    goals: Sequence[Sequence[float]] | None = None,
    target: Sequence[float] | Sequence[Sequence[float]] | None = None,
    radius: float = 3.0,
    title: str | None = None,
    scale: int = 4,
    goals_label: str = "goals",
    target_label: str = "goal (success disc)",
) -> Path:
    """Save a PNG of ``trajectory`` (``[N, 2]`` of ``(x, z)``) over the map of ``blocks``.

    ``goals`` (``[M, 2]``) are marked with crosses; ``target`` (one ``(x, z)`` or several) is
    drawn as circles of ``radius``; a legend names each mark and a colour bar the path's time.
    Axes are block coordinates, x to the right and z down (north up, as Minecraft's maps).
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.collections import LineCollection
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D
    from matplotlib.patches import Circle

    trajectory = np.asarray(trajectory, dtype=np.float64)
    if trajectory.ndim != 2 or trajectory.shape[1] != 2 or len(trajectory) == 0:
        raise ValueError(f"trajectory must be a non-empty [N, 2] array of (x, z), got "
                         f"{trajectory.shape}")
    size_x, size_z = blocks.shape[0], blocks.shape[2]
    figure = Figure(figsize=(5.5, 5.5 * size_z / size_x + 0.5))
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    axes.imshow(top_down_image(blocks, scale=scale), extent=(0, size_x, size_z, 0),
                interpolation="nearest")
    if len(trajectory) > 1:
        segments = np.stack([trajectory[:-1], trajectory[1:]], axis=1)
        line = LineCollection(segments, cmap="plasma", linewidths=1.4)
        line.set_array(np.linspace(0.0, 1.0, len(segments)))
        axes.add_collection(line)
        bar = figure.colorbar(line, ax=axes, fraction=0.04, pad=0.02, ticks=[0.0, 1.0])
        bar.ax.set_yticklabels(["start", "end"], fontsize=7)
        bar.set_label("path (time)", fontsize=7)
    handles = [Line2D([], [], marker="*", color="white", markeredgecolor="black", lw=0,
                      markersize=10, label="start")]
    if goals is not None and len(goals):
        goals = np.asarray(goals, dtype=np.float64).reshape(-1, 2)
        axes.scatter(goals[:, 0], goals[:, 1], marker="x", s=18, c="white", linewidths=1.0)
        handles.append(Line2D([], [], marker="x", color="white", markeredgecolor="black", lw=0,
                              label=goals_label))
    if target is not None:
        for x, z in np.asarray(target, dtype=np.float64).reshape(-1, 2):
            axes.add_patch(Circle((x, z), radius, fill=False, ec="white", lw=1.5))
        handles.append(Line2D([], [], marker="o", markerfacecolor="none", color="white",
                              markeredgecolor="black", lw=0, markersize=9, label=target_label))
    axes.scatter(*trajectory[0], marker="*", s=90, c="white", edgecolors="black", zorder=3)
    axes.legend(handles=handles, loc="lower left", fontsize=7, framealpha=0.8,
                facecolor="#888888")
    axes.set_xlim(0, size_x)
    axes.set_ylim(size_z, 0)
    axes.set_xlabel("x")
    axes.set_ylabel("z")
    if title:
        axes.set_title(title, fontsize=9)
    figure.tight_layout()
    return save_figure(figure, path)


def save_success_bars(
    path: str | Path,
    success: dict[str, dict[str, dict[str, float]]],
    *,
    title: str = "",
    ylabel: str = "success rate (%)",
) -> Path:
    """Grouped bars like the paper's Figure 5: ``success[task][agent] = {"mean", "stderr"}``, one
    group of bars per task, one colour per agent, standard errors as whiskers."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    tasks = list(success)
    agents = list(dict.fromkeys(agent for per_task in success.values() for agent in per_task))
    width = 0.8 / max(len(agents), 1)
    figure = Figure(figsize=(max(6.0, 0.55 * len(tasks) * max(len(agents), 2)), 3.6))
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    positions = np.arange(len(tasks))
    for index, agent in enumerate(agents):
        means = [success[task].get(agent, {}).get("mean", np.nan) for task in tasks]
        errors = [success[task].get(agent, {}).get("stderr", 0.0) for task in tasks]
        axes.bar(positions + (index - (len(agents) - 1) / 2) * width, means, width, yerr=errors,
                 capsize=2, label=agent)
    axes.set_xticks(positions, tasks, rotation=45, ha="right", fontsize=7)
    axes.set_ylabel(ylabel)
    axes.set_ylim(0, 105)
    axes.legend(fontsize=7, ncols=min(len(agents), 4))
    if title:
        axes.set_title(title, fontsize=9)
    figure.tight_layout()
    return save_figure(figure, path)
