"""Place Memory: place keys, centres nearest the place centre, eviction from the largest place."""

from __future__ import annotations

import numpy as np
import pytest
from memory_streams import SceneWorld, stay, write_all

from mrsteve.memory import PlaceConfig, PlaceMemory, place_key

CONFIG = PlaceConfig()


@pytest.mark.parametrize(
    ("x", "z", "yaw", "key"),
    [
        (0.0, 0.0, 0.0, (0, 0, 0)),  # the start is the centre of place (0, 0), heading bin 0
        (2.99, -2.99, 29.9, (0, 0, 0)),
        (3.0, -3.01, 30.0, (1, -1, 1)),  # C/2 and W/2 are the edges
        (-3.0, 9.0, -30.0, (0, 2, 0)),
        (0.0, 0.0, -30.1, (0, 0, 5)),
        (0.0, 0.0, 330.0, (0, 0, 0)),  # headings wrap around
        (0.0, 0.0, 690.0, (0, 0, 0)),
    ],
)
def test_place_key_centres_cells_on_the_start(x, z, yaw, key):
    assert place_key([x, 64.0, z, yaw, 10.0], CONFIG) == key


def frames_at(world, xs, yaw=0.0):
    poses = np.concatenate([stay(x, 0.0, 1, yaw) for x in xs])
    return world.view(world.scene(), len(xs)), poses


def centre_t(memory, place_x):
    for view in memory.clusters():
        if abs(view.pose[0, 0] - place_x) < 3:
            return int(view.t[view.centre_index])
    raise AssertionError("no such place")


def test_centre_is_the_frame_nearest_the_place_centre_and_moves_when_evicted():
    world = SceneWorld()
    memory = PlaceMemory(capacity=4)
    write_all(memory, *frames_at(world, [0.2, 2.0, 1.0]))  # place 0: t = 0, 1, 2
    assert centre_t(memory, 0.0) == 0
    write_all(memory, *frames_at(world, [12.0, 12.5]), start=3)  # place 2 grows: eviction
    assert sorted(np.concatenate([v.t for v in memory.clusters()]).tolist()) == [1, 2, 3, 4]
    assert centre_t(memory, 0.0) == 2  # 1 block from the centre beats 2 blocks


def test_eviction_takes_the_oldest_frame_of_the_largest_place():
    world = SceneWorld()
    memory = PlaceMemory(capacity=6)
    write_all(memory, *frames_at(world, [0.0] * 4 + [12.0] * 2))
    write_all(memory, *frames_at(world, [24.0]), start=6)
    kept = sorted(np.concatenate([v.t for v in memory.clusters()]).tolist())
    assert kept == [1, 2, 3, 4, 5, 6]
    assert memory.stats().places == 3


def test_heading_separates_places_at_one_spot():
    world = SceneWorld()
    memory = PlaceMemory()
    for yaw in (0.0, 60.0, 120.0, 180.0, 240.0, 300.0):
        write_all(memory, *frames_at(world, [0.0, 0.5], yaw=yaw), start=memory.stats().frames)
    assert memory.stats().places == 6


def test_read_scores_only_the_frames_of_the_top_k_places():
    world = SceneWorld()
    memory = PlaceMemory()
    scenes = [world.scene() for _ in range(5)]
    for index, scene in enumerate(scenes):
        write_all(memory, world.view(scene, 10), stay(12.0 * index, 0.0, 10), start=10 * index)
    result = memory.read(scenes[3], -1.0, top_k=2)
    assert result.frames_scored == 5 + 20  # five centres, then the frames of two places
    places = {int(t) // 10 for t in result.t}
    assert 3 in places and len(places) == 2 and len(result) == 20


@pytest.mark.parametrize(
    ("field", "value"),
    [("cell_size", 0.0), ("cell_size", "6"), ("yaw_bin", 200.0), ("top_k", 0), ("top_k", True)],
)
def test_bad_place_hyperparameters_raise(field, value):
    with pytest.raises(ValueError, match=field):
        PlaceMemory(**{field: value})
