"""Parts run alone as agents: an explorer (the Exploration experiment, Table 1) and a navigator
(the Navigation experiment), so the driver runs them like any agent and their decisions carry
the goal they head for."""

from __future__ import annotations

from typing import Any

import numpy as np

from mrsteve.control.explorers import Explorer
from mrsteve.control.navigation import Navigator
from mrsteve.protocols import Decision, Mode, Observation


class ExplorerAgent:
    """An explorer alone: every step it records the step, then explores (it is given no task)."""

    def __init__(self, explorer: Explorer, name: str = "explorer") -> None:
        self.explorer = explorer
        self.name = name

    def reset(self, obs: Observation, rng: np.random.Generator, camera: Any) -> None:
        self.explorer.reset(obs, rng, camera)

    def set_task(self, task: Any, t: int) -> None:
        """Nothing: an explorer alone explores whatever the task."""

    def act(self, obs: Observation, t: int) -> Decision:
        self.explorer.observe(obs)
        action = self.explorer.act(obs)
        return Decision(action, mode=Mode.EXPLORE, goal=self.explorer.goal)


class NavigatorAgent:
    """A navigator alone, walking to a destination ``(x, z)`` in the episode frame."""

    def __init__(self, navigator: Navigator, name: str = "navigator") -> None:
        self.navigator = navigator
        self.name = name
        self.destination: tuple[float, float] | None = None

    def reset(self, obs: Observation, rng: np.random.Generator, camera: Any) -> None:
        self.navigator.reset(rng, camera)
        self.destination = None

    def set_task(self, task: Any, t: int) -> None:
        """Nothing: a navigator is given destinations (:meth:`set_destination`)."""

    def set_destination(self, goal: tuple[float, float]) -> None:
        """Walk to ``goal``, ``(x, z)`` in the episode frame."""
        self.destination = (float(goal[0]), float(goal[1]))

    def reached(self, obs: Observation) -> bool:
        """Whether the destination is within the navigator's success radius."""
        return self.navigator.reached(obs, self.destination)

    def act(self, obs: Observation, t: int) -> Decision:
        if self.destination is None:
            raise RuntimeError("a NavigatorAgent needs a destination: call set_destination first")
        return Decision(self.navigator.act(obs, self.destination), mode=Mode.NAVIGATE,
                        goal=self.destination)
