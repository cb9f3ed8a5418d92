"""Baselines of the paper that are not MrSteve with other parts."""

from __future__ import annotations

import numpy as np

from mrsteve.agent.protocols import Action, Observation
from mrsteve.control.skills import InstructionPolicy
from mrsteve.perception import TaskPrompts
from mrsteve.world.camera import Camera


class Steve1:
    """STEVE-1 alone (the paper's baseline): the instruction policy with the task's execute
    prompt, and no memory; with nothing in view it wanders ("go explore")."""

    def __init__(self, policy: InstructionPolicy, name: str = "steve1"):
        self.policy = policy
        self.name = name
        self.prompt: str | None = None

    def reset(self, obs: Observation, rng: np.random.Generator, camera: Camera) -> None:
        self.policy.reset(rng, camera)
        self.prompt = None

    def set_task(self, task: TaskPrompts, t: int) -> None:
        self.prompt = task.execute

    def act(self, obs: Observation, t: int) -> Action:
        if self.prompt is None:
            raise RuntimeError("Steve1 needs a task: call set_task(prompts, t) first")
        return self.policy.act(obs, self.prompt)
