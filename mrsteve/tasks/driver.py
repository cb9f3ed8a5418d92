"""The driver: the one loop that steps an environment, for every episode of every task.

A :class:`Driver` holds an environment, the episode's frame (:class:`~mrsteve.spaces.AgentFrame`)
and its step count, and runs *controllers* on it: an agent's ``act``, or a task's scripted phase
(a route the evaluator drives while the agent watches). :meth:`Driver.run` is the loop: hand the
controller what the agent may see (:meth:`AgentFrame.view`), step the environment with the
:class:`~mrsteve.protocols.Decision` it returns, and call the callbacks with the :class:`Step`
(the observation, the decision, the info), until a step budget, a stop condition, the
environment's end or a controller with nothing left to do (it returns ``None``: a goal reached).
Tasks compose phases of it (:mod:`mrsteve.tasks.episode`, :mod:`~mrsteve.tasks.exploration`,
...), and the trainings' walks run on it too (demonstrations, DAgger rounds, PPO rollouts,
validation: :mod:`mrsteve.train`); logging, recording and metrics attach as callbacks
(:class:`EpisodeCallback`), never as branches in a loop, and read what the agent returned, never
its attributes (DreamerV3's driver and MineStudio's callbacks work this way).

Frames: ``Step.obs`` is the environment's observation (world frame, for evaluators); controllers
get the episode frame; the positions in a decision are in the episode frame, and
:attr:`Driver.frame` turns them into world coordinates.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from mrsteve import progress
from mrsteve.protocols import Decision
from mrsteve.spaces import Action, AgentFrame, Observation
from mrsteve.tasks.outcomes import TaskOutcome

Controller = Callable[[Observation, int], Decision | Action | None]
"""What the driver runs: ``(observation in the episode frame, step t) -> decision or action``,
or ``None`` when it has nothing left to do (its goal reached): the run ends before a step."""


@dataclass(frozen=True)
class Step:
    """One step the driver took."""

    t: int
    """Steps taken in the episode so far, this one included (the first step gives 1)."""
    obs: Mapping[str, Any]
    """The environment's observation after the step (world frame)."""
    decision: Decision
    """What the controller returned for the step (its action, and the agent's mode, target,
    goal and memory read, where it has them)."""
    info: Mapping[str, Any]
    terminated: bool = False
    truncated: bool = False
    view: Observation | None = None
    """What the controller saw when it decided (the observation before the step, episode frame):
    what a recording callback keeps beside the decision."""


class EpisodeCallback:
    """Hooks into the driver and the item tasks; override what you need (all do nothing by
    default)."""

    def on_reset(self, env: Any, obs: Mapping[str, Any], frame: AgentFrame) -> None:
        """The environment was reset: ``obs`` is its first observation (world frame), ``frame``
        the episode's."""

    def on_step(self, step: Step) -> None:
        """A step was taken."""

    def on_task_start(self, task: TaskOutcome) -> None:
        """A task was given (item tasks, :func:`mrsteve.tasks.episode.run_tasks`)."""

    def on_task_end(self, task: TaskOutcome) -> None:
        """A task succeeded or was given up."""


class Driver:
    """Steps ``env`` with controllers, calling ``callbacks`` (module docstring)."""

    def __init__(self, env: Any, callbacks: Sequence[EpisodeCallback] = ()) -> None:
        self.env = env
        self.callbacks = list(callbacks)
        self.obs: Mapping[str, Any] | None = None
        """The latest observation (world frame)."""
        self.frame: AgentFrame | None = None
        """The episode's frame: what the agent sees, relative to the start's block."""
        self.t = 0
        """Steps taken in the episode."""

    def reset(self, *, seed: int, options: Mapping[str, Any] | None = None) -> dict[str, Any]:
        """Reset the environment with ``seed`` and start the episode at its first observation;
        returns the reset's ``info``."""
        self.obs, info = self.env.reset(seed=seed, options=options)
        self.anchor()
        for callback in self.callbacks:
            callback.on_reset(self.env, self.obs, self.frame)
        return info

    def attach(self, obs: Mapping[str, Any]) -> None:
        """Drive an environment some other code reset and stepped: ``obs`` is its latest
        observation, where the episode starts."""
        self.obs = obs
        self.anchor()

    def anchor(self) -> None:
        """Start the episode here: its frame at the latest observation, its step count at 0 (a
        scripted set-up, such as a teleport to the first scene, comes before)."""
        self.frame = AgentFrame.of(self.obs)
        self.t = 0

    @property
    def view(self) -> Observation:
        """The latest observation as the agent may see it (episode frame, its keys only)."""
        return self.frame.view(self.obs)

    @property
    def position(self) -> tuple[float, float]:
        """The player's world ``(x, z)``."""
        return float(self.obs["pose"][0]), float(self.obs["pose"][2])

    def step(self, decision: Decision | Action, view: Observation | None = None) -> Step:
        """Take one step with ``decision`` (made on ``view``, default the current one) and tell
        the callbacks."""
        decision = Decision.of(decision)
        view = self.view if view is None else view
        self.obs, _, terminated, truncated, info = self.env.step(decision)
        self.t += 1
        progress.tick(self.t)
        step = Step(self.t, self.obs, decision, info, bool(terminated), bool(truncated), view)
        for callback in self.callbacks:
            callback.on_step(step)
        return step

    def run(self, controller: Controller, *, steps: int,
            until: Callable[[Step], bool] | None = None) -> Step | None:
        """Run ``controller`` for at most ``steps`` steps: each step it gets :attr:`view` and the
        step count ``t`` and returns the decision taken. Stops early before a step for which the
        controller returns ``None``, after a step for which ``until(step)`` is true, or after
        one that ended the environment's episode. Returns the last step (``None`` if none was
        taken)."""
        last = None
        progress.planned(self.t + int(steps))
        for _ in range(int(steps)):
            view = self.view
            decision = controller(view, self.t)
            if decision is None:
                break
            last = self.step(decision, view)
            if (until is not None and until(last)) or last.terminated or last.truncated:
                break
        return last


class Trajectory(EpisodeCallback):
    """The player's world ``(x, z)`` at the episode's start and after every step."""

    def __init__(self) -> None:
        self.points: list[tuple[float, float]] = []

    def on_reset(self, env: Any, obs: Mapping[str, Any], frame: AgentFrame) -> None:
        self.points = [(float(obs["pose"][0]), float(obs["pose"][2]))]

    def on_step(self, step: Step) -> None:
        self.points.append((float(step.obs["pose"][0]), float(step.obs["pose"][2])))

    def array(self) -> np.ndarray:
        """``float[n, 2]``: the positions, the start first."""
        return np.asarray(self.points, dtype=np.float64).reshape(-1, 2)


def compact_trajectory(trajectory: np.ndarray, every: int) -> list[list[float]]:
    """Every ``every``-th position of a trajectory and its last one, rounded to 0.01 block: what
    episode records keep for plots."""
    keep = np.asarray(trajectory)[::every]
    if (len(trajectory) - 1) % every:
        keep = np.concatenate([keep, np.asarray(trajectory)[-1:]])
    return np.round(keep, 2).tolist()
