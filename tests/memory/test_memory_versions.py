"""Files of format versions 1 (slot queues per cluster, centres by cluster id), 2 (a float32
copy of the centres) and 3 (no frame precision: float32 frames) still load, and the loaded memory holds, reads and goes on writing exactly
like one built now from the same frames."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from memory_streams import random_frames, write_all

from mrsteve.memory import FORMAT_VERSION, PlaceEventMemory, PlaceMemory, load

DATA = Path(__file__).parent / "data"


def frames():
    """The stream the old files were written from (120 frames, seed 7, spread 2)."""
    return random_frames(np.random.default_rng(7), 120, 8, spread=2.0)


@pytest.mark.parametrize("version", [1, 2, 3])
@pytest.mark.parametrize(
    ("name", "make"),
    [
        ("place_event", lambda: PlaceEventMemory(40, update_freq=6)),
        ("place", lambda: PlaceMemory(40)),
    ],
)
def test_an_old_file_loads_and_behaves_like_a_fresh_memory(version, name, make, tmp_path):
    assert FORMAT_VERSION == 4
    loaded = load(DATA / f"version{version}_{name}.mrsteve")
    fresh = make()
    embeddings, poses = frames()
    write_all(fresh, embeddings, poses)
    for continued in (False, True):
        if continued:  # more frames after loading
            more, more_poses = random_frames(np.random.default_rng(8), 60, 8, spread=2.0)
            write_all(fresh, more, more_poses, start=120)
            write_all(loaded, more, more_poses, start=120)
        assert len(loaded) == len(fresh)
        assert loaded.stats().clusters == fresh.stats().clusters
        for view, fresh_view in zip(loaded.clusters(), fresh.clusters(), strict=True):
            np.testing.assert_array_equal(view.t, fresh_view.t)
            assert view.centre_index == fresh_view.centre_index
        for query in embeddings[:5]:
            got, expected = loaded.read(query, 0.2, top_k=3), fresh.read(query, 0.2, top_k=3)
            assert sorted(got.t.tolist()) == sorted(expected.t.tolist())
    path = tmp_path / "again.mrsteve"
    loaded.save(path)  # saved again: version 4, round trip exact
    again = load(path)
    assert again.stats() == loaded.stats()
