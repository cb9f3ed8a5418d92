"""Watching without acting and image goals (paper Section 4.3, Memory Tasks) on the agents."""

import numpy as np
import pytest
from test_mode_selector import (
    START,
    RecordingExplorer,
    RecordingPolicy,
    ScriptedMemory,
    ScriptedNavigator,
    observation,
)

from mrsteve.agent.baselines import Steve1
from mrsteve.agent.factory import memory_part
from mrsteve.agent.mrsteve import Mode, ModeSelectorConfig, MrSteve
from mrsteve.control.skills import GO_EXPLORE
from mrsteve.memory import memory_variant
from mrsteve.perception import SemanticEncoder
from mrsteve.tasks import task_prompts
from mrsteve.world.camera import Camera


@pytest.fixture
def agent():
    agent = MrSteve(ScriptedMemory(), SemanticEncoder(), RecordingExplorer(), ScriptedNavigator(),
                    RecordingPolicy(), ModeSelectorConfig())
    agent.reset(observation(), np.random.default_rng(0), Camera(40, 64))
    return agent


def test_observe_writes_memory_and_feeds_the_explorer_without_acting(agent):
    for t in range(4):
        assert agent.observe(observation(START + [t, 0, 0, 0, 0]), t) is None
    assert len(agent.memory) == 4 and agent.explorer.observed == 4
    assert agent.explorer.acted == 0 and agent.memory.reads == []
    agent.act(observation(), 4)  # acting writes through the same path
    assert len(agent.memory) == 5 and agent.explorer.observed == 5


def test_an_image_goal_is_the_query_then_the_agent_navigates_and_stands(agent):
    goal = np.zeros(agent.encoder.dim, np.float32)
    goal[0] = 2.0
    agent.set_goal(goal, 0.8, 0)
    agent.act(observation(), 0)
    assert agent.mode is Mode.EXPLORE and agent.last_query.prompt == "image goal"
    agent.memory.candidate = [5.0, 0.0, 7.0, 0.0, 0.0]
    for t in range(1, 601):  # Algorithm 2: explore L steps, then read again
        agent.act(observation(), t)
    assert agent.mode is Mode.NAVIGATE and agent.last_query.t == 600
    agent.navigator.arrived = True
    action = agent.act(observation(), 601)
    assert agent.mode is Mode.EXECUTE and not action.get("forward")
    assert agent.policy.prompts == [], "an image goal has nothing to execute"
    assert np.linalg.norm(agent._query_vector) == pytest.approx(1.0)


@pytest.mark.parametrize("bad", [np.zeros(3), np.zeros(0), np.full(5, np.nan)])
def test_a_bad_image_goal_is_refused(agent, bad):
    embedding = np.zeros(agent.encoder.dim) if bad.size == 0 else bad
    with pytest.raises(ValueError, match="image goal"):
        agent.set_goal(embedding, 0.8, 0)


def test_steve1_cannot_recall_an_image_goal_and_explores():
    class Wanderer:
        def __init__(self):
            self.reset_with = None
            self.acted = 0

        def reset(self, obs, rng, camera):
            self.reset_with = rng

        def observe(self, obs):
            pass

        def act(self, obs):
            self.acted += 1
            return {"forward": 1}

    policy, wanderer = RecordingPolicy(), Wanderer()
    steve1 = Steve1(policy, wanderer=wanderer)
    steve1.reset(observation(), np.random.default_rng(0), Camera(40, 64))
    steve1.observe(observation(), 0)  # no memory: nothing kept
    with pytest.raises(RuntimeError, match="set_goal"):
        steve1.act(observation(), 0)
    steve1.set_goal(np.ones(4), 0.8, 1)
    assert steve1.act(observation(), 1) == {"forward": 1}
    assert wanderer.acted == 1 and wanderer.reset_with is not None and policy.prompts == []


class GoalPolicy(RecordingPolicy):
    """A goal-conditioned policy (STEVE-1's kind) that records the goals it is given."""

    goal_encoder = "encoder-sha"

    def __init__(self):
        super().__init__()
        self.followed = []

    def goal(self, prompt):
        return np.zeros(4, np.float32)

    def follow(self, obs, goal):
        self.followed.append(np.asarray(goal).copy())
        return {"forward": 1}


def test_steve1_follows_an_image_goal_as_a_visual_goal_when_it_is_in_its_goal_space():
    policy = GoalPolicy()
    steve1 = Steve1(policy, visual_goals=True)
    steve1.reset(observation(), np.random.default_rng(0), Camera(40, 64))
    goal = np.arange(4, dtype=np.float32)
    steve1.set_goal(goal, 0.8, 1)
    assert steve1.act(observation(), 1) == {"forward": 1}
    assert len(policy.followed) == 1 and np.array_equal(policy.followed[0], goal)
    assert policy.prompts == []


