"""The semantic encoder: the embedded world's stand-in for MineCLIP.

It embeds what is visible and where in the view, from the per-pixel semantic classes the renderer
outputs, averaged over a clip of the last 16 frames like MineCLIP's 16-frame clips. Like MineCLIP it
reads the image only (no depth): how near a thing is shows in how much of the view it fills and
whether it can be made out at all. A pixel counts ``w = min(1, n / (clear_region_share * H * W))``,
``n`` the size of its *region* (the 8-connected pixels of its class), so a cow 30 blocks away, a
speck of one or two pixels, counts a few percent of what its pixels would, and a cow 6 blocks away
counts fully. For ``C`` semantic classes and an ``R x K`` grid over the view, the embedding is the
L2-normalised concatenation of

* the *what* block, ``C`` features: ``sqrt(salience[c] * share of the clip's pixels of class c)``;
* the *where* block, ``R * K * C`` features: ``layout_weight * sqrt(salience[c] * share of the
  clip's pixels that are class c in grid cell k)``,

with pixels counted ``w`` each. Square roots of shares make the cosine of two clips a
(salience-weighted) Bhattacharyya coefficient of their class distributions; the salience
(``data/salience.toml``) keeps a cow filling 1 % of the view from being drowned out by the grass
around it. A text prompt (``data/lexicon.toml``) embeds as its class mixture in the *what* block,
so ``score = cos(clip, prompt)`` grows with the salience-weighted share of the view its classes
fill: "near cow" scores high when a cow fills a good part of the view, not when a herd dots the
horizon. The thresholds (``data/thresholds.toml``) are calibrated on the world by the offline tool
:mod:`mrsteve.calibration` (``mrsteve calibrate``).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from types import MappingProxyType

import numba as nb
import numpy as np

from mrsteve.perception._data import read_data_toml
from mrsteve.perception.encoder import Observation
from mrsteve.perception.lexicon import Lexicon, load_lexicon
from mrsteve.perception.thresholds import EncoderThresholds, parse_thresholds
from mrsteve.visibility import VISIBILITY, RegionLabeller, label_regions
from mrsteve.world.content import load_content


@cache
def load_salience() -> Mapping[str, float]:
    """Per-class salience shipped in ``data/salience.toml``."""
    return MappingProxyType(
        {name: float(value) for name, value in read_data_toml("salience.toml")["salience"].items()}
    )


SHIPPED_THRESHOLDS = "thresholds.toml"
"""Data file of the thresholds calibrated for the default configuration (``mrsteve calibrate``)."""


@cache
def load_shipped_thresholds() -> EncoderThresholds:
    """Thresholds shipped in ``data/thresholds.toml`` for the default configuration."""
    return parse_thresholds(read_data_toml(SHIPPED_THRESHOLDS))


@dataclass(frozen=True)
class SemanticEncoderConfig:
    """Configuration of :class:`SemanticEncoder`; the shipped thresholds hold for the defaults."""

    window: int = 16
    """Frames per clip (MineCLIP embeds 16-frame clips)."""
    grid: tuple[int, int] = (3, 4)
    """Rows and columns of the view grid of the *where* block."""
    layout_weight: float = 0.5
    """Weight of the *where* block relative to the *what* block: low enough that turning by
    half a place cluster's yaw bin (30 degrees) keeps a static scene one event."""
    salience: Mapping[str, float] = field(default_factory=load_salience)
    """Importance per unit of view area of each semantic class (> 0)."""
    clear_region_share: float = VISIBILITY.clear_share
    """Share of the view a region (touching pixels of one class) must fill to count fully; a
    smaller one counts in proportion to its size, as a thing too small to make out hardly shows
    in a picture (the shared rule, :mod:`mrsteve.visibility`: a cow 7 blocks away fills 1 % of the
    view, one 30 blocks away is a speck of 1 or 2 pixels at 40 x 64 that counts a few percent of a
    pixel; 0: every pixel counts fully)."""

    def __post_init__(self) -> None:
        if self.window < 1:
            raise ValueError(f"window must be at least 1 frame, got {self.window}")
        if len(self.grid) != 2 or min(self.grid) < 1:
            raise ValueError(f"grid must be (rows, columns) of positive integers, got {self.grid}")
        if self.layout_weight < 0:
            raise ValueError(f"layout_weight must be non-negative, got {self.layout_weight}")
        if not 0.0 <= self.clear_region_share <= 1.0:
            raise ValueError(f"clear_region_share must be in [0, 1], got {self.clear_region_share}")
        classes = load_content().semantic_classes
        if set(self.salience) != set(classes) or not all(v > 0 for v in self.salience.values()):
            raise ValueError(f"salience must give every semantic class a positive weight: "
                             f"{', '.join(classes)}; got {dict(self.salience)}")


