"""Explorers: what an agent does when it has nowhere particular to go (the paper's Table 1).

An :class:`Explorer` sees every step (:meth:`~Explorer.observe`, also in steps another controller
acts) and acts when asked (:meth:`~Explorer.act`). The paper compares hierarchical explorers, a
high-level goal selector over a low-level goal-conditioned navigator, with STEVE-1 told to "go
explore". The embedded stand-ins:

- :class:`HierarchicalExplorer` with :class:`~mrsteve.control.goals.CountBasedGoalSelector`:
  MrSteve's hierarchical episodic exploration (Section 3.3): the visitation map painted with the
  fields of view of the frames the agent's memory holds (of every step observed, for an explorer
  without a memory), the count-based goal selector pi_H-Cnt (nearest unseen ``G x G`` patch,
  G = 15 on 100 x 100 maps), and a navigator as pi_L-Nav
  (:class:`~mrsteve.control.navigation.DepthNavigator` for VPT-Nav); with
  :class:`~mrsteve.control.goals.TaskConditionedGoalSelector` the task-conditioned variant;
- :class:`HierarchicalExplorer` with :class:`~mrsteve.control.goals.DirectionGoalSelector`:
  Plan4MC's explorer (appendix "Exploration Experiments Details"). Plan4MC's low level is a DQN
  goal reacher; the straight navigator (:class:`~mrsteve.control.navigation.StraightNavigator`,
  no terrain skills) stands in for it, our navigator for the VPT-Nav cross combination;
- :class:`InstructedExplorer`: STEVE-1 told to "go explore", the agent's goal-conditioned
  instruction policy given that instruction; :class:`~mrsteve.control.wander.WanderExplorer`
  (its own module) stands in for it beside the scripted skills, reading the depth frame.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, runtime_checkable

import numpy as np

from mrsteve.control.goals import GoalSelector
from mrsteve.control.navigation import Navigator
from mrsteve.control.skills import GO_EXPLORE, InstructionPolicy
from mrsteve.spaces import Action, Observation
from mrsteve.world.camera import Camera


@runtime_checkable
class Explorer(Protocol):
    """pi_H-Nav and pi_L-Nav together: where to go next when memory has nothing (Explore mode)."""

    @property
    def goal(self) -> tuple[float, float] | None:
        """The current exploration goal ``(x, z)`` in the episode frame, if any (for plots)."""

    def reset(self, obs: Observation, rng: np.random.Generator, camera: Camera) -> None:
        """Start a new episode at ``obs``; ``camera`` is the environment's."""

    def observe(self, obs: Observation) -> None:
        """Record a step the agent took in any mode (e.g. for the visitation map), after the
        agent wrote it to its memory."""

    def act(self, obs: Observation) -> Action:
        """The next exploration action (the step was recorded by :meth:`observe` first)."""

    def set_task(self, query: np.ndarray, threshold: float) -> None:
        """A task's place prompt (embedding and threshold); a no-op for explorers that ignore
        tasks."""


class HierarchicalExplorer:
    """A goal selector (high level) over a goal-conditioned navigator (low level).

    ``selector`` is a :class:`~mrsteve.control.goals.GoalSelector`, or a function of no arguments
    that builds one (called at every :meth:`reset`, for a fresh selector per episode). Goals the
    navigator finds out of reach (:meth:`~mrsteve.control.navigation.Navigator.blocked`) are given
    up at once."""

    max_give_ups = 8
    """Goals given up in one step at most (each costs the navigator a plan)."""

    def __init__(
        self, selector: GoalSelector | Callable[[], GoalSelector], navigator: Navigator
    ) -> None:
        self._make_selector = None if isinstance(selector, GoalSelector) else selector
        self.selector: GoalSelector | None = None if self._make_selector else selector
        self.navigator = navigator
        self._goal: tuple[float, float] | None = None
        self._t = 0

    @property
    def goal(self) -> tuple[float, float] | None:
        return self._goal

    def reset(self, obs: Observation, rng: np.random.Generator, camera: Camera) -> None:
        high, low = rng.spawn(2)
        if self._make_selector is not None:
            self.selector = self._make_selector()
        self.selector.reset(obs["pose"], high)
        self.navigator.reset(low, camera)
        self._goal = None
        self._t = 0

    def observe(self, obs: Observation) -> None:
        self.selector.observe(obs["pose"])
        self.navigator.observe(obs)  # a mapping navigator sees every step, not only those it acts in
        self._t += 1

    def set_task(self, query: np.ndarray, threshold: float) -> None:
        """Hand a task's place prompt to the selector (task-free selectors ignore it)."""
        self.selector.set_task(query, threshold)

    def act(self, obs: Observation) -> Action:
        """Toward the selector's goal; a goal the navigator finds out of reach is given up at once
        and another proposed (at most ``max_give_ups`` per step)."""
        self._goal = self.selector.propose(obs["pose"], self._t)
        for _ in range(self.max_give_ups):
            if not self.navigator.blocked(obs, self._goal):
                break
            self.selector.give_up(self._t)
            self._goal = self.selector.propose(obs["pose"], self._t)
        return self.navigator.act(obs, self._goal)


class InstructedExplorer:
    """An instruction policy told to "go explore" (:data:`~mrsteve.control.skills.GO_EXPLORE`):
    STEVE-1's exploration in the paper's Table 1. It has no goal of its own to show."""

    goal = None

    def __init__(self, policy: InstructionPolicy) -> None:
        self.policy = policy

    def reset(self, obs: Observation, rng: np.random.Generator, camera: Camera) -> None:
        self.policy.reset(rng, camera)

    def observe(self, obs: Observation) -> None:
        """Nothing: the policy keeps its own memory of the frames it acts on."""

    def set_task(self, query: np.ndarray, threshold: float) -> None:
        """Nothing: told to go explore, whatever the task."""

    def act(self, obs: Observation) -> Action:
        return self.policy.act(obs, GO_EXPLORE)
