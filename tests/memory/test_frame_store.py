"""Frame storage: chunked growth, the capacity cap, slot reuse, float16 frames."""

from __future__ import annotations

import numba
import numpy as np
import pytest

from mrsteve.memory import FIFOMemory, PlaceEventMemory, load
from mrsteve.memory.frames import GROWTH_ROWS, FrameStore, container_nbytes
from mrsteve.memory.kernels import _score_best, as_float32, as_stored, row_float32


def test_an_unlimited_store_grows_by_fixed_chunks_and_keeps_its_frames():
    store = FrameStore(dim=4, max_rows=None)
    for t in range(GROWTH_ROWS + 1):
        store.add(np.full(4, t, np.float32), (t, 0.0, -t, 0.0, 0.0), t)
    assert store.embeddings.shape == (2 * GROWTH_ROWS, 4) and store.used == GROWTH_ROWS + 1
    np.testing.assert_array_equal(store.embeddings[: store.used, 0], np.arange(GROWTH_ROWS + 1))
    np.testing.assert_array_equal(store.steps[: store.used], np.arange(GROWTH_ROWS + 1))


def test_growth_copies_when_a_view_blocks_the_in_place_resize():
    store = FrameStore(dim=2, max_rows=None)
    store.add(np.ones(2, np.float32), (0, 0, 0, 0, 0), 0)
    view = store.embeddings[:1]  # numpy refuses to resize an array that has views
    for t in range(1, GROWTH_ROWS + 1):
        store.add(np.ones(2, np.float32), (0, 0, 0, 0, 0), t)
    assert store.embeddings.shape[0] == 2 * GROWTH_ROWS and view.base is not store.embeddings
    assert store.poses.shape[0] == store.steps.shape[0] == 2 * GROWTH_ROWS


def test_a_capped_store_never_allocates_past_its_rows_and_reuses_freed_slots():
    store = FrameStore(dim=3, max_rows=5)
    slots = [store.add(np.ones(3, np.float32), (0, 0, 0, 0, 0), t) for t in range(5)]
    assert slots == [0, 1, 2, 3, 4] and store.embeddings.shape[0] == 5
    store.release(np.array([1, 3]))
    assert store.add(np.ones(3, np.float32), (0, 0, 0, 0, 0), 5) == 3
    assert store.embeddings.shape[0] == 5


def test_container_bytes_depend_on_lengths_only():
    assert container_nbytes([1, 2, 3], {4: 5}) == 3 * 8 + 100


@numba.njit
def _stored_then_read_compiled(values, embeddings):
    for column in range(values.shape[0]):
        embeddings[0, column] = as_stored(values[column], embeddings)
    decoded = row_float32(embeddings, 0)
    return np.array([as_float32(embeddings[0, c]) for c in range(values.shape[0])]), decoded


def test_float16_frames_round_and_decode_like_numpy_in_the_compiled_kernels():
    # ties (to even: down, then up), subnormal and lost-to-zero halves, signs, the largest half
    values = np.array(
        [1 + 2**-11, 1 + 3 * 2**-11, 2**-20, -(2**-25), -0.3, 0.1, 65504.0, -1.0], np.float32
    )
    store = FrameStore(values.shape[0], None, "float16")
    slot = store.add(values, (0.0,) * 5, 0)
    expected = values.astype(np.float16)
    np.testing.assert_array_equal(store.embeddings[slot].view(np.float16), expected)
    np.testing.assert_array_equal(store.vectors(slot), expected.astype(np.float32))
    embeddings = np.zeros((1, values.shape[0]), np.uint16)
    elementwise, row = _stored_then_read_compiled(values, embeddings)
    np.testing.assert_array_equal(embeddings[0], store.embeddings[slot])  # same bits
    np.testing.assert_array_equal(elementwise, expected.astype(np.float32))
    np.testing.assert_array_equal(row, expected.astype(np.float32))


def test_float16_scores_are_the_float32_scores_of_the_rounded_frames():
    rng = np.random.default_rng(0)
    frames = rng.normal(size=(50, 64)).astype(np.float32)
    frames /= np.linalg.norm(frames, axis=1, keepdims=True)
    query = frames[0]
    rows = np.arange(50)[::-1].copy()
    half, single = FrameStore(64, None, "float16"), FrameStore(64, None)
    for t, frame in enumerate(frames):
        half.add(frame, (0.0,) * 5, t)
        single.add(frame, (0.0,) * 5, t)
    rounded = frames.astype(np.float16).astype(np.float64)
    np.testing.assert_allclose(half.scores(query, rows), rounded[rows] @ query, atol=1e-6)
    np.testing.assert_allclose(single.scores(query, rows), frames[rows] @ query, atol=1e-6)
    assert np.abs(half.scores(query, rows) - single.scores(query, rows)).max() < 1e-3


@pytest.mark.parametrize("precision", ["float32", "float16"])
def test_frame_codes_bound_what_they_miss_and_survive_a_save(tmp_path, precision):
    """``frame_codes=True`` keeps int8 codes of each frame as stored whose residual bound holds
    (what the read's decisions rest on); they are not saved, and a loaded memory has the same."""
    memory = PlaceEventMemory(frame_codes=True, frame_precision=precision)
    rng = np.random.default_rng(0)
    vectors = rng.normal(size=(300, 64)).astype(np.float32)
    vectors /= np.linalg.norm(vectors, axis=1, keepdims=True)
    for t, vector in enumerate(vectors):
        memory.write(vector, (t * 0.3, 0.0, 0.0, 0.0, 0.0), t)
    store = memory._frames
    stored = store.vectors(np.arange(store.used)).astype(np.float64)
    decoded = store.codes[: store.used] * store.code_scales[: store.used, None].astype(np.float64)
    assert (np.linalg.norm(stored - decoded, axis=1) <= store.code_residuals[: store.used]).all()
    memory.save(tmp_path / "coded.mem")
    loaded = load(tmp_path / "coded.mem")
    np.testing.assert_array_equal(loaded._frames.codes[: store.used], store.codes[: store.used])


def test_frame_codes_are_refused_where_no_read_uses_them():
    with pytest.raises(ValueError, match="frame_codes needs center_only=False"):
        PlaceEventMemory(frame_codes=True, center_only=True)
    with pytest.raises(ValueError, match="frame_codes"):
        FIFOMemory(frame_codes=True)


def test_the_best_score_is_found_highest_upper_bound_first():
    """Frames known only by their bounds are scored highest upper bound first, until the next
    upper bound is below the best score found: the best is exact, and a frame that cannot beat
    it is never scored."""
    embeddings = np.eye(5, dtype=np.float32)
    query = np.array([0.9, 0.5, 0.3, 0.2, 0.95], np.float32)
    slots = np.arange(5)
    scores = np.array([np.nan, np.nan, np.nan, np.nan, np.nan], np.float32)
    lower = np.array([0.85, 0.45, 0.25, 0.15, 0.90])
    upper = np.array([0.96, 0.55, 0.35, 0.92, 1.00])  # frame 3: loose, but below 0.95
    assert _score_best(scores, lower, upper, slots, embeddings, query) == 2
    assert scores[4] == np.float32(0.95) and scores[0] == np.float32(0.9)  # 0.96 >= 0.95
    assert np.isnan(scores[[1, 2, 3]]).all()
    known = np.array([0.97, np.nan], np.float32)  # a score already computed counts
    assert _score_best(known, np.array([0.97, 0.5]), np.array([0.97, 0.96]), slots[:2],
                       embeddings, query) == 0
