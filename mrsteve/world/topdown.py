"""Top-down map images of a world for plots: blocks, mobs and an agent's trajectory.

Orientation: x is the horizontal axis (growing to the right) and z grows downwards, so the image
reads like a Minecraft map with north (-z) up; pixel ``[row, col]`` shows column ``x = col // scale``,
``z = row // scale``. The paper's "upper right corner" of a map is small z, large x.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from mrsteve.world.content import Content, load_content
from mrsteve.world.raycast import ColumnHeights

TRAJECTORY_COLOR = (230, 30, 30)
EMPTY_COLOR = (0, 0, 0)
_BURNING_COLOR = (245, 130, 20)


def top_down_image(
    blocks: np.ndarray,
    mobs: np.ndarray | None = None,
    trajectory: np.ndarray | None = None,
    scale: int = 4,
    content: Content | None = None,
    trajectory_color: tuple[int, int, int] = TRAJECTORY_COLOR,
) -> np.ndarray:
    """``uint8[Z * scale, X * scale, 3]`` map of ``blocks`` seen from above (module docstring).

    Each column shows the top colour of its highest non-air block, brighter when higher (between the 2nd and 98th
    percentile of heights) and shaded
    where its northern neighbour stands higher (Minecraft's map style); empty columns are black.
    ``mobs`` (``float32[M, 6]`` rows ``(x, y_feet, z, width, height, semantic_id)`` as for the
    renderer) are dots in their kind's colour with a dark rim; ``trajectory`` (``[N, 2]`` of
    ``(x, z)``) is a line drawn on top.
    """
    content = content if content is not None else load_content()
    if not isinstance(blocks, np.ndarray) or blocks.dtype != np.uint8 or blocks.ndim != 3:
        raise ValueError(
            f"blocks must be a uint8[X, Y, Z] numpy array, got {getattr(blocks, 'dtype', type(blocks))}"
        )
    if isinstance(scale, bool) or not isinstance(scale, (int, np.integer)) or not 1 <= scale <= 64:
        raise ValueError(f"scale must be an integer number of pixels per block in 1..64, got {scale!r}")

    heights = ColumnHeights(blocks).columns.astype(np.int64)  # [X, Z]
    xs, zs = np.indices(heights.shape)
    top_ids = np.where(heights > 0, blocks[xs, np.maximum(heights - 1, 0), zs], 0)
    colors = content.block_colors[:, 0].astype(np.float32)  # top colour of each block id
    image = colors[top_ids]  # [X, Z, 3]

    filled = heights > 0
    if filled.any():
        low, high = np.percentile(heights[filled], [2, 98])  # map walls do not set the range
        brightness = 0.7 + 0.3 * np.clip((heights - low) / max(high - low, 1), 0, 1)
        north = np.concatenate([heights[:, :1], heights[:, :-1]], axis=1)
        brightness = np.where(north > heights, brightness * 0.82, brightness)
        image *= brightness[..., None]
    image[~filled] = EMPTY_COLOR
    image = np.clip(image, 0, 255).astype(np.uint8).transpose(1, 0, 2)  # rows z, columns x
    image = np.repeat(np.repeat(image, scale, axis=0), scale, axis=1)

    if mobs is not None:
        _draw_mobs(image, _as_rows(mobs, 6, "mobs"), scale, content)
    if trajectory is not None:
        _draw_path(image, _as_rows(trajectory, 2, "trajectory"), scale, trajectory_color)
    return image


def save_top_down(
    path: str | Path,
    blocks: np.ndarray,
    mobs: np.ndarray | None = None,
    trajectory: np.ndarray | None = None,
    *,
    scale: int = 4,
    title: str | None = None,
    content: Content | None = None,
) -> Path:
    """Save :func:`top_down_image` as a PNG figure with block-coordinate axes (x right, z down)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    image = top_down_image(blocks, mobs, trajectory, scale, content)
    size_x, size_z = blocks.shape[0], blocks.shape[2]
    figure = Figure(figsize=(6, 6 * size_z / size_x + 0.4))
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    axes.imshow(image, extent=(0, size_x, size_z, 0), interpolation="nearest")
    axes.set_xlabel("x")
    axes.set_ylabel("z")
    if title:
        axes.set_title(title)
    figure.tight_layout()
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=150)
    return path


def _as_rows(array, width: int, name: str) -> np.ndarray:
    rows = np.asarray(array, dtype=np.float64)
    if rows.ndim != 2 or rows.shape[1] != width:
        raise ValueError(f"{name} must be an [N, {width}] array, got shape {rows.shape}")
    if not np.isfinite(rows).all():
        raise ValueError(f"{name} must be finite")
    return rows


def _draw_mobs(image: np.ndarray, mobs: np.ndarray, scale: int, content: Content) -> None:
    """Disks of radius ``max(3, 1.2 * scale)`` pixels at each mob's (x, z)."""
    palette = np.zeros((len(content.semantic_classes), 3), dtype=np.uint8)
    for mob in content.mobs:
        palette[content.semantic_id(mob.name)] = mob.color
    palette[content.semantic_id("burning_zombie")] = _BURNING_COLOR
    radius = max(3.0, 1.2 * scale)
    reach = int(np.ceil(radius)) + 1
    for x, _, z, _, _, cls in mobs:
        cls = int(cls)
        if not 0 < cls < len(palette):
            raise ValueError(f"mob semantic id must be in 1..{len(palette) - 1}, got {cls}")
        col, row = x * scale, z * scale
        r0, c0 = max(int(row) - reach, 0), max(int(col) - reach, 0)
        window = image[r0 : int(row) + reach + 1, c0 : int(col) + reach + 1]
        rows, cols = np.indices(window.shape[:2])
        distance = np.hypot(cols + c0 + 0.5 - col, rows + r0 + 0.5 - row)
        window[distance <= radius] = (20, 20, 20)
        window[distance <= radius - 1.0] = palette[cls]


def _draw_path(image: np.ndarray, path: np.ndarray, scale: int, color) -> None:
    """A polyline through the ``(x, z)`` points, sampled at a quarter pixel, one pixel wide."""
    if len(path) == 0:
        return
    points = path * scale
    if len(points) > 1:
        lengths = np.linalg.norm(np.diff(points, axis=0), axis=1)
        samples = np.maximum(np.ceil(lengths * 4).astype(np.int64), 1)
        segment = np.repeat(np.arange(len(lengths)), samples)
        fraction = (np.arange(samples.sum()) - np.repeat(np.cumsum(samples) - samples, samples))
        fraction = fraction / np.repeat(samples, samples)
        start, end = points[segment], points[segment + 1]
        points = np.concatenate([start + (end - start) * fraction[:, None], points[-1:]])
    cols = np.floor(points[:, 0]).astype(np.int64)
    rows = np.floor(points[:, 1]).astype(np.int64)
    inside = (rows >= 0) & (rows < image.shape[0]) & (cols >= 0) & (cols < image.shape[1])
    image[rows[inside], cols[inside]] = color
