"""The read's index layout under eviction: slot blocks in one arena and a matrix of centre codes
that holds exactly the clusters with frames, checked after every write of random interleavings."""

from __future__ import annotations

import os
import subprocess
import sys

import numba
import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from memory_streams import MEMORIES, clusters_events, random_frames

from mrsteve.memory import cluster_table, kernels
from mrsteve.memory.base import NO_FILTER
from mrsteve.memory.frames import NO_CODES, FrameStore
from mrsteve.memory.kernels import (
    EVERY_FRAME,
    MAX_CODED_DIM,
    _byte_prune,
    _code_dot,
    _code_dots,
    _code_error,
    _pivot_bounds,
    _quantise_query,
    _signed_byte_dot,
    _top_centres,
    best_first,
    query_levels,
    search_clusters,
)

DIM = 6


def check_layout(memory) -> None:
    """The centre codes have one row per cluster holding frames, within their bound of its centre
    frame's embedding; blocks of open clusters do not overlap and lie inside the arena."""
    table = memory._clusters
    live = table.live[: table.live_count]
    sizes = table.sizes()
    assert sorted(live.tolist()) == np.flatnonzero(sizes > 0).tolist()
    assert memory.centre_rows() == memory.stats().clusters == live.shape[0]
    np.testing.assert_array_equal(table.row[live], np.arange(live.shape[0]))
    rows = slice(0, live.shape[0])  # the int8 codes stand within their bound of each centre
    decoded = table.codes[rows].astype(np.float64) * table.scales[rows, None]
    centres = memory._frames.embeddings[table.centre_slot[live]].astype(np.float64)
    missed = np.linalg.norm(centres - decoded, axis=1)
    assert (missed <= table.residuals[rows]).all()
    starts, ends = table.base[live], table.base[live] + table.block[live]
    order = np.argsort(starts)
    assert (ends[order][:-1] <= starts[order][1:]).all()
    assert (ends <= table.arena_used).all() and table.arena_used <= table.arena.shape[0]
    assert (table.tail[live] <= table.block[live]).all()
    order = table.buckets.order()  # the size buckets hold the clusters with frames, by size
    assert sorted(order.tolist()) == sorted(live.tolist())
    assert (np.diff(sizes[order]) >= 0).all()
    assert not live.shape[0] or sizes[table.largest()] == sizes.max()


def brute_force(memory, query: np.ndarray, threshold: np.float32, top_k: int) -> set[int]:
    """Steps of the frames of the top-k clusters (by centre score, float64) scoring at least
    ``threshold``, from :meth:`clusters` alone (ties at the k-th centre excluded)."""
    views = memory.clusters()
    centres = np.array([v.embedding[v.centre_index].astype(np.float64) @ query for v in views])
    kth = np.sort(centres)[::-1][top_k - 1] if len(views) > top_k else -np.inf
    found = set()
    for score, view in zip(centres, views, strict=True):
        if score > kth + 1e-5:
            scores = view.embedding.astype(np.float64) @ query
            found.update(view.t[scores >= threshold + 1e-5].tolist())
    return found


@settings(max_examples=60, deadline=None)
@given(
    name=st.sampled_from(["place", "event", "place-event"]),
    seed=st.integers(0, 2**16),
    count=st.integers(1, 200),
    capacity=st.one_of(st.none(), st.integers(1, 50)),  # pivots prune unlimited memories only
    update_freq=st.integers(1, 12),
    spread=st.sampled_from([2.0, 10.0, 40.0]),
    top_k=st.integers(1, 5),
    small_arena=st.booleans(),
    pivots=st.booleans(),
)
def test_every_write_keeps_the_layout_and_reads_match_a_scan(
    name, seed, count, capacity, update_freq, spread, top_k, small_arena, pivots
):
    """With ``pivots``, every read prunes with pivot groups (from one centre row on) and must
    return exactly what the int8 pass alone returns."""
    saved = cluster_table.MIN_ARENA, cluster_table.PIVOT_MIN_ROWS
    cluster_table.MIN_ARENA = 16 if small_arena else saved[0]  # pack the arena often
    cluster_table.PIVOT_MIN_ROWS = 1 if pivots else saved[1]
    try:
        write_and_check(name, seed, count, capacity, update_freq, spread, top_k, pivots)
    finally:
        cluster_table.MIN_ARENA, cluster_table.PIVOT_MIN_ROWS = saved