class SemanticEncoder:
    """MineCLIP stand-in over semantic frames; implements :class:`~mrsteve.perception.Encoder`.

    Reads ``observation["semantic"]``: ``uint8[H, W]`` class ids of
    ``load_content().semantic_classes``. The rolling window of :meth:`observe` keeps per-frame
    pixel counts in a ring buffer with a running sum, so a step costs one pass over the new frame's
    pixels plus ``O(dim)``, and gives exactly what :meth:`encode_frames` gives for the same frames.
    """

    reads = ("semantic",)
    """The observation keys it reads."""

    def __init__(
        self,
        config: SemanticEncoderConfig | None = None,
        thresholds: EncoderThresholds | None = None,
        lexicon: Lexicon | None = None,
    ) -> None:
        self.config = config or SemanticEncoderConfig()
        self.lexicon = lexicon or load_lexicon()
        if thresholds is None:
            if self.config != SemanticEncoderConfig():
                raise ValueError(
                    "the shipped thresholds hold for the default SemanticEncoderConfig only; pass "
                    "thresholds calibrated on the world for this configuration "
                    "(mrsteve.calibration.calibrate_on_world(encoder=SemanticEncoder(config, "
                    "estimate))) or the quick estimate=mrsteve.calibration.estimate_thresholds("
                    "config)"
                )
            thresholds = load_shipped_thresholds()
        missing = [p for p in self.lexicon.texts if p not in thresholds.task]
        if missing:
            raise ValueError(f"thresholds lack task thresholds for prompts {missing}")
        self._thresholds = thresholds

        classes = load_content().semantic_classes
        self._class_index = {name: i for i, name in enumerate(classes)}
        self._n_classes = len(classes)
        rows, cols = self.config.grid
        root_salience = np.sqrt([self.config.salience[name] for name in classes])
        self._weights = np.concatenate(
            [root_salience, np.tile(root_salience * self.config.layout_weight, rows * cols)]
        )
        self._dim = self._weights.size
        self._ring = np.zeros((self.config.window, self._dim), dtype=np.int64)
        self._total = np.zeros(self._dim, dtype=np.int64)
        self._scratch = np.zeros(self._dim, dtype=np.int64)
        self._regions = RegionLabeller()
        self._text_cache: dict[str, np.ndarray] = {}
        self.reset()

    @property
    def dim(self) -> int:
        return self._dim

    @property
    def window(self) -> int:
        return self.config.window

    @property
    def thresholds(self) -> EncoderThresholds:
        return self._thresholds

    def task_threshold(self, prompt: str) -> float:
        return self._thresholds.task_threshold(prompt)

    def reset(self) -> None:
        self._ring[:] = 0
        self._total[:] = 0
        self._slot = 0
        self._frame_shape: tuple[int, int] | None = None

    def observe(self, observation: Observation) -> np.ndarray:
        semantic = self._semantic_frame(observation)
        if self._frame_shape is not None and semantic.shape != self._frame_shape:
            raise ValueError(f"frame shape changed within the rolling window from "
                             f"{self._frame_shape} to {semantic.shape}; call reset() first")
        self._frame_shape = semantic.shape
        self._scratch[:] = 0
        self._count(semantic, self._scratch)
        _replace_frame(self._ring, self._slot, self._total, self._scratch)
        self._slot = (self._slot + 1) % self.config.window
        return _embed(self._total, self._weights)

    def encode_frames(self, frames: Sequence[Observation]) -> np.ndarray:
        clip = [self._semantic_frame(observation) for observation in frames][-self.config.window:]
        if not clip:
            raise ValueError("encode_frames needs at least one observation")
        shapes = {semantic.shape for semantic in clip}
        if len(shapes) > 1:
            raise ValueError(f"all frames of a clip must have one shape, got {sorted(shapes)}")
        total = np.zeros(self._dim, dtype=np.int64)
        for semantic in clip:
            self._count(semantic, total)
        return _embed(total, self._weights)

    def encode_text(self, prompt: str) -> np.ndarray:
        if prompt not in self._text_cache:
            vector = np.zeros(self._dim, dtype=np.float32)
            for name, weight in self.lexicon.meaning(prompt).classes.items():
                vector[self._class_index[name]] = weight
            self._text_cache[prompt] = vector / np.linalg.norm(vector)
        return self._text_cache[prompt].copy()

    def _count(self, semantic: np.ndarray, counts: np.ndarray) -> None:
        """Add a frame's pixel counts, weighted by region size, to ``counts``."""
        regions = self._regions
        regions.ensure(semantic.size)
        row_cell, col_bounds = _grid_cells(semantic.shape, self.config.grid)
        clear_pixels = max(1, round(self.config.clear_region_share * semantic.size))
        if not _count_frame(semantic, row_cell, col_bounds, self._n_classes, clear_pixels,
                            regions.runs, regions.parent, regions.size, counts):
            raise self._unknown_class_error(semantic)

    def _semantic_frame(self, observation: Observation) -> np.ndarray:
        try:
            semantic = observation["semantic"]
        except KeyError:
            raise KeyError("SemanticEncoder reads observation['semantic'] (uint8[H, W] class ids); "
                           f"the observation has {sorted(observation)}") from None
        if not (isinstance(semantic, np.ndarray) and semantic.ndim == 2 and semantic.size
                and semantic.dtype == np.uint8):
            raise ValueError(f"observation['semantic'] must be a non-empty uint8[H, W] array of "
                             f"class ids, got {getattr(semantic, 'dtype', type(semantic))} "
                             f"{getattr(semantic, 'shape', '')}")
        return semantic

    def _unknown_class_error(self, semantic: np.ndarray) -> ValueError:
        bad = sorted(set(np.unique(semantic).tolist()) - set(range(self._n_classes)))
        return ValueError(f"semantic frame holds unknown class ids {bad}; ids are "
                          f"0..{self._n_classes - 1} ({', '.join(self._class_index)})")


