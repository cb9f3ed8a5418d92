"""The visitation map paints the field of view as a 70 degree, 10-block sector and grows."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mrsteve.control import VisitationConfig, VisitationMap
from mrsteve.control.visitation import PaintedFrames


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


def eyes_painted(poses, size=128):
    """A fresh map painted once from each ``(x, z, yaw)``."""
    visitation = VisitationMap(VisitationConfig(size=size))
    for pose in poses:
        visitation.paint(*pose)
    return visitation


def same_cells(a: VisitationMap, b: VisitationMap) -> bool:
    """Whether two maps hold the same counts on the same ground cells."""
    def cells(visitation):
        ox, oz = visitation.origin
        return {(int(i) + ox, int(j) + oz): int(visitation.counts[i, j])
                for i, j in zip(*np.nonzero(visitation.counts))}
    return cells(a) == cells(b)


def test_painting_many_is_painting_each_and_minus_one_takes_a_sector_back_after_growth():
    rng = np.random.default_rng(0)
    poses = np.column_stack([rng.uniform(-30, 30, 50), rng.uniform(-30, 30, 50),
                             rng.uniform(-180, 180, 50)])
    visitation = VisitationMap(VisitationConfig(size=16, growth=8))
    visitation.paint_many(*poses.T)
    assert same_cells(visitation, eyes_painted(poses))
    visitation.paint(300.7, -250.2, 10.0)  # the map grows far: its origin moves
    visitation.paint_many(*poses[:20].T, value=-1)
    assert visitation.counts.min() == 0
    assert same_cells(visitation, eyes_painted([*poses[20:], (300.7, -250.2, 10.0)]))


def test_painted_frames_follow_the_frames_held():
    """The map holds exactly the sectors of the frames last given: new ones painted, gone ones
    (evicted from memory) taken back, whatever order the steps come in."""
    rng = np.random.default_rng(1)
    steps = np.arange(200)
    eyes = np.column_stack([rng.uniform(-40, 40, 200), rng.uniform(-40, 40, 200),
                            rng.uniform(-180, 180, 200)])
    origin = (3.5, -7.25)
    poses = np.column_stack([eyes[:, 0] - origin[0], np.zeros(200), eyes[:, 1] - origin[1],
                             eyes[:, 2], np.zeros(200)])
    eyes[:, 0], eyes[:, 1] = poses[:, 0] + origin[0], poses[:, 2] + origin[1]  # as rounded
    painted_frames = PaintedFrames(VisitationMap(VisitationConfig(size=16)), origin)
    held = np.zeros(200, bool)
    for written in range(10, 201, 10):
        held[written - 10:written] = True
        held[rng.choice(written, 4, replace=False)] = False  # evictions anywhere
        order = rng.permutation(np.flatnonzero(held))
        painted_frames.update(steps[order], poses[order])
        assert len(painted_frames) == held.sum()
        assert same_cells(painted_frames.visitation, eyes_painted(eyes[held]))
    painted_frames.update(steps[:0], poses[:0])
    assert not painted_frames.visitation.counts.any()
