"""`mrsteve bench world`: steps per second, reset time, start-up and memory of the embedded world."""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated

import typer

from mrsteve.cli.output import check_outputs, fail, write_json, writing_results
from mrsteve.workers import BLAS_THREAD_VARIABLES

EXAMPLES = """Examples:

  mrsteve bench world --worlds map1 --sizes 64x64

  mrsteve bench world --worlds map1,flat --steps 200 --json world.json

  mrsteve bench world --renderer-only --sizes 64x64,160x256 --no-first-frame

  mrsteve bench world --worlds plains_unbounded --memory-walk-steps 500000"""

SINGLE_THREAD_ENV = {"NUMBA_NUM_THREADS": "1", **dict.fromkeys(BLAS_THREAD_VARIABLES, "1")}
"""One thread for numba, OpenMP and BLAS: the benchmark's targets are per core."""


def command(
    worlds: Annotated[
        str, typer.Option(help="Comma-separated world recipes (`mrsteve worlds`), or 'all'.")
    ] = "all",
    steps: Annotated[
        int, typer.Option(min=1, help="Timed environment steps (and renderer frames) per world and size.")
    ] = 500,
    sizes: Annotated[
        str,
        typer.Option(help="Comma-separated observation sizes HxW; 'default' is the environment's."),
    ] = "64x64,default,160x256",
    renderer_only: Annotated[
        bool, typer.Option("--renderer-only", help="Measure the renderer alone (frames per second).")
    ] = False,
    peer: Annotated[
        bool, typer.Option("--peer/--no-peer", help="Step the crafter package as a peer, if installed.")
    ] = True,
    first_frame: Annotated[
        bool, typer.Option("--first-frame/--no-first-frame", help="Time a new process's first frame.")
    ] = True,
    seed: Annotated[int, typer.Option(min=0, help="Seed of the worlds and the random policy.")] = 0,
    walk_steps: Annotated[
        int, typer.Option(min=0, help="Timed steps of a walker on each unbounded world and on the "
                                      "200 x 200 map, compared in the same run (0: skip).")
    ] = 3000,
    memory_walk_steps: Annotated[
        int, typer.Option(min=0, help="Steps of a long walk sampling the resident memory on each "
                                      "unbounded world (0: skip; 500000 covers about 100K blocks).")
    ] = 0,
    json_path: Annotated[
        Path | None, typer.Option("--json", help="Also write the results as JSON to this file.")
    ] = None,
    progress: Annotated[bool, typer.Option("--progress/--no-progress", help="Show a progress bar.")] = True,
) -> None:
    """Measure the embedded world on one core against the package's speed targets: environment
    steps per second with a random policy, renderer frames per second, reset time, first frame in
    a new process, memory per environment, and crafter as a peer in the same run."""
    if "numba" not in sys.modules:  # they act only before numba and numpy load
        for name, value in SINGLE_THREAD_ENV.items():
            os.environ.setdefault(name, value)
    from mrsteve.bench import world as bench

    try:
        config = bench.WorldBenchConfig(
            worlds=bench.parse_worlds(worlds), sizes=bench.parse_sizes(sizes), steps=steps,
            renderer_only=renderer_only, peer=peer, first_frame=first_frame, seed=seed,
            walk_steps=walk_steps, memory_walk_steps=memory_walk_steps,
        )  # fmt: skip
    except ValueError as error:
        raise fail(str(error)) from None
    check_outputs([json_path])

    from tqdm import tqdm

    with tqdm(total=bench.count_jobs(config), disable=not progress, unit="job") as bar:

        def advance(description: str) -> None:
            bar.set_postfix_str(description)
            bar.update()

        report = bench.run_world_bench(config, on_job=advance)
    typer.echo(bench.format_report(report))
    if json_path is not None:
        with writing_results():
            write_json(json_path, report)
        typer.echo(f"wrote {json_path}")

