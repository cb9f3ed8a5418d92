"""The mode selector of MrSteve (paper, Algorithm 2) on scripted situations.

The parts around the agent are fakes whose behaviour the test controls: a memory that returns a
candidate only when told to, a navigator that "arrives" when told to, and recording explorer and
instruction policy. What is asserted is what the paper states: memory empty -> EXPLORE; a
candidate appears -> NAVIGATE -> CAM_ADJUST -> EXECUTE; after L steps in a mode the memory is read
again; every step is written to memory whatever the mode.
"""

import numpy as np
import pytest

from mrsteve.agent.mrsteve import Mode, MrSteve, MrSteveConfig
from mrsteve.memory import FIFOMemory, MemoryRead
from mrsteve.perception import SemanticEncoder
from mrsteve.tasks import task_prompts
from mrsteve.world.camera import Camera

START = np.array([10.0, 16.0, 20.0, 0.0, 0.0])


class ScriptedMemory(FIFOMemory):
    """A real FIFO memory whose reads return ``self.candidate`` (a relative pose) when set."""

    def __init__(self):
        super().__init__()
        self.candidate = None
        self.reads = []

    def read(self, query, threshold, **kwargs):
        self.reads.append(kwargs.get("near"))
        if self.candidate is None:
            return MemoryRead.empty()
        pose = np.asarray([self.candidate], dtype=np.float32)
        return MemoryRead(np.array([3]), pose, np.array([0.9], np.float32), 1)


class RecordingExplorer:
    goal = None

    def __init__(self):
        self.acted = self.observed = 0

    def reset(self, obs, rng, camera):
        pass

    def set_task(self, query, threshold):
        pass

    def observe(self, obs):
        self.observed += 1

    def act(self, obs):
        self.acted += 1
        return {"forward": 1}


class ScriptedNavigator:
    success_radius = 3.0

    def __init__(self):
        self.arrived = False
        self.goals = []

    def reset(self, rng, camera):
        pass

    def observe(self, obs):
        pass

    def reached(self, obs, goal):
        return self.arrived

    def act(self, obs, goal):
        self.goals.append(goal)
        return {"forward": 1, "sprint": 1}


class RecordingPolicy:
    def __init__(self):
        self.prompts = []

    def reset(self, rng, camera):
        pass

    def act(self, obs, prompt):
        self.prompts.append(prompt)
        return {"attack": 1}


def observation(pose=START):
    return {
        "pose": np.asarray(pose, dtype=np.float64),
        "semantic": np.zeros((40, 64), np.uint8),
        "depth": np.full((40, 64), np.inf, np.float32),
    }


@pytest.fixture
def agent():
    agent = MrSteve(
        memory=ScriptedMemory(),
        encoder=SemanticEncoder(),
        explorer=RecordingExplorer(),
        navigator=ScriptedNavigator(),
        policy=RecordingPolicy(),
        config=MrSteveConfig(requery_interval=600),
    )
    agent.reset(observation(), np.random.default_rng(0), Camera(40, 64))
    agent.set_task(task_prompts("water_bucket"), 0)
    return agent


def test_empty_memory_means_explore_and_every_step_is_written(agent):
    for t in range(5):
        assert agent.act(observation(), t) == {"forward": 1}
        assert agent.mode is Mode.EXPLORE
    assert len(agent.memory) == 5
    assert agent.explorer.acted == 5
    assert len(agent.memory.reads) == 5, "the memory is read every step while exploring"


def test_memory_positions_are_relative_to_the_episode_start(agent):
    agent.act(observation(START + [4, 1, -2, 0, 0]), 0)
    (view,) = agent.memory.clusters()
    np.testing.assert_allclose(view.pose[0][:3], [4, 1, -2])
    assert agent.memory.reads[0] == pytest.approx((4.0, -2.0)), "nearest-first to the agent"


