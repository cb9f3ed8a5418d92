"""`mrsteve bench memory`: the paper's memory query-time experiment, on one CPU core, with peers
(faiss) on the same frames and a long run at a capacity."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer

from mrsteve.cli.output import check_outputs, fail, write_json, writing_results
from mrsteve.naming import check_name
from mrsteve.workers import one_blas_thread

EXAMPLES = """Examples:

  mrsteve bench memory --frames 20000 --queries 200

  mrsteve bench memory --memory fifo --memory place-event --json memory.json

  mrsteve bench memory --long-run --frames 200000 --capacity 20000"""


def command(
    frames: Annotated[
        int | None,
        typer.Option(
            "--frames",
            help="Trajectory length: frames stored (default 100,000), or with --long-run frames "
            "written (default 1,000,000).",
        ),
    ] = None,
    queries: Annotated[int, typer.Option("--queries", help="Reads per memory and top-k.")] = 1000,
    dim: Annotated[int, typer.Option("--dim", help="Embedding size (MineCLIP: 512).")] = 512,
    seed: Annotated[
        int, typer.Option("--seed", min=0, help="Seed of the trajectory and the queries.")
    ] = 0,
    memory: Annotated[
        list[str] | None,
        typer.Option(
            "--memory",
            help="Benchmark only these (repeatable): the memory variants fifo, place, event, "
            "place-event and center-embed, place-event-fp16 (Place Event Memory with float16 "
            "frames) and place-event-codes (with int8 codes beside its frames). Default: all.",
        ),
    ] = None,
    peers: Annotated[
        list[str] | None,
        typer.Option(
            "--peers",
            help="Also measure these libraries on the same frames and queries (repeatable): "
            "faiss (IndexFlatIP, IndexIVFFlat and IVF with float16 vectors, and IndexHNSWFlat "
            "with efSearch chosen for at least Place Event Memory's recall; range search one "
            "query at a time and in batches, with a numpy full scan, and the bytes each read "
            "touches; against Place Event Memory with float32 and float16 frames, and read as "
            "the mode selector reads, with and without frame codes). "
            "Needs pip install 'mrsteve[bench]'.",
        ),
    ] = None,
    cold_caches: Annotated[
        bool,
        typer.Option(
            "--cold-caches",
            help="With --peers: before each timed read of the peer table, read twice the "
            "processor's last-level cache (1 GiB where the system does not say), so every read "
            "starts from main memory, as on a machine whose caches hold little of the frames "
            "(the times then include the code's own cache misses; the peer bars are judged "
            "only without it). Each read then costs a sweep: use with --queries 200.",
        ),
    ] = False,
    long_run: Annotated[
        bool,
        typer.Option(
            "--long-run",
            help="Instead: write --frames frames (default here 1,000,000) into a Place Event "
            "Memory with --capacity, sampling read time and cluster count along the way.",
        ),
    ] = False,
    capacity: Annotated[
        int, typer.Option("--capacity", help="Capacity of the memory in --long-run.")
    ] = 20_000,
    json_path: Annotated[
        Path | None, typer.Option("--json", help="Also write the results to this JSON file.")
    ] = None,
    progress: Annotated[
        bool, typer.Option("--progress/--no-progress", help="Show progress bars.")
    ] = True,
) -> None:
    """Build FIFO, Place, Event, Place Event, Center Embed (Place Event keeping only event
    centres), Place Event (float16 frames) and Place Event (int8 frame codes) memories from one
    synthetic trajectory, then time reads for top-k in {1, 2, 4, 10, 30}: ms per query, frames
    scored, bytes touched, clusters, write cost per frame and bytes per frame, beside the paper's
    numbers (Appendix "Computational Complexity of Query Operation"). With --peers faiss,
    faiss's flat, IVF and HNSW indexes and a numpy full scan answer the same range queries on
    the same frames (times, build times, recalls). Each target is judged only at the set-up it
    is meant for (the read's and the peers' at 100,000 frames of 512 dims); other runs print
    the figure without a verdict. With --long-run, a capacity-limited Place Event Memory is
    followed over a long episode. numpy's BLAS (and faiss) are pinned to one thread, so the
    numbers are one core's. The report names the processor and its caches, since the ratios to
    faiss depend on the machine (the same read as the selector reads, with frame codes, has
    measured 0.48-0.50x faiss IVF on a processor with a 480 MiB last-level cache and
    0.59-0.62x on another; --cold-caches shows the read from main memory)."""
    if frames is None:
        frames = 1_000_000 if long_run else 100_000
    for name, value, least in (
        ("--frames", frames, 1),
        ("--queries", queries, 1),
        ("--dim", dim, 1),
        ("--capacity", capacity, 1),
    ):
        if value < least:
            raise fail(f"{name} must be >= {least}, got {value}")

    from mrsteve.bench import memory as bench
    from mrsteve.bench.machine import cpu_caches

    one_blas_thread()

    try:
        for name in memory or ():
            check_name(name, bench.MEMORIES, "--memory")
        for name in peers or ():
            check_name(name, bench.PEERS, "--peers")
    except ValueError as error:
        raise fail(str(error)) from None
    if cold_caches and (long_run or not peers):
        raise fail("--cold-caches times the peer table's reads: give --peers faiss (and no "
                   "--long-run)")
    check_outputs([json_path])
    selected = tuple(name for name in bench.MEMORIES if not memory or name in memory)
    copies = 2 + (2 if long_run else len(selected) + 2 * len(peers or ()))
    cold_mib = bench.cold_caches_mib(cpu_caches()) if cold_caches else 0
    check_memory_needed(frames, dim, copies, sweep_bytes=cold_mib * 2**20)

    if long_run:
        config = bench.LongRunConfig(
            frames=frames,
            capacity=capacity,
            dim=dim,
            seed=seed,
        )
        report = bench.run_long_run(config, progress=progress)
        text = bench.format_long_run(report)
    else:
        config = bench.MemoryBenchConfig(
            frames=frames,
            queries=queries,
            dim=dim,
            seed=seed,
            memories=selected,
            peers=tuple(peers or ()),
            cold_caches_mib=cold_mib,
        )
        try:
            report = bench.run_memory_benchmark(config, progress=progress)
        except bench.MissingPeer as error:
            raise fail(str(error)) from None
        text = bench.format_report(report)
    typer.echo(text)
    if json_path is not None:
        with writing_results():
            write_json(json_path, report)


def check_memory_needed(frames: int, dim: int, copies: int, sweep_bytes: int = 0) -> None:
    """Exit with one line, before any work, when ``copies`` float32 arrays of ``frames`` x
    ``dim`` (the trajectory, the memories and the peers' indexes: a lower bound of what the
    benchmark holds) and ``sweep_bytes`` (the buffer of ``--cold-caches``) exceed the memory
    this machine has available."""
    needed = frames * dim * 4 * copies + sweep_bytes
    available = available_memory()
    if available is not None and needed > available:
        sweep = " and the --cold-caches sweep" if sweep_bytes else ""
        raise fail(f"--frames {frames:,} x --dim {dim:,} needs at least {needed / 2**30:,.1f} GiB "
                   f"of memory ({copies} float32 copies: the trajectory, the memories and the "
                   f"peers' indexes{sweep}); this machine has {available / 2**30:,.1f} GiB "
                   "available: give fewer frames, a smaller --dim or fewer --memory/--peers")


def available_memory() -> int | None:
    """Bytes of memory available to a new process (``MemAvailable``; ``None`` if unknown)."""
    try:
        with open("/proc/meminfo", encoding="ascii") as meminfo:
            for line in meminfo:
                if line.startswith("MemAvailable:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    try:
        return os.sysconf("SC_AVPHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, AttributeError):
        return None
