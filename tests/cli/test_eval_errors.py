"""What a user meets when a sweep cannot start or cannot go on: bounds, names given twice, a
missing backend, an interrupt and a full disk each end in one line that says what to do, never a
traceback, and leave the records as they were."""

from __future__ import annotations

import json
import os
import signal

import pytest
from typer.testing import CliRunner

from mrsteve.cli import app
from mrsteve.eval.exploration import EXPLORATION


def invoke(*args: str):
    return CliRunner().invoke(app, ["eval", *args, "--no-progress"])


def must_not_run(spec):
    raise AssertionError("an episode ran")


def test_an_episode_count_beyond_the_bound_is_refused_at_once(monkeypatch):
    monkeypatch.setattr(EXPLORATION, "episode", must_not_run)
    result = invoke("exploration", "--episodes", "99999999999999999999999")
    assert result.exit_code == 2 and "1000000" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize(("args", "twice"), [
    (["navigation", "--terrain", "flat,flat"], "terrain 'flat' is given twice"),
    (["aba-sparse", "--agent", "mrsteve,fm,mrsteve"], "agent 'mrsteve' is given twice"),
    (["aba-sparse", "--task", "water-log-water, water-log-water"], "given twice"),
])
def test_a_name_given_twice_is_refused_by_name(args, twice, tmp_path):
    result = invoke(*args, "--out", str(tmp_path / "run"))
    assert result.exit_code == 2 and twice in result.output
    assert not (tmp_path / "run").exists()


def test_the_ray_backend_without_ray_leaves_nothing_behind(tmp_path, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "ray", None)  # as if not installed
    result = invoke("exploration", "--steps", "30", "--backend", "ray", "--out",
                    str(tmp_path / "run"))
    assert result.exit_code == 2 and "pip install 'mrsteve[ray]'" in result.output
    assert not (tmp_path / "run").exists(), "no manifest and no empty records file"


def interrupted_after_one(spec):
    """The first episode runs; Ctrl-C arrives during the second."""
    if spec.index == 1:
        raise KeyboardInterrupt
    return {"map_coverage": 10.0, "revisit_count": 0.0, "trajectory": [[0.0, 0.0]], "goals": []}


def test_an_interrupt_keeps_the_finished_episodes_and_says_how_to_resume(tmp_path, monkeypatch):
    out = tmp_path / "run"
    monkeypatch.setattr(EXPLORATION, "episode", interrupted_after_one)
    monkeypatch.setattr("sys.argv", ["mrsteve", "eval", "exploration", "--episodes", "3",
                                     "--out", str(out)])
    result = invoke("exploration", "--episodes", "3", "--out", str(out))
    assert result.exit_code == 130
    assert "interrupted" in result.output and f"--out {out}" in result.output
    assert "Traceback" not in result.output
    records = (out / "summary.episodes.jsonl").read_text().splitlines()
    assert [json.loads(line)["episode"] for line in records] == [0]


def terminated_at(index):
    """An episode function that runs until episode ``index``, where SIGTERM arrives."""
    def episode(spec):
        if spec.index == index:
            os.kill(os.getpid(), signal.SIGTERM)
        return {"map_coverage": 10.0, "revisit_count": 0.0, "trajectory": [[0.0, 0.0]],
                "goals": []}
    return episode


@pytest.mark.parametrize(("index", "said"), [
    (1, "terminated: 1 finished episode recorded in"),
    (0, "terminated before the first episode finished: none is recorded"),
])
def test_sigterm_stops_as_an_interrupt_does_saying_what_is_recorded(tmp_path, monkeypatch,
                                                                     index, said):
    """SIGTERM (a scheduler stopping the job) exits 143 with the same account as Ctrl-C, and
    Ctrl-C's handler is back afterwards."""
    out = tmp_path / "run"
    monkeypatch.setattr(EXPLORATION, "episode", terminated_at(index))
    monkeypatch.setattr("sys.argv", ["mrsteve", "eval", "exploration", "--episodes", "3",
                                     "--out", str(out)])
    before = signal.getsignal(signal.SIGTERM)
    result = invoke("exploration", "--episodes", "3", "--out", str(out))
    assert result.exit_code == 143, result.output
    assert said in result.output and f"--out {out}" in result.output
    assert "Traceback" not in result.output
    assert signal.getsignal(signal.SIGTERM) == before


def test_an_interrupt_without_out_names_the_run_folder_it_made(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(EXPLORATION, "episode", interrupted_after_one)
    monkeypatch.setattr("sys.argv", ["mrsteve", "eval", "exploration", "--episodes", "3"])
    result = invoke("exploration", "--episodes", "3")
    assert result.exit_code == 130
    (folder,) = (tmp_path / "runs").iterdir()
    assert f"--out {folder.relative_to(tmp_path)}" in result.output, "the same folder, resumed"


def test_a_full_disk_is_one_line_and_the_records_stay(tmp_path, monkeypatch):
    import errno

    from mrsteve.eval.records import DiskFull, RecordsFile

    out = tmp_path / "run"
    appended = []
    original = RecordsFile.append

    def fills_up(self, record):
        if appended:
            raise DiskFull(errno.ENOSPC, "the disk is full: could not write a record")
        appended.append(record)
        original(self, record)

    monkeypatch.setattr(RecordsFile, "append", fills_up)
    monkeypatch.setattr(EXPLORATION, "episode", lambda spec: {
        "map_coverage": 1.0, "revisit_count": 0.0, "trajectory": [[0.0, 0.0]], "goals": []})
    result = invoke("exploration", "--episodes", "3", "--out", str(out))
    assert result.exit_code == 2 and "Traceback" not in result.output
    assert "the disk is full" in result.output and "--out" in result.output
    assert len((out / "summary.episodes.jsonl").read_text().splitlines()) == 1


@pytest.mark.parametrize("compiles", [True, False])
def test_a_run_says_it_is_compiling_when_and_only_when_a_kernel_compiles(tmp_path, monkeypatch,
                                                                          compiles):
    import numba

    def episode(spec):
        if compiles:  # a kernel numba has not cached (a fresh one), as on a first run
            numba.njit(lambda x: x + 1)(spec.index)
        return {"map_coverage": 1.0, "revisit_count": 0.0, "trajectory": [[0.0, 0.0]],
                "goals": []}

    monkeypatch.setattr(EXPLORATION, "episode", episode)
    result = invoke("exploration", "--episodes", "2", "--out", str(tmp_path / "run"))
    assert result.exit_code == 0
    assert result.output.count("compiling") == compiles, "once, and only when it compiles"
