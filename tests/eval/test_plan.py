"""A run's plan (``mrsteve eval ... --plan``): written before the run and committed, then the run
that follows is refused unless it is that plan, and its manifest says which commit declared it
and which commits ran it."""

from __future__ import annotations

import json
import subprocess

import pytest
from typer.testing import CliRunner

from mrsteve.cli import app
from mrsteve.eval.plan import PLAN, plan_provenance

RUN = ["eval", "navigation", "--terrain", "flat", "--max-steps", "20", "--episodes", "2",
       "--no-progress"]


def invoke(*args):
    return CliRunner().invoke(app, [*RUN, *args])


def git(folder, *args):
    return subprocess.run(["git", *args], cwd=folder, check=True, capture_output=True,
                          text=True).stdout.strip()


def test_a_plan_is_written_alone_then_the_same_command_runs_it(tmp_path):
    out = tmp_path / "run"
    result = invoke("--out", str(out), "--plan")
    assert result.exit_code == 0, result.output
    assert sorted(path.name for path in out.iterdir()) == [PLAN], "the plan alone: no episode"
    plan = json.loads((out / PLAN).read_text())
    assert plan["episodes"] == 2 and plan["seeds"] == [42, 43]
    assert list(plan["groups"]) == ["flat"] and plan["groups"]["flat"]["agent"] == "learned"
    assert "--plan" not in plan["command_line"]
    assert invoke("--out", str(out), "--plan").exit_code == 0, "the same plan again: kept"
    result = invoke("--out", str(out))
    assert result.exit_code == 0, result.output
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["plan"]["sha256"] and manifest["plan"]["commit"] is None, "not committed"
    assert len(manifest["sittings"]) == 1


@pytest.mark.parametrize("other", [["--episodes", "3"], ["--seed", "7"],
                                   ["--terrain", "flat,river"], ["--navigator", "depth"]])
def test_a_run_that_is_not_its_plan_is_refused_before_any_episode(tmp_path, other):
    out = tmp_path / "run"
    assert invoke("--out", str(out), "--plan").exit_code == 0
    planned = (out / PLAN).read_bytes()
    result = invoke("--out", str(out), *other)
    assert result.exit_code == 2
    assert "is not the one" in result.output and "plan.json plans" in result.output
    assert sorted(path.name for path in out.iterdir()) == [PLAN]
    result = invoke("--out", str(out), "--plan", *other)
    assert result.exit_code == 2 and "holds another plan" in result.output
    assert (out / PLAN).read_bytes() == planned, "a plan is never replaced"


def test_a_resumed_run_keeps_each_sitting_in_its_manifest(tmp_path):
    out = tmp_path / "run"
    assert invoke("--out", str(out), "--episodes", "1").exit_code == 0
    assert invoke("--out", str(out), "--episodes", "2").exit_code == 0
    manifest = json.loads((out / "manifest.json").read_text())
    assert len(manifest["sittings"]) == 2
    assert all(sitting["git"] == manifest["git"] for sitting in manifest["sittings"])


def test_the_provenance_names_the_plan_commit_and_whether_it_came_before_the_code(tmp_path):
    git(tmp_path, "init", "-q")
    git(tmp_path, "config", "user.email", "test@example.com")
    git(tmp_path, "config", "user.name", "test")
    (tmp_path / "code.py").write_text("x = 1\n")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-qm", "code")
    early = git(tmp_path, "rev-parse", "HEAD")
    plan = tmp_path / PLAN
    plan.write_text("{}\n")
    assert plan_provenance(plan, early)["commit"] is None, "untracked: not committed"
    git(tmp_path, "add", PLAN)
    git(tmp_path, "commit", "-qm", "plan")
    planned = git(tmp_path, "rev-parse", "HEAD")
    (tmp_path / "code.py").write_text("x = 2\n")
    git(tmp_path, "commit", "-qam", "more code")
    later = git(tmp_path, "rev-parse", "HEAD")
    found = plan_provenance(plan, later)
    assert found["commit"] == planned and found["before_run"] is True
    assert plan_provenance(plan, early)["before_run"] is False, "the code predates the plan"
    plan.write_text('{"changed": 1}\n')
    assert plan_provenance(plan, later)["commit"] is None, "modified since its commit"
    assert plan_provenance(tmp_path / "none.json", later) is None
