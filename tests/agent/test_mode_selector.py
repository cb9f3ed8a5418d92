"""The mode selector of MrSteve (paper, Algorithm 2) on scripted situations.

The parts around the agent are fakes whose behaviour the test controls: a memory that returns a
candidate only when told to, a navigator that "arrives" when told to, and recording explorer and
instruction policy. What is asserted is what the paper states: memory empty -> EXPLORE; a
candidate -> NAVIGATE -> CAM_ADJUST -> EXECUTE; the memory is read only when no mode is selected,
at the task's start and after L steps in a mode, EXPLORE included (Algorithm 2, lines 9-17);
every step is written to memory whatever the mode. With ``memory_reads="every-explore-step"``
(the release's rule) the memory is read every step while exploring. With ``searched_radius`` on, a
target the agent reached and executed at for L steps, or one the navigator gave up on, is not
picked again for the same task.
"""

import numpy as np
import pytest

from mrsteve.agent.mrsteve import Mode, ModeSelectorConfig, MrSteve
from mrsteve.memory import FIFOMemory, MemoryRead, ReadFilter
from mrsteve.perception import SemanticEncoder
from mrsteve.protocols import QUERY_CANDIDATES_KEPT
from mrsteve.tasks import task_prompts
from mrsteve.world.camera import Camera

START = np.array([10.0, 16.0, 20.0, 0.0, 0.0])


class ScriptedMemory(FIFOMemory):
    """A real FIFO memory whose reads return ``self.candidate`` (a relative pose, seen at step 3)
    when set, or ``self.candidates`` (``(t, pose)`` pairs, in result order), less those in the
    read's ``outside`` discs."""

    def __init__(self):
        super().__init__()
        self.candidate = None
        self.candidates = []
        self.reads = []

    def read(self, query, threshold, **kwargs):
        self.reads.append(kwargs.get("near"))
        frames = [(3, self.candidate)] if self.candidate is not None else self.candidates
        if not frames:
            return MemoryRead.empty()
        t = np.array([t for t, _ in frames], dtype=np.int64)
        pose = np.asarray([pose for _, pose in frames], dtype=np.float32)
        keep = ReadFilter(outside=tuple(kwargs.get("outside") or ())).frames(t, pose)
        return MemoryRead(t[keep], pose[keep], np.full(int(keep.sum()), 0.9, np.float32),
                          len(frames))


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
        self.gave_up = False
        self.goals = []

    def reset(self, rng, camera):
        pass

    def observe(self, obs):
        pass

    def reached(self, obs, goal):
        return self.arrived

    def blocked(self, obs, goal):
        return self.gave_up

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
        config=ModeSelectorConfig(requery_interval=600),
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
    assert len(agent.memory.reads) == 1, "read once, when the task started"


def read_steps(agent, start, stop):
    """The steps in ``[start, stop)`` at which the agent read its memory (Decision.query)."""
    return [t for t in range(start, stop) if agent.act(observation(), t).query is not None]


def test_exploring_the_agent_reads_at_the_task_start_then_after_L_steps(agent):
    """Algorithm 2: with nothing found the agent explores for L steps before it reads again,
    even when a candidate appears in memory meanwhile."""
    assert read_steps(agent, 0, 1) == [0]
    assert agent.mode is Mode.EXPLORE
    agent.memory.candidate = [5.0, 0.0, 7.0, 0.0, 0.0]
    assert read_steps(agent, 1, 600) == [], "no read while exploring for L steps"
    assert agent.mode is Mode.EXPLORE and agent.explorer.acted == 600
    assert read_steps(agent, 600, 601) == [600]
    assert agent.mode is Mode.NAVIGATE and agent.last_query.t == 600


def test_exploring_reads_every_step_with_the_releases_rule():
    agent = MrSteve(ScriptedMemory(), SemanticEncoder(), RecordingExplorer(), ScriptedNavigator(),
                    RecordingPolicy(), ModeSelectorConfig(memory_reads="every-explore-step"))
    agent.reset(observation(), np.random.default_rng(0), Camera(40, 64))
    agent.set_task(task_prompts("water_bucket"), 0)
    assert read_steps(agent, 0, 5) == [0, 1, 2, 3, 4]
    agent.memory.candidate = [5.0, 0.0, 7.0, 0.0, 0.0]
    assert read_steps(agent, 5, 6) == [5], "exploration stops as soon as a candidate appears"
    assert agent.mode is Mode.NAVIGATE
    assert read_steps(agent, 6, 605) == [], "other modes still read after L steps only"
    assert read_steps(agent, 605, 606) == [605]


