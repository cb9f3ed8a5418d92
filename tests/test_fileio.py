"""Safe writes: only regular files are replaced, symlinks are followed, failures change nothing,
and temporaries of killed writers are cleaned up."""

import json
import os
import subprocess
import sys

import pytest

from mrsteve.fileio import atomic_path, writable_target, write_json


def test_write_json_replaces_a_regular_file(tmp_path):
    path = tmp_path / "out.json"
    path.write_text("old")
    write_json(path, {"a": 1})
    assert json.loads(path.read_text()) == {"a": 1}
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]


def test_a_directory_is_refused_and_left_alone(tmp_path):
    folder = tmp_path / "results"
    folder.mkdir()
    (folder / "keep.txt").write_text("x")
    with pytest.raises(ValueError, match="is a directory"):
        write_json(folder, {"a": 1})
    assert (folder / "keep.txt").read_text() == "x"


@pytest.mark.skipif(not os.path.exists("/dev/null"), reason="needs /dev/null")
def test_a_device_file_is_refused():
    with pytest.raises(ValueError, match="not a regular file"):
        writable_target("/dev/null")
    assert not os.path.isfile("/dev/null")


def test_a_fifo_is_refused(tmp_path):
    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match="not a regular file"):
        write_json(fifo, {})


def test_a_symlink_is_followed_to_its_target(tmp_path):
    real = tmp_path / "real.json"
    real.write_text("{}")
    link = tmp_path / "link.json"
    link.symlink_to(real)
    write_json(link, {"b": 2})
    assert link.is_symlink()
    assert json.loads(real.read_text()) == {"b": 2}


def test_a_failed_write_leaves_the_old_file_and_no_temporary(tmp_path):
    path = tmp_path / "out.json"
    path.write_text("old")
    with pytest.raises(RuntimeError), atomic_path(path) as tmp:
        tmp.write_text("half")
        raise RuntimeError("disk full")
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["out.json"]


def test_temporaries_of_a_killed_writer_are_removed_by_the_next_write(tmp_path):
    path = tmp_path / "memory.npz"
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"],
                          capture_output=True, text=True, check=True)
    stale = tmp_path / f".memory.npz.{int(dead.stdout)}.abc123.tmp"
    stale.write_bytes(b"x" * 1000)
    other = tmp_path / ".other.npz.1.abc.tmp"  # another target's temporary is not ours to remove
    other.write_bytes(b"y")
    with atomic_path(path) as tmp:
        tmp.write_bytes(b"new")
    assert not stale.exists()
    assert other.exists()
    assert path.read_bytes() == b"new"


def test_an_unwritable_directory_is_reported_before_anything_runs(tmp_path):
    if os.geteuid() == 0:
        pytest.skip("root can write anywhere")
    locked = tmp_path / "locked"
    locked.mkdir()
    locked.chmod(0o500)
    try:
        with pytest.raises(ValueError, match="not writable"):
            writable_target(locked / "x.json")
    finally:
        locked.chmod(0o700)


def test_a_missing_parent_below_a_file_is_refused(tmp_path):
    (tmp_path / "file").write_text("x")
    with pytest.raises(ValueError, match="not a directory"):
        writable_target(tmp_path / "file" / "sub" / "x.json")
