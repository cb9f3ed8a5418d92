"""What an agent is to the loops that run it: the :class:`Agent` and :class:`GoalAgent`
protocols, the :class:`Mode` it is in and the :class:`Decision` it returns every step.

This is a leaf module (it imports only :mod:`mrsteve.spaces`), so every layer types against the
same declarations: the agents (:mod:`mrsteve.agent`) implement them, the tasks and the driver
(:mod:`mrsteve.tasks`) run them without importing any agent code.

Positions in a decision are in the *episode frame* (:class:`mrsteve.spaces.AgentFrame`: the
ground plane relative to the block the episode started in), the only frame an agent knows;
evaluators turn them into world coordinates with :meth:`AgentFrame.to_world`.
"""

from __future__ import annotations

import enum
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Protocol, runtime_checkable

import numpy as np

from mrsteve.spaces import Action, Observation

__all__ = ["Action", "Agent", "Decision", "DestinationAgent", "GoalAgent", "Mode", "Observation",
           "Query", "RememberingAgent", "Sighting"]


class Mode(enum.Enum):
    """What a MrSteve agent is doing (the modes of the authors' release)."""

    EXPLORE = "explore"
    NAVIGATE = "navigate"
    CAM_ADJUST = "cam_adjust"
    EXECUTE = "execute"


@dataclass(frozen=True)
class Query:
    """One read of the memory by the mode selector."""

    t: int
    """The step the read was made at."""
    prompt: str
    """What the query stands for: the task's explore prompt, or ``image goal``."""
    candidates: int
    """Remembered frames that matched."""
    best_score: float | None
    target: tuple[float, ...] | None
    """The chosen frame's pose ``(x, y, z, yaw, pitch)`` in the episode frame, or ``None``."""
    target_t: int | None
    """The step the chosen frame was seen at."""
    candidates_xz: tuple[tuple[float, float], ...] = ()
    """Ground positions ``(x, z)`` (episode frame) of the first matches in the read's order
    (:data:`QUERY_CANDIDATES_KEPT` at most), for viewers."""


QUERY_CANDIDATES_KEPT = 16
"""Matches a :class:`Query` names the positions of."""


class Decision(dict):
    """One step's action (a MineRL-style dict: what ``env.step`` takes, unchanged) with what the
    agent decided on the way: the loops hand it to their callbacks, so logging and metrics read
    what the agent returned, never its attributes.

    An agent that only acts (a scripted controller) may return a plain action dict; the driver
    reads it as a decision with nothing else set."""

    __slots__ = ("goal", "mode", "notes", "query", "subgoal", "target")

    def __init__(self, action: Action | None = None, *, mode: Mode | None = None,
                 target: tuple[float, ...] | None = None,
                 goal: tuple[float, float] | None = None, query: Query | None = None,
                 subgoal: str | None = None, notes: Mapping[str, Any] | None = None) -> None:
        super().__init__(action or {})
        self.notes = notes
        """What else the controller says of the step for a callback to keep (a training
        collector's: the teacher's ``label`` to imitate, a policy's ``features``), if any."""
        self.mode = mode
        """The mode the action was taken in (``None``: an agent without modes)."""
        self.target = target
        """The remembered frame's pose the agent is heading for (episode frame), if any."""
        self.goal = goal
        """The exploration goal ``(x, z)`` (episode frame) while exploring, if any."""
        self.query = query
        """The memory read made at this step, if one was."""
        self.subgoal = subgoal
        """The planner's subgoal the step serves (a hierarchical agent), if any."""

    @classmethod
    def of(cls, returned: Action) -> Decision:
        """``returned`` as a decision (a plain action dict gets no mode, target or goal)."""
        return returned if isinstance(returned, Decision) else cls(returned)

    def __reduce__(self):  # slots of a dict subclass are not pickled by default
        return (_decision, (dict(self), self.mode, self.target, self.goal, self.query,
                            self.subgoal, self.notes))


def _decision(action, mode, target, goal, query, subgoal, notes=None) -> Decision:
    return Decision(action, mode=mode, target=target, goal=goal, query=query, subgoal=subgoal,
                    notes=notes)


@runtime_checkable
class Agent(Protocol):
    """Anything the driver can run on the paper's tasks: given tasks one after another, it acts
    every step."""

    name: str

    def reset(self, obs: Observation, rng: np.random.Generator, camera: Any) -> None:
        """Start a new episode: ``obs`` is its first observation (episode frame), every random
        choice comes from ``rng``, ``camera`` is the environment's (``info["camera"]`` from
        ``env.reset``)."""

    def set_task(self, task: Any, t: int) -> None:
        """A new task at step ``t``, told by its prompts
        (:class:`mrsteve.perception.TaskPrompts`); the task, not the agent, checks success."""

    def act(self, obs: Observation, t: int) -> Decision | Action:
        """The action for step ``t`` (a :class:`Decision`, or a plain action dict)."""


@runtime_checkable
class GoalAgent(Agent, Protocol):
    """An agent the image-goal tasks can run (the Memory Tasks, Long-Navigation): it watches
    scripted steps without acting and is then given an image goal."""

    def observe(self, obs: Observation, t: int) -> None:
        """Step ``t`` seen without acting (remembered as if it had acted)."""

    def set_goal(self, embedding: np.ndarray, threshold: float, t: int) -> None:
        """An image goal at step ``t``: a clip embedding read as the query, with its threshold."""

    def recall(self, embedding: np.ndarray, threshold: float) -> np.ndarray:
        """``float[n, 2]``: the episode-frame ``(x, z)`` of the remembered frames that match
        ``embedding`` (none without a memory). Evaluators ask it whether a goal was kept."""


@dataclass(frozen=True)
class Sighting:
    """Where and when an agent's memory saw what a prompt describes, from the agent's place now
    (what-where-when, for a planner above the agent)."""

    prompt: str
    distance: float
    """Blocks on the ground plane from the agent to the remembered place."""
    bearing: float
    """Degrees from the agent's heading to the place: 0 ahead, positive to its right."""
    steps_ago: int
    """Steps since the memory's frame of it was seen."""

    @property
    def side(self) -> str:
        """``ahead``, ``right``, ``behind`` or ``left``."""
        angle = abs(self.bearing)
        return ("ahead" if angle <= 45 else "behind" if angle >= 135
                else "right" if self.bearing > 0 else "left")

    def describe(self) -> str:
        return (f"{self.prompt}: seen {self.steps_ago} steps ago, {self.distance:.0f} blocks "
                f"{self.side}")


@runtime_checkable
class RememberingAgent(GoalAgent, Protocol):
    """A goal agent a planner can ask what its memory holds (the crafting tasks' controllers)."""

    def sighting(self, prompt: str, obs: Observation, t: int) -> Sighting | None:
        """Where and when the memory saw what ``prompt`` describes, seen from ``obs`` at step
        ``t`` (the matching frame nearest the agent), or ``None``: not remembered (an agent
        without a memory remembers nothing)."""


@runtime_checkable
class DestinationAgent(Agent, Protocol):
    """An agent that walks to a position it is given (a navigator alone: the Navigation
    experiment)."""

    def set_destination(self, goal: tuple[float, float]) -> None:
        """Walk to ``goal``, ``(x, z)`` in the episode frame."""

    def reached(self, obs: Observation) -> bool:
        """Whether the destination is within the agent's success radius."""