def test_memory_positions_are_relative_to_the_episode_start(agent):
    agent.act(observation(START + [4, 1, -2, 0, 0]), 0)
    (view,) = agent.memory.clusters()
    np.testing.assert_allclose(view.pose[0][:3], [4, 1, -2])
    assert agent.memory.reads[0] == pytest.approx((4.0, -2.0)), "nearest-first to the agent"


def test_candidate_leads_to_navigate_then_camera_then_execute(agent):
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
        ModeSelectorConfig(requery_interval=0)
    with pytest.raises(ValueError, match="memory_reads"):
        ModeSelectorConfig(memory_reads="every-step")


# -- searched targets (ModeSelectorConfig.searched_radius) ---------------------------------------------

WRONG = [2.0, 0.0, 0.0, 0.0, 0.0]
"""A matching frame nearest the agent, where the task cannot be done (a false match)."""
RIGHT = [20.0, 0.0, 0.0, 0.0, 0.0]
"""A matching frame farther away."""


def searching_agent(radius, searched_targets="reached"):
    agent = MrSteve(ScriptedMemory(), SemanticEncoder(), RecordingExplorer(), ScriptedNavigator(),
                    RecordingPolicy(), ModeSelectorConfig(searched_radius=radius,
                                                          searched_targets=searched_targets))
    agent.reset(observation(), np.random.default_rng(0), Camera(40, 64))
    agent.set_task(task_prompts("log"), 0)
    agent.memory.candidates = [(3, WRONG), (4, [4.0, 0.0, 1.0, 0.0, 0.0]), (5, RIGHT)]
    agent.navigator.arrived = True  # every target is reached at once
    return agent


def run_steps(agent, start, stop):
    for t in range(start, stop):
        agent.act(observation(), t)


def target(agent):
    return agent.memory_pose(np.asarray(agent.target))[[0, 2]].tolist()


@pytest.mark.parametrize("radius", [0.0, 6.0])
def test_after_L_steps_executing_at_a_wrong_target_the_next_read_skips_it_when_on(radius):
    """Off (the release's rule), the nearest match is picked again after L steps; on, the frames
    seen within the radius of the searched target are skipped and the next match is the target."""
    agent = searching_agent(radius)
    run_steps(agent, 0, 601)
    assert agent.mode is Mode.EXECUTE
    assert target(agent) == ([2.0, 0.0] if radius == 0 else [20.0, 0.0])


def test_a_target_not_reached_in_L_steps_is_not_searched():
    agent = searching_agent(6.0)
    agent.navigator.arrived = False
    run_steps(agent, 0, 601)
    assert agent.mode is Mode.NAVIGATE and target(agent) == [2.0, 0.0]


@pytest.mark.parametrize("searched_targets", ["reached-or-blocked", "reached"])
def test_a_target_the_navigator_gave_up_on_is_searched_unless_only_reached_ones_are(
        searched_targets):
    """A frame the navigator cannot reach (across water, behind a cliff) is not reached in L
    steps; with ``reached-or-blocked`` the navigator's verdict makes it searched and the next read
    moves on, while with ``reached`` (the default) it is the nearest match at every re-read."""
    agent = searching_agent(6.0, searched_targets)
    agent.navigator.arrived = False
    agent.navigator.gave_up = True
    run_steps(agent, 0, 601)
    assert len(agent.memory.reads) == 2 and agent.mode is Mode.NAVIGATE
    assert target(agent) == ([20.0, 0.0] if searched_targets == "reached-or-blocked"
                             else [2.0, 0.0])


def test_the_navigator_is_asked_only_about_a_target_it_is_still_walking_to():
    """Reached targets are searched whatever the navigator says; an explored L steps search
    nothing; a blocked verdict before the L steps end changes nothing until the re-read."""
    agent = searching_agent(6.0, "reached-or-blocked")
    agent.navigator.arrived = False
    agent.navigator.gave_up = True
    run_steps(agent, 0, 300)
    assert agent.mode is Mode.NAVIGATE and target(agent) == [2.0, 0.0], "no early re-read"
    agent.memory.candidates = []
    agent.set_task(task_prompts("log"), 300)
    run_steps(agent, 300, 901)
    assert agent.mode is Mode.EXPLORE and len(agent._searched) == 0


