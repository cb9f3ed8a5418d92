"""`mrsteve bench memory`: placeholder until its issue lands."""

from mrsteve.cli.output import fail


def command() -> None:
    """Not built yet."""
    raise fail("'bench memory' is not built yet")