def test_steve1_told_an_image_goal_it_cannot_read_goes_exploring_with_its_own_policy():
    """Not in its goal space (another encoder's embedding): STEVE-1 is told "go explore", the
    policy itself walking, no wanderer (which would read the depth frame)."""
    policy = GoalPolicy()
    steve1 = Steve1(policy)
    steve1.reset(observation(), np.random.default_rng(0), Camera(40, 64))
    steve1.set_goal(np.ones(4), 0.8, 1)
    steve1.act(observation(), 1)
    assert policy.prompts == [GO_EXPLORE] and policy.followed == []
    with pytest.raises(ValueError, match="goal-conditioned"):
        Steve1(RecordingPolicy(), visual_goals=True)


@pytest.mark.parametrize("kind", ["place-event", "place", "event", "fifo"])
@pytest.mark.parametrize(("rule", "expected_x"), [("best", 30.0), ("nearest", 2.0)])
def test_an_image_goal_targets_its_best_match_unless_told_nearest(kind, rule, expected_x):
    """The goal names one place: by default the agent goes to the frame that matches it best (30
    blocks away), not to a look-alike 2 blocks away that also clears the threshold; ``nearest``
    is the release's rule for text tasks."""
    encoder = SemanticEncoder()
    part = memory_part(kind)
    memory = memory_variant(kind).build(dim=encoder.dim, config=part.config)
    agent = MrSteve(memory, encoder, RecordingExplorer(),
                    ScriptedNavigator(), RecordingPolicy(), ModeSelectorConfig(image_goal_target=rule))
    agent.reset(observation(), np.random.default_rng(0), Camera(40, 64))
    seen = encoder.observe(observation())  # what the agent writes while it stands at START
    encoder.reset()
    rng = np.random.default_rng(1)
    goal, other = (v - (v @ seen) * seen for v in rng.normal(size=(2, encoder.dim)))
    goal /= np.linalg.norm(goal)
    other -= (other @ goal) * goal
    other /= np.linalg.norm(other)
    look_alike = 0.85 * goal + np.sqrt(1 - 0.85**2) * other  # scores 0.85 against the goal
    for t in range(20):
        agent.memory.write(goal.astype(np.float32), np.array([30.0, 0, 0, 0, 0]), 2 * t)
        agent.memory.write(look_alike.astype(np.float32), np.array([2.0, 0, 0, 0, 0]), 2 * t + 1)
    agent.set_goal(goal, 0.8, 40)
    agent.act(observation(), 40)
    assert agent.mode is Mode.NAVIGATE
    assert agent.target[0] - START[0] == pytest.approx(expected_x)


def test_an_unknown_image_goal_rule_is_refused_naming_the_accepted_ones():
    with pytest.raises(ValueError, match="best.*nearest"):
        ModeSelectorConfig(image_goal_target="farthest")


@pytest.mark.parametrize("kind", ["place-event", "place", "event", "fifo"])
@pytest.mark.parametrize(("rule", "expected_x"), [("nearest", 2.0), ("best", 30.0)])
def test_a_text_task_targets_its_nearest_match_unless_told_best(kind, rule, expected_x):
    """A text task targets the matching frame nearest the agent (the release's rule: any log
    serves "chop a tree"), here a weaker match 2 blocks away that still clears the prompt's
    threshold; ``best`` (a diagnostic) targets the frame that matches the prompt best, 30
    blocks away."""
    encoder = SemanticEncoder()
    part = memory_part(kind)
    memory = memory_variant(kind).build(dim=encoder.dim, config=part.config)
    agent = MrSteve(memory, encoder, RecordingExplorer(), ScriptedNavigator(), RecordingPolicy(),
                    ModeSelectorConfig(text_goal_target=rule))
    agent.reset(observation(), np.random.default_rng(0), Camera(40, 64))
    prompts = task_prompts("log")
    query = encoder.encode_text(prompts.explore).astype(np.float64)
    query /= np.linalg.norm(query)
    threshold = encoder.task_threshold(prompts.explore)
    assert threshold < 1.0
    other = np.random.default_rng(1).normal(size=encoder.dim)
    other -= (other @ query) * query
    other /= np.linalg.norm(other)
    score = (1.0 + threshold) / 2  # clears the threshold, below the exact match
    weaker = score * query + np.sqrt(1 - score**2) * other
    for t in range(20):
        agent.memory.write(query.astype(np.float32), np.array([30.0, 0, 0, 0, 0]), 2 * t)
        agent.memory.write(weaker.astype(np.float32), np.array([2.0, 0, 0, 0, 0]), 2 * t + 1)
    agent.set_task(prompts, 40)
    agent.act(observation(), 40)
    assert agent.mode is Mode.NAVIGATE and agent.last_query.candidates == 40
    assert agent.target[0] - START[0] == pytest.approx(expected_x)


def test_an_unknown_text_task_rule_is_refused_naming_the_accepted_ones():
    with pytest.raises(ValueError, match="nearest.*best"):
        ModeSelectorConfig(text_goal_target="farthest")
