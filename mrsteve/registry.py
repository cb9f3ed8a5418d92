"""One registry per kind of part, as Gymnasium's registration: specs by name, and plug-ins.

Every kind of part the agents are made of (memories, encoders, navigators, explorers,
instruction policies, planners) and the agents themselves has one :class:`Registry`: a
read-only mapping of specs by name with :meth:`~Registry.register`, :meth:`~Registry.spec` and
:meth:`~Registry.make`. A spec is a frozen dataclass with a ``name``, a one-line
``description`` and a ``make(...)`` that builds the part; it carries everything the rest of the
package asks of the part (the data files it loads, its weights, the observations it reads, its
row in the paper's tables), so that no code outside a registry tells parts apart by name.

Other packages add parts without editing this one: a distribution declares entry points in the
kind's group (:attr:`Registry.group`: ``mrsteve.memories``, ``mrsteve.agents``, ...), each naming
a spec, or a function of no arguments returning one spec or several::

    [project.entry-points."mrsteve.memories"]
    affordance = "affordance_memory:memory_variant"

They are loaded the first time the registry is read, each checked by the kind's checker (a
memory is built and written and read, as Gymnasium's environment checker steps an environment);
one that breaks its kind's protocol is refused, with one line saying why, and naming it later
says so again. From then on a plug-in is a part like the built-in ones: every command and
experiment accepts it, and records, run specs and tables name it.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Iterator, Mapping
from importlib import metadata
from typing import Any, Generic, TypeVar

from mrsteve.naming import unknown_name

S = TypeVar("S")

Checker = Callable[[Any], None]
"""What a registry runs on each plug-in spec: it raises ``ValueError`` (one line) if the spec,
or the part it builds, breaks the kind's protocol."""


class Registry(Mapping[str, S], Generic[S]):
    """The specs of one kind of part by name (module docstring). ``kind`` names the kind in
    messages (``memory``), ``group`` is the entry-point group plug-ins register in, ``specs`` the
    built-in entries (in the order listings show them) and ``check`` the kind's checker."""

    def __init__(self, kind: str, group: str, specs: Iterable[S] = (),
                 check: Checker | None = None) -> None:
        self.kind = kind
        self.group = group
        self._check = check
        self._specs: dict[str, S] = {}
        self._refused: dict[str, str] = {}
        self._plugins: set[str] = set()
        self._plugins_loaded = False
        for spec in specs:
            self._add(spec, replace=False)

    # -- registration ----------------------------------------------------------------------------

    def register(self, spec: S, *, replace: bool = False) -> S:
        """Add ``spec`` (checked by the kind's checker); a name already taken is refused unless
        ``replace``. Returns the spec."""
        self._load_plugins()
        if self._check is not None:
            self._check(spec)
        return self._add(spec, replace=replace)

    def unregister(self, name: str) -> None:
        """Remove the entry called ``name`` (a plug-in's, or one :meth:`register` added)."""
        self._load_plugins()
        del self._specs[self._name_known(name)]

    def _add(self, spec: S, *, replace: bool) -> S:
        name = getattr(spec, "name", None)
        if not isinstance(name, str) or not name.strip() or "," in name:
            raise ValueError(f"a {self.kind} spec needs a name (a non-empty string without "
                             f"commas), got {name!r}")
        if name in self._specs and not replace:
            raise ValueError(f"{self.kind} {name!r} is registered already: choose another name "
                             "(or register with replace=True)")
        self._specs[name] = spec
        self._refused.pop(name, None)
        return spec

    # -- lookup ----------------------------------------------------------------------------------

    def spec(self, name: str) -> S:
        """The spec called ``name``; an unknown name is a ``ValueError`` listing the known ones
        (and saying why, for a plug-in that was refused)."""
        return self._specs[self._name_known(name)]

    def make(self, name: str, *args: Any, **kwargs: Any) -> Any:
        """A new part: ``spec(name).make(*args, **kwargs)``."""
        return self.spec(name).make(*args, **kwargs)

    def _name_known(self, name: str) -> str:
        self._load_plugins()
        if isinstance(name, str) and name in self._specs:
            return name
        if isinstance(name, str) and name in self._refused:
            raise ValueError(f"{self.kind} {name!r} was refused: {self._refused[name]}")
        raise unknown_name(self.kind, name, self._specs)

    def __getitem__(self, name: str) -> S:
        self._load_plugins()
        return self._specs[name]

    def __iter__(self) -> Iterator[str]:
        self._load_plugins()
        return iter(list(self._specs))

    def __len__(self) -> int:
        self._load_plugins()
        return len(self._specs)

    def __contains__(self, name: object) -> bool:
        self._load_plugins()
        return name in self._specs

    def __repr__(self) -> str:
        return f"Registry({self.kind!r}, {list(self._specs)})"

    @property
    def refused(self) -> Mapping[str, str]:
        """The plug-ins refused, by entry-point name: why."""
        self._load_plugins()
        return dict(self._refused)

    # -- plug-ins --------------------------------------------------------------------------------

    def _load_plugins(self) -> None:
        """Register the specs of the entry points in :attr:`group`, once."""
        if self._plugins_loaded:
            return
        self._plugins_loaded = True
        for point in sorted(metadata.entry_points(group=self.group), key=lambda p: p.name):
            try:
                for spec in self._specs_of(point.load()):
                    if self._check is not None:
                        self._check(spec)
                    self._plugins.add(self._add(spec, replace=False).name)
            except Exception as error:  # noqa: BLE001 (a plug-in's fault is reported, not raised)
                reason = " ".join(str(error).split()) or type(error).__name__
                where = getattr(point, "dist", None)
                origin = f" (from {where.name})" if where is not None else ""
                self._refused[point.name] = f"{point.value}{origin}: {reason}"
                print(f"mrsteve: the {self.kind} plug-in {point.name!r}{origin} is refused: "
                      f"{reason}", file=sys.stderr)

    def reload_plugins(self) -> None:
        """Forget the plug-ins loaded and load the entry points again (after installing one)."""
        for name in self._plugins:
            self._specs.pop(name, None)
        self._plugins.clear()
        self._refused.clear()
        self._plugins_loaded = False

    @staticmethod
    def _specs_of(loaded: Any) -> list[Any]:
        """The specs an entry point gives: a spec, or a function returning one or several."""
        if callable(loaded) and not hasattr(loaded, "name"):
            loaded = loaded()
        return [loaded] if hasattr(loaded, "name") else list(loaded)
