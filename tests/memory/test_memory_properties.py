"""Property tests over random streams: capacity, len, reads against a brute-force reference, and
save/load round trips, for all five memories."""

from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from memory_streams import (
    MEMORIES,
    as_stored,
    base_name,
    clusters_events,
    memory_class,
    random_frames,
    write_all,
)

from mrsteve.memory import load
from mrsteve.memory.base import ReadFilter

DIM = 8
EPS = 1e-5
"""Scores computed by a matrix product and by a single dot product may differ in the last bits."""

names = st.sampled_from(list(MEMORIES))
streams = st.fixed_dictionaries(
    {
        "seed": st.integers(0, 2**16),
        "count": st.integers(1, 160),
        "capacity": st.one_of(st.none(), st.integers(1, 60)),
        "spread": st.sampled_from([2.0, 10.0, 40.0]),
        "update_freq": st.integers(1, 12),
    }
)


def build(name: str, stream: dict, count: int | None = None):
    hyperparameters = {"update_freq": stream["update_freq"]} if clusters_events(name) else {}
    memory = MEMORIES[name](stream["capacity"], **hyperparameters)
    rng = np.random.default_rng(stream["seed"])
    frames = random_frames(rng, stream["count"], DIM, spread=stream["spread"])
    return memory, frames


@settings(max_examples=60, deadline=None)
@given(name=names, stream=streams)
def test_capacity_is_never_exceeded_and_len_is_exact(name, stream):
    memory, (embeddings, poses) = build(name, stream)
    capacity = stream["capacity"]
    for t, (embedding, pose) in enumerate(zip(embeddings, poses)):
        memory.write(embedding, pose, t)
        if capacity is not None:
            assert len(memory) <= capacity
        if name != "center-embed":  # which drops non-centre frames on clustering
            assert len(memory) == min(t + 1, capacity or t + 1)
    views = memory.clusters()
    assert len(memory) == sum(len(view.t) for view in views) == memory.stats().frames
    stored = np.concatenate([view.t for view in views])
    assert np.unique(stored).shape == stored.shape
    for view in views:  # what is stored is what was written (float16 frames: rounded)
        np.testing.assert_array_equal(view.embedding, as_stored(name, embeddings[view.t]))


def reference_read(name, memory, query, threshold, top_k, since, until, within):
    """Brute force over :meth:`clusters`: ``(frames that must be returned, frames that may be)``,
    the two differing only within EPS of a score boundary."""
    query = query.astype(np.float64)
    searched = []
    for view in memory.clusters():
        t, x, z = view.t, view.pose[:, 0].astype(np.float64), view.pose[:, 2].astype(np.float64)
        if since is not None and t.max() < since or until is not None and t.min() > until:
            continue
        if within is not None:
            cx, cz, radius = within
            dx = max(x.min() - cx, cx - x.max(), 0.0)
            dz = max(z.min() - cz, cz - z.max(), 0.0)
            if dx * dx + dz * dz > radius * radius:
                continue
        centre = view.embedding[view.centre_index or 0].astype(np.float64) @ query
        searched.append((centre, view))
    if base_name(name) == "fifo":
        sure = maybe = [view for _, view in searched]
    else:
        centres = sorted((score for score, _ in searched), reverse=True)
        kth = centres[top_k - 1] if len(centres) > top_k else -np.inf
        sure = [view for score, view in searched if score > kth + EPS]
        maybe = [view for score, view in searched if score >= kth - EPS]

    def passing(views, margin):
        frames = set()
        for view in views:
            rows = [view.centre_index] if name == "center-embed" else range(len(view.t))
            for row in rows:
                t, pose = int(view.t[row]), view.pose[row].astype(np.float64)
                if view.embedding[row].astype(np.float64) @ query < threshold + margin:
                    continue
                if since is not None and t < since or until is not None and t > until:
                    continue
                if (
                    within is not None
                    and np.hypot(pose[0] - within[0], pose[2] - within[1]) > within[2]
                ):
                    continue
                frames.add(t)
        return frames

    return passing(sure, EPS), passing(maybe, -EPS)


