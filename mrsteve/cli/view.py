"""`mrsteve view`: one HTML page of an episode: the map, the memory, its reads, the timeline."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from mrsteve.cli.output import check_outputs, fail, writing_results

EXAMPLES = """Examples:

  mrsteve demo && mrsteve view runs/demo-water-log-water-mrsteve-seed0

  mrsteve eval aba-sparse --task water-log-water --episodes 3 --trace --out runs/aba

  mrsteve view runs/aba --episode 2 --out aba-2.html"""


def command(
    run: Annotated[Path, typer.Argument(
        help="A demo's folder, a run folder made with --trace, or a trace file (.json.gz).",
        show_default=False)],
    episode: Annotated[int | None, typer.Option(
        help="Which of a run folder's traces (as `mrsteve view RUN` lists them); required when "
             "it holds several.", show_default=False)] = None,
    out: Annotated[Path | None, typer.Option(
        help="Write the page here (default: view.html in a demo's folder, "
             "views/<trace>.html in a run folder, <trace>.html beside a trace file).",
        show_default=False)] = None,
) -> None:
    """Write one self-contained HTML page of an episode: the top-down map with the path
    coloured by the agent's mode, the place cells and event clusters its memory holds at the
    end, every memory read (its target and matches), the timeline of modes, tasks and reads, a
    thumbnail of the view at each large event cluster, and the reads as a table."""
    from mrsteve.eval.trace import find_traces, read_trace
    from mrsteve.eval.view import render_page, view_path

    try:
        traces = find_traces(run)
        if episode is None and len(traces) > 1:
            listing = "\n".join(f"  {number}: {path.name}" for number, path in enumerate(traces))
            raise ValueError(f"{run} holds {len(traces)} traces; choose one with --episode N:\n"
                             f"{listing}")
        number = 0 if episode is None else episode
        if not 0 <= number < len(traces):
            raise ValueError(f"--episode must be between 0 and {len(traces) - 1} ({run} holds "
                             f"{len(traces)} trace{'s' * (len(traces) > 1)}), got {number}")
        source = traces[number]
        data = read_trace(source)
    except ValueError as error:
        raise fail(str(error)) from None
    target = out if out is not None else view_path(run, source)
    if target.resolve() == source.resolve():
        raise fail(f"--out {target} is the trace itself: write the page elsewhere")
    check_outputs([target])
    from mrsteve.fileio import atomic_path

    with writing_results(), atomic_path(target) as temporary:
        temporary.write_text(render_page(data), encoding="utf-8")
    typer.echo(f"wrote {target}")
