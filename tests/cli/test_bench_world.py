"""`mrsteve bench world`: a tiny run through the command line, checking the results it writes."""

from __future__ import annotations

import json

from typer.testing import CliRunner

from mrsteve.cli import app
from mrsteve.env.voxel_env import DEFAULT_OBS_SIZE

DEFAULT_KEY = f"{DEFAULT_OBS_SIZE[0]}x{DEFAULT_OBS_SIZE[1]}"


def test_tiny_run_writes_every_measurement(tmp_path):
    path = tmp_path / "bench.json"
    result = CliRunner().invoke(app, [
        "bench", "world", "--worlds", "flat", "--steps", "3", "--sizes", "8x8,default",
        "--no-progress", "--json", str(path),
    ])  # fmt: skip
    assert result.exit_code == 0, result.output
    report = json.loads(path.read_text())
    assert set(report) >= {"machine", "config", "targets", "worlds", "first_frame_s", "crafter",
                           "summary"}
    (row,) = report["worlds"]
    assert row["world"] == "flat"
    for metric in ("render_fps", "render_fps_cpu", "steps_per_s", "steps_per_cpu_s"):
        assert set(row[metric]) == {"8x8", DEFAULT_KEY}
        assert all(rate > 0 for rate in row[metric].values())
    assert row["reset_s"] > 0 and row["reset_max_s"] >= row["reset_s"]
    assert 0 < row["memory_mb"] < 200
    assert report["first_frame_s"]["renderer"] > 0
    assert report["first_frame_s"]["environment_process"] > report["first_frame_s"]["environment"]
    assert "steps_per_s_64x64" in report["crafter"] or "error" in report["crafter"]
    assert set(report["summary"]["targets_met"]) >= {"steps_per_s_64x64", "memory_mb"}
    assert "steps/s 8x8" in result.output and "target" in result.output  # the printed table


def test_renderer_only_measures_frames_alone(tmp_path):
    path = tmp_path / "bench.json"
    result = CliRunner().invoke(app, [
        "bench", "world", "--worlds", "flat", "--steps", "2", "--sizes", "16x24", "--renderer-only",
        "--no-first-frame", "--no-progress", "--json", str(path),
    ])  # fmt: skip
    assert result.exit_code == 0, result.output
    report = json.loads(path.read_text())
    (row,) = report["worlds"]
    assert set(row) == {"world", "size", "render_fps", "render_fps_cpu"}
    assert "crafter" not in report and "first_frame_s" not in report


def test_bad_options_fail_with_a_message_naming_what_is_accepted():
    runner = CliRunner()
    for args, accepted in ((["--sizes", "8by8"], "HxW (like 64x64) or 'default'"),
                           (["--worlds", "atlantis"], "known: map1, map2"),
                           (["--sizes", "0x8"], "within 1..4096")):
        result = runner.invoke(app, ["bench", "world", "--no-progress", *args])
        assert result.exit_code == 2
        assert "error:" in result.output and accepted in result.output
