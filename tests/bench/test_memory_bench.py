"""`mrsteve.bench.memory` at tiny sizes: the faiss peers, the missing-faiss message, the long run.
(Timings are printed by the benchmark, never asserted.)"""

from __future__ import annotations

import sys

import pytest

from mrsteve.bench import memory as bench
from mrsteve.memory import MEMORY_VARIANTS, PlaceEventMemory


def test_the_memories_measured_are_the_variants_under_their_names_and_one_in_float16():
    assert list(bench.MEMORIES) == [*MEMORY_VARIANTS, "place-event-fp16"]
    for name, variant in MEMORY_VARIANTS.items():
        memory = bench.MEMORIES[name].build()
        assert bench.MEMORIES[name].title == variant.title
        assert type(memory) is variant.memory_type and memory.config == variant.config()
        assert memory.capacity is None
    float16 = bench.MEMORIES["place-event-fp16"].build()
    assert type(float16) is PlaceEventMemory
    assert float16.config == MEMORY_VARIANTS["place-event"].config(frame_precision="float16")
    assert bench.MEMORIES["place-event-fp16"].title == "Place Event (float16 frames)"


def test_peers_answer_the_same_queries_with_recalls():
    pytest.importorskip("faiss")
    config = bench.MemoryBenchConfig(
        frames=1500, queries=8, dim=16, memories=("place-event",), peers=("faiss",),
        top_ks=(30,), recall_queries=8,
    )
    report = bench.run_memory_benchmark(config, progress=False)
    rows = {row["peer"]: row for row in report["peers"]}
    assert set(rows) == {
        "numpy", "faiss-flat", "faiss-ivf", "faiss-ivf-fp16", "place-event", "place-event-fp16"
    }
    for name in ("numpy", "faiss-flat"):
        assert rows[name]["recall_full_scan"] == pytest.approx(1.0)
        assert rows[name]["scanned"] == 1500
    for name in ("faiss-ivf", "place-event"):  # exact over what each searches
        assert rows[name]["recall_searched"] == pytest.approx(1.0)
        assert rows[name]["scanned"] < 1500 + 1500
    for name in ("faiss-ivf-fp16", "place-event-fp16"):  # float16 frames: only the borderline
        assert rows[name]["recall_searched"] >= 0.95  # frames may fall below the threshold
    assert {"place_event_over_faiss_ivf", "place_event_fp16_over_faiss_ivf"} <= set(
        report["targets"]
    )
    text = bench.format_report(report)
    assert "faiss IndexIVFFlat" in text and "Place Event Memory, float16 / faiss IVF" in text


def test_without_faiss_the_peers_fail_with_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "faiss", None)
    config = bench.MemoryBenchConfig(frames=50, queries=2, dim=8, peers=("faiss",))
    with pytest.raises(bench.MissingPeer, match=r"pip install 'mrsteve\[bench\]'"):
        bench.run_memory_benchmark(config, progress=False)


def test_a_long_run_keeps_the_capacity_and_one_centre_row_per_cluster():
    config = bench.LongRunConfig(
        frames=1200, capacity=200, dim=8, checkpoints=4, queries=3, chunk=500
    )
    report = bench.run_long_run(config, progress=False)
    samples = report["samples"]
    assert [s["written"] for s in samples] == [300, 600, 900, 1200]
    for sample in samples:
        assert sample["frames"] == min(sample["written"], 200)
        assert sample["centre_rows"] == sample["clusters"] > 0
    assert "centre rows" in bench.format_long_run(report)