def write_and_check(name, seed, count, capacity, update_freq, spread, top_k, pivots=False):
    hyperparameters = {"update_freq": update_freq} if clusters_events(name) else {}
    memory = MEMORIES[name](capacity, **hyperparameters)
    rng = np.random.default_rng(seed)
    embeddings, poses = random_frames(rng, count, DIM, spread=spread)
    threshold = np.float32(0.1)
    for t, (embedding, pose) in enumerate(zip(embeddings, poses)):
        memory.write(embedding, pose, t)
        check_layout(memory)
        if t % 7 == 0:
            query = embeddings[rng.integers(t + 1)].astype(np.float32)
            read = memory.read(query, float(threshold), top_k=top_k)
            got = set(read.t.tolist())
            assert brute_force(memory, query, threshold, top_k) <= got
            if pivots:
                assert_same_read(memory, query, float(threshold), top_k, read)
            held = {int(step) for view in memory.clusters() for step in view.t}
            assert got <= held


def assert_same_read(memory, query, threshold, top_k, read) -> None:
    """``read`` (pruned with pivot groups) is what the read returns without them."""
    saved = cluster_table.PIVOT_MIN_ROWS
    cluster_table.PIVOT_MIN_ROWS = 2**62
    memory._missed = None  # search again, not answer from the read just made (MissedRead)
    try:
        plain = memory.read(query, threshold, top_k=top_k)
    finally:
        cluster_table.PIVOT_MIN_ROWS = saved
    np.testing.assert_array_equal(read.t, plain.t)
    np.testing.assert_array_equal(read.score, plain.score)
    if read.t.shape[0]:  # an empty read may be the missed read's answer, which counts the
        assert read.frames_scored == plain.frames_scored  # frames written since instead


def test_the_kernel_breaks_ties_at_the_kth_centre_by_row():
    centres = np.array([[0.5], [0.9], [0.5], [0.5]], np.float32)
    codes = np.array([[64], [115], [64], [64]], np.int8)  # scale 0.5 / 64 etc., near enough
    scales = np.array([0.5 / 64, 0.9 / 115, 0.5 / 64, 0.5 / 64], np.float32)
    residuals = np.full(4, 1e-3, np.float32)
    live = np.arange(4)
    base = np.arange(4) * 2
    head = np.zeros(4, np.int64)
    tail = np.ones(4, np.int64)
    arena = np.array([0, -1, 1, -1, 2, -1, 3, -1], np.int32)
    embeddings = centres  # each cluster holds one frame, its centre
    steps = np.arange(4) * 10
    poses = np.zeros((4, 5), np.float32)
    query = np.ones(1, np.float32)
    index = (codes, scales, residuals, live, 4)
    unfiltered = (NO_FILTER.compiled, 0.0, 0.0, False, EVERY_FRAME)
    t, *_, scored, _ = search_clusters(
        *index, np.zeros(0, bool), 2, base, head, tail, arena, embeddings, steps, poses,
        live, query, np.float32(0.0), False, cluster_table._NO_PIVOTS, *NO_CODES, True,
        *unfiltered, False,
    )
    assert sorted(t.tolist()) == [0, 10] and scored == 4 + 2  # the frames of slots 0 and 1
    allowed = np.array([False, True, True, True])
    t, *_ = search_clusters(
        *index, allowed, 2, base, head, tail, arena, embeddings, steps, poses,
        live, query, np.float32(0.0), False, cluster_table._NO_PIVOTS, *NO_CODES, True,
        *unfiltered, False,
    )
    assert sorted(t.tolist()) == [10, 20]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.sampled_from([-1.0, -0.5, -0.0, 0.0, 0.25, 0.5, 1.0])
        | st.floats(-1.0, 1.0, width=32, allow_nan=False),
        max_size=300,
    )
)
def test_results_are_ordered_best_first_and_ties_keep_their_found_order(values) -> None:
    """A read lists frames highest score first; equal scores (-0.0 and 0.0 included) stay in
    the order they were found, so the same memory answers the same query the same way."""
    scores = np.asarray(values, np.float32)
    np.testing.assert_array_equal(best_first(scores), np.argsort(-scores, kind="stable"))


