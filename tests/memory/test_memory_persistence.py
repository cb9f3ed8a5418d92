"""The memory file format: atomic saves, and a clear ValueError for anything but an intact file."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from memory_streams import random_frames, write_all

from mrsteve.memory import FORMAT_VERSION, EventMemory, PlaceEventMemory, load


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


def test_save_replaces_only_regular_files(saved, tmp_path):
    memory, path = saved
    folder = tmp_path / "folder"
    folder.mkdir()
    with pytest.raises(ValueError, match="directory"):
        memory.save(folder)
    assert folder.is_dir() and not any(folder.iterdir())
    link = tmp_path / "link.npz"
    link.symlink_to(path)
    memory.save(link)  # a link is followed: its target is written
    assert link.is_symlink() and load(path).stats() == memory.stats()
    assert (path.stat().st_mode & 0o777) == 0o666 & ~_umask()


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


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
    with pytest.raises(ValueError, match="not a valid mrsteve memory file: not an .npz"):
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
        (lambda h: h | {"format": "something.else"}, "format is not"),
        (lambda h: h | {"kind": "LSTMMemory"}, "unknown memory kind"),
        (lambda h: h | {"capacity": -5}, "corrupted"),
        (lambda h: h | {"state": h["state"] | {"size": 3}}, "corrupted"),
        (lambda h: h | {"config": h["config"] | {"colour": 1}}, "corrupted"),
        (lambda h: h | {"config": h["config"] | {"frame_precision": "int8"}}, "frame_precision"),
        (  # float32 frames in the file, float16 in the header
            lambda h: h | {"config": h["config"] | {"frame_precision": "float16"}},
            "holds float32 values, but the memory keeps float16 frames",
        ),
    ],
)
def test_bad_headers_raise(saved, change, message):
    _, path = saved
    rewrite_header(path, change)
    with pytest.raises(ValueError, match=message):
        load(path)


def test_float16_frames_are_saved_as_float16_and_load_exactly(tmp_path):
    memory = PlaceEventMemory(capacity=100, update_freq=10, frame_precision="float16")
    embeddings, poses = random_frames(np.random.default_rng(0), 150, 8, spread=5.0)
    write_all(memory, embeddings, poses)
    path = tmp_path / "memory.npz"
    memory.save(path)
    with np.load(path) as archive:
        assert archive["frames.embeddings"].dtype == np.float16
    loaded = load(path)
    assert loaded.config.frame_precision == "float16" and loaded.stats() == memory.stats()
    for view, again in zip(memory.clusters(), loaded.clusters(), strict=True):
        np.testing.assert_array_equal(view.embedding, again.embedding)
        np.testing.assert_array_equal(view.embedding, embeddings[view.t].astype(np.float16))
    for query in embeddings[:5]:
        got, expected = loaded.read(query, 0.2), memory.read(query, 0.2)
        np.testing.assert_array_equal(got.t, expected.t)
        np.testing.assert_array_equal(got.score, expected.score)


# --- crafted and damaged files -------------------------------------------------------------


def rewrite_arrays(path, change):
    """Apply ``change(header, arrays)`` (in place) to a saved file."""
    with np.load(path) as archive:
        arrays = {name: archive[name].copy() for name in archive.files}
    header = json.loads(arrays["header"].tobytes())
    change(header, arrays)
    arrays["header"] = np.frombuffer(json.dumps(header).encode(), np.uint8)
    with open(path, "wb") as handle:
        np.savez(handle, **arrays)


def first_held_slot(arrays):
    live = arrays["clusters.live"][0]
    start = arrays["clusters.base"][live] + arrays["clusters.head"][live]
    return int(arrays["clusters.arena"][start])


def duplicate_a_slot(header, arrays):
    arena, base, head, tail = (arrays[f"clusters.{k}"] for k in ("arena", "base", "head", "tail"))
    first, second = arrays["clusters.live"][:2]
    arena[base[second] + tail[second] - 1] = arena[base[first] + head[first]]


def centre_out_of_range(header, arrays):
    arrays["clusters.centre_slot"][arrays["clusters.live"][0]] = 10**6


def centre_of_another_cluster(header, arrays):
    first, second = arrays["clusters.live"][:2]
    centre = arrays["clusters.centre_slot"]
    centre[first] = centre[second]


def nan_embedding(header, arrays):
    arrays["frames.embeddings"][first_held_slot(arrays), 0] = np.nan


def scaled_embedding(header, arrays):
    arrays["frames.embeddings"][first_held_slot(arrays)] *= 3


def slot_also_free(header, arrays):
    arrays["frames.free"] = np.append(arrays["frames.free"], first_held_slot(arrays))


def moved_frame(header, arrays):
    arrays["frames.poses"][first_held_slot(arrays), 0] += 100.0


def step_after_last_t(header, arrays):
    arrays["frames.steps"][first_held_slot(arrays)] = header["state"]["last_t"] + 5


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (duplicate_a_slot, "held 2 times"),
        (slot_also_free, "held 2 times"),
        (centre_out_of_range, "centre|slot"),
        (centre_of_another_cluster, "centre is not one of its frames"),
        (nan_embedding, "norm nan"),
        (scaled_embedding, "norm 3"),
        (moved_frame, "is filed under place"),
        (step_after_last_t, "oldest first|last_t"),
    ],
)
def test_files_with_inconsistent_arrays_raise(saved, change, message):
    _, path = saved
    rewrite_arrays(path, change)
    with pytest.raises(ValueError, match=f"is not a valid mrsteve memory file: .*({message})"):
        load(path)


@pytest.mark.parametrize(
    ("make", "kind"), [(EventMemory, "PlaceEventMemory"), (PlaceEventMemory, "EventMemory")]
)
def test_a_memory_relabelled_as_another_kind_raises(make, kind, tmp_path):
    memory = make(update_freq=10)
    write_all(memory, *random_frames(np.random.default_rng(0), 150, 8, spread=20.0))
    path = tmp_path / "memory.npz"
    memory.save(path)
    # the config relabelled too, so that only the arrays tell
    fields = EventMemory(update_freq=10).config.__dataclass_fields__
    config = {k: v for k, v in memory.config.__dict__.items() if k in fields}
    rewrite_header(path, lambda h: h | {"kind": kind, "config": config})
    with pytest.raises(ValueError, match="not a valid mrsteve memory file: .*(place|group)"):
        load(path)


def same_memory(first, second):
    one, two = first._state(), second._state()
    assert one[0] == two[0] and one[1].keys() == two[1].keys()
    return all(np.array_equal(one[1][k], two[1][k], equal_nan=True) for k in one[1])


def test_byte_flipped_files_raise_value_error_or_load_exactly(saved, tmp_path):
    """Flip one byte at a time, mostly in the zip and npy headers (the data is under CRCs):
    each damaged file either raises the file error or loads as the memory saved."""
    memory, path = saved
    data = path.read_bytes()
    rng = np.random.default_rng(0)
    headers = [i for i in range(len(data)) if data[i : i + 2] in (b"PK", b"\x93N")]
    near_headers = sorted({h + k for h in headers for k in range(64)} & set(range(len(data))))
    positions = rng.choice(near_headers, 300, replace=False).tolist()
    positions += rng.integers(0, len(data), 100).tolist()
    damaged = tmp_path / "damaged.npz"
    outcomes = {"refused": 0, "exact": 0}
    for position in positions:
        flipped = bytearray(data)
        flipped[position] ^= int(rng.integers(1, 256))
        damaged.write_bytes(bytes(flipped))
        try:
            loaded = load(damaged)
        except ValueError as error:
            assert "is not a valid mrsteve memory file" in str(error)
            outcomes["refused"] += 1
        else:
            assert same_memory(memory, loaded), position
            outcomes["exact"] += 1
    assert outcomes["refused"] > len(positions) // 2
