"""`mrsteve eval`: help, errors that list the valid choices, summaries with their episode records,
resuming an interrupted sweep, and plots."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from mrsteve.cli import app
from mrsteve.eval.results import records_path_for


def invoke(*args: str):
    return CliRunner().invoke(app, ["eval", *args, "--no-progress"])


@pytest.mark.parametrize("command", [[], ["exploration"], ["navigation"]])
def test_help(command):
    result = CliRunner().invoke(app, ["eval", *command, "--help"])
    assert result.exit_code == 0
    for option in ("--episodes", "--seed", "--workers", "--json", "--plots") if command else ():
        assert option in result.output


@pytest.mark.parametrize(
    ("args", "valid"),
    [
        (["exploration", "--agent", "random"], "count-based, count-based-straight, plan4mc"),
        (["navigation", "--terrain", "swamp"], "flat, plains, mountain, river"),
        (["navigation", "--navigator", "vpt"], "depth, straight"),
    ],
)
def test_unknown_choices_are_errors_listing_the_valid_ones(args, valid):
    result = invoke(*args)
    assert result.exit_code == 2
    assert "unknown" in result.output and valid in result.output


def test_a_run_writes_its_summary_and_records_and_a_second_run_resumes(tmp_path, monkeypatch):
    summary_path = tmp_path / "explore.json"
    args = ["exploration", "--episodes", "1", "--steps", "200", "--json", str(summary_path),
            "--plots", str(tmp_path / "plots")]
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    summary = json.loads(summary_path.read_text())
    assert summary["task"] == "exploration" and summary["agent"] == "count-based"
    assert summary["episodes"] == 1
    assert set(summary["metrics"]) == {"map_coverage", "revisit_count"}
    assert summary["metrics"]["map_coverage"]["mean"] > 0
    assert summary["config"]["task"]["steps"] == 200 and summary["config"]["seeds"] == [42]
    assert "84.42" in result.output  # the paper's figure beside ours
    records = records_path_for(summary_path).read_text().splitlines()
    assert len(records) == 1 and json.loads(records[0])["seed"] == 42
    assert (tmp_path / "plots" / "exploration_count-based_000.png").stat().st_size > 0

    from mrsteve.eval import experiments

    def must_not_run(spec):
        raise AssertionError(f"episode {spec} was already recorded")

    monkeypatch.setattr(experiments, "exploration_episode", must_not_run)
    again = invoke(*args)
    assert again.exit_code == 0, again.output
    assert records_path_for(summary_path).read_text().splitlines() == records
    assert json.loads(summary_path.read_text())["metrics"] == summary["metrics"]


def test_navigation_writes_one_summary_per_terrain(tmp_path):
    result = invoke("navigation", "--terrain", "flat,plains", "--episodes", "1",
                    "--max-steps", "300", "--json", str(tmp_path / "nav.json"))
    assert result.exit_code == 0, result.output
    for terrain in ("flat", "plains"):
        summary = json.loads((tmp_path / f"nav.{terrain}.json").read_text())
        assert summary["task"] == f"navigation/{terrain}" and summary["agent"] == "depth"
        assert set(summary["metrics"]) == {"success_rate", "spl"}
        assert (tmp_path / f"nav.{terrain}.episodes.jsonl").exists()
    assert "0.849 (96 %)" in result.output  # VPT-Nav on flat, beside ours


def test_aba_sparse_writes_its_summary_and_plots_success(tmp_path):
    args = ["eval", "aba-sparse", "--task", "wool-seeds-wool", "--agent", "steve1",
            "--episodes", "1", "--no-progress", "--json", str(tmp_path / "aba.json"),
            "--plots", str(tmp_path)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "aba.json").read_text())
    assert summary["task"] == "aba-sparse/wool-seeds-wool" and summary["agent"] == "steve1"
    assert set(summary["metrics"]) == {"success_rate", "success_A", "success_B", "success_A2",
                                       "duration_A", "duration_B", "duration_A2"}
    assert summary["config"]["task"]["world"] == "map2"
    assert (tmp_path / "aba-sparse-success.png").stat().st_size > 0


def test_aba_sparse_rejects_unknown_tasks_and_agents():
    bad_task = CliRunner().invoke(app, ["eval", "aba-sparse", "--task", "water-wood-water"])
    assert bad_task.exit_code == 2 and "water-log-water" in bad_task.output
    bad_agent = CliRunner().invoke(app, ["eval", "aba-sparse", "--agent", "mrsteeve"])
    assert bad_agent.exit_code == 2 and "center-embed" in bad_agent.output
