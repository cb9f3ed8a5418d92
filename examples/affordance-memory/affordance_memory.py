"""Affordance Memory: Place Event Memory that keeps, beside each event, what it afforded.

A memory plug-in for ``mrsteve`` (docs/plugins.md). Each time a read answers a query, the events
whose frames it returned are labelled with that query (an *affordance*: this event was where
"near water" was found), so the memory can say which events served which tasks:
:meth:`AffordanceMemory.affordances`. The labels are the state WISE-like research starts from (a
read that tries the labelled events first, an eviction that spares them); this memory keeps them
and reads as Place Event Memory does, so its agent solves the same tasks as MrSteve.
"""

from __future__ import annotations

import hashlib

import numpy as np

from mrsteve.agent.registry import AgentSpec
from mrsteve.memory import MemoryRead, MemoryVariant, PlaceEventMemory


def query_label(query: np.ndarray) -> str:
    """A short stable name of a query vector (its rounded values' digest)."""
    rounded = np.round(np.asarray(query, np.float32), 4).tobytes()
    return hashlib.sha256(rounded).hexdigest()[:8]


class AffordanceMemory(PlaceEventMemory):
    """Place Event Memory with an affordance label per event (module docstring). It takes the
    same hyperparameters (``Config``) as Place Event Memory."""

    def __init__(self, capacity=None, *, dim=None, **hyperparameters):
        super().__init__(capacity, dim=dim, **hyperparameters)
        self._affordances: dict[tuple[int, int], set[str]] = {}

    def read(self, query, threshold, **options) -> MemoryRead:
        found = super().read(query, threshold, **options)
        if len(found):
            label = query_label(query)
            cells = np.floor(found.pose[:, [0, 2]] / self.config.cell_size).astype(int)
            for cell in {tuple(int(v) for v in row) for row in cells}:
                self._affordances.setdefault(cell, set()).add(label)
        return found

    def clear(self) -> None:
        super().clear()
        self._affordances = {}

    def affordances(self) -> dict[tuple[int, int], frozenset[str]]:
        """The place cells ``(x, z)`` whose events answered a read, and the queries' labels."""
        return {cell: frozenset(labels) for cell, labels in self._affordances.items()}


MEMORY = MemoryVariant("affordance", "Affordance", AffordanceMemory,
                       description="Place Event Memory labelling each event with what it "
                                   "afforded")
"""The memory's registry entry (the entry-point group "mrsteve.memories")."""

AGENT = AgentSpec("affordance", "MrSteve over Affordance Memory", "affordance")
"""An agent running it under MrSteve's loop (the entry-point group "mrsteve.agents")."""