def unit_vectors(rng, count, dim, kind):
    """``count`` float32 unit vectors: Gaussian, one-hot, +-1, sparse, or a few Gaussian
    directions each with noise (``close``, so that centres share pivot groups)."""
    if kind == "one-hot":
        vectors = np.eye(dim)[rng.integers(dim, size=count)]
    elif kind == "flat":
        vectors = np.sign(rng.standard_normal((count, dim))) + 0.0
    elif kind == "sparse":
        vectors = rng.standard_normal((count, dim)) * (rng.random((count, dim)) < 0.1)
        vectors[:, 0] += 1e-3
    elif kind == "close":
        directions = rng.standard_normal((3, dim))
        directions /= np.linalg.norm(directions, axis=1, keepdims=True)
        noise = rng.standard_normal((count, dim)) * rng.uniform(0.0, 0.5) / np.sqrt(dim)
        vectors = directions[rng.integers(3, size=count)] + noise
    else:
        vectors = rng.standard_normal((count, dim))
    return (vectors / np.linalg.norm(vectors, axis=1, keepdims=True)).astype(np.float32)


def centre_table(centres):
    """A cluster table with one open cluster per centre, each its own frame."""
    frames = FrameStore(centres.shape[1], None)
    table = cluster_table.ClusterTable(frames)
    for embedding in centres:
        slot = frames.add(embedding, [0.0] * 5, 0)
        table.set_centre(table.open(), slot)
    return table


KINDS = ["normal", "one-hot", "flat", "sparse", "close"]
CENTRE_CASES = {
    "seed": st.integers(0, 2**16),
    "dim": st.sampled_from([1, 2, 7, 64, 512]),
    "kind": st.sampled_from(KINDS),
}
"""Random centre tables and queries: the seed, the size and the kind of vectors."""


@settings(max_examples=60, deadline=None)
@given(**CENTRE_CASES)
def test_the_ranking_bound_holds_for_the_int8_codes_of_centres_and_query(seed, dim, kind):
    """The read ranks centres by integer dot products of int8 codes (the centre's, stored, and
    the query's, made per read); the exact score always lies within the bound it uses, so no
    centre of the true top-k is dropped."""
    rng = np.random.default_rng(seed)
    table = centre_table(unit_vectors(rng, 40, dim, kind))
    query = unit_vectors(rng, 1, dim, kind)[0]
    codes, scale, error, norm = _quantise_query(query)
    rows = np.arange(table.live_count)
    dots = _code_dots(table.codes, rows, codes)
    approx = dots.astype(np.float64) * table.scales[rows].astype(np.float64) * scale
    exact = table.live_centres().astype(np.float64) @ query.astype(np.float64)
    bounds = np.array([_code_error(r, error, norm, dim) for r in table.residuals[rows]])
    assert (np.abs(exact - approx) <= bounds).all()


def byte_dots_py(codes, query_codes):
    """(To compile.) :func:`_signed_byte_dot` of every row, and the query codes' sum over whole chunks of 64."""
    chunked = np.int32(0)
    for column in range(query_codes.shape[0] - query_codes.shape[0] % 64):
        chunked += np.int32(query_codes[column])
    dots = np.empty(codes.shape[0], np.int32)
    for row in range(codes.shape[0]):
        dots[row] = _signed_byte_dot(codes, row, query_codes, chunked)
    return dots


