"""`mrsteve worlds`: placeholder until its issue lands."""

from mrsteve.cli.output import fail


def command() -> None:
    """Not built yet."""
    raise fail("'worlds' is not built yet")
