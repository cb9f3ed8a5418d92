"""`mrsteve report`: the results page from run folders, and the repository's page is the one its
kept runs give."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mrsteve.cli import app
from mrsteve.eval.report import headline_block, load_run, report

ROOT = Path(__file__).resolve().parents[2]
RESULTS = ROOT / "results"


def make_run(tmp_path: Path) -> Path:
    out = tmp_path / "run"
    result = CliRunner().invoke(app, ["eval", "navigation", "--terrain", "flat,river",
                                      "--navigator", "depth,straight", "--max-steps", "60",
                                      "--episodes", "2", "--out", str(out), "--no-progress"])
    assert result.exit_code == 0, result.output
    return out


def test_a_run_folder_gives_its_command_commit_and_table(tmp_path):
    out = make_run(tmp_path)
    (out / "NOTES.md").write_text("The river is crossed by swimming.\n")
    page = report([out])
    assert "## Navigation (paper appendix, navigator table)" in page
    assert ("`mrsteve eval navigation --terrain flat,river --navigator depth,straight "
            "--max-steps 60 --episodes 2 --out") in page
    assert "2 episodes per group (seeds 42 to 43)" in page
    assert "0.849 (96 %)" in page, "the paper's figure beside ours"
    assert "The river is crossed by swimming." in page
    assert "| Navigation: success % | 2 |" in headline_block(page)


def test_the_page_needs_finished_runs_of_this_version(tmp_path):
    out = make_run(tmp_path)
    manifest = json.loads((out / "manifest.json").read_text())
    (out / "manifest.json").write_text(json.dumps({**manifest, "wall_time_s": None}))
    with pytest.raises(ValueError, match="did not finish"):
        load_run(out)
    (out / "manifest.json").write_text(json.dumps(manifest))
    (out / "summary.flat.depth.json").unlink()
    with pytest.raises(ValueError, match="group flat.depth has no summary"):
        load_run(out)
    with pytest.raises(ValueError, match="not a run folder"):
        load_run(tmp_path)


def test_a_run_reads_without_the_weights_files_it_was_given(tmp_path):
    """A navigation run given --weights is reported from its manifest once the file is gone."""
    from tests.control.test_learned_navigator import small_weights

    weights = tmp_path / "nav.npz"
    small_weights().save(weights)
    out = tmp_path / "run"
    result = CliRunner().invoke(app, ["eval", "navigation", "--terrain", "flat",
                                      "--navigator", "learned", "--weights", str(weights),
                                      "--max-steps", "5", "--episodes", "1", "--out", str(out),
                                      "--no-progress"])
    assert result.exit_code == 0, result.output
    before = report([out])
    weights.unlink()
    run = load_run(out)
    trained = [group.spec.agent for group in run.groups if group.spec.agent.weights]
    assert [tree.weights for tree in trained] == [str(weights)]
    assert trained[0].weights_sha256 == small_weights().sha256
    assert report([out]) == before


def test_the_command_writes_the_page_and_refuses_a_bad_output(tmp_path):
    out = make_run(tmp_path)
    result = CliRunner().invoke(app, ["report", str(out), "--out", str(tmp_path / "page.md")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "page.md").read_text().startswith("# Results")
    refused = CliRunner().invoke(app, ["report", str(out), "--out", str(tmp_path)])
    assert refused.exit_code == 2 and "is a directory" in refused.output


def test_the_published_page_is_generated_from_the_kept_runs(tmp_path, monkeypatch):
    """docs/results.md is exactly what `mrsteve report results/*` gives (run in the repository),
    so every number on it traces to a run folder kept there."""
    folders = sorted(path for path in RESULTS.iterdir() if path.is_dir())
    assert folders, "results/ holds the runs behind the published tables"
    for folder in folders:
        assert not list(folder.glob("*.episodes.jsonl")), "records are not kept"
    monkeypatch.chdir(ROOT)
    page = report([folder.relative_to(ROOT) for folder in folders])
    assert page == (ROOT / "docs" / "results.md").read_text(encoding="utf-8")
