"""`mrsteve view`: an episode's trace (bounded, kept beside the records, the records unchanged) and
its page: the map with the path by mode, the memory's event clusters and reads, the timeline;
opened in a real headless Chromium where one is installed."""

from __future__ import annotations

import json
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from mrsteve.cli import app
from mrsteve.eval.trace import EpisodeTrace, find_traces, read_trace
from mrsteve.eval.view import MODE_COLOURS, render_page
from mrsteve.protocols import Decision, Mode
from mrsteve.tasks.driver import Step

ABA = ["eval", "aba-sparse", "--task", "water-log-water", "--agent", "mrsteve", "--episodes", "1",
       "--seed", "3", "--no-progress"]
"""One MrSteve episode of ABA-Sparse (it succeeds: reads that find targets)."""


@pytest.fixture(scope="module")
def traced_run(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("view") / "run"
    result = CliRunner().invoke(app, [*ABA, "--trace", "--out", str(out)])
    assert result.exit_code == 0, result.output
    return out


@pytest.fixture(scope="module")
def trace(traced_run) -> dict:
    (path,) = find_traces(traced_run)
    assert path.name == "water-log-water.mrsteve.0.json.gz"
    return read_trace(path)


def records(folder: Path) -> list[dict]:
    return [json.loads(line) for path in sorted(folder.glob("*.episodes.jsonl"))
            for line in path.read_text().splitlines()]


def test_a_trace_leaves_the_records_as_an_untraced_run_writes_them(traced_run, tmp_path):
    plain = tmp_path / "plain"
    result = CliRunner().invoke(app, [*ABA, "--out", str(plain)])
    assert result.exit_code == 0, result.output
    assert records(traced_run) == records(plain)
    assert "trace" not in records(traced_run)[0], "the trace has its own file"
    assert not (plain / "traces").exists()


def test_the_trace_holds_the_path_modes_reads_tasks_and_memory(trace):
    steps = trace["steps"]
    assert len(trace["path"]) == steps // trace["path_every"] + 1
    assert trace["modes"][0][0] == 1 and {mode for _, mode in trace["modes"]} <= set(MODE_COLOURS)
    assert [task["item"] for task in trace["tasks"]] == ["water_bucket", "log", "water_bucket"]
    assert all(task["success"] for task in trace["tasks"])
    found = [read for read in trace["reads"] if read["candidates"]]
    assert found, "the last tasks were found in memory"
    for read in found:
        assert read["target"] == read["candidates_at"][0], "the target is the first match"
        assert len(read["candidates_at"]) == min(read["candidates"], 16)
    memory = trace["memory"]
    assert memory["kind"] == "PlaceEventMemory" and memory["frames"] == steps
    assert sum(cluster["frames"] for cluster in memory["clusters"]) == memory["frames"]
    assert memory["cells"] and memory["cell_size"] > 0
    kept = {cluster["thumbnail_t"] for cluster in memory["clusters"]}
    assert set(trace["thumbnails"]) == {str(t) for t in kept}
    assert trace["map"]["size"][0] * trace["map"]["scale"] > 0


def step(t: int, mode: Mode = Mode.EXPLORE) -> Step:
    obs = {"pose": np.array([float(t), 0.0, 0.0, 0.0, 0.0], np.float32)}
    view = {"rgb": np.full((8, 12, 3), t % 256, np.uint8)}
    return Step(t, obs, Decision({}, mode=mode), {}, False, False, view)


def test_a_long_episode_keeps_a_bounded_spread_of_thumbnails():
    trace = EpisodeTrace(thumbnail_every=10, max_thumbnails=8)
    for t in range(1, 2001):
        trace.on_step(step(t, Mode.EXPLORE if t < 1500 else Mode.EXECUTE))
    kept = sorted(trace.thumbnails)
    assert len(kept) <= 8 and kept[-1] > 1500, "spread over the whole episode"
    assert all(t % trace.thumbnail_every == 0 for t in kept)
    assert trace.modes == [[1, "explore"], [1500, "execute"]]


class Elements(HTMLParser):
    """The page's elements by tag and class, and its images' sources."""

    def __init__(self) -> None:
        super().__init__()
        self.count: dict[str, int] = {}
        self.sources: list[str] = []

    def handle_starttag(self, tag, attrs):
        attributes = dict(attrs)
        key = f"{tag}.{attributes.get('class', '')}".rstrip(".")
        self.count[key] = self.count.get(key, 0) + 1
        if attributes.get("id"):
            self.count[f"#{attributes['id']}"] = 1
        for name in ("src", "href"):
            if attributes.get(name):
                self.sources.append(attributes[name])


def test_the_page_draws_the_path_memory_reads_and_timeline_from_the_trace(trace):
    page = Elements()
    page.feed(render_page(trace))
    count = page.count
    assert count["#map"] == count["#timeline"] == count["#reads"] == 1
    assert count["polyline.path"] >= len({mode for _, mode in trace["modes"]})
    assert count["circle.event"] == len(trace["memory"]["clusters"])
    assert count["rect.cell"] == len(trace["memory"]["cells"])
    assert count["path.target"] == sum(1 for read in trace["reads"] if read["target"])
    assert count["line.read"] == len(trace["reads"])
    assert count["rect.task"] == len(trace["tasks"])
    assert count["figure.event-cluster"] == min(48, len(trace["memory"]["clusters"]))
    assert count["tr"] == len(trace["reads"]) + 1
    assert all(source.startswith("data:image/png;base64,") for source in page.sources), (
        "self-contained: nothing outside the page")


def test_view_writes_the_page_and_refuses_what_it_cannot_show(traced_run, tmp_path):
    runner = CliRunner()
    result = runner.invoke(app, ["view", str(traced_run)])
    assert result.exit_code == 0, result.output
    page = traced_run / "views" / "water-log-water.mrsteve.0.html"
    assert page.read_text().startswith("<!DOCTYPE html>")
    for arguments, said in (
        ([str(tmp_path / "nowhere")], "does not exist"),
        ([str(tmp_path)], "holds no trace: `mrsteve demo` writes one"),
        ([str(traced_run), "--episode", "1"], "--episode must be between 0 and 0"),
    ):
        refused = runner.invoke(app, ["view", *arguments])
        assert refused.exit_code == 2 and said in refused.output, refused.output
    trace_file = traced_run / "traces" / "water-log-water.mrsteve.0.json.gz"
    kept = trace_file.read_bytes()
    refused = runner.invoke(app, ["view", str(trace_file), "--out", str(trace_file)])
    assert refused.exit_code == 2 and "is the trace itself" in refused.output
    assert trace_file.read_bytes() == kept
    (tmp_path / "bad.json.gz").write_bytes(b"not gzip")
    refused = runner.invoke(app, ["view", str(tmp_path / "bad.json.gz")])
    assert refused.exit_code == 2 and "is not an episode trace" in refused.output


@pytest.mark.parametrize(("arguments", "said"), [
    (["exploration", "--steps", "30"], "No such option: --trace"),
    (["aba-sparse", "--backend", "ray"], "--trace keeps traces on the local backend only"),
])
def test_trace_is_refused_where_episodes_cannot_keep_one(arguments, said, tmp_path):
    result = CliRunner().invoke(app, ["eval", *arguments, "--episodes", "1", "--trace",
                                      "--no-progress", "--out", str(tmp_path / "run")])
    assert result.exit_code == 2 and said in result.output, result.output
    assert not (tmp_path / "run").exists()


def test_an_experiment_without_traces_refuses_one_asked_through_the_api(tmp_path):
    from mrsteve.eval.exploration import EXPLORATION
    from mrsteve.eval.options import SweepOptions

    with pytest.raises(ValueError, match="exploration's episodes keep no trace"):
        EXPLORATION.run(EXPLORATION.config_type(), SweepOptions(1, trace=True,
                                                                out=tmp_path / "run"))
    assert not (tmp_path / "run").exists()


BROWSERS = ("chromium", "chromium-browser", "google-chrome", "chrome")


def test_the_page_opens_in_headless_chromium_showing_map_and_timeline(traced_run, tmp_path):
    """A real browser renders the page; the screenshot shows the terrain and the modes'
    colours (the explore path and the timeline's bands)."""
    browser = next((found for name in BROWSERS if (found := shutil.which(name))), None)
    if browser is None:
        pytest.skip("no Chromium installed (Debian: apt install chromium)")
    page = tmp_path / "page.html"
    result = CliRunner().invoke(app, ["view", str(traced_run), "--out", str(page)])
    assert result.exit_code == 0, result.output
    shot = tmp_path / "shot.png"
    subprocess.run([browser, "--headless=new", "--no-sandbox", "--disable-gpu",
                    "--hide-scrollbars", "--window-size=1200,1400",
                    f"--user-data-dir={tmp_path / 'profile'}", f"--screenshot={shot}",
                    page.as_uri()], capture_output=True, timeout=120, check=False)
    assert shot.is_file(), "the browser wrote no screenshot"
    from PIL import Image

    pixels = np.asarray(Image.open(shot).convert("RGB")).reshape(-1, 3)
    colours = {tuple(pixel) for pixel in pixels[:: 7]}
    assert len(colours) > 200, "a drawn map, not a blank page"
    explore = np.array([int(MODE_COLOURS["explore"][i:i + 2], 16) for i in (1, 3, 5)])
    assert (np.abs(pixels.astype(int) - explore).sum(axis=1) < 12).sum() > 500, (
        "the explore colour of the path and the timeline")


def one_traced_episode(out: Path, experiment: str, steps: int) -> tuple[dict, dict]:
    """``(trace, record)`` of one MrSteve episode of ``experiment`` run with --trace."""
    result = CliRunner().invoke(app, ["eval", experiment, "--agent", "mrsteve", "--steps",
                                      str(steps), "--episodes", "1", "--trace", "--no-progress",
                                      "--out", str(out)])
    assert result.exit_code == 0, result.output
    (path,) = find_traces(out)
    (record,) = records(out)
    return read_trace(path), record


def test_a_long_instruction_episode_keeps_a_bounded_trace_too(tmp_path):
    trace, record = one_traced_episode(tmp_path / "li", "long-instruction", 2000)
    assert trace["steps"] == 2000 and len(trace["tasks"]) == record["tasks_given"]
    assert trace["memory"]["frames"] > 0 and trace["map"] is not None


def test_a_long_path_is_thinned_evenly():
    trace = EpisodeTrace(path_every=1, max_path_points=100)
    trace.on_reset(None, {"pose": np.zeros(5, np.float32)}, None)
    for t in range(1, 1001):
        trace.on_step(step(t))
    assert len(trace.path) <= 100 and trace.path_every == 16
    assert [x for x, _ in trace.path] == [float(i * 16) for i in range(len(trace.path))], (
        "point i at step i * path_every")


def test_a_long_navigation_episode_traces_its_goals_as_tasks(tmp_path):
    """The episode starts, for its callbacks, at the first scene; each goal is a task."""
    trace, record = one_traced_episode(tmp_path / "ln", "long-navigation", 12600)
    assert trace["steps"] == record["steps"] == 12600
    assert [task["start"] for task in trace["tasks"]] == [goal[2] for goal in record["goals"]]
    assert [task["success"] for task in trace["tasks"]] == [goal[4] for goal in record["goals"]]
    assert all(task["item"].startswith("go to the ") for task in trace["tasks"])


def test_a_memory_task_episode_keeps_its_trace_with_the_goal_phase_as_a_task(tmp_path):
    out = tmp_path / "mt"
    result = CliRunner().invoke(app, ["eval", "memory-tasks", "--task", "find-water", "--agent",
                                      "mrsteve", "--parts", "stand-in", "--task-steps", "300",
                                      "--episodes", "1", "--trace", "--no-progress", "--out",
                                      str(out)])
    assert result.exit_code == 0, result.output
    (path,) = find_traces(out)
    (record,) = records(out)
    trace = read_trace(path)
    (goal,) = trace["tasks"]
    assert goal["start"] == record["explore_steps"] and goal["item"] == "find-water"
    assert goal["success"] == (record["success_rate"] == 100.0)
    assert trace["memory"]["frames"] > 0 and trace["map"] is not None
