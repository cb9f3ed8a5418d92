"""The driver: one loop for every episode. What its controllers see (the episode frame), what its
callbacks get (the step and the decision the controller returned), when it stops, and how a
scripted set-up is left out of the episode (anchor)."""

from __future__ import annotations

import numpy as np
import pytest

from mrsteve.protocols import Decision, Mode
from mrsteve.tasks.driver import Driver, EpisodeCallback, Trajectory, compact_trajectory


class Line:
    """A tiny environment: the player walks +1 in x per step from x = 10.5; it ends at x = 20.5."""

    def reset(self, *, seed=None, options=None):
        self.x = 10.5
        return self.obs(), {"camera": None, "seed": seed}

    def obs(self):
        pose = np.array([self.x, 64.0, 3.25, 0.0, 0.0])
        return {"rgb": None, "depth": None, "semantic": None, "pose": pose, "inventory": None,
                "secret": "the map"}

    def step(self, action):
        self.x += action.get("forward", 0)
        return self.obs(), 0.0, self.x >= 20.5, False, {"action": dict(action)}


class Steps(EpisodeCallback):
    def __init__(self):
        self.resets, self.steps = [], []

    def on_reset(self, env, obs, frame):
        self.resets.append((obs["pose"][0], frame.origin))

    def on_step(self, step):
        self.steps.append(step)


def walker(view, t):
    assert set(view) == {"rgb", "depth", "semantic", "pose", "inventory"}, "agent keys only"
    return Decision({"forward": 1}, mode=Mode.EXPLORE, goal=(float(view["pose"][0]) + 1, 0.0))


def test_controllers_see_the_episode_frame_and_callbacks_get_their_decisions():
    calls = Steps()
    driver = Driver(Line(), [calls])
    info = driver.reset(seed=3)
    assert info["seed"] == 3 and calls.resets == [(10.5, (10.0, 0.0, 3.0))]
    assert driver.view["pose"][0] == 0.5, "relative to the start's block corner"
    last = driver.run(walker, steps=4)
    assert [step.t for step in calls.steps] == [1, 2, 3, 4] and last is calls.steps[-1]
    assert all(step.decision.mode is Mode.EXPLORE for step in calls.steps)
    assert calls.steps[0].decision.goal == (1.5, 0.0), "what the controller returned"
    assert calls.steps[0].obs["pose"][0] == 11.5, "callbacks get the world frame"
    assert driver.frame.to_world(*calls.steps[0].decision.goal) == (11.5, 3.0)


def test_a_run_stops_at_its_budget_its_condition_or_the_episodes_end():
    driver = Driver(Line())
    driver.reset(seed=0)
    driver.run(walker, steps=2)
    assert driver.t == 2
    last = driver.run(walker, steps=100, until=lambda step: step.obs["pose"][0] >= 15.5)
    assert driver.t == 5 and last.obs["pose"][0] == 15.5
    last = driver.run(walker, steps=100)
    assert last.terminated and driver.t == 10, "the environment's end stops the run"
    assert driver.run(walker, steps=0) is None


def test_a_controller_with_nothing_left_to_do_ends_the_run_before_a_step():
    driver = Driver(Line(), [calls := Steps()])
    driver.reset(seed=0)
    seen = []

    def until_x_13(view, t):  # sees the view before each step, as a goal check does
        seen.append(t)
        return None if view["pose"][0] >= 3.5 else {"forward": 1}

    last = driver.run(until_x_13, steps=100)
    assert driver.t == 3 and seen == [0, 1, 2, 3] and len(calls.steps) == 3
    assert last is calls.steps[-1] and last.obs["pose"][0] == 13.5
    assert driver.run(until_x_13, steps=100) is None and driver.t == 3, "no step at all"


def test_plain_action_dicts_are_decisions_without_a_mode():
    driver = Driver(Line(), [calls := Steps()])
    driver.reset(seed=0)
    driver.run(lambda view, t: {"forward": 1}, steps=1)
    (step,) = calls.steps
    assert step.decision == {"forward": 1} and step.decision.mode is None
    assert step.info["action"] == {"forward": 1}, "the environment gets the action as given"


def test_anchor_starts_the_episode_after_a_scripted_set_up():
    driver = Driver(Line())
    driver.reset(seed=0)
    driver.step({"forward": 3})  # a teleport, say: not part of the episode
    driver.anchor()
    assert driver.t == 0 and driver.frame.origin == (13.0, 0.0, 3.0)
    assert driver.view["pose"][0] == 0.5


def test_the_trajectory_holds_the_start_and_every_step():
    path = Trajectory()
    driver = Driver(Line(), [path])
    driver.reset(seed=0)
    driver.run(walker, steps=3)
    np.testing.assert_array_equal(path.array(), [[10.5, 3.25], [11.5, 3.25], [12.5, 3.25],
                                                 [13.5, 3.25]])
    assert compact_trajectory(path.array(), 2) == [[10.5, 3.25], [12.5, 3.25], [13.5, 3.25]]


def test_decisions_keep_what_they_carry_through_a_pickle():
    import pickle

    decision = Decision({"attack": 1}, mode=Mode.EXECUTE, target=(1.0, 2.0, 3.0, 0.0, 0.0),
                        notes={"label": {"forward": 1}})
    copy = pickle.loads(pickle.dumps(decision))
    assert copy == decision and copy.mode is Mode.EXECUTE and copy.target == decision.target
    assert copy.notes == {"label": {"forward": 1}}
    with pytest.raises(AttributeError):
        decision.colour = "red"  # a decision holds its fields only


def test_a_recording_callback_gets_the_view_each_decision_was_made_on():
    """What the trainings' recorders keep: the view before the step beside the decision (and its
    notes), the observation after it."""

    class Recorder(EpisodeCallback):
        def __init__(self):
            self.rows = []

        def on_step(self, step):
            self.rows.append((float(step.view["pose"][0]), float(step.obs["pose"][0]),
                              step.decision.notes["label"]))

    recorder = Recorder()
    driver = Driver(Line(), [recorder])
    driver.reset(seed=0)
    driver.run(lambda view, t: Decision({"forward": 1}, notes={"label": t}), steps=3)
    assert recorder.rows == [(0.5, 11.5, 0), (1.5, 12.5, 1), (2.5, 13.5, 2)]  # view: episode frame
    step = driver.step(Decision({"forward": 1}, notes={"label": 3}))
    assert "secret" not in step.view and "secret" in step.obs, "the agent's view, the world's obs"
