"""The shared visibility rule: region sizes (8-connected pixels of one class) and its thresholds."""

from __future__ import annotations

import numpy as np
import pytest

from mrsteve.visibility import VISIBILITY, RegionLabeller, VisibilityRule


def test_region_sizes_join_diagonal_neighbours_of_one_class_only():
    frame = np.array([
        [1, 0, 0, 2],
        [0, 1, 0, 2],
        [0, 0, 0, 0],
        [3, 3, 0, 1],
    ], dtype=np.uint8)
    sizes = RegionLabeller().region_sizes(frame)
    assert sizes[0, 0] == sizes[1, 1] == 2  # diagonal neighbours are one region
    assert sizes[0, 3] == sizes[1, 3] == 2
    assert sizes[3, 0] == 2 and sizes[3, 3] == 1  # the lone 1 is its own region
    assert sizes[0, 1] == 9  # every 0 touches the others


def test_region_sizes_match_a_flood_fill_on_random_frames():
    rng = np.random.default_rng(3)
    labeller = RegionLabeller()
    for shape in [(5, 7), (12, 9), (1, 6), (6, 1)]:
        frame = rng.integers(0, 3, size=shape).astype(np.uint8)
        assert np.array_equal(labeller.region_sizes(frame), _flood_sizes(frame))


def _flood_sizes(frame: np.ndarray) -> np.ndarray:
    sizes = np.zeros(frame.shape, dtype=np.int64)
    seen = np.zeros(frame.shape, dtype=bool)
    h, w = frame.shape
    for r in range(h):
        for c in range(w):
            if seen[r, c]:
                continue
            stack, members = [(r, c)], []
            seen[r, c] = True
            while stack:
                i, j = stack.pop()
                members.append((i, j))
                for di in (-1, 0, 1):
                    for dj in (-1, 0, 1):
                        a, b = i + di, j + dj
                        if 0 <= a < h and 0 <= b < w and not seen[a, b] and \
                                frame[a, b] == frame[r, c]:
                            seen[a, b] = True
                            stack.append((a, b))
            for i, j in members:
                sizes[i, j] = len(members)
    return sizes


def test_thresholds_are_shares_of_the_view():
    assert VISIBILITY.clear_pixels(40 * 64) == 26
    assert VISIBILITY.pursue_pixels(40 * 64) == 6
    assert VISIBILITY.pursue_pixels(160 * 256) == 102  # the same share at 16 times the pixels
    assert VisibilityRule(clear_share=0.0).pursue_pixels(100) == 1


@pytest.mark.parametrize("field", [{"clear_share": 1.5}, {"pursue_clarity": -0.1},
                                   {"max_distance": 0.0}])
def test_bad_rules_are_refused(field):
    with pytest.raises(ValueError, match=next(iter(field))):
        VisibilityRule(**field)