@pytest.mark.parametrize("vnni", [kernels.BYTE_DOTS, False], ids=["this-cpu", "generic"])
@pytest.mark.parametrize("dim", [1, 6, 63, 64, 100, 512, 517, 2048])
def test_byte_dot_products_are_exact_at_every_size_and_extreme(dim, vnni, monkeypatch):
    """The int8 x int8 dot products of the first ranking pass (64 columns at a time where the CPU
    multiplies bytes, the rest one by one; and all one by one, as compiled for a CPU without
    byte products) equal numpy's integer sums, at the codes' extremes (+-127, and -128, which
    codes never take) and on random codes."""
    monkeypatch.setattr(kernels, "BYTE_DOTS", vnni)
    byte_dots = numba.njit(byte_dots_py)  # compiled afresh, for this setting
    rng = np.random.default_rng(dim)
    codes = np.vstack([np.full(dim, 127), np.full(dim, -127), np.full(dim, -128),
                       rng.integers(-128, 128, (20, dim))]).astype(np.int8)
    for query in (np.full(dim, 127), np.full(dim, -127), rng.integers(-127, 128, dim)):
        query = query.astype(np.int8)
        expected = codes.astype(np.int64) @ query.astype(np.int64)
        np.testing.assert_array_equal(byte_dots(codes, query), expected)


@settings(max_examples=60, deadline=None)
@given(
    **CENTRE_CASES,
    top_k=st.integers(1, 8),
)
def test_the_byte_prune_keeps_every_centre_that_can_make_the_top_k(seed, dim, kind, top_k):
    """The first ranking pass (the query in int8 codes too, a looser bound) drops only centres
    that cannot make the top-k: every centre scoring at least the k-th best exact score stays,
    in row order."""
    rng = np.random.default_rng(seed)
    table = centre_table(unit_vectors(rng, 40, dim, kind))
    query = unit_vectors(rng, 1, dim, kind)[0]
    rows = np.arange(table.live_count)
    kept = _byte_prune(table.codes, table.scales, table.residuals, query,
                       float(np.linalg.norm(query.astype(np.float64))), rows, top_k)
    exact = table.live_centres().astype(np.float64) @ query.astype(np.float64)
    kth = np.sort(exact)[-top_k]
    assert set(np.flatnonzero(exact >= kth)) <= set(kept.tolist())
    assert (np.diff(kept) > 0).all()


@settings(max_examples=60, deadline=None)
@given(
    **CENTRE_CASES,
    changed=st.integers(0, 40),
)
def test_the_pivot_bound_holds_for_every_centre_and_query(seed, dim, kind, changed):
    """The read's first pass bounds each centre's score from its pivot group (the centre's
    component along the group's pivot and the norm of the rest); the exact score never exceeds
    it, also after some centres changed and were filed again (their groups' ids reused)."""
    rng = np.random.default_rng(seed)
    centres = unit_vectors(rng, 40, dim, kind)
    table = centre_table(centres)
    saved = cluster_table.PIVOT_MIN_ROWS
    cluster_table.PIVOT_MIN_ROWS = 1
    try:
        table.pivot_index()
        replaced = unit_vectors(rng, changed, dim, kind)
        for row, embedding in enumerate(replaced):  # new centre frames for the first rows
            slot = table.frames.add(embedding, [0.0] * 5, 0)
            table.set_centre(int(table.live[row]), slot)
        pivots = table.pivot_index()
        while (table.pivot_group[: table.live_count] < 0).any():  # filed over several reads
            pivots = table.pivot_index()
    finally:
        cluster_table.PIVOT_MIN_ROWS = saved
    query = unit_vectors(rng, 1, dim, kind)[0]
    coded = (table.codes, table.scales, table.residuals, *_quantise_query(query))
    rows = np.arange(table.live_count)
    upper, _ = _pivot_bounds(pivots, coded, rows)
    exact = table.live_centres().astype(np.float64) @ query.astype(np.float64)
    assert (exact <= upper).all()


