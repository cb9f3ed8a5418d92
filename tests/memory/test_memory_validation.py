"""Writes and reads refuse bad input before changing anything."""

from __future__ import annotations

from functools import partial

import numpy as np
import pytest
from memory_streams import (
    MEMORIES,
    QUICK_CLUSTERING,
    base_name,
    random_frames,
    unit,
    write_all,
)

from mrsteve.memory import load
from mrsteve.memory.base import NORM_TOLERANCE, check_embedding
from mrsteve.memory.kernels import _is_unit

DIM = 16


@pytest.fixture(params=list(MEMORIES))
def name(request):
    return request.param


@pytest.fixture
def memory(name):
    memory = MEMORIES[name](capacity=60, **QUICK_CLUSTERING.get(name, {}))
    write_all(memory, *random_frames(np.random.default_rng(0), 80, DIM, spread=8.0))
    return memory


def snapshot(memory):
    """Everything a save would store, and a read's answer."""
    scalars, arrays = memory._state()
    query = memory.clusters()[0].embedding[0]
    found = memory.read(query, 0.0)
    return scalars, arrays, len(memory), memory.stats(), (found.t, found.pose, found.score)


def assert_same(before, after):
    assert before[0] == after[0]
    assert before[1].keys() == after[1].keys()
    for key, array in before[1].items():
        np.testing.assert_array_equal(array, after[1][key], err_msg=key)
    assert before[2:4] == after[2:4]
    for old, new in zip(before[4], after[4], strict=True):
        np.testing.assert_array_equal(old, new)


GOOD_POSE = (1.0, 64.0, 2.0, 30.0, 0.0)
BAD_WRITES = {
    "t beyond int64": lambda e: (e, GOOD_POSE, 2**63),
    "numpy t beyond int64": lambda e: (e, GOOD_POSE, np.uint64(2**63)),
    "t decreasing": lambda e: (e, GOOD_POSE, 5),
    "t a float": lambda e: (e, GOOD_POSE, 100.0),
    "x beyond float32": lambda e: (e, (1e40, 64.0, 2.0, 30.0, 0.0), 100),
    "yaw beyond float32": lambda e: (e, (1.0, 64.0, 2.0, 1e40, 0.0), 100),
    "pitch NaN": lambda e: (e, (1.0, 64.0, 2.0, 30.0, np.nan), 100),
    "four pose numbers": lambda e: (e, (1.0, 64.0, 2.0, 30.0), 100),
    "embedding NaN": lambda e: (np.where(np.arange(DIM) == 3, np.nan, e), GOOD_POSE, 100),
    "embedding beyond float32": lambda e: (e.astype(np.float64) * 1e40, GOOD_POSE, 100),
    "embedding not normalised": lambda e: (2 * e, GOOD_POSE, 100),
    "embedding zero": lambda e: (0 * e, GOOD_POSE, 100),
    "embedding wrong size": lambda e: (unit(np.ones(DIM + 1)), GOOD_POSE, 100),
    "embedding ints": lambda e: (np.ones(DIM, np.int64), GOOD_POSE, 100),
}


@pytest.mark.parametrize("case", list(BAD_WRITES))
def test_a_refused_write_leaves_the_memory_as_it_was(memory, case, tmp_path):
    embedding = memory.clusters()[0].embedding[0]
    before = snapshot(memory)
    with pytest.raises(ValueError):  # each case has its own message
        memory.write(*BAD_WRITES[case](embedding))
    assert_same(before, snapshot(memory))
    # and it goes on working: writes, evictions, saving and loading
    write_all(memory, *random_frames(np.random.default_rng(1), 30, DIM, spread=8.0), start=100)
    assert len(memory) == sum(len(view.t) for view in memory.clusters())
    memory.save(tmp_path / "memory.npz")
    assert_same(snapshot(memory), snapshot(load(tmp_path / "memory.npz")))


def test_positions_whose_place_cell_overflows_int64_are_refused_by_place_memories(name, memory):
    far = (1e30, 64.0, 2.0, 30.0, 0.0)
    embedding = memory.clusters()[0].embedding[0]
    if base_name(name) in ("fifo", "event"):  # no place grid: any float32 position is fine
        memory.write(embedding, far, 100)
        return
    before = snapshot(memory)
    with pytest.raises(ValueError, match="within .* blocks of the start"):
        memory.write(embedding, far, 100)
    assert_same(before, snapshot(memory))


