"""``clear()`` forgets every frame and leaves a memory as built (a new episode)."""

from __future__ import annotations

import numpy as np
import pytest

from mrsteve.memory import EventMemory, FIFOMemory, PlaceEventMemory, PlaceMemory

MEMORIES = [FIFOMemory, PlaceMemory, EventMemory, PlaceEventMemory,
            lambda capacity, dim: PlaceEventMemory(capacity, dim=dim, center_only=True)]


def fill(memory, rng, frames, t0=0):
    for t in range(t0, t0 + frames):
        vector = rng.normal(size=memory.dim).astype(np.float32)
        memory.write(vector / np.linalg.norm(vector), (t % 37, 0.0, t % 23, 0.0, 0.0), t)


@pytest.mark.parametrize("make", MEMORIES)
def test_clear_forgets_everything_and_behaves_as_new(make):
    used, fresh = make(150, dim=16), make(150, dim=16)
    fill(used, np.random.default_rng(0), 400)
    used.clear()
    assert len(used) == 0 and used.capacity == 150 and used.dim == 16
    assert used.stats().clusters == 0
    fill(used, np.random.default_rng(1), 300)  # time may start again at 0
    fill(fresh, np.random.default_rng(1), 300)
    query = np.ones(16, np.float32) / 4.0
    a, b = used.read(query, -1.0), fresh.read(query, -1.0)
    assert len(used) == len(fresh) and np.array_equal(np.sort(a.t), np.sort(b.t))
