"""`mrsteve bench memory`: the paper's memory query-time experiment, on one CPU core."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from mrsteve.cli.output import fail, write_json

_BLAS_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
_MEMORY_NAMES = ("fifo", "place", "event", "place-event", "place-event-centre")


def _pin_blas_to_one_thread() -> bool:
    """Ask the BLAS for one thread; it reads this when numpy loads, so it works only if numpy is
    not loaded yet (true when the command runs from the ``mrsteve`` entry point)."""
    if "numpy" not in sys.modules:
        for variable in _BLAS_THREAD_VARIABLES:
            os.environ[variable] = "1"
    return all(os.environ.get(variable) == "1" for variable in _BLAS_THREAD_VARIABLES)


def command(
    frames: Annotated[
        int, typer.Option("--frames", help="Trajectory length (frames stored).")
    ] = 100_000,
    queries: Annotated[int, typer.Option("--queries", help="Reads per memory and top-k.")] = 1000,
    dim: Annotated[int, typer.Option("--dim", help="Embedding size (MineCLIP: 512).")] = 512,
    seed: Annotated[
        int, typer.Option("--seed", help="Seed of the trajectory and the queries.")
    ] = 0,
    memory: Annotated[
        list[str] | None,
        typer.Option(
            "--memory",
            help=f"Benchmark only these (repeatable): {', '.join(_MEMORY_NAMES)}. Default: all.",
        ),
    ] = None,
    json_path: Annotated[
        Path | None, typer.Option("--json", help="Also write the results to this JSON file.")
    ] = None,
    progress: Annotated[
        bool, typer.Option("--progress/--no-progress", help="Show progress bars.")
    ] = True,
) -> None:
    """Build FIFO, Place, Event, Place Event and Place Event (centre only) memories from one
    synthetic trajectory, then time reads for top-k in {1, 2, 4, 10, 30}: ms per query, frames
    scored, clusters, write cost per frame and bytes per frame, beside the paper's numbers
    (Appendix "Computational Complexity of Query Operation"). numpy's BLAS is pinned to one
    thread, so the numbers are one core's."""
    pinned = _pin_blas_to_one_thread()
    for name, value, least in (
        ("--frames", frames, 1),
        ("--queries", queries, 1),
        ("--dim", dim, 1),
    ):
        if value < least:
            raise fail(f"{name} must be >= {least}, got {value}")
    unknown = sorted(set(memory or ()) - set(_MEMORY_NAMES))
    if unknown:
        raise fail(f"unknown --memory {unknown}; choose from {', '.join(_MEMORY_NAMES)}")

    from mrsteve.bench.memory import MemoryBenchConfig, format_report, run_memory_benchmark

    selected = tuple(name for name in _MEMORY_NAMES if not memory or name in memory)
    config = MemoryBenchConfig(
        frames=frames, queries=queries, dim=dim, seed=seed, memories=selected
    )
    report = run_memory_benchmark(config, progress=progress)
    report["machine"]["blas_pinned_to_one_thread"] = pinned
    typer.echo(format_report(report))
    if not pinned:
        typer.secho(
            "warning: numpy was loaded before the benchmark could pin its BLAS to one thread",
            err=True,
            fg=typer.colors.YELLOW,
        )
    if json_path is not None:
        write_json(json_path, report)