@settings(max_examples=80, deadline=None)
@given(
    name=names,
    stream=streams,
    threshold=st.floats(-0.5, 0.95),
    top_k=st.integers(1, 6),
    since=st.one_of(st.none(), st.integers(0, 100)),
    until=st.one_of(st.none(), st.integers(0, 160)),
    within=st.one_of(
        st.none(), st.tuples(st.floats(-20, 20), st.floats(-20, 20), st.floats(0, 30))
    ),
    near=st.one_of(st.none(), st.tuples(st.floats(-20, 20), st.floats(-20, 20))),
    from_memory=st.booleans(),
)
def test_read_returns_exactly_the_searched_frames_at_or_above_threshold(
    name, stream, threshold, top_k, since, until, within, near, from_memory
):
    memory, frames = build(name, stream)
    write_all(memory, *frames)
    rng = np.random.default_rng(stream["seed"] + 1)
    query = (
        frames[0][rng.integers(stream["count"])]
        if from_memory
        else random_frames(rng, 1, DIM)[0][0]
    )
    result = memory.read(
        query, threshold, top_k=top_k, near=near, since=since, until=until, within=within
    )
    must, may = reference_read(name, memory, query, threshold, top_k, since, until, within)
    returned = result.t.tolist()
    assert len(set(returned)) == len(returned)
    assert must <= set(returned) <= may
    assert (result.score >= threshold).all()
    if near is None:
        assert (np.diff(result.score) <= 0).all()
    else:
        distance = np.hypot(result.pose[:, 0] - near[0], result.pose[:, 2] - near[1])
        assert (np.diff(distance) >= -1e-9).all()


@settings(max_examples=40, deadline=None)
@given(name=names, stream=streams, split=st.floats(0, 1), threshold=st.floats(-0.5, 0.9))
def test_save_then_load_then_write_matches_never_saving(name, stream, split, threshold):
    memory, (embeddings, poses) = build(name, stream)
    first = int(split * stream["count"])
    write_all(memory, embeddings[:first], poses[:first])
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "memory.mrsteve"
        memory.save(path)
        loaded = load(path)
    for continued in (False, True):
        if continued:
            write_all(memory, embeddings[first:], poses[first:], start=first)
            write_all(loaded, embeddings[first:], poses[first:], start=first)
        assert loaded.stats() == memory.stats()
        for view, loaded_view in zip(memory.clusters(), loaded.clusters(), strict=True):
            np.testing.assert_array_equal(loaded_view.t, view.t)
            np.testing.assert_array_equal(loaded_view.embedding, view.embedding)
            assert loaded_view.centre_index == view.centre_index
        for query in embeddings[:3]:
            expected, got = (
                memory.read(query, threshold, near=(1.0, 1.0)),
                loaded.read(query, threshold, near=(1.0, 1.0)),
            )
            np.testing.assert_array_equal(got.t, expected.t)
            np.testing.assert_array_equal(got.score, expected.score)


def variant(mixin: type, name: str, stream: dict):
    """Memory ``name`` as :func:`build` makes it, with ``mixin``'s methods in front."""
    base, hyperparameters = memory_class(name)
    cls = type(mixin.__name__ + base.__name__, (mixin, base), {})
    return cls(stream["capacity"], **{
        **hyperparameters,
        **({"update_freq": stream["update_freq"]} if clusters_events(name) else {}),
    })


class Unrouted:
    """Every write takes the looked-up path: the route is never set."""

    def _route_to(self, cluster) -> None:
        pass


@settings(max_examples=40, deadline=None)
@given(name=names, stream=streams)
def test_the_route_changes_nothing_but_speed(name, stream):
    """Writes appended on the route (the last write's place cell and cluster, in the compiled
    call) leave the memory exactly as the looked-up path does, across clustering, eviction and
    closed clusters whose ids are reused."""
    memory, (embeddings, poses) = build(name, stream)
    reference = variant(Unrouted, name, stream)
    write_all(memory, embeddings, poses)
    write_all(reference, embeddings, poses)
    scalars, arrays = memory._state()
    expected_scalars, expected_arrays = reference._state()
    assert scalars == expected_scalars and arrays.keys() == expected_arrays.keys()
    for key, array in arrays.items():
        np.testing.assert_array_equal(array, expected_arrays[key], err_msg=key)


class Searching:
    """Every read searches: the last read that found nothing is forgotten first."""

    def read(self, *args, **kwargs):
        self._missed = None
        return super().read(*args, **kwargs)


@settings(max_examples=80, deadline=None)
@given(name=names, stream=streams, threshold=st.floats(0.2, 0.99), top_k=st.integers(1, 3),
       every=st.integers(1, 3), pick=st.integers(0, 159), foreign=st.booleans())
def test_a_read_answered_without_searching_is_what_searching_returns(
    name, stream, threshold, top_k, every, pick, foreign
):
    """A read that found nothing is answered again from the frames written since while no
    cluster opened, closed, changed centre or took in frames, or while no frame held scores
    near the threshold (``MissedRead``): across clustering, eviction and centre changes, every
    read returns what searching returns. The query is one of the frames or another vector."""
    memory, (embeddings, poses) = build(name, stream)
    reference = variant(Searching, name, stream)
    query = embeddings[pick % stream["count"]]
    if foreign:
        query = np.random.default_rng(pick).normal(size=query.shape).astype(np.float32)
        query /= np.linalg.norm(query)
    for t, (embedding, pose) in enumerate(zip(embeddings, poses)):
        memory.write(embedding, pose, t)
        reference.write(embedding, pose, t)
        if t % every == 0:
            got = memory.read(query, threshold, top_k=top_k, near=(1.0, 1.0))
            expected = reference.read(query, threshold, top_k=top_k, near=(1.0, 1.0))
            np.testing.assert_array_equal(got.t, expected.t)
            np.testing.assert_array_equal(got.score, expected.score)


