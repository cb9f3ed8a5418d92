"""Looking things up by name, with one error message for names that do not exist.

Every registry of the package (worlds, agents, memories, tasks, prompts, experiments, ...) reports
an unknown name the same way: ``unknown <what> 'x'; known: a, b, c``.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import TypeVar

T = TypeVar("T")


def unknown_name(what: str, name: object, known: Iterable[str]) -> ValueError:
    """The error for ``name`` not among ``known`` (a ``ValueError`` to raise)."""
    return ValueError(f"unknown {what} {name!r}; known: {', '.join(map(str, known))}")


def lookup(table: Mapping[str, T], name: str, what: str) -> T:
    """``table[name]``, or a ``ValueError`` naming ``what`` and the known names."""
    try:
        return table[name]
    except (KeyError, TypeError):
        raise unknown_name(what, name, table) from None


def check_name(name: str, known: Iterable[str], what: str) -> str:
    """``name`` if it is one of ``known``, else a ``ValueError`` listing them."""
    known = list(known)
    if name not in known:
        raise unknown_name(what, name, known)
    return name


def choose(value: str, known: Sequence[str], what: str, *, allow_all: bool = True) -> list[str]:
    """The names in ``value`` (comma-separated, or ``all`` for every known one), in the order
    given; an unknown or empty choice raises a ``ValueError`` listing the valid ones, and a name
    given twice one naming it."""
    if allow_all and value.strip() == "all":
        return list(known)
    picked = [part.strip() for part in value.split(",") if part.strip()]
    if not picked:
        raise unknown_name(what, value, [*known, *(["all"] if allow_all else [])])
    for index, name in enumerate(picked):
        if name not in known:
            raise unknown_name(what, name, [*known, *(["all"] if allow_all else [])])
        if name in picked[:index]:
            raise ValueError(f"{what} {name!r} is given twice in {value!r}")
    return picked