@settings(max_examples=60, deadline=None)
@given(moves=st.lists(st.tuples(st.integers(0, 9), st.integers(0, 6)), max_size=80))
def test_size_buckets_keep_each_size_in_the_order_its_clusters_reached_it(moves) -> None:
    """The bucket lists in arrays order clusters as per-size insertion-ordered dicts do: by size,
    then by when each reached its size; the largest is the first of the largest size."""
    buckets = cluster_table.SizeBuckets()
    buckets.resize(10)
    buckets.reserve(6)
    sizes = np.zeros(10, np.int64)
    reference: dict[int, dict[int, None]] = {}
    for cluster, size in moves:
        reference.get(int(sizes[cluster]), {}).pop(cluster, None)
        if size:
            reference.setdefault(size, {})[cluster] = None
        buckets.move(cluster, int(sizes[cluster]), size)
        sizes[cluster] = size
        expected = [c for s in sorted(reference) for c in reference[s]]
        assert buckets.order().tolist() == expected
        if expected:
            assert buckets.largest() == next(iter(reference[max(sizes)]))
    restored = cluster_table.SizeBuckets()
    restored.resize(10)
    restored.restore(buckets.order(), sizes)
    assert restored.order().tolist() == buckets.order().tolist()
    assert restored.nbytes == buckets.nbytes


@pytest.mark.parametrize("count", [0, 1, 2, 7, 2146])
def test_reads_order_distances_as_a_stable_sort_does(count):
    """The radix order of ground distances is numpy's stable argsort: ties keep the order the
    frames were found in (then the read sorts them best first)."""
    from mrsteve.memory.kernels import nearest_first

    rng = np.random.default_rng(count)
    for distance in (rng.random(count) * 400.0, rng.integers(0, 4, count).astype(np.float64),
                     np.zeros(count), rng.integers(0, 10**9, count).astype(np.float64) ** 2,
                     1.0 + rng.integers(0, 4, count) * 2.0**-50,  # equal high halves
                     rng.random(count) * np.float64(1e-300)):
        assert np.array_equal(nearest_first(distance), np.argsort(distance, kind="stable"))


def top_centres_scoring_every_row(candidates, scores, top_k):
    """The read's choice of clusters with every centre scored: the rows scoring above the k-th
    score, then those scoring it (ties to the lower row), each in candidate order."""
    kth = np.sort(scores)[::-1][top_k - 1]
    rows = [row for row, score in zip(candidates, scores) if score > kth]
    tied = [row for row, score in zip(candidates, scores) if score == kth]
    return rows + tied[: top_k - len(rows)]


@settings(max_examples=200, deadline=None)
@given(
    scores=st.lists(st.sampled_from([-0.5, 0.0, 0.25, 0.5, 0.75])
                    | st.floats(-1.0, 1.0, width=32, allow_nan=False), min_size=2, max_size=60),
    widths=st.lists(st.sampled_from([0.0, 1e-3, 0.1, np.inf]), min_size=2, max_size=60),
    top_k=st.integers(1, 59),
    seed=st.integers(0, 2**16),
)
def test_clusters_chosen_from_score_bounds_are_those_every_score_chooses(
    scores, widths, top_k, seed
):
    """The read scores a centre exactly only where its code bounds leave its place in the top-k
    open, yet chooses the clusters, and lists them, exactly as scoring every centre does (ties
    at the k-th score to the lower row), with the chosen scores it computed exact."""
    count = len(scores)
    top_k = min(top_k, count - 1)
    rng = np.random.default_rng(seed)
    exact = np.asarray(scores, np.float32)
    below = np.resize(np.asarray(widths), count) * rng.random(count)
    above = np.resize(np.asarray(widths), count)[::-1] * rng.random(count)
    lower = np.minimum((exact - below).astype(np.float32), exact)  # bounds may be the score
    upper = np.maximum((exact + above).astype(np.float32), exact)
    candidates = np.sort(rng.choice(10 * count, count, replace=False))
    centres = np.arange(count)
    embeddings = exact[:, None].copy()  # one dimension: a centre's score is its value
    rows, chosen_scores, scored = _top_centres(
        candidates, centres, lower, upper, np.full(count, np.nan, np.float32), top_k,
        embeddings, np.ones(1, np.float32))
    assert rows.tolist() == top_centres_scoring_every_row(candidates, exact, top_k)
    computed = ~np.isnan(chosen_scores)
    by_row = dict(zip(candidates.tolist(), exact.tolist()))
    assert chosen_scores[computed].tolist() == [by_row[row] for row in rows[computed].tolist()]
    assert scored <= count