def test_frames_seen_at_a_searched_place_after_the_search_are_skipped_too():
    """Walking on from a wrong place, the agent sees the same false match again; a later frame
    there must not send it back."""
    agent = searching_agent(6.0)
    run_steps(agent, 0, 600)  # WRONG reached at once, executed at for L steps
    agent.navigator.arrived = False  # the next target is not reached before the next re-read
    run_steps(agent, 600, 601)
    assert agent.mode is Mode.NAVIGATE and target(agent) == [20.0, 0.0]
    agent.memory.candidates = [(3, WRONG), (700, [3.0, 0.0, 0.0, 0.0, 0.0]), (5, RIGHT)]
    run_steps(agent, 601, 1201)
    assert len(agent.memory.reads) == 3, "re-read after L steps of navigating"
    assert agent.mode is Mode.NAVIGATE and target(agent) == [20.0, 0.0]


def test_with_every_match_searched_the_agent_explores_and_a_new_task_forgets_them():
    agent = searching_agent(6.0)
    agent.memory.candidates = [(3, WRONG)]
    run_steps(agent, 0, 601)
    assert agent.mode is Mode.EXPLORE
    run_steps(agent, 601, 650)
    assert agent.mode is Mode.EXPLORE, "explores L steps before the next read"
    agent.set_task(task_prompts("log"), 650)
    agent.act(observation(), 650)
    assert agent.mode is Mode.EXECUTE and target(agent) == [2.0, 0.0]


def agent_with_its_memory(name):
    """``(agent, tree)``: the mode selector over a real memory of agent ``name``'s kind (its
    stand-in tree), with scripted explorer, navigator and policy, reset at :data:`START`."""
    from mrsteve.agent.factory import agent_config, memory_part
    from mrsteve.memory import memory_variant

    tree = agent_config(name, parts="stand-in")
    encoder = SemanticEncoder()
    part = memory_part(tree.memory.kind, encoder="semantic")
    memory = memory_variant(part.kind).build(dim=encoder.dim, config=part.config)
    agent = MrSteve(memory, encoder, RecordingExplorer(), ScriptedNavigator(), RecordingPolicy(),
                    tree.mode_selector)
    agent.reset(observation(), np.random.default_rng(0), Camera(40, 64))
    return agent, tree


@pytest.mark.parametrize("name", ["mrsteve", "pm", "em", "fm", "pmc-fm", "center-embed"])
def test_every_memory_agent_re_reads_for_new_candidates_by_default(name):
    """The paper's re-query (appendix: after L steps the agent "queries the memory to search for
    new candidates") is the default, and the same rule for every memory; with a real memory of
    the agent's kind, the searched target's frames are skipped and the farther match is next."""
    agent, tree = agent_with_its_memory(name)
    assert tree.mode_selector == ModeSelectorConfig()
    assert tree.mode_selector.searched_radius == 8.0
    query = agent.encoder.encode_text(task_prompts("log").explore)
    for t, place in enumerate([WRONG, RIGHT] * 10):
        agent.memory.write(query, np.asarray(place), t)
    agent.set_task(task_prompts("log"), 20)
    agent.navigator.arrived = True
    run_steps(agent, 20, 21)
    assert target(agent) == [2.0, 0.0], "the nearest match first, as the release picks"
    run_steps(agent, 21, 621)
    assert agent.mode is Mode.EXECUTE and target(agent) == [20.0, 0.0]


@pytest.mark.parametrize("name", ["mrsteve", "pm", "em", "fm"])
def test_the_selectors_record_counts_every_match_and_names_the_nearest(name):
    """The selector reads only the first :data:`QUERY_CANDIDATES_KEPT` matches (``limit``); its
    :class:`Query` still counts every match, names those nearest first, and targets the nearest."""
    agent, _ = agent_with_its_memory(name)
    query = agent.encoder.encode_text(task_prompts("log").explore)
    distances = np.random.default_rng(1).permutation(40) + 1.0  # written in no order
    for t, x in enumerate(distances):
        agent.memory.write(query, np.array([x, 0.0, 0.0, 0.0, 0.0]), t)
    agent.set_task(task_prompts("log"), 40)
    run_steps(agent, 40, 41)
    record = agent.last_query
    assert record.candidates == 40
    assert len(record.candidates_xz) == QUERY_CANDIDATES_KEPT
    nearest = [x - START[0] for x, _ in record.candidates_xz]  # episode frame -> memory frame
    assert nearest == list(np.arange(1.0, QUERY_CANDIDATES_KEPT + 1))
    assert target(agent) == [1.0, 0.0]


@pytest.mark.parametrize("radius", [-1.0, True, "6", float("nan")])
def test_config_rejects_a_bad_searched_radius(radius):
    with pytest.raises(ValueError, match="searched_radius"):
        ModeSelectorConfig(searched_radius=radius)


def test_config_names_the_accepted_searched_targets():
    with pytest.raises(ValueError, match="searched_targets.*reached.*reached-or-blocked"):
        ModeSelectorConfig(searched_targets="blocked")
