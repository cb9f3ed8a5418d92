"""Looking things up by name, with one error message for names that do not exist.

Every registry of the package (worlds, agents, memories, tasks, prompts, experiments, ...) reports
an unknown name the same way: ``unknown <what> 'x'; known: a, b, c``.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
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


def choose(value: str, known: Sequence[str], what: str, *, allow_all: bool = True,
           all_means: Sequence[str] | None = None) -> list[str]:
    """The names in ``value`` (comma-separated, or ``all`` for every known one, or for
    ``all_means`` when given), in the order given; an unknown or empty choice raises a
    ``ValueError`` listing the valid ones, and a name given twice one naming it."""
    parts = [part.strip() for part in value.split(",")]
    picked = [part for part in parts if part]
    if picked and len(picked) < len(parts):
        raise ValueError(f"{what} {value!r} has an empty name between its commas: give names "
                         f"separated by single commas (e.g. {','.join(picked)})")
    if allow_all and picked == ["all"]:
        return list(known if all_means is None else all_means)
    if not picked:
        raise unknown_name(what, value, [*known, *(["all"] if allow_all else [])])
    for index, name in enumerate(picked):
        if allow_all and name == "all":
            raise ValueError(f"{what} 'all' stands for every one and takes no other names: give "
                             f"'all' alone, or some of {', '.join(known)} comma-separated")
        if name not in known:
            raise unknown_name(what, name, [*known, *(["all"] if allow_all else [])])
        if name in picked[:index]:
            raise ValueError(f"{what} {name!r} is given twice in {value!r}")
    return picked


class Selection(Mapping[str, T]):
    """The entries of a registry (a ``dict`` of entries by name) that ``keep`` accepts, read
    afresh at every use: an entry added to the registry later belongs to it too."""

    def __init__(self, registry: Mapping[str, T], keep: Callable[[T], bool]) -> None:
        self._registry, self._keep = registry, keep

    def __getitem__(self, name: str) -> T:
        entry = self._registry[name]
        if not self._keep(entry):
            raise KeyError(name)
        return entry

    def __iter__(self) -> Iterator[str]:
        return (name for name, entry in self._registry.items() if self._keep(entry))

    def __len__(self) -> int:
        return sum(1 for _ in self)

    def __repr__(self) -> str:
        return f"Selection({list(self)})"


def alternatives(names: Iterable[str]) -> str:
    """``a, b or c``: names to choose from, for a command's help."""
    names = list(names)
    return names[0] if len(names) == 1 else f"{', '.join(names[:-1])} or {names[-1]}"


def described(registry: Mapping[str, object]) -> str:
    """``a (what a is), b (...) or c (...)``: the names of ``registry`` with the one-line
    ``description`` of each entry, for a command's help."""
    return alternatives(f"{name} ({entry.description})" for name, entry in registry.items())


def entry_point(target: Callable[..., T] | str, what: str, extra: str | None = None
                ) -> Callable[..., T]:
    """The callable a registry entry names: itself, or the ``"package.module:name"`` it spells
    (imported only now, so that a part that needs an optional dependency costs nothing until it
    is chosen, as Gymnasium's ``entry_point``). A dependency that is not installed is a
    ``ValueError`` saying ``what`` needs it and, given the ``extra`` that brings it, how to
    install it."""
    if not isinstance(target, str):
        return target
    module, _, name = target.partition(":")
    try:
        return getattr(importlib.import_module(module), name)
    except ModuleNotFoundError as error:
        missing = (error.name or "").partition(".")[0]
        if not missing or missing == __name__.partition(".")[0]:
            raise
        install = f": pip install 'mrsteve[{extra}]'" if extra else ""
        raise ValueError(f"{what} needs {missing}, which is not installed{install}") from None
