"""Small helpers shared by the subcommands: JSON results files and errors for the user."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

import typer


def write_json(path: Path, payload: Any) -> None:
    """Write ``payload`` as JSON to ``path`` atomically (a crash never leaves half a file)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(payload, handle, indent=2, sort_keys=False)
            handle.write("\n")
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def fail(message: str) -> typer.Exit:
    """Print ``message`` as an error and return the exit to raise (``raise fail(...)``)."""
    typer.secho(f"error: {message}", err=True, fg=typer.colors.RED)
    return typer.Exit(code=2)
