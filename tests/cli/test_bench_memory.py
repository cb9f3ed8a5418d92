"""`mrsteve bench memory` end to end, on a tiny trajectory: every memory variant by its one name,
and Place Event Memory with float16 frames and with frame codes."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from mrsteve.bench import memory as bench
from mrsteve.cli import app

runner = CliRunner()


def test_a_tiny_run_prints_the_table_and_writes_json(tmp_path):
    path = tmp_path / "bench.json"
    arguments = [
        "bench",
        "memory",
        "--frames",
        "400",
        "--queries",
        "5",
        "--dim",
        "16",
        "--no-progress",
    ]
    result = runner.invoke(app, [*arguments, "--json", str(path)])
    assert result.exit_code == 0, result.output
    assert "Place Event (centre only)" in result.output and "paper" in result.output
    report = json.loads(path.read_text())
    assert report["config"]["frames"] == 400 and report["config"]["dim"] == 16
    rows = report["rows"]
    assert [(row["memory"], row["top_k"]) for row in rows[:2]] == [("fifo", None), ("place", 1)]
    assert list(dict.fromkeys(row["memory"] for row in rows)) == [
        "fifo", "place", "event", "place-event", "center-embed", "place-event-fp16",
        "place-event-codes"]
    lines = result.output.splitlines()
    header = next(line for line in lines if line.startswith("memory"))
    end = header.index("median") + len("median")
    table = lines[lines.index(header) + 1:lines.index(header) + 1 + len(rows)]
    for line, row in zip(table, rows, strict=True):  # long labels keep the columns
        assert line.startswith(row["label"]) and line[:end].endswith(f"{row['ms_median']:.3f}")
    assert {row["label"] for row in rows if row["memory"] == "center-embed"} == {
        "Place Event (centre only)"}
    assert len(rows) == 1 + 6 * 5  # FIFO once, the others at top-k 1, 2, 4, 10, 30
    for row in rows:
        value_bytes = 2 if row["memory"] == "place-event-fp16" else 4
        assert row["ms_p10"] <= row["ms_median"] <= row["ms_p90"]
        assert row["frames_scored"] > 0 and row["bytes_per_frame"] >= 16 * value_bytes
        assert row["bytes_per_read"] > 0
    fifo = rows[0]
    assert fifo["frames_scored"] == 400 and fifo["paper_ms_mean"] == 438.46
    place_event_30 = next(r for r in rows if r["memory"] == "place-event" and r["top_k"] == 30)
    assert place_event_30["paper_ms_mean"] == 11.24 and place_event_30["paper_clusters"] == 3000
    targets = report["targets"]
    assert set(targets) == {
        "place_event_top30_median_ms",
        "fifo_over_place_event_top30",
        "place_event_write_us_per_frame",
        "bytes_per_frame_at_512_dims",
        "place_event_fp16_top30_median_ms",
        "fifo_over_place_event_fp16_top30",
        "place_event_fp16_write_us_per_frame",
        "bytes_per_frame_at_512_dims_fp16",
    }
    # the bars are meant for 100K frames of 512 dims: a tiny run states its figures, no verdict
    # (only the write's bar holds at any size)
    for name, target in targets.items():
        assert (target["met"] is None) == ("write" not in name), name
    for line in result.output.splitlines():
        if "fifo_over" in line or "top30_median_ms" in line or "bytes_per_frame" in line:
            assert "no verdict" in line and "MISSED" not in line, line


def test_a_subset_of_memories_can_be_chosen(tmp_path):
    path = tmp_path / "bench.json"
    arguments = [
        "bench",
        "memory",
        "--frames",
        "200",
        "--queries",
        "2",
        "--dim",
        "8",
        "--no-progress",
    ]
    result = runner.invoke(
        app, [*arguments, "--memory", "center-embed", "--memory", "fifo", "--json", str(path)]
    )
    assert result.exit_code == 0, result.output
    rows = json.loads(path.read_text())["rows"]
    assert {row["memory"] for row in rows} == {"fifo", "center-embed"}


def test_the_help_names_every_memory_the_benchmark_takes():
    result = runner.invoke(app, ["bench", "memory", "--help"], terminal_width=400)
    assert result.exit_code == 0
    for name in bench.MEMORIES:
        assert name in result.output
    assert "place-event-centre" not in result.output


def test_bad_options_fail_with_a_message():
    for arguments, message in (
        (["--frames", "0"], "--frames must be >= 1"),
        (["--memory", "lstm"], ("unknown --memory 'lstm'; known: fifo, place, event, "
                                "place-event, center-embed, place-event-fp16")),
        (["--cold-caches"], "--cold-caches times the peer table's reads: give --peers faiss"),
        (["--cold-caches", "--peers", "faiss", "--long-run"], "(and no --long-run)"),
    ):
        result = runner.invoke(app, ["bench", "memory", *arguments])
        assert result.exit_code == 2
        assert message in result.output


@pytest.mark.parametrize("arguments", [["--frames", "1000000000000"], ["--dim", "100000000"],
                                       ["--long-run", "--frames", "1000000000000"]])
def test_sizes_beyond_the_machines_memory_are_refused_before_any_work(arguments):
    result = runner.invoke(app, ["bench", "memory", *arguments, "--no-progress"])
    assert result.exit_code == 2, result.output
    (line,) = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert "GiB of memory" in line and "available" in line
    assert "Traceback" not in result.output


def test_the_cold_caches_sweep_counts_in_the_memory_needed(monkeypatch):
    import mrsteve.bench.machine
    import mrsteve.cli.bench_memory

    monkeypatch.setattr(mrsteve.bench.machine, "cpu_caches", lambda: {"L3": 480 * 2**20})
    monkeypatch.setattr(mrsteve.cli.bench_memory, "available_memory", lambda: 512 * 2**20)
    monkeypatch.setattr(bench, "run_memory_benchmark", lambda *a, **k: pytest.fail("ran"))
    arguments = ["bench", "memory", "--frames", "100", "--dim", "4", "--peers", "faiss",
                 "--no-progress"]
    result = runner.invoke(app, [*arguments, "--cold-caches"])
    assert result.exit_code == 2, result.output
    (line,) = [line for line in result.output.splitlines() if line.startswith("error:")]
    assert "the --cold-caches sweep" in line and "0.5 GiB available" in line
