"""Event clustering (DP-Means, MERGE_CLUSTERS, folding) in Event and Place Event Memory."""

from __future__ import annotations

import numpy as np
import pytest
from memory_streams import MEMORIES, SceneWorld, stay, write_all

from mrsteve.memory import EventMemory, PlaceEventMemory
from mrsteve.memory.event import merge_similar
from mrsteve.memory.kernels import score_rows


def test_merge_similar_joins_connected_components():
    centres = np.array([[1.0, 0.0], [0.9, 0.1], [0.0, 1.0], [0.7, 0.72], [-1.0, 0.0]])
    # 0-1 similar, 3 bridges 1 and 2 above 0.74? cos(1, 3) = 0.77, cos(3, 2) = 0.72: not linked.
    assert merge_similar(centres, 0.74).tolist() == [0, 0, 1, 0, 2]
    assert merge_similar(centres, 0.7).tolist() == [0, 0, 0, 0, 1]


@pytest.mark.parametrize("offset", [0.0, 1e-16, -1e-16, 1e-13, -1e-13, 1e-6, -1e-6])
def test_merge_similar_links_as_the_matrix_product_does_at_the_threshold(offset):
    """Similarities are summed in compiled code, and by numpy (BLAS) only when one is too near
    the threshold to tell: the links are those of ``unit @ unit.T > threshold`` either way."""
    rng = np.random.default_rng(7)
    a, b = rng.normal(size=(2, 512))
    a /= np.linalg.norm(a)
    b -= (b @ a) * a
    b /= np.linalg.norm(b)
    threshold = 0.74
    cosine = threshold + offset
    centres = np.stack([a, cosine * a + np.sqrt(1 - cosine**2) * b, -a, 3 * a])
    unit = centres / np.linalg.norm(centres, axis=1, keepdims=True)
    linked = (unit @ unit.T) > threshold
    expected = [0, int(not linked[0, 1] and not linked[1, 3]), 2, 0]
    expected = np.unique(expected, return_inverse=True)[1].tolist()
    assert merge_similar(centres, threshold).tolist() == expected


def events(memory):
    return [view.t.tolist() for view in memory.clusters()]


def test_distinct_scenes_become_events_and_a_returning_scene_folds_in():
    world = SceneWorld()
    x, y = world.scene(), world.scene()
    memory = EventMemory()
    next_t = write_all(memory, world.view(x, 100), stay(0, 0, 100))
    assert events(memory) == [list(range(100))]
    next_t = write_all(memory, world.view(y, 100), stay(50, 0, 100), start=next_t)
    next_t = write_all(memory, world.view(x, 100), stay(-50, 0, 100), start=next_t)
    assert events(memory) == [list(range(100)) + list(range(200, 300)), list(range(100, 200))]
    assert memory.stats().events == 2


def test_one_clustering_splits_a_mixed_window_into_its_scenes():
    world = SceneWorld()
    x, y, z = world.scene(), world.scene(), world.scene()
    memory = EventMemory()
    write_all(memory, np.concatenate([world.view(s, 34) for s in (x, y, z)])[:100], stay(0, 0, 100))
    assert sorted(len(t) for t in events(memory)) == [32, 34, 34]


def test_the_provisional_event_is_readable_with_its_oldest_frame_as_centre():
    world = SceneWorld()
    scene = world.scene()
    memory = EventMemory()
    write_all(memory, world.view(scene, 40), stay(0, 0, 40))
    (view,) = memory.clusters()
    assert view.centre_index == 0 and len(view.t) == 40
    assert len(memory.read(scene, 0.8)) == 40


def test_place_event_memory_keeps_look_alike_scenes_of_two_places_apart():
    world = SceneWorld()
    scene = world.scene()
    memory = PlaceEventMemory()
    next_t = write_all(memory, world.view(scene, 100), stay(0, 0, 100))
    write_all(memory, world.view(scene, 100), stay(30, 0, 100), start=next_t)
    assert events(memory) == [list(range(100)), list(range(100, 200))]
    assert (memory.stats().places, memory.stats().events) == (2, 2)
    everything = EventMemory()
    write_all(everything, world.view(scene, 200), stay(0, 0, 200))
    assert everything.stats().events == 1