@pytest.mark.parametrize(
    ("message", "change"),
    [
        ("t must fit int64", lambda e: (e, GOOD_POSE, 2**63)),
        ("finite and within float32 range", lambda e: (e, (1e40, 0.0, 0.0, 0.0, 0.0), 100)),
        (r"L2-normalised .*got norm 2", lambda e: (2 * e, GOOD_POSE, 100)),
        ("NaN or infinite", lambda e: (e * np.nan, GOOD_POSE, 100)),
    ],
)
def test_refusals_name_the_problem(memory, message, change):
    with pytest.raises(ValueError, match=message):  # a float32 unit vector (not one as stored)
        memory.write(*change(unit(memory.clusters()[0].embedding[0])))


def test_unnormalised_queries_are_refused(memory):
    query = memory.clusters()[0].embedding[0]
    with pytest.raises(ValueError, match="query must be L2-normalised"):
        memory.read(10 * query, 0.5)
    # within the tolerance, a vector is accepted and scores stay cosines
    found = memory.read(query * np.float32(1 + 5e-4), 0.0)
    assert len(found) and found.score.max() <= 1.001


def test_a_refused_query_leaves_the_memory_as_it_was(memory, name):
    """A query that is not finite or not of unit norm is refused, naming the problem, also on an
    empty memory and right after a read that found nothing, which the memory still answers from
    what it kept (no dot product of a frame: none was written since)."""
    query = memory.clusters()[0].embedding[0].astype(np.float32)
    bad_queries = ((query * np.float32(np.nan), "NaN or infinite"),
                   (query * np.float32(10), "L2-normalised"))
    for bad, message in bad_queries:
        with pytest.raises(ValueError, match=message):
            memory.read(bad, 2.0)
    assert len(memory.read(query, 2.0)) == 0  # nothing scores 2: the read is kept
    for bad, message in bad_queries:  # refused before the kept read answers
        with pytest.raises(ValueError, match=message):
            memory.read(bad, 2.0)
    again = memory.read(query, 2.0)
    assert len(again) == 0 and again.frames_scored == 0
    with pytest.raises(ValueError, match="L2-normalised"):
        partial(MEMORIES[name], **QUICK_CLUSTERING.get(name, {}))().read(query * 10, 0.5)


def test_the_tolerance_is_one_in_a_thousand(name):
    memory = partial(MEMORIES[name], **QUICK_CLUSTERING.get(name, {}))()
    vector = unit(np.ones(DIM))
    memory.write(vector * np.float32(1.0009), GOOD_POSE, 0)
    with pytest.raises(ValueError, match="L2-normalised"):
        memory.write(vector * np.float32(1.0011), GOOD_POSE, 1)


def test_the_compiled_norm_check_agrees_with_check_embedding_at_the_bounds():
    """The write's compiled check sums squares in any order and again in order only near the
    bounds: its verdict is check_embedding's, also for norms a rounding away from 1 +- 1e-3."""
    rng = np.random.default_rng(0)
    for dtype in (np.float32, np.float64):
        for _ in range(200):
            vector = unit(rng.normal(size=512)).astype(np.float64)
            norm = 1 + rng.choice([-1, 1]) * (NORM_TOLERANCE + rng.normal() * 1e-12)
            vector = (vector * norm).astype(dtype)
            try:
                check_embedding(vector, 512)
                accepted = True
            except ValueError:
                accepted = False
            assert _is_unit(vector) == accepted


def test_a_read_checks_a_float32_query_as_check_embedding_does(memory):
    """A float32 query of the memory's size is checked inside the compiled read (any other query
    before it): a read accepts exactly the queries check_embedding accepts, at the bounds too."""
    rng = np.random.default_rng(1)
    verdicts = set()
    for _ in range(60):
        vector = unit(rng.normal(size=DIM)).astype(np.float64)
        norm = 1 + rng.choice([-1, 1]) * (NORM_TOLERANCE + rng.normal() * 1e-7)
        query = (vector * norm).astype(np.float32)
        try:
            check_embedding(query, DIM)
            accepted = True
        except ValueError:
            accepted = False
        verdicts.add(accepted)
        if accepted:
            assert len(memory.read(query, -1.0)) > 0  # a read finding frames keeps no missed read
        else:
            with pytest.raises(ValueError, match="query must be L2-normalised"):
                memory.read(query, -1.0)
    assert verdicts == {True, False}
