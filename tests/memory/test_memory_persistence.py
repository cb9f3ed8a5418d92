"""The memory file format: atomic saves, and a clear ValueError for anything but an intact file."""

from __future__ import annotations

import json

import numpy as np
import pytest
from memory_streams import random_frames, write_all

from mrsteve.memory import FORMAT_VERSION, PlaceEventMemory, load


@pytest.fixture
def saved(tmp_path):
    memory = PlaceEventMemory(capacity=100, update_freq=10)
    write_all(memory, *random_frames(np.random.default_rng(0), 150, 8, spread=5.0))
    path = tmp_path / "memory.npz"
    memory.save(path)
    return memory, path


def rewrite_header(path, change):
    with np.load(path) as archive:
        arrays = {name: archive[name] for name in archive.files}
    header = change(json.loads(arrays["header"].tobytes()))
    arrays["header"] = np.frombuffer(json.dumps(header).encode(), np.uint8)
    with open(path, "wb") as handle:
        np.savez(handle, **arrays)


def test_save_leaves_no_temporary_files_and_overwrites(saved, tmp_path):
    memory, path = saved
    memory.save(path)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["memory.npz"]
    assert load(path).stats() == memory.stats()


def test_a_failed_save_keeps_the_previous_file(saved, tmp_path, monkeypatch):
    memory, path = saved
    before = path.read_bytes()

    def broken(*args, **kwargs):
        raise OSError("disk full")

    monkeypatch.setattr(np, "savez", broken)
    with pytest.raises(OSError, match="disk full"):
        memory.save(path)
    assert path.read_bytes() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["memory.npz"]


def test_foreign_files_raise(tmp_path):
    text = tmp_path / "notes.txt"
    text.write_text("hello")
    with pytest.raises(ValueError, match="not a mrsteve memory file"):
        load(text)
    other = tmp_path / "other.npz"
    np.savez(other, weights=np.ones(3))
    with pytest.raises(ValueError, match="no header"):
        load(other)


def test_truncated_and_corrupted_files_raise(saved, tmp_path):
    _, path = saved
    data = path.read_bytes()
    truncated = tmp_path / "truncated.npz"
    truncated.write_bytes(data[: len(data) // 2])
    with pytest.raises(ValueError, match="corrupted"):
        load(truncated)
    flipped = bytearray(data)
    flipped[len(data) // 3] ^= 0xFF
    corrupted = tmp_path / "corrupted.npz"
    corrupted.write_bytes(bytes(flipped))
    with pytest.raises(ValueError, match="corrupted"):
        load(corrupted)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda h: h | {"version": FORMAT_VERSION + 1}, "version"),
        (lambda h: h | {"format": "something.else"}, "not a mrsteve memory file"),
        (lambda h: h | {"kind": "LSTMMemory"}, "unknown memory kind"),
        (lambda h: h | {"capacity": -5}, "corrupted"),
        (lambda h: h | {"state": h["state"] | {"size": 3}}, "corrupted"),
        (lambda h: h | {"config": h["config"] | {"colour": 1}}, "corrupted"),
    ],
)
def test_bad_headers_raise(saved, change, message):
    _, path = saved
    rewrite_header(path, change)
    with pytest.raises(ValueError, match=message):
        load(path)
