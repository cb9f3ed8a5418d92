"""`mrsteve worlds`: list the world recipes (the paper's maps and the test terrains)."""

from __future__ import annotations

import json
from typing import Annotated

import typer

EXAMPLES = """Examples:

  mrsteve worlds

  mrsteve worlds --json"""


def command(
    json_output: Annotated[
        bool, typer.Option("--json", help="Print a JSON list of {name, size, description}.")
    ] = False,
) -> None:
    """List the worlds: name, size in blocks (x by z, the wall ring included; "unbounded" for
    worlds generated as the player walks) and description."""
    from mrsteve.world.recipes import WORLD_RECIPES

    rows = [
        {"name": recipe.name, "size": None if recipe.size is None else list(recipe.size),
         "description": recipe.description}
        for recipe in WORLD_RECIPES.values()
    ]
    if json_output:
        typer.echo(json.dumps(rows, indent=2))
        return
    sizes = ["unbounded" if row["size"] is None else "{} x {}".format(*row["size"])
             for row in rows]
    name_width = max(len("name"), *(len(row["name"]) for row in rows))
    size_width = max(len("size"), *(len(size) for size in sizes))
    typer.echo(f"{'name':<{name_width}}  {'size':<{size_width}}  description")
    for row, size in zip(rows, sizes, strict=True):
        typer.echo(f"{row['name']:<{name_width}}  {size:<{size_width}}  {row['description']}")
