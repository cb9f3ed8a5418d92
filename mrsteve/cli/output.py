"""Small helpers shared by the subcommands: outputs checked before the work, JSON results files,
and errors for the user (one line each, never a traceback)."""

from __future__ import annotations

import errno
import shlex
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

import typer

from mrsteve.fileio import write_json

__all__ = ["check_outputs", "fail", "fail_on_os_error", "resume_hint", "write_json",
           "writing_results"]


def fail(message: str) -> typer.Exit:
    """Print ``message`` as an error and return the exit to raise (``raise fail(...)``)."""
    typer.secho(f"error: {message}", err=True, fg=typer.colors.RED)
    return typer.Exit(code=2)


def check_outputs(files: Iterable[Path | None] = (), folder: Path | None = None) -> None:
    """Exit with one line naming the problem, before any work, if a file of ``files`` or the
    folder ``folder`` (and a file in it) cannot be written; nothing is created or changed."""
    from mrsteve.eval.options import check_outputs as check

    try:
        check(list(files), folder)
    except ValueError as error:
        raise fail(str(error)) from None


@contextmanager
def writing_results() -> Iterator[None]:
    """The final writes of a command: an output replaced or made read-only since it was checked
    (``ValueError`` from the atomic writer) or a full disk (``OSError``) ends in one line."""
    try:
        yield
    except ValueError as error:
        raise fail(str(error)) from None
    except OSError as error:
        raise fail_on_os_error(error) from None


def fail_on_os_error(error: OSError, *, resume: tuple[Path | None, Path | None] | None = None
                     ) -> typer.Exit:
    """The one-line error for an ``OSError`` met while writing results (a full disk, a folder
    made read-only meanwhile); ``resume``: the sweep's ``(--out, --json)``, to say how to go on."""
    if error.errno in (errno.ENOSPC, errno.EDQUOT):
        what = "the disk is full"
    else:
        what = f"{error.strerror or error}" + (f": {error.filename}" if error.filename else "")
    message = f"could not write the results ({what})"
    if resume is not None:
        message += ("; the episodes recorded so far are intact: free the space and run "
                    f"{_same_command(*resume)} to go on")
    return fail(message)


def resume_hint(out: Path | None, json_path: Path | None) -> typer.Exit:
    """What an interrupted sweep prints: where its records are and how to resume them."""
    typer.secho(f"interrupted: the finished episodes are recorded; run "
                f"{_same_command(out, json_path)} to resume", err=True, fg=typer.colors.YELLOW)
    return typer.Exit(code=130)


def _same_command(out: Path | None, json_path: Path | None) -> str:
    """This command line again, with the run folder (or --json) that holds its records."""
    given = {"--out", "--json"}
    cleaned, skip = [], False
    for argument in sys.argv[1:]:
        if skip:
            skip = False
            continue
        if argument in given:
            skip = True
            continue
        if argument.split("=", 1)[0] in given:
            continue
        cleaned.append(argument)
    where = ["--out", str(out)] if out is not None else ["--json", str(json_path)]
    return shlex.join(["mrsteve", *cleaned, *where])