@cache
def _grid_cells(shape: tuple[int, int], grid: tuple[int, int]) -> tuple[np.ndarray, np.ndarray]:
    """Grid row of each pixel row, and the first pixel column of each grid column followed by the
    width (read-only)."""
    (height, width), (rows, cols) = shape, grid
    row_cell = (np.arange(height) * rows) // height
    col_bounds = -((-np.arange(cols + 1) * width) // cols)  # ceil(g * width / cols)
    row_cell.flags.writeable = False
    col_bounds.flags.writeable = False
    return row_cell, col_bounds


@nb.njit(cache=True)
def _count_frame(semantic, row_cell, col_bounds, n_classes, clear_pixels, runs, parent, size,
                 counts):
    """Add one frame's pixel counts (*what* block, then *where* block) to ``counts``.

    Each pixel counts ``min(n, clear_pixels)``, ``n`` the size of its region
    (:func:`mrsteve.visibility.label_regions`; ``runs``, ``parent`` and ``size`` are its scratch
    space). Returns ``False``, with ``counts`` partly updated, on a class id ``>= n_classes``.
    """
    n_runs = label_regions(semantic, runs, parent, size)
    cols = col_bounds.size - 1
    cell = 0
    for i in range(n_runs):
        r, start, end = runs[i, 0], runs[i, 1], runs[i, 2]
        k = semantic[r, start]
        if k >= n_classes:
            return False
        weight = min(size[parent[i]], clear_pixels)
        counts[k] += weight * (end - start)
        if start == 0:
            cell = 0
        where = n_classes * (1 + row_cell[r] * cols) + k
        while start < end:  # split the run at the grid's column bounds
            while col_bounds[cell + 1] <= start:
                cell += 1
            stop = min(end, col_bounds[cell + 1])
            counts[where + cell * n_classes] += weight * (stop - start)
            start = stop
    return True


@nb.njit(cache=True)
def _replace_frame(ring, slot, total, counts):
    """Put ``counts`` in ring slot ``slot``, keeping ``total`` the sum of the ring's rows."""
    for i in range(total.size):
        total[i] += counts[i] - ring[slot, i]
        ring[slot, i] = counts[i]


@nb.njit(cache=True)
def _embed(counts, weights):
    """``weights * sqrt(counts)``, L2-normalised, as float32."""
    values = weights * np.sqrt(counts.astype(np.float64))
    return (values / math.sqrt(np.sum(values * values))).astype(np.float32)
