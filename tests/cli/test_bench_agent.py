"""`mrsteve bench agent`: the parts it measures, and the stand-in agent it measures them against
(the runs themselves are replaced: the speeds are the benchmark's to report, not a test's)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from mrsteve.cli import app

LEARNED = {"encoder": "pixels", "navigator": "learned", "instruction_policy": "learned"}
STAND_INS = {"encoder": "semantic", "navigator": "depth", "instruction_policy": "scripted"}


@pytest.fixture
def benched(monkeypatch) -> list[dict[str, str]]:
    """The parts of every agent the command benches, in order (each run reports 100 steps/s
    for the stand-ins, 40 for any other agent)."""
    import mrsteve.bench.agent

    runs = []

    def bench_agent(agent, task, steps, seed, obs_size, **parts):
        runs.append(parts)
        return {"agent": agent, "world": "map1", "obs_size": [40, 64], "steps": steps,
                "steps_per_second": 100.0 if parts == STAND_INS else 40.0,
                "tasks_completed": 0, "microseconds_per_step": {"encoder": 1.0},
                "warm_up_steps": 300, "warm_up_seconds": 1.0, "paper_steps_per_second": 11.0}

    monkeypatch.setattr(mrsteve.bench.agent, "bench_agent", bench_agent)
    return runs


def test_the_default_benches_the_learned_parts_against_the_stand_in_agent(benched, tmp_path):
    path = tmp_path / "agent.json"
    result = CliRunner().invoke(app, ["bench", "agent", "--json", str(path)])
    assert result.exit_code == 0, result.output
    assert benched == [LEARNED, STAND_INS], "the paper's agent, then the stand-ins alike"
    text = " ".join(result.output.split())
    assert "(pixels encoder, learned navigator, learned instruction policy)" in text
    assert "the stand-in agent (semantic encoder, depth navigator, scripted" in text
    assert "runs at 0.40 x that speed" in text
    written = json.loads(path.read_text())
    assert written["reference"] == STAND_INS and written["speed_vs_reference"] == 0.4


@pytest.mark.parametrize(("args", "parts"), [
    (("--parts", "stand-in", "--encoder", "pixels"), STAND_INS | {"encoder": "pixels"}),
    (("--navigator", "depth"), LEARNED | {"navigator": "depth"}),
])
def test_a_part_option_overrides_parts_and_the_stand_ins_run_beside(benched, args, parts):
    result = CliRunner().invoke(app, ["bench", "agent", *args])
    assert result.exit_code == 0, result.output
    assert benched == [parts, STAND_INS]


def test_the_stand_in_agent_alone_has_nothing_to_be_measured_against(benched):
    result = CliRunner().invoke(app, ["bench", "agent", "--parts", "stand-in"])
    assert result.exit_code == 0, result.output
    assert benched == [STAND_INS] and "x that speed" not in result.output


def test_the_observation_size_defaults_to_the_environments_and_refuses_empty_frames():
    from typer.testing import CliRunner

    from mrsteve.cli import app

    help_text = CliRunner().invoke(app, ["bench", "agent", "--help"]).output
    assert "default: 0, 0" not in help_text and "--obs-size" in help_text
    refused = CliRunner().invoke(app, ["bench", "agent", "--obs-size", "0", "64"])
    assert refused.exit_code == 2
    assert "error: --obs-size takes a height and a width of at least 1 pixel" in refused.output