@pytest.mark.parametrize("name", list(MEMORIES))
def test_reads_that_nothing_held_can_match_score_only_the_new_frame(name):
    """Reading every step for something no frame matches (MrSteve exploring): after the first
    read's search, each read scores only the frame written since, but for one scan of every
    frame at the first cluster change, although eviction keeps changing the clusters."""
    memory = MEMORIES[name](40, **({"update_freq": 5} if clusters_events(name) else {}))
    embeddings, poses = random_frames(np.random.default_rng(7), 200, DIM, spread=10.0)
    query = np.random.default_rng(8).normal(size=DIM).astype(np.float32)
    query /= np.linalg.norm(query)
    threshold = float((embeddings @ query).max()) + 0.01
    scored = []
    for t, (embedding, pose) in enumerate(zip(embeddings, poses)):
        memory.write(embedding, pose, t)
        found = memory.read(query, threshold)
        assert len(found) == 0
        scored.append(found.frames_scored)
    later = scored[1:]
    assert later.count(1) >= len(later) - 1 and max(later) <= memory._frames.used


class Coded:
    """The memory keeping its frames' int8 codes (as ``frame_codes=True`` makes it)."""

    def _frames_coded(self) -> bool:
        return True


class Uncoded:
    """Reads score every frame of the searched clusters from its float32 row: no frame codes."""

    def _frames_coded(self) -> bool:
        return False


@settings(max_examples=80, deadline=None)
@given(name=names, stream=streams, dim=st.sampled_from([8, 64]), pick=st.integers(0, 159),
       at=st.sampled_from(["below", "on", "above", "anywhere"]), spot=st.integers(0, 159),
       top_k=st.integers(1, 4), near=st.booleans(), grid=st.booleans(),
       outside=st.lists(st.tuples(st.integers(-10, 10), st.integers(-10, 10),
                                  st.sampled_from([0.0, 1.0, 4.0])), max_size=2))
def test_reads_decided_from_codes_are_the_float32_reads(
    name, stream, dim, pick, at, spot, top_k, near, grid, outside
):
    """A read that decides frames from their int8 codes (what the scan does wherever the bound
    allows) and, with ``scores="best"``, scores only what the order and the best score need,
    returns what scoring every frame from its float32 row returns: the same frames in the same
    order, the same scores where computed, the same best score, to the last bit. Thresholds at
    a frame's exact score and one float32 step either side of it included; positions on a grid
    make distance ties (a standing agent), whose order the scores decide."""
    rng = np.random.default_rng(stream["seed"])
    embeddings, poses = random_frames(rng, stream["count"], dim, spread=stream["spread"])
    if grid:
        poses[:, [0, 2]] = np.round(poses[:, [0, 2]] / 4.0)
    coded = variant(Coded, name, stream)
    plain = variant(Uncoded, name, stream)
    write_all(coded, embeddings, poses)
    write_all(plain, embeddings, poses)
    query = embeddings[pick % stream["count"]]
    exact = float(as_stored(name, embeddings)[spot % stream["count"]] @ query)
    threshold = np.float32({
        "below": np.nextafter(np.float32(exact), np.float32(-2)), "on": np.float32(exact),
        "above": np.nextafter(np.float32(exact), np.float32(2)),
        "anywhere": rng.uniform(-0.2, 1.0)}[at])
    options = {"top_k": top_k, "near": (1.0, -2.0) if near else None,
               "outside": [tuple(map(float, disc)) for disc in outside] or None}
    expected = plain.read(query, threshold, **options)
    for scores in ("all", "best"):
        got = coded.read(query, threshold, scores=scores, **options)
        np.testing.assert_array_equal(got.t, expected.t)
        np.testing.assert_array_equal(got.pose, expected.pose)
        assert got.best_score == expected.best_score
        computed = ~np.isnan(got.score)
        assert computed.all() or scores == "best"
        np.testing.assert_array_equal(got.score[computed], expected.score[computed])


@settings(max_examples=80, deadline=None)
@given(name=names, stream=streams, pick=st.integers(0, 159), threshold=st.floats(-0.2, 1.0),
       limit=st.integers(1, 20), near=st.booleans(), grid=st.booleans(), coded=st.booleans(),
       scores=st.sampled_from(["all", "best"]))
