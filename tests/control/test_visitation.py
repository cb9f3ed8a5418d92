"""The visitation map paints the field of view as a 70 degree, 10-block sector and grows."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mrsteve.control import VisitationConfig, VisitationMap


def painted(visitation: VisitationMap) -> set[tuple[int, int]]:
    """World cells (x, z) painted at least once."""
    ox, oz = visitation.origin
    return {(int(i) + ox, int(j) + oz) for i, j in zip(*np.nonzero(visitation.counts))}


@pytest.mark.parametrize(
    "yaw, forward",
    [(0.0, (0, 1)), (90.0, (-1, 0)), (180.0, (0, -1)), (-90.0, (1, 0)), (270.0, (1, 0))],
)
def test_the_sector_lies_ahead_in_minecraft_yaw(yaw, forward):
    """Yaw 0 faces +z, 90 faces -x: cells ahead within 10 blocks are painted, none behind."""
    visitation = VisitationMap()
    visitation.paint(0.5, 0.5, yaw)
    fx, fz = forward
    assert visitation.count_at(0.5 + 9 * fx, 0.5 + 9 * fz) == 1
    assert visitation.count_at(0.5 + 3 * fx, 0.5 + 3 * fz) == 1
    assert visitation.count_at(0.5 + 11 * fx, 0.5 + 11 * fz) == 0
    for x, z in painted(visitation):
        ahead = (x + 0.5 - 0.5) * fx + (z + 0.5 - 0.5) * fz
        assert ahead >= 0
        assert math.hypot(x, z) <= 10
    assert visitation.count_at(0.5 - 3 * fx, 0.5 - 3 * fz) == 0


def test_the_sector_is_70_degrees_wide_and_holds_the_agents_cell():
    visitation = VisitationMap()
    visitation.paint(0.5, 0.5, 0.0)
    for angle, inside in ((0, True), (30, True), (-30, True), (40, False), (-40, False)):
        x = 0.5 - 8 * math.sin(math.radians(angle))
        z = 0.5 + 8 * math.cos(math.radians(angle))
        assert visitation.count_at(x, z) == int(inside), angle
    assert visitation.count_at(0.5, 0.5) == 1
    # about 70/360 of a disc of radius 10
    assert len(painted(visitation)) == pytest.approx(70 / 360 * math.pi * 100, rel=0.2)


def test_painting_counts_up():
    visitation = VisitationMap()
    for _ in range(3):
        visitation.paint(2.2, -4.7, 45.0)
    visitation.paint(2.2, -4.7, 225.0)
    assert visitation.count_at(2.2, -4.7) == 4
    assert visitation.counts.max() == 4
    assert set(np.unique(visitation.counts)) == {0, 1, 3, 4}


def test_the_map_is_centred_on_the_start_and_grows_keeping_counts():
    visitation = VisitationMap(VisitationConfig(size=128, growth=64), centre=(1000.3, -20.0))
    assert visitation.counts.shape == (128, 128)
    assert visitation.extent == (936, -84, 1064, 44)
    visitation.paint(1000.3, -20.0, 0.0)
    before = {cell: visitation.count_at(*cell) for cell in painted(visitation)}
    visitation.paint(900.5, -20.0, 90.0)  # view leaves the map on the -x side
    visitation.paint(1000.5, 150.5, 0.0)  # and on the +z side
    assert visitation.counts.shape[0] > 128 and visitation.counts.shape[1] > 128
    x_min, _, _, z_max = visitation.extent
    assert x_min <= 900 - 11 and z_max >= 150 + 11
    assert visitation.count_at(891.5, -19.5) == 1
    assert visitation.count_at(1000.5, 159.5) == 1
    for cell, count in before.items():
        assert visitation.count_at(*cell) == count
    assert int(visitation.counts.sum()) == sum(
        len(painted_once(p))
        for p in ((1000.3, -20.0, 0.0), (900.5, -20.0, 90.0), (1000.5, 150.5, 0.0))
    )


def painted_once(pose) -> set[tuple[int, int]]:
    visitation = VisitationMap(centre=(pose[0], pose[1]))
    visitation.paint(*pose)
    return painted(visitation)


def test_counts_off_the_map_are_zero_and_read_only():
    visitation = VisitationMap()
    assert visitation.count_at(1e6, 0.0) == 0
    with pytest.raises(ValueError):
        visitation.counts[0, 0] = 5


def test_bad_input_raises():
    with pytest.raises(ValueError, match="finite"):
        VisitationMap().paint(float("nan"), 0.0, 0.0)
    with pytest.raises(ValueError, match="fov_degrees"):
        VisitationConfig(fov_degrees=0.0)
    with pytest.raises(ValueError, match="size"):
        VisitationConfig(size=0)
