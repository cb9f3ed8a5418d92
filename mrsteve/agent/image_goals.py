"""Image goals for the agents (paper Section 4.3: "the agent is given a MineCLIP embedding ... as a
task embedding instead of text instruction"), and observing without acting (a scripted
exploration phase the evaluator drives, the agent's memory written through its normal path).

:func:`image_goal_agent` wraps the agent :func:`~mrsteve.agent.factory.make_agent` builds:

- ``observe(obs, t)``: the step's frame goes to the encoder, the memory and the explorer's
  visitation map, as in :meth:`MrSteve.act <mrsteve.agent.mrsteve.MrSteve.act>`, and no action is
  chosen (STEVE-1 has nothing to write);
- ``set_goal(embedding, threshold, t)``: the memory is read with the goal embedding instead of a
  text prompt's; with candidates the agent navigates to the nearest and turns to its stored view
  (then waits there until the mode selector reads again), without any it explores. STEVE-1 has no
  memory and no instruction for an image: it wanders ("go explore") until it happens on the goal.

Kept in its own module, beside the Memory Tasks' image-goal API (another branch), so the two can
be reconciled.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from mrsteve.agent.baselines import Steve1
from mrsteve.agent.mrsteve import MrSteve
from mrsteve.agent.protocols import Action, Observation
from mrsteve.control.wander import WanderExplorer
from mrsteve.perception import TaskPrompts
from mrsteve.world.camera import Camera

GOAL_PROMPT = "image goal"
"""What the agent's query log calls an image goal (it has no text)."""

GOAL_TASK = TaskPrompts(item="image_goal", explore=GOAL_PROMPT, execute=GOAL_PROMPT)
"""The task an image goal stands for: no item, no instruction."""

WAIT: Action = {"camera": np.zeros(2, dtype=np.float32)}
"""The action of an agent that has arrived at its recalled goal: stand and look."""


class _WaitAtImageGoal:
    """The instruction policy, except that the image goal's "instruction" is to stand and look."""

    def __init__(self, policy: Any):
        self.policy = policy

    def __getattr__(self, name: str) -> Any:
        return getattr(self.policy, name)

    def act(self, obs: Observation, prompt: str) -> Action:
        return WAIT if prompt == GOAL_PROMPT else self.policy.act(obs, prompt)


class ImageGoalMrSteve:
    """MrSteve (any memory variant) taking image goals; everything else is the wrapped agent's
    (its mode selector reads the memory again after ``L`` steps standing at a recalled goal)."""

    def __init__(self, agent: MrSteve):
        self.agent = agent
        self.name = agent.name
        if not isinstance(agent.policy, _WaitAtImageGoal):
            agent.policy = _WaitAtImageGoal(agent.policy)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.agent, name)

    def reset(self, obs: Observation, rng: np.random.Generator, camera: Camera) -> None:
        self.agent.reset(obs, rng, camera)

    def set_task(self, task: TaskPrompts, t: int) -> None:
        self.agent.set_task(task, t)

    def act(self, obs: Observation, t: int) -> Action:
        return self.agent.act(obs, t)

    def observe(self, obs: Observation, t: int) -> None:
        """Write step ``t``'s frame to the memory (and the explorer's map); no action."""
        agent = self.agent
        agent._t_last = t + agent._t_offset
        pose = np.asarray(obs["pose"], dtype=np.float64)
        agent.memory.write(agent.encoder.observe(obs), agent.relative(pose), agent._t_last)
        agent.explorer.observe(obs)

    def set_goal(self, embedding: np.ndarray, threshold: float, t: int) -> None:
        """A new image goal at step ``t``: the memory's query becomes ``embedding`` (an encoder
        clip embedding) with ``threshold`` (the encoder's calibrated ``image_goal``)."""
        embedding = np.asarray(embedding, dtype=np.float32)
        if embedding.shape != (self.agent.encoder.dim,):
            raise ValueError(f"goal embedding must have shape ({self.agent.encoder.dim},), "
                             f"got {embedding.shape}")
        agent = self.agent
        agent.task = GOAL_TASK
        agent._query_vector = embedding
        agent._threshold = float(threshold)
        agent._enter(None)
        agent.target = None


class ImageGoalSteve1:
    """STEVE-1 given image goals: no memory; it wanders ("go explore")."""

    def __init__(self, agent: Steve1):
        self.agent = agent
        self.name = agent.name
        self.wander = WanderExplorer()

    def reset(self, obs: Observation, rng: np.random.Generator, camera: Camera) -> None:
        self.agent.reset(obs, rng, camera)
        self.wander.reset(obs, rng, camera)

    def observe(self, obs: Observation, t: int) -> None:
        """Nothing to remember."""

    def set_goal(self, embedding: np.ndarray, threshold: float, t: int) -> None:
        """An image goal: wander until on it."""

    def act(self, obs: Observation, t: int) -> Action:
        self.wander.observe(obs)
        return self.wander.act(obs)


def image_goal_agent(agent: Any) -> ImageGoalMrSteve | ImageGoalSteve1:
    """``agent`` (from :func:`~mrsteve.agent.factory.make_agent`) able to take image goals."""
    if isinstance(agent, MrSteve):
        return ImageGoalMrSteve(agent)
    if isinstance(agent, Steve1):
        return ImageGoalSteve1(agent)
    raise ValueError(f"image goals need a MrSteve or Steve1 agent, got {type(agent).__name__}")
