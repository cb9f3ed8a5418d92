"""Frame storage: chunked growth, the capacity cap, slot reuse."""

from __future__ import annotations

import numpy as np

from mrsteve.memory.frames import GROWTH_ROWS, FrameStore, container_nbytes


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