def test_clusters_far_apart_are_chosen_scoring_one_centre():
    """When the code bounds settle the top-k, the read scores only the centre that may be the
    k-th, not the 30 chosen ones."""
    exact = np.linspace(1.0, 0.0, 100, dtype=np.float32)
    lower, upper = exact - np.float32(1e-3), exact + np.float32(1e-3)
    rows, _, scored = _top_centres(
        np.arange(100), np.arange(100), lower, upper, np.full(100, np.nan, np.float32), 30,
        exact[:, None].copy(), np.ones(1, np.float32))
    assert rows.tolist() == list(range(30))
    assert scored == 1


@pytest.mark.parametrize("features, expected", [
    ("-avx2,+sse4.2", "False False"),
    ("+avx2,+avx512vnni,+avx512bw", "True True"),
])
def test_the_vector_paths_follow_the_features_numba_compiles_for(features, expected):
    """With ``NUMBA_CPU_FEATURES`` set, numba compiles for those features and not the host's,
    and so do the kernels' choices of vector instructions (an instruction the target lacks
    would not compile)."""
    script = "from mrsteve.memory import kernels; print(kernels.WORD_DOTS, kernels.BYTE_DOTS)"
    env = {**os.environ, "NUMBA_CPU_FEATURES": features}
    shown = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                           text=True, check=True).stdout.strip()
    assert shown == expected


def code_dots_py(codes, query_codes):
    """(To compile.) :func:`_code_dot` of every row."""
    dots = np.empty(codes.shape[0], np.int32)
    for row in range(codes.shape[0]):
        dots[row] = _code_dot(codes, row, query_codes)
    return dots


@pytest.mark.parametrize("words", [kernels.WORD_DOTS, False], ids=["this-cpu", "generic"])
@pytest.mark.parametrize("dim", [1, 6, 15, 16, 17, 100, 512, 517, 2048])
def test_code_dot_products_are_exact_at_every_size_and_extreme(dim, words, monkeypatch):
    """The int8 x int16 dot products every code bound starts from (16 columns at a time where
    the CPU has AVX2, the rest one by one; and as compiled for a CPU without it) equal numpy's
    integer sums, at the codes' extremes (+-127 and the finest query codes' +-levels) and on
    random codes."""
    monkeypatch.setattr(kernels, "WORD_DOTS", words)
    code_dots = numba.njit(code_dots_py)  # compiled afresh, for this setting
    rng = np.random.default_rng(dim)
    levels = query_levels(dim)
    codes = np.vstack([np.full(dim, 127), np.full(dim, -127),
                       rng.integers(-127, 128, (20, dim))]).astype(np.int8)
    for query in (np.full(dim, levels), np.full(dim, -levels),
                  rng.integers(-levels, levels + 1, dim)):
        query = query.astype(np.int16)
        expected = codes.astype(np.int64) @ query.astype(np.int64)
        np.testing.assert_array_equal(code_dots(codes, query), expected)


@pytest.mark.parametrize("dim", [1, 6, 512, 517, 4096, MAX_CODED_DIM])
def test_query_codes_are_as_fine_as_int32_sums_allow(dim):
    """The query is quantised as finely as int16 allows while a dot product with int8 codes
    still sums exactly in int32: the largest possible sum, every code at its extreme, comes out
    exact."""
    levels = query_levels(dim)
    assert 127 <= levels <= 32767 and 127 * levels * dim <= 2**31 - 1
    assert query_levels(512) == 32767
    codes = np.full((1, dim), -127, np.int8)
    query = np.full(dim, -levels, np.int16)
    assert _code_dots(codes, np.zeros(1, np.int64), query)[0] == 127 * levels * dim
