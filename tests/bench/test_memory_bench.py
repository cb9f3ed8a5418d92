"""`mrsteve.bench.memory` at tiny sizes: the faiss peers, the missing-faiss message, the long run.
(Timings are printed by the benchmark, never asserted.)"""

from __future__ import annotations

import sys

import numpy as np
import pytest

from mrsteve.bench import memory as bench
from mrsteve.memory import MEMORY_VARIANTS, PlaceEventMemory


def test_the_memories_measured_are_the_variants_under_their_names_and_two_of_their_own():
    assert list(bench.MEMORIES) == [*MEMORY_VARIANTS, "place-event-fp16", "place-event-codes"]
    for name, variant in MEMORY_VARIANTS.items():
        memory = bench.MEMORIES[name].build()
        assert bench.MEMORIES[name].title == variant.title
        assert type(memory) is variant.memory_type and memory.config == variant.config()
        assert memory.capacity is None
    float16 = bench.MEMORIES["place-event-fp16"].build()
    assert type(float16) is PlaceEventMemory
    assert float16.config == MEMORY_VARIANTS["place-event"].config(frame_precision="float16")
    assert bench.MEMORIES["place-event-fp16"].title == "Place Event (float16 frames)"
    coded = bench.MEMORIES["place-event-codes"].build()
    assert coded.config == MEMORY_VARIANTS["place-event"].config(frame_codes=True)


def test_peers_answer_the_same_queries_with_recalls():
    pytest.importorskip("faiss")
    config = bench.MemoryBenchConfig(
        frames=1500, queries=8, dim=16, memories=("place-event",), peers=("faiss",),
        top_ks=(30,), recall_queries=8,
    )
    report = bench.run_memory_benchmark(config, progress=False)
    rows = {row["peer"]: row for row in report["peers"]}
    assert set(rows) == {
        "numpy", "faiss-flat", "faiss-ivf", "faiss-ivf-fp16", "faiss-hnsw", *bench.PEER_READS
    }
    reads = ("faiss-ivf", "faiss-ivf-fp16", "faiss-hnsw", *bench.PEER_READS)
    for name, row in rows.items():  # the batched timings: for the methods raced query by query
        assert (row["batch_ms_per_query"] is not None) == (name in reads)
    ours = max(rows[name]["recall_full_scan"] for name in ("place-event", "place-event-fp16"))
    assert rows["faiss-hnsw"]["recall_full_scan"] >= ours  # efSearch chosen for at least ours
    assert "efSearch" in rows["faiss-hnsw"]["label"]
    for name in ("numpy", "faiss-flat"):
        assert rows[name]["recall_full_scan"] == pytest.approx(1.0)
        assert rows[name]["scanned"] == 1500
    for name in ("faiss-ivf", "place-event", "place-event-selector",  # exact over what each
                 "place-event-codes-selector"):                           # searches
        assert rows[name]["recall_searched"] == pytest.approx(1.0)
        assert rows[name]["scanned"] < 1500 + 1500
    # what a read touches: a full scan every float32 row; the coded read less than the plain one
    assert rows["numpy"]["bytes_per_read"] == 1500 * 16 * 4
    assert 0 < rows["place-event-codes-selector"]["bytes_per_read"] < (
        rows["place-event"]["bytes_per_read"])
    for name in ("faiss-ivf-fp16", "place-event-fp16"):  # float16 frames: only the borderline
        assert rows[name]["recall_searched"] >= 0.95  # frames may fall below the threshold
    assert set(bench.PEER_TARGETS) <= set(report["targets"])
    text = bench.format_report(report)
    assert report["machine"]["processor"] in text.splitlines()[0]  # the ratios depend on it
    assert "faiss IndexIVFFlat" in text and "Place Event Memory, float16 / faiss IVF" in text
    assert "Place Event Memory / faiss IndexHNSWFlat" in text and "in batches" in text
    lines = text.splitlines()
    header = next(line for line in lines if line.startswith("method"))
    table = lines[lines.index(header) + 1:lines.index(header) + 1 + len(rows)]
    end = header.index("median ms") + len("median ms")
    for line, row in zip(table, report["peers"], strict=True):  # every row in the columns
        assert line[:end].rstrip().endswith(f"{row['ms_median']:.3f}"), line


def test_cold_caches_sweep_before_every_timed_read_and_leave_the_peer_bars_unjudged(
    monkeypatch,
):
    pytest.importorskip("faiss")
    sweeps, timed_reads = [], []
    interleaved = bench._time_queries_interleaved

    def counted(reads, queries, label, progress, sweep=None):
        timed_reads.append(len(reads) * len(queries))
        return interleaved(reads, queries, label, progress,
                           None if sweep is None else lambda: sweeps.append(sweep()))

    monkeypatch.setattr(bench, "_time_queries_interleaved", counted)
    config = bench.MemoryBenchConfig(
        frames=1500, queries=4, dim=16, memories=("place-event-codes",), peers=("faiss",),
        top_ks=(30,), recall_queries=4, cold_caches_mib=1,
    )
    report = bench.run_memory_benchmark(config, progress=False)
    assert len(timed_reads) == 2  # one query at a time, then in batches
    assert len(sweeps) == sum(timed_reads)  # one sweep before every timed read
    assert sweeps[0] == 2**20 // 4  # the sum of 1 MiB of float32 ones: every value read
    assert not set(bench.PEER_TARGETS) & set(report["targets"])
    assert "Cold caches: 1 MiB read before each timed read" in bench.format_report(report)
    assert bench.cold_caches_mib({"L1d": 48 * 2**10, "L2": 2 * 2**20, "L3": 480 * 2**20}) == 960
    assert bench.cold_caches_mib({}) == 1024


def test_the_ef_search_chosen_is_the_smallest_tried_that_reaches_the_recall():
    class Index:  # recall 1 from efSearch 100 on, else 0
        class hnsw:
            efSearch = 0

        def range_search(self, queries, threshold):
            found = [0] if self.hnsw.efSearch >= 100 else []
            return None, None, np.asarray(found)

    full = [{0}]
    chosen = bench._choose_ef_search(Index(), np.zeros((1, 4), np.float32), 0.2, full, aim=1.0)
    assert 100 <= chosen <= 100 + 100 // 8
    assert bench._choose_ef_search(Index(), np.zeros((1, 4), np.float32), 0.2, full, 0.0) == 16


def test_a_target_is_judged_only_at_the_set_up_it_is_meant_for():
    target = bench.Target({100_000: 0.5, 1_000_000: 1.5}, at_most=True)
    assert target.judge(0.6, 100_000, 512)["met"] is False
    assert target.judge(1.0, 1_000_000, 512)["met"] is True
    for frames, dim in ((5000, 512), (100_000, 16)):
        judged = target.judge(0.6, frames, dim)
        assert judged["met"] is None and judged["bar"] == 0.5
        line = bench.format_target("read", judged, frames, dim)
        assert "MISSED" not in line and "no verdict" in line
        assert "100,000 or 1,000,000 frames of 512 dims" in line
    anywhere = bench.Target({1_000_000: 15.0, None: 30.0}, at_most=True, dim=None)
    assert anywhere.judge(20.0, 5000, 16)["met"] is True
    assert anywhere.judge(20.0, 1_000_000, 512)["met"] is False
    assert "MISSED" in bench.format_target("write", anywhere.judge(20.0, 1_000_000, 512),
                                           1_000_000, 512)


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
