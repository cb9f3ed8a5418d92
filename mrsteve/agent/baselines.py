"""Baselines of the paper that are not MrSteve with other parts."""

from __future__ import annotations

import numpy as np

from mrsteve.control.skills import GO_EXPLORE, GoalConditionedPolicy, InstructionPolicy
from mrsteve.perception import TaskPrompts
from mrsteve.protocols import Action, Decision, Observation, Sighting
from mrsteve.world.camera import Camera


class Steve1:
    """STEVE-1 alone (the paper's baseline): the instruction policy with the task's execute
    prompt, and no memory.

    Given an image goal (the Memory Tasks, Long-Navigation: :meth:`set_goal`) it has nothing to
    recall it with. With ``visual_goals`` (a goal-conditioned policy whose goals are clip
    embeddings of the encoder that made the image goal) it is conditioned on the goal itself, as
    STEVE-1 takes visual goals; otherwise it explores from scratch (paper Section 4.3: "it has to
    find the targets from scratch"), told "go explore": a goal-conditioned policy
    (:class:`~mrsteve.control.skills.GoalConditionedPolicy`) follows that itself, the scripted
    skills with their wanderer (``wanderer``, default the policy's own: a stand-in that reads the
    depth frame). Either way it reaches the goal only by walking into it."""

    def __init__(self, policy: InstructionPolicy, name: str = "steve1", *,
                 visual_goals: bool = False, wanderer=None):
        if visual_goals and not isinstance(policy, GoalConditionedPolicy):
            raise ValueError("visual goals need a goal-conditioned instruction policy "
                             "(goal, follow, goal_encoder)")
        self.policy = policy
        self.name = name
        self.visual_goals = visual_goals
        self.wanderer = wanderer if wanderer is not None else getattr(policy, "wanderer", None)
        self.prompt: str | None = None
        self.goal: np.ndarray | None = None
        self._wandering = False
        self._wander_start: tuple[np.random.Generator, Camera] | None = None

    def reset(self, obs: Observation, rng: np.random.Generator, camera: Camera) -> None:
        self.policy.reset(rng, camera)
        self.prompt = None
        self.goal = None
        self._wandering = False
        # the wanderer's own stream: spawning leaves the policy's draws as they were
        self._wander_start = (rng.spawn(1)[0], camera)

    def set_task(self, task: TaskPrompts, t: int) -> None:
        self.prompt = task.execute
        self.goal = None
        self._wandering = False

    def set_goal(self, embedding: np.ndarray, threshold: float, t: int) -> None:
        """An image goal: STEVE-1 has no memory to read it with (class docstring)."""
        self.prompt, self.goal = None, None
        if self.visual_goals:
            self.goal = np.asarray(embedding, dtype=np.float32).copy()
        elif isinstance(self.policy, GoalConditionedPolicy):
            self.prompt = GO_EXPLORE
        elif self.wanderer is None:
            raise ValueError("Steve1 needs a goal-conditioned policy or a wanderer "
                             "(reset/observe/act) to explore for an image goal")
        else:
            self._wandering = True

    def observe(self, obs: Observation, t: int) -> None:
        """A step watched without acting: STEVE-1 keeps nothing of it (it has no memory)."""

    def recall(self, embedding: np.ndarray, threshold: float) -> np.ndarray:
        """Nothing: STEVE-1 has no memory."""
        return np.empty((0, 2))

    def sighting(self, prompt: str, obs: Observation, t: int) -> Sighting | None:
        """Nothing: STEVE-1 has no memory."""
        return None

    def act(self, obs: Observation, t: int) -> Decision:
        return Decision(self._action(obs))

    def _action(self, obs: Observation) -> Action:
        if self._wandering:
            if self._wander_start is not None:
                rng, camera = self._wander_start
                self.wanderer.reset(obs, rng, camera)
                self._wander_start = None
            self.wanderer.observe(obs)
            return self.wanderer.act(obs)
        if self.goal is not None:
            return self.policy.follow(obs, self.goal)
        if self.prompt is None:
            raise RuntimeError("Steve1 needs a task: call set_task(prompts, t) or "
                               "set_goal(embedding, threshold, t) first")
        return self.policy.act(obs, self.prompt)
