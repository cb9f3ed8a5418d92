"""What an agent is made of: the interfaces its parts plug into.

:class:`~mrsteve.agent.mrsteve.MrSteve` is one class for every agent of the paper because each part
is pluggable: the memory (:class:`mrsteve.memory.Memory`), the encoder
(:class:`mrsteve.perception.Encoder`), the explorer (:class:`mrsteve.control.explorers.Explorer`), the navigator
(:class:`mrsteve.control.navigation.Navigator`) and the instruction policy
(:class:`mrsteve.control.skills.InstructionPolicy`).
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

from mrsteve.control.navigation import Action, Observation

__all__ = ["Action", "Agent", "Observation"]


@runtime_checkable
class Agent(Protocol):
    """Anything the episode loop can run: given tasks one after another, acts every step."""

    name: str

    def reset(self, obs: Observation, rng: np.random.Generator) -> None:
        """Start a new episode (``obs`` is the first observation)."""

    def set_task(self, item: str, t: int) -> None:
        """A new task: obtain ``item`` (the paper's tasks are items checked in the inventory)."""

    def act(self, obs: Observation, t: int) -> Action:
        """The action for step ``t``."""