def test_a_limited_read_is_the_first_frames_of_the_whole_read(
    name, stream, pick, threshold, limit, near, grid, coded, scores
):
    """``limit`` returns the first ``limit`` frames of the whole read, in its order, with the
    same scores where computed; :attr:`MemoryRead.matched` counts every match and the best score
    is the best of them all (what the mode selector reads: its target, the first matches it
    records, their count and the best score). Positions on a grid make distance ties at the
    cut, which the scores order."""
    rng = np.random.default_rng(stream["seed"])
    embeddings, poses = random_frames(rng, stream["count"], DIM, spread=stream["spread"])
    if grid:
        poses[:, [0, 2]] = np.round(poses[:, [0, 2]] / 4.0)
    memory = variant(Coded if coded else Uncoded, name, stream)
    write_all(memory, embeddings, poses)
    options = {"near": (1.0, -2.0) if near else None, "scores": scores}
    query = embeddings[pick % stream["count"]]
    whole = memory.read(query, threshold, **options)
    first = memory.read(query, threshold, limit=limit, **options)
    assert len(first) == min(limit, len(whole)) and first.matched == whole.matched == len(whole)
    np.testing.assert_array_equal(first.t, whole.t[:limit])
    np.testing.assert_array_equal(first.pose, whole.pose[:limit])
    np.testing.assert_array_equal(first.score, whole.score[:limit])  # NaN where not computed
    assert first.best_score == whole.best_score


@settings(max_examples=60, deadline=None)
@given(name=names, stream=streams, every=st.integers(4, 40), top_k=st.integers(1, 4))
def test_reads_decided_from_codes_between_writes_are_the_float32_reads(
    name, stream, every, top_k
):
    """Reads made between writes, evictions (a capacity) and events clustered again (every
    ``every`` frames) that decide frames from their codes return what scoring every frame from
    its float32 row returns: the same frames and the same best score."""
    rng = np.random.default_rng(stream["seed"])
    count = stream["count"]
    embeddings, poses = random_frames(rng, count, DIM, spread=stream["spread"])
    coded = variant(Coded, name, stream)
    plain = variant(Uncoded, name, stream)
    written = 0
    for stop in [*range(every, count, every), count]:
        for memory in (coded, plain):
            write_all(memory, embeddings[written:stop], poses[written:stop], start=written)
        written = stop
        query = embeddings[rng.integers(0, stop)]
        threshold = np.float32(rng.uniform(-0.2, 1.0))
        expected = plain.read(query, threshold, top_k=top_k)
        got = coded.read(query, threshold, top_k=top_k, scores="best")
        np.testing.assert_array_equal(got.t, expected.t)
        assert got.best_score == expected.best_score


@settings(max_examples=60, deadline=None)
@given(
    seed=st.integers(0, 2**16),
    since=st.one_of(st.none(), st.integers(0, 50)),
    until=st.one_of(st.none(), st.integers(0, 50)),
    within=st.one_of(st.none(), st.tuples(st.floats(-8, 8), st.floats(-8, 8), st.floats(0, 10))),
    outside=st.lists(st.tuples(st.floats(-8, 8), st.floats(-8, 8), st.floats(0, 6)),
                     max_size=3),
)
def test_the_read_filter_passes_frames_by_step_and_place(
    seed, since, until, within, outside
):
    """A frame passes the read's filter when its step lies in ``[since, until]``, it stands
    within the disc ``within`` and outside every disc of ``outside`` (a frame on the edge of a
    disc counts as inside it), in float64 distances."""
    rng = np.random.default_rng(seed)
    t = rng.integers(0, 50, 40).astype(np.int64)
    pose = np.round(rng.uniform(-10, 10, (40, 5)), 1).astype(np.float32)
    if outside:  # a frame exactly on the first disc's edge
        x, z, radius = outside[0]
        pose[0, 0], pose[0, 2] = np.float32(x + radius), np.float32(z)
    x, z = pose[:, 0].astype(np.float64), pose[:, 2].astype(np.float64)
    expected = np.ones(t.shape[0], bool)
    for cx, cz, radius in outside:
        expected &= (x - cx) ** 2 + (z - cz) ** 2 > radius * radius
    if within is not None:
        cx, cz, radius = within
        expected &= (x - cx) ** 2 + (z - cz) ** 2 <= radius * radius
    expected &= (t >= (since if since is not None else t.min()))
    expected &= (t <= (until if until is not None else t.max()))
    window = ReadFilter(since, until, within, tuple(outside))
    np.testing.assert_array_equal(window.frames(t, pose), expected)
