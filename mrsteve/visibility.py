"""What an agent can make out in a frame: the one visibility rule of every stand-in.

The paper's MineCLIP, VPT-Nav and STEVE-1 see pixels. The embedded world's stand-ins read the
semantic and depth frames rendered from the same view, so that they perceive no more than a person
would make out in that frame they all apply this rule:

* **Region clarity.** A *region* is a set of 8-connected pixels of one semantic class. A region of
  ``n`` pixels in a view of ``H x W`` is made out with clarity
  ``min(1, n / (clear_share * H * W))``: one filling ``clear_share`` = 1 % of the view (a cow 7 blocks away, 26 pixels at 40 x 64) is
  clear; a cow 30 blocks away, a speck of 1-2 pixels, has clarity 0.05. The semantic encoder
  counts each pixel with its region's clarity (a speck hardly shows in the embedding); the
  instruction skills pursue a target only when its region has clarity at least ``pursue_clarity``
  = 0.25, a quarter of a percent of the view. Measured for a cow on flat ground, share of the view
  at 40 x 64 (160 x 256): 3.7 % at 4 blocks, 0.94 % (0.97 %) at 7, 0.31 % (0.41 %) at 10, 0.23 %
  (0.27 %) at 12, 0.16-0.23 % (0.21 %) at 15, 0.16 % (0.12 %) at 20, nothing at 30: a cow is
  pursued up to about 12 blocks away; trees, ponds and sand from farther, as they are bigger.
* **Range.** Nothing farther than ``max_distance`` = 48 blocks along the ray is made out (the
  renderer's fog starts at 38 blocks and ends at 64): the navigator's height map and the skills
  ignore farther pixels.

The shares are fractions of the view, so the rule means the same at 40 x 64 and at MineDojo's
160 x 256. :func:`label_regions` is the connected-component labelling both the encoder and the
skills use (runs of one class joined by union-find).
"""

from __future__ import annotations

from dataclasses import dataclass

import numba as nb
import numpy as np


@dataclass(frozen=True)
class VisibilityRule:
    """The numbers of the rule (module docstring); one instance, :data:`VISIBILITY`, is shared."""

    clear_share: float = 0.01
    """Share of the view a region must fill to be made out clearly (clarity 1)."""
    pursue_clarity: float = 0.25
    """Clarity a target's region needs before an instruction skill goes for it."""
    max_distance: float = 48.0
    """Blocks along the ray beyond which nothing is made out."""

    def __post_init__(self) -> None:
        if not 0.0 <= self.clear_share <= 1.0:
            raise ValueError(f"clear_share must be in [0, 1], got {self.clear_share}")
        if not 0.0 <= self.pursue_clarity <= 1.0:
            raise ValueError(f"pursue_clarity must be in [0, 1], got {self.pursue_clarity}")
        if not self.max_distance > 0:
            raise ValueError(f"max_distance must be positive, got {self.max_distance}")

    def clear_pixels(self, view_pixels: int) -> int:
        """Pixels a region needs to be clear in a view of ``view_pixels`` pixels (at least 1)."""
        return max(1, round(self.clear_share * view_pixels))

    def pursue_pixels(self, view_pixels: int) -> int:
        """Pixels a target's region needs before a skill pursues it (at least 1)."""
        return max(1, round(self.pursue_clarity * self.clear_share * view_pixels))


VISIBILITY = VisibilityRule()
"""The rule every stand-in applies."""


class RegionLabeller:
    """Per-pixel region sizes of semantic frames, with scratch space reused across frames."""

    def __init__(self) -> None:
        self.runs = np.zeros((0, 3), dtype=np.int64)
        self.parent = np.zeros(0, dtype=np.int64)
        self.size = np.zeros(0, dtype=np.int64)

    def ensure(self, pixels: int) -> None:
        """Grow the scratch space to hold frames of ``pixels`` pixels."""
        if self.parent.size < pixels:
            self.runs = np.zeros((pixels, 3), dtype=np.int64)
            self.parent = np.zeros(pixels, dtype=np.int64)
            self.size = np.zeros(pixels, dtype=np.int64)

    def region_sizes(self, semantic: np.ndarray) -> np.ndarray:
        """``int64[H, W]``: the size of each pixel's region (8-connected pixels of its class)."""
        self.ensure(semantic.size)
        out = np.empty(semantic.shape, dtype=np.int64)
        _fill_region_sizes(semantic, self.runs, self.parent, self.size, out)
        return out


@nb.njit(cache=True)
def label_regions(semantic, runs, parent, size):
    """Label the regions of a ``uint8[H, W]`` class frame; returns the number of runs.

    A run is a row's stretch of one class, ``runs[i] = (row, start, stop)``; each run joins the runs
    of its class that touch it in the row above, diagonals included (union-find). Afterwards
    ``parent[i]`` is the root run of run ``i``'s region and ``size[parent[i]]`` the region's
    pixels. ``runs``, ``parent`` and ``size`` are scratch space of at least ``H * W`` entries.
    """
    height, width = semantic.shape
    n_runs = 0
    above = 0
    for r in range(height):
        first = n_runs
        touching = above
        c = 0
        while c < width:
            k = semantic[r, c]
            end = c + 1
            while end < width and semantic[r, end] == k:
                end += 1
            runs[n_runs, 0] = r
            runs[n_runs, 1] = c
            runs[n_runs, 2] = end
            parent[n_runs] = n_runs
            size[n_runs] = 0
            # Runs above touch [c, end) (diagonals included) when they start <= end and stop >= c.
            while touching < first and runs[touching, 2] < c:
                touching += 1
            other = touching
            while other < first and runs[other, 1] <= end:
                if semantic[r - 1, runs[other, 1]] == k:
                    _join(parent, n_runs, other)
                other += 1
            n_runs += 1
            c = end
        above = first
    for i in range(n_runs):
        parent[i] = _root(parent, i)
        size[parent[i]] += runs[i, 2] - runs[i, 1]
    return n_runs


@nb.njit(cache=True)
def _fill_region_sizes(semantic, runs, parent, size, out):
    n_runs = label_regions(semantic, runs, parent, size)
    for i in range(n_runs):
        out[runs[i, 0], runs[i, 1]:runs[i, 2]] = size[parent[i]]


@nb.njit(cache=True)
def _root(parent, i):
    """Root of ``i``'s set, halving the path on the way."""
    while parent[i] != i:
        parent[i] = parent[parent[i]]
        i = parent[i]
    return i


@nb.njit(cache=True)
def _join(parent, a, b):
    """Merge the sets of ``a`` and ``b`` (the smaller root becomes the root)."""
    a, b = _root(parent, a), _root(parent, b)
    if a < b:
        parent[b] = a
    elif b < a:
        parent[a] = b