def test_eviction_takes_the_oldest_frame_of_the_largest_event_over_all_places():
    world = SceneWorld()
    x, y = world.scene(), world.scene()
    memory = PlaceEventMemory(capacity=250)
    next_t = write_all(memory, world.view(x, 100), stay(0, 0, 100))  # place A, event X
    next_t = write_all(memory, world.view(y, 120), stay(30, 0, 120), start=next_t)  # B: 100 + 20
    next_t = write_all(memory, world.view(x, 31), stay(0, 0, 31), start=next_t)  # A: provisional
    assert len(memory) == 250
    write_all(memory, world.view(y, 5), stay(30, 0, 5), start=next_t)
    sizes = sorted(len(t) for t in events(memory))
    assert len(memory) == 250 and sizes == [25, 31, 97, 97]
    stored = {t for ts in events(memory) for t in ts}
    assert {0, 1, 2, 100, 101, 102}.isdisjoint(stored)


def test_centre_only_keeps_one_frame_per_event_and_reads_the_oldest_provisional_frame():
    world = SceneWorld()
    x, y = world.scene(), world.scene()
    memory = PlaceEventMemory(center_only=True)
    next_t = write_all(memory, world.view(x, 100), stay(0, 0, 100))
    assert len(memory) == 1 and memory.stats().events == 1
    next_t = write_all(memory, world.view(x, 100), stay(0, 0, 100), start=next_t)
    assert len(memory) == 1  # folded into the existing event: the new frames are dropped
    write_all(memory, world.view(y, 30), stay(0, 0, 30), start=next_t)
    assert len(memory) == 31
    result = memory.read(y, 0.5)
    assert result.t.tolist() == [200] and result.frames_scored == 2


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("update_freq", 0),
        ("n_init", 0),
        ("n_init", 2.5),
        ("delta", -1.0),
        ("delta", float("nan")),
        ("merge_threshold", 1.5),
        ("fold_threshold", "high"),
        ("seed", None),
    ],
)
def test_bad_event_hyperparameters_raise(field, value):
    with pytest.raises(ValueError, match=field):
        EventMemory(**{field: value})
    with pytest.raises(ValueError, match=field):
        PlaceEventMemory(**{field: value})


def test_center_only_must_be_a_bool():
    with pytest.raises(ValueError, match="center_only"):
        PlaceEventMemory(center_only="yes")


def test_event_centres_are_one_stored_frame_per_cluster():
    rng = np.random.default_rng(0)
    memory = PlaceEventMemory(dim=16)
    assert memory.event_centres()[0].shape == (0, 16)
    for t in range(450):
        e = rng.normal(size=16).astype(np.float32)
        memory.write(e / np.linalg.norm(e), (float(t % 30), 0.0, 0.0, 0.0, 0.0), t)
    centres, poses = memory.event_centres()
    assert len(centres) == len(poses) == memory.stats().clusters
    views = memory.clusters()
    for centre, view in zip(centres, views, strict=True):
        np.testing.assert_array_equal(centre, view.embedding[view.centre_index])


@pytest.mark.parametrize("name", ["event", "place-event", "place-event-float16"])
def test_a_taken_centre_passes_to_the_remaining_frame_most_like_it(name):
    """Eviction takes the oldest frame of the largest event; when that frame is the event's
    centre, the frame of the event most similar to it (the oldest of equals) becomes the centre.
    Still views (runs of one embedding) make that happen at nearly every write, the case the
    memory keeps scores for between evictions: every new centre must be the one that scoring all
    the event's frames afresh picks."""
    world = SceneWorld(dim=32, seed=3)
    rng = np.random.default_rng(3)
    scenes = [world.scene() for _ in range(3)]
    memory = MEMORIES[name](capacity=150, dim=32, update_freq=10)
    replaced = 0
    frame = world.view(scenes[0], 1)[0]
    for t in range(1200):
        if rng.random() < 0.15:  # a new view now and then; otherwise the same one again
            frame = world.view(scenes[rng.integers(3)], 1)[0]
        before = memory.clusters()
        memory.write(frame, (float(rng.integers(2)), 0.0, 0.0, 0.0, 0.0), t)
        after = memory.clusters()
        held = {int(s) for view in after for s in view.t}
        for old in before:
            centre_t = int(old.t[old.centre_index])
            remaining = [int(s) for s in old.t if int(s) in held]
            if centre_t in held or not remaining:
                continue
            (new,) = [view for view in after if remaining[0] in view.t.tolist()]
            scores = score_rows(new.embedding, np.arange(len(new.t)), old.embedding[old.centre_index])
            assert new.centre_index == int(np.argmax(scores)), f"step {t}"
            replaced += 1
    assert replaced > 200  # the centre was taken at a quarter of the 1,050 evictions or more
