"""`mrsteve bench world`: placeholder until its issue lands."""

from mrsteve.cli.output import fail


def command() -> None:
    """Not built yet."""
    raise fail("'bench world' is not built yet")
