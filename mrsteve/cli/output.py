"""Small helpers shared by the subcommands: JSON results files and errors for the user."""

from __future__ import annotations

import typer

from mrsteve.fileio import write_json

__all__ = ["fail", "write_json"]


def fail(message: str) -> typer.Exit:
    """Print ``message`` as an error and return the exit to raise (``raise fail(...)``)."""
    typer.secho(f"error: {message}", err=True, fg=typer.colors.RED)
    return typer.Exit(code=2)
