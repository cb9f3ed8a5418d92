"""Small helpers shared by the subcommands: outputs checked before the work, JSON results files,
and errors for the user (one line each, never a traceback)."""

from __future__ import annotations

import errno
import os
import shlex
import signal
import sys
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import typer

from mrsteve.fileio import write_json

__all__ = ["Terminated", "check_outputs", "fail", "fail_on_os_error", "literal_paragraphs",
           "resume_hint", "terminate_as_interrupt", "write_json", "writing_results"]


def literal_paragraphs(text: str) -> str:
    """``text`` (a help epilog: paragraphs between blank lines) marked so that the help prints
    each paragraph as written (Click's ``\\b``): example command lines are never broken."""
    return "\n\n".join(paragraph if paragraph.startswith("\b") else f"\b\n{paragraph}"
                       for paragraph in text.split("\n\n"))


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


def resume_hint(out: Path | None, json_path: Path | None, *, code: int = 130) -> typer.Exit:
    """What an interrupted sweep prints (how many episodes its records hold, and how to resume
    them) and the exit to raise with ``code`` (130: Ctrl-C, 143: SIGTERM)."""
    recorded = recorded_episodes(out, json_path)
    how = "interrupted" if code == 130 else "terminated"
    if recorded:
        where = out if out is not None else json_path
        said = (f"{how}: {recorded} finished episode{'s' * (recorded > 1)} recorded in {where}; "
                f"run {_same_command(out, json_path)} to resume")
    else:
        said = (f"{how} before the first episode finished: none is recorded; run "
                f"{_same_command(out, json_path)} to start again")
    typer.secho(said, err=True, fg=typer.colors.YELLOW)
    return typer.Exit(code=code)


def recorded_episodes(out: Path | None, json_path: Path | None) -> int:
    """The episodes recorded in a run folder's (or a ``--json`` run's) records files."""
    if out is not None:
        files = Path(out).glob("*.episodes.jsonl")
    elif json_path is not None:
        files = Path(json_path).parent.glob(f"{Path(json_path).stem}.*episodes.jsonl")
    else:
        return 0
    count = 0
    for path in files:
        try:
            with path.open("rb") as records:
                count += sum(1 for line in records if line.strip())
        except OSError:
            continue
    return count


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


class Terminated(KeyboardInterrupt):
    """SIGTERM, raised in the main process as an interrupt is (:func:`terminate_as_interrupt`)."""


@contextmanager
def terminate_as_interrupt() -> Iterator[None]:
    """Within the block, SIGTERM stops this process as Ctrl-C does (:class:`Terminated`), so a
    sweep's workers are stopped and its records closed; processes forked inside the block keep
    SIGTERM's default (a pool terminates its workers with it)."""
    main = os.getpid()

    def interrupt(signum: int, frame: Any) -> None:
        if os.getpid() != main:  # a forked worker: die as SIGTERM asks
            signal.signal(signal.SIGTERM, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGTERM)
            return
        raise Terminated

    try:
        previous = signal.signal(signal.SIGTERM, interrupt)
    except ValueError:  # not the main thread: SIGTERM keeps its handler
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)