def test_candidate_leads_to_navigate_then_camera_then_execute(agent):
    agent.act(observation(), 0)
    agent.memory.candidate = [5.0, 0.0, 7.0, 90.0, 30.0]
    agent.act(observation(), 1)
    assert agent.mode is Mode.NAVIGATE
    assert agent.navigator.goals[-1] == pytest.approx((15.0, 27.0)), "target back in world frame"

    agent.navigator.arrived = True
    action = agent.act(observation(), 2)
    assert agent.mode is Mode.CAM_ADJUST
    assert action["camera"][1] > 0 and action["camera"][0] > 0, "turn right and look down"

    aligned = observation(START + [5, 0, 7, 88, 27])  # within the 5-degree tolerance
    agent.act(aligned, 3)
    assert agent.mode is Mode.EXECUTE
    assert agent.policy.prompts == ["get water bucket"], "executes with the execute prompt"


def test_memory_is_read_again_after_L_steps_in_a_mode(agent):
    agent.memory.candidate = [0.0, 0.0, 0.0, 0.0, 0.0]
    agent.navigator.arrived = True
    for t in range(10):
        agent.act(observation(), t)
    assert agent.mode is Mode.EXECUTE
    reads = len(agent.memory.reads)
    for t in range(10, 600):
        agent.act(observation(), t)
    assert len(agent.memory.reads) == reads, "no reads while executing before L steps"

    agent.memory.candidate = None  # the resource is gone from memory
    for t in range(600, 615):
        agent.act(observation(), t)
    assert len(agent.memory.reads) > reads
    assert agent.mode is Mode.EXPLORE, "after L steps with no candidate the agent explores"


def test_one_timer_per_selected_mode_covers_navigate_camera_and_execute(agent):
    """Algorithm 2: the L-step timer starts when the selector picks a target; reaching it, turning
    to the stored view and executing do not restart it."""
    agent.memory.candidate = [0.0, 0.0, 0.0, 0.0, 0.0]
    agent.act(observation(), 0)  # selected: NAVIGATE
    reads = len(agent.memory.reads)
    for t in range(1, 400):
        agent.act(observation(), t)
    agent.navigator.arrived = True
    for t in range(400, 600):  # CAM_ADJUST at once (aligned), then EXECUTE
        agent.act(observation(), t)
    assert agent.mode is Mode.EXECUTE
    assert len(agent.memory.reads) == reads, "no read before L steps since the selection"
    agent.act(observation(), 600)
    assert len(agent.memory.reads) == reads + 1, "read L steps after the selection, not after EXECUTE began"


def test_the_same_target_found_again_restarts_the_timer(agent):
    """A re-read while navigating that returns the same target keeps navigating and waits another
    L steps before reading again (it does not read on every later step)."""
    agent.memory.candidate = [30.0, 0.0, 0.0, 0.0, 0.0]
    for t in range(601):
        agent.act(observation(), t)
    assert agent.mode is Mode.NAVIGATE
    reads = len(agent.memory.reads)
    for t in range(601, 1200):
        agent.act(observation(), t)
    assert len(agent.memory.reads) == reads
    assert agent.navigator.goals[-1] == pytest.approx((40.0, 20.0))


def test_a_new_task_resets_the_mode_and_queries_with_its_explore_prompt(agent):
    agent.memory.candidate = [0.0, 0.0, 0.0, 0.0, 0.0]
    agent.navigator.arrived = True
    agent.act(observation(), 0)
    assert agent.mode is Mode.EXECUTE
    agent.set_task(task_prompts("log"), 1)
    assert agent.mode is None and agent.task.explore == "near tree"
    agent.act(observation(), 1)
    assert agent.last_query.prompt == "near tree"
    assert agent.policy.prompts[-1] == "cut a tree"


def test_config_rejects_a_bad_interval():
    with pytest.raises(ValueError, match="requery_interval"):
        MrSteveConfig(requery_interval=0)
