"""What an agent is made of: the interfaces its parts plug into.

:class:`~mrsteve.agent.mrsteve.MrSteve` is one class for every agent of the paper because each part
is pluggable: the memory (:class:`mrsteve.memory.Memory`), the encoder
(:class:`mrsteve.perception.Encoder`), the explorer (:class:`mrsteve.control.explorers.Explorer`),
the navigator (:class:`mrsteve.control.navigation.Navigator`) and the instruction policy
(:class:`mrsteve.control.skills.InstructionPolicy`). Each part gets the environment's camera
(:class:`mrsteve.world.camera.Camera`, ``info["camera"]`` from ``env.reset``) when the episode
starts.
"""

from __future__ import annotations

from typing import Protocol, runtime_checkable

import numpy as np

from mrsteve.perception import TaskPrompts
from mrsteve.spaces import Action, Observation
from mrsteve.world.camera import Camera

__all__ = ["Action", "Agent", "GoalAgent", "Observation"]


@runtime_checkable
class Agent(Protocol):
    """Anything the episode loop can run: given tasks one after another, acts every step."""

    name: str

    def reset(self, obs: Observation, rng: np.random.Generator, camera: Camera) -> None:
        """Start a new episode (``obs`` is the first observation, ``camera`` the environment's:
        ``info["camera"]`` from ``env.reset``)."""

    def set_task(self, task: TaskPrompts, t: int) -> None:
        """A new task at step ``t``: its prompts, as the task tells them (the paper's tasks are
        items to obtain, checked in the inventory by the task, not by the agent)."""

    def act(self, obs: Observation, t: int) -> Action:
        """The action for step ``t``."""


@runtime_checkable
class GoalAgent(Agent, Protocol):
    """An agent the Memory Tasks can run (paper Section 4.3): it watches a scripted exploration
    phase and is then given an image goal."""

    def observe(self, obs: Observation, t: int) -> None:
        """Step ``t`` seen without acting (what it remembers of it, as if it had acted)."""

    def set_goal(self, embedding: np.ndarray, threshold: float, t: int) -> None:
        """An image goal at step ``t``: a clip embedding read as the query, with its threshold."""
