"""The interface every memory shares (``mrsteve.memory.Memory``), one suite for all five."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest
from memory_streams import (
    MEMORIES,
    QUICK_CLUSTERING,
    as_stored,
    base_name,
    random_frames,
    write_all,
)

from mrsteve.memory import Memory, MemoryRead, MemoryStats, RecalledFrame

DIM = 16


@pytest.fixture(params=list(MEMORIES))
def name(request):
    return request.param


@pytest.fixture
def make(name):
    return partial(MEMORIES[name], **QUICK_CLUSTERING.get(name, {}))


@pytest.fixture
def frames():
    return random_frames(np.random.default_rng(0), 400, DIM, spread=8.0)


def filled(make, frames, capacity=None):
    memory = make(capacity)
    write_all(memory, *frames)
    return memory


def a_centre(memory):
    """``(t, embedding)`` of a stored centre frame (FIFO: of its oldest frame)."""
    view = memory.clusters()[0]
    index = view.centre_index or 0
    return int(view.t[index]), view.embedding[index]


def test_memory_implements_the_protocol(make):
    assert isinstance(make(), Memory)


def test_len_counts_frames_and_capacity_bounds_it(name, make, frames):
    assert len(make()) == 0
    memory = filled(make, frames)
    assert len(memory) == sum(len(view.t) for view in memory.clusters())
    if name == "center-embed":  # clustering keeps only the centre frames
        assert len(memory) < 400
    else:
        assert len(memory) == 400
    bounded = filled(make, frames, capacity=50)
    assert len(bounded) <= 50
    assert bounded.capacity == 50 and bounded.stats().frames == len(bounded)


def test_dim_is_fixed_by_the_first_write_or_the_constructor(make, frames):
    memory = make()
    assert memory.dim is None
    memory.write(frames[0][0], frames[1][0], 0)
    assert memory.dim == DIM
    with pytest.raises(ValueError, match=r"shape \(16,\)"):
        memory.write(np.ones(DIM + 1, np.float32), frames[1][0], 1)
    with pytest.raises(ValueError, match=r"shape \(8,\)"):
        make(dim=8).write(frames[0][0], frames[1][0], 0)


def test_read_before_any_write_is_empty(make):
    result = make().read(np.ones(4, np.float32) / 2, 0.0)
    assert isinstance(result, MemoryRead) and len(result) == 0


def test_read_returns_stored_frames_at_or_above_threshold_best_first(name, make, frames):
    memory = filled(make, frames)
    embeddings, poses = frames
    t, query = a_centre(memory)
    result = memory.read(query, 0.5)
    assert t in result.t.tolist()
    assert (result.score >= 0.5).all()
    assert (np.diff(result.score) <= 0).all()
    stored = as_stored(name, embeddings[result.t])
    np.testing.assert_allclose(result.score, stored @ query, atol=1e-5)
    np.testing.assert_array_equal(result.pose, poses[result.t].astype(np.float32))
    first = result[0]
    assert isinstance(first, RecalledFrame) and first.t == int(result.t[0])
    assert [frame.t for frame in result] == result.t.tolist()


def test_near_orders_results_by_ground_distance(make, frames):
    memory = filled(make, frames)
    result = memory.read(frames[0][7], 0.3, near=(5.0, -5.0))
    assert len(result) > 3
    distance = np.hypot(result.pose[:, 0] - 5.0, result.pose[:, 2] + 5.0)
    assert (np.diff(distance) >= 0).all()


def test_since_until_and_within_bound_every_returned_frame(make, frames):
    memory = filled(make, frames)
    everything = memory.read(frames[0][7], -1.0, top_k=10_000)
    bounded = memory.read(
        frames[0][7], -1.0, top_k=10_000, since=100, until=250, within=(0.0, 0.0, 12.0)
    )
    assert len(bounded) > 0
    assert ((bounded.t >= 100) & (bounded.t <= 250)).all()
    assert (np.hypot(bounded.pose[:, 0], bounded.pose[:, 2]) <= 12.0).all()
    inside = (everything.t >= 100) & (everything.t <= 250)
    inside &= np.hypot(everything.pose[:, 0], everything.pose[:, 2]) <= 12.0
    assert set(bounded.t.tolist()) == set(everything.t[inside].tolist())


def test_top_k_bounds_the_clusters_searched(name, make, frames):
    memory = filled(make, frames)
    query = frames[0][7]
    one = memory.read(query, -1.0, top_k=1)
    default = memory.read(query, -1.0)
    assert len(one) <= len(default)
    if base_name(name) != "fifo":
        sizes = [len(view.t) for view in memory.clusters()]
        assert len(one) <= max(sizes)
        assert memory.read(query, -1.0, top_k=30).t.tolist() == default.t.tolist()


def test_stats_and_clusters_describe_the_frames(name, make, frames):
    memory = filled(make, frames, capacity=1000)
    stats = memory.stats()
    views = memory.clusters()
    assert isinstance(stats, MemoryStats)
    assert stats.frames == len(memory) == sum(len(view.t) for view in views)
    assert stats.clusters == len(views)
    sizes = [len(view.t) for view in views]
    assert (stats.frames_per_cluster_min, stats.frames_per_cluster_max) == (min(sizes), max(sizes))
    assert stats.frames_per_cluster_mean == pytest.approx(np.mean(sizes))
    value_bytes = 2 if name.endswith("-float16") else 4
    assert stats.bytes >= 1001 * DIM * value_bytes  # frame rows are allocated up to the capacity
    stored = sorted(t for view in views for t in view.t.tolist())
    assert len(set(stored)) == len(stored) and set(stored) <= set(range(400))
    for view in views:
        assert (np.diff(view.t) > 0).all()  # oldest first
        if base_name(name) != "fifo":
            centre = view.t[view.centre_index]
            np.testing.assert_array_equal(
                view.embedding[view.centre_index], as_stored(name, frames[0][centre])
            )
    if base_name(name) in ("place", "place-event", "center-embed"):
        assert stats.places > 0
    if base_name(name) in ("event", "place-event", "center-embed"):
        assert stats.events == stats.clusters


def test_save_and_load_round_trip_exactly(make, frames, tmp_path):
    from mrsteve.memory import load

    memory = filled(make, frames, capacity=300)
    path = tmp_path / "memory.npz"
    memory.save(path)
    loaded = load(path)
    assert type(loaded) is type(memory) and loaded.config == memory.config
    assert loaded.stats() == memory.stats()
    _, query = a_centre(memory)
    for options in ({}, {"near": (1.0, 2.0)}, {"within": (0.0, 0.0, 10.0), "since": 150}):
        expected, got = memory.read(query, 0.2, **options), loaded.read(query, 0.2, **options)
        np.testing.assert_array_equal(got.t, expected.t)
        np.testing.assert_array_equal(got.score, expected.score)
    more = random_frames(np.random.default_rng(1), 150, DIM)
    write_all(memory, *more, start=400)
    write_all(loaded, *more, start=400)
    assert loaded.stats() == memory.stats()
    np.testing.assert_array_equal(loaded.read(query, 0.2).t, memory.read(query, 0.2).t)


def test_an_empty_memory_round_trips(make, tmp_path):
    from mrsteve.memory import load

    for memory in (make(), make(7, dim=5)):
        memory.save(tmp_path / "empty.npz")
        loaded = load(tmp_path / "empty.npz")
        assert (len(loaded), loaded.dim, loaded.capacity) == (0, memory.dim, memory.capacity)


@pytest.mark.parametrize(
    ("embedding", "pose", "t", "message"),
    [
        (np.ones(DIM, np.int64), (0, 0, 0, 0, 0), 0, "must hold floats"),
        (np.array(["a"] * DIM, object), (0, 0, 0, 0, 0), 0, "must hold floats"),
        (np.ones((2, DIM), np.float32), (0, 0, 0, 0, 0), 0, "must have shape"),
        (np.full(DIM, np.nan, np.float32), (0, 0, 0, 0, 0), 0, "NaN or infinite"),
        (np.full(DIM, 1e300), (0, 0, 0, 0, 0), 0, "NaN or infinite"),
        (np.ones(DIM), (0, 0, 0, 0), 0, "pose must be 5 numbers"),
        (np.ones(DIM), (0, 0, 0, 0, float("inf")), 0, "pose must be finite"),
        (np.ones(DIM), "abcde", 0, "pose must be 5 numbers"),
        (np.ones(DIM), (0, 0, 0, 0, 0), 1.5, "t must be an int"),
    ],
)
def test_bad_writes_raise_and_leave_the_memory_unchanged(make, embedding, pose, t, message):
    memory = make(dim=DIM)
    memory.write(np.ones(DIM) / 4, (0, 0, 0, 0, 0), 0)
    with pytest.raises(ValueError, match=message):
        memory.write(embedding, pose, t)
    assert len(memory) == 1


def test_time_must_not_run_backwards(make):
    memory = make()
    memory.write(np.ones(4) / 2, (0, 0, 0, 0, 0), 10)
    with pytest.raises(ValueError, match="must not decrease"):
        memory.write(np.ones(4) / 2, (0, 0, 0, 0, 0), 9)


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"threshold": float("nan")}, "threshold"),
        ({"top_k": 0}, "top_k"),
        ({"near": (1.0,)}, "near"),
        ({"within": (0.0, 0.0, -1.0)}, "radius"),
        ({"within": (0.0, 0.0)}, "within"),
        ({"since": 1.5}, "since"),
        ({"limit": 0}, "limit must be a positive int or None"),
        ({"limit": 2.0}, "limit must be a positive int or None"),
    ],
)
def test_bad_reads_raise(make, options, message):
    memory = make()
    memory.write(np.ones(4) / 2, (0, 0, 0, 0, 0), 0)
    arguments = {"threshold": 0.0} | options
    threshold = arguments.pop("threshold")
    with pytest.raises(ValueError, match=message):
        memory.read(np.ones(4) / 2, threshold, **arguments)


@pytest.mark.parametrize("capacity", [-1, 0, 2.5, True])
def test_bad_capacity_raises(make, capacity):
    with pytest.raises(ValueError, match="capacity"):
        make(capacity)


def test_unknown_hyperparameter_names_the_accepted_ones(make):
    with pytest.raises(ValueError, match="unknown .*Memory hyperparameter 'cell_sise'; known: "):
        make(cell_sise=4)
