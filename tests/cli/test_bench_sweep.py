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


def test_every_experiment_has_a_sweep_benchmark_with_its_options():
    from mrsteve.eval.experiments import EXPERIMENTS

    result = CliRunner().invoke(app, ["bench", "sweep", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    for name in EXPERIMENTS:
        assert name in result.output
    help_text = CliRunner().invoke(app, ["bench", "sweep", "aba-sparse", "--help"],
                                   env={"COLUMNS": "200"}).output
    for option in ("--task", "--agent", "--episodes", "--workers", "--backend", "--json"):
        assert option in help_text
    assert "mrsteve bench sweep aba-sparse --task water-log-water" in help_text  # an example
