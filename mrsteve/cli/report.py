"""`mrsteve report`: the results page of run folders, as Markdown."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from mrsteve.cli.output import check_outputs, fail, writing_results

EXAMPLES = """Examples:

  mrsteve report runs/eval-aba-sparse-20261126-101500

  mrsteve report runs/aba.json

  mrsteve report results/* --out docs/results.md

  mrsteve report results/long-instruction --add-seeds"""


def command(
    folders: Annotated[list[Path], typer.Argument(
        help="Runs: run folders (mrsteve eval --out DIR) or summary files (--json PATH).",
        show_default=False)],
    out: Annotated[Path | None, typer.Option(help="Write the page here (default: print it).")
                   ] = None,
    add_seeds: Annotated[bool, typer.Option(
        "--add-seeds", help="First add each episode's value by seed to the runs' summaries that "
        "lack it (written before summaries kept it), from the episode records beside them, so "
        "their groups are compared seed by seed; refused, with no file changed, where records "
        "do not give their summary's count, mean and standard error.")] = False,
) -> None:
    """Write the results page of runs: first MrSteve against its baseline per experiment (the
    paper's ordering holds where the lead exceeds two standard errors), then per run the command
    and commit that made it, the parts that ran and the experiment's table beside the paper's
    figures, a link to the folder's NOTES.md, and whether the run is stale (other weights or
    data files than those installed) or at ceiling (every agent at 100 %)."""
    from mrsteve.eval.report import add_values_by_seed, report

    check_outputs([out])
    try:
        if add_seeds:
            for change in add_values_by_seed(folders):
                typer.echo(change, err=True)
        page = report(folders, out)
    except ValueError as error:
        raise fail(str(error)) from None
    if out is None:
        typer.echo(page, nl=False)
        return
    from mrsteve.fileio import atomic_path

    with writing_results(), atomic_path(out) as temporary:
        temporary.write_text(page, encoding="utf-8")
    typer.echo(f"wrote {out}", err=True)
