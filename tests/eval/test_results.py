"""Summaries: mean and standard error, the shared summary file format, tables."""

import json
import math

from mrsteve.eval.results import (
    format_metric,
    format_table,
    mean_stderr,
    records_path_for,
    summarize,
    write_summary,
)


def test_mean_and_standard_error():
    m = mean_stderr([1.0, 2.0, 3.0, 4.0])
    assert m["mean"] == 2.5
    assert math.isclose(m["stderr"], math.sqrt((2.25 + 0.25 + 0.25 + 2.25) / 3 / 4))
    assert mean_stderr([7.0]) == {"mean": 7.0, "stderr": 0.0, "n": 1}
    assert mean_stderr([])["n"] == 0


def test_summarize_skips_records_without_the_metric():
    records = [{"spl": 1.0, "success_rate": 100.0}, {"spl": 0.5}, {"success_rate": 0.0}]
    out = summarize(records, ["spl", "success_rate"])
    assert out["spl"]["mean"] == 0.75 and out["spl"]["n"] == 2
    assert out["success_rate"]["mean"] == 50.0


def test_summary_file_has_the_shared_format(tmp_path):
    path = tmp_path / "nav.json"
    write_summary(path, task="navigation/flat", agent="heuristic", episodes=2, config={"k": 1},
                  metrics={"spl": {"mean": 0.9, "stderr": 0.01, "n": 2}})
    data = json.loads(path.read_text())
    assert set(data) == {"task", "agent", "episodes", "config", "metrics"}
    assert data["metrics"]["spl"]["mean"] == 0.9
    assert records_path_for(path).name == "nav.episodes.jsonl"


def test_tables_align_columns_and_show_missing_metrics():
    text = format_table(["agent", "spl"], [["a", format_metric({"mean": 0.5, "stderr": 0.1, "n": 3})],
                                            ["bb", format_metric(None)]])
    lines = text.splitlines()
    assert len({len(line) for line in lines}) == 1
    assert "0.50 ± 0.10" in text and lines[-1].rstrip().endswith("-")


def test_summaries_keep_each_episodes_value_by_seed_to_pair_groups_later():
    records = [{"seed": 43, "spl": 0.5}, {"seed": 42, "spl": 1.0}, {"seed": 44}]
    assert summarize(records, ["spl"])["spl"] == {"mean": 0.75, "stderr": 0.25, "n": 2,
                                                  "by_seed": {"43": 0.5, "42": 1.0}}
    assert "by_seed" not in summarize([{"spl": 1.0}, {"spl": 0.5}], ["spl"])["spl"]
    twice = summarize([{"seed": 1, "spl": 1.0}, {"seed": 1, "spl": 0.5}], ["spl"])
    assert "by_seed" not in twice["spl"]  # a seed run twice cannot pair
    with_nan = summarize([{"seed": 1, "spl": float("nan")}, {"seed": 2, "spl": 0.5}], ["spl"])
    assert with_nan["spl"]["by_seed"] == {"2": 0.5} and with_nan["spl"]["n"] == 1
