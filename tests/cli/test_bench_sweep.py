"""`mrsteve bench sweep`: the same episodes with one worker and with N, their records identical,
the speed-up printed and written."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from mrsteve.cli import app


def test_the_sweep_benchmark_runs_both_and_compares_their_records(tmp_path):
    path = tmp_path / "scaling.json"
    result = CliRunner().invoke(app, [
        "bench", "sweep", "navigation", "--terrain", "flat,plains", "--max-steps", "60",
        "--episodes", "2", "--workers", "2", "--json", str(path)])
    assert result.exit_code == 0, result.output
    assert "speed-up with 2 workers" in result.output and "records identical" in result.output
    timing = json.loads(path.read_text())
    assert timing["identical_records"] and timing["experiment"] == "navigation"
    assert timing["serial"]["workers"] == 1 and timing["parallel"]["workers"] == 2
    assert timing["serial"]["episodes"] == timing["parallel"]["episodes"] == 4
    assert timing["parallel"]["processes"] == 2, "two worker processes shared the episodes"
    assert timing["serial"]["steps"] == timing["parallel"]["steps"] > 0
    ratio = timing["serial"]["seconds"] / timing["parallel"]["seconds"]
    assert timing["speedup"] == pytest.approx(ratio, rel=0.02)
    assert "start-up s" in result.output and "episodes/s after start-up" in result.output
    for run in (timing["serial"], timing["parallel"]):
        assert 0 < run["startup_seconds"] < run["seconds"]
        steady = run["episodes"] / (run["seconds"] - run["startup_seconds"])
        assert run["steady_episodes_per_second"] == pytest.approx(steady, rel=0.01)


def test_each_run_has_a_fresh_driver_that_starts_from_this_process(monkeypatch):
    import os

    from mrsteve.eval import scaling

    monkeypatch.setattr(scaling, "SWEPT", [], raising=False)
    assert scaling.in_fresh_driver(os.getpid) != os.getpid()
    assert scaling.in_fresh_driver(remember, 1) == [1]
    assert scaling.in_fresh_driver(remember, 2) == [2], "nothing left by the first driver"
    assert scaling.SWEPT == [], "nor here"
    with pytest.raises(ValueError, match="invalid literal"):
        scaling.in_fresh_driver(int, "x")


def remember(value: int) -> list[int]:
    from mrsteve.eval import scaling

    scaling.SWEPT.append(value)
    return scaling.SWEPT


def test_every_experiment_has_a_sweep_benchmark_with_its_options():
    from mrsteve.eval.registry import EXPERIMENTS

    result = CliRunner().invoke(app, ["bench", "sweep", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    for name in EXPERIMENTS:
        assert name in result.output
    help_text = CliRunner().invoke(app, ["bench", "sweep", "aba-sparse", "--help"],
                                   env={"COLUMNS": "200"}).output
    for option in ("--task", "--agent", "--episodes", "--workers", "--backend", "--json"):
        assert option in help_text
    assert "mrsteve bench sweep aba-sparse --task water-log-water" in help_text  # an example


def test_a_cluster_that_is_not_there_is_refused_before_either_sweep(monkeypatch):
    import socket

    from mrsteve.eval import scaling

    def swept(*args):
        raise AssertionError("a sweep ran")

    monkeypatch.setattr(scaling, "in_fresh_driver", swept)
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed again: nobody listens there
    result = CliRunner().invoke(app, [
        "bench", "sweep", "navigation", "--terrain", "flat", "--max-steps", "30", "--episodes",
        "1", "--workers", "2", "--backend", "ray", "--address", f"127.0.0.1:{port}"])
    assert result.exit_code == 2
    assert f"no Ray cluster found at --address 127.0.0.1:{port}" in result.output
