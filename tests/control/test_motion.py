"""The one stall rule and the one progress rule (mrsteve.control.motion), and the parts that share
them."""

from __future__ import annotations

import numpy as np
import pytest

from mrsteve.control.motion import ProgressTracker, StallTracker, heading_to, wrap_degrees
from mrsteve.control.navigation import NavigatorConfig, StraightNavigator
from mrsteve.control.wander import WanderConfig, WanderExplorer
from mrsteve.world.camera import Camera


def test_a_step_is_stalled_only_after_forward_was_pressed_and_the_agent_barely_moved():
    tracker = StallTracker(stall_speed=0.05)
    assert tracker.update(0.0, 0.0) == 0  # the first step: nothing to compare with
    tracker.pressed(True)
    assert tracker.update(0.01, 0.0) == 1
    tracker.pressed(True)
    assert tracker.update(0.02, 0.0) == 2
    tracker.pressed(True)
    assert tracker.update(0.5, 0.0) == 0  # moved: the count resets
    tracker.pressed(True)
    assert tracker.update(0.5, 0.0) == 1
    tracker.pressed(False)
    assert tracker.update(0.5, 0.0) == 0  # forward not pressed: resets, though it did not move
    assert tracker.update(0.5, 0.0) == 0  # nothing pressed (pressed() not called): resets
    tracker.pressed(True)
    assert tracker.update(0.5, 0.04) == 1
    tracker.clear()
    assert tracker.stalled == 0
    tracker.reset()
    tracker.pressed(True)
    assert tracker.update(0.5, 0.04) == 0  # a reset forgets the last position


def test_standing_still_is_counted_whatever_was_pressed():
    tracker = StallTracker(stall_speed=0.05)
    tracker.update(0.0, 0.0)
    for step, forward in enumerate((True, False, True, False), start=1):
        tracker.pressed(forward)
        tracker.update(0.01 * step, 0.0)
        assert tracker.still == step
    assert tracker.stalled == 0  # forward was not pressed on the step before this one
    tracker.update(0.5, 0.0)  # moved: both counts reset
    assert tracker.still == tracker.stalled == 0
    tracker.update(0.5, 0.0)
    tracker.clear()
    assert tracker.still == 0


def test_progress_needs_min_gain_over_the_best_distance_and_stuck_lasts_until_restart():
    tracker = ProgressTracker(min_gain=1.0, patience=3)
    assert not tracker.update(10.0)  # the first distance is progress (best was infinite)
    assert not tracker.update(9.5)  # 0.5 closer: not enough, counts
    assert not tracker.update(9.2)
    assert tracker.update(9.1)  # three counted steps without progress
    assert tracker.update(9.0) and tracker.stuck  # stays stuck until restarted
    tracker.restart(9.0)
    assert not tracker.stuck and tracker.best == 9.0
    assert not tracker.update(7.9)  # progress: more than 1.0 below the best
    assert tracker.since == 0 and tracker.best == 7.9
    assert not tracker.update(8.0, count=False) and tracker.since == 0  # an uncounted step
    tracker.reset()
    assert tracker.best == np.inf and tracker.since == 0


def test_bad_tracker_parameters_raise():
    with pytest.raises(ValueError, match="stall_speed"):
        StallTracker(0.0)
    with pytest.raises(ValueError, match="min_gain"):
        ProgressTracker(0.0, 3)


def test_angle_helpers_follow_minecraft_yaw():
    assert wrap_degrees(190.0) == -170.0 and wrap_degrees(-180.0) == -180.0
    assert heading_to(0.0, 0.0, 0.0, 5.0) == pytest.approx(0.0)  # +z
    assert heading_to(0.0, 0.0, -5.0, 0.0) == pytest.approx(90.0)  # -x


CAMERA = Camera(24, 40)


def still(yaw: float = 0.0) -> dict[str, np.ndarray]:
    """An observation standing at (10.5, 4, 10.5) with nothing in view."""
    return {
        "pose": np.array([10.5, 4.0, 10.5, yaw, 0.0]),
        "depth": np.full(CAMERA.shape, np.inf, np.float32),
        "semantic": np.zeros(CAMERA.shape, np.uint8),
    }


def straight_navigator():
    navigator = StraightNavigator(NavigatorConfig(stall_jump=3))
    navigator.reset(np.random.default_rng(0), CAMERA)
    return lambda obs: navigator.act(obs, (10.5, 40.5))  # straight ahead (+z)


def wanderer():
    explorer = WanderExplorer(WanderConfig(stall_jump=3))
    explorer.reset(still(), np.random.default_rng(0), CAMERA)

    def step(obs):
        explorer.observe(obs)
        return explorer.act(obs)

    return step


@pytest.mark.parametrize("make", [straight_navigator, wanderer], ids=["navigator", "wanderer"])
def test_parts_jump_after_stall_jump_stalled_steps_and_moving_resets_the_count(make):
    step = make()
    jumps = [step(still())["jump"] for _ in range(5)]
    assert [bool(a) for a in jumps] == [False, False, False, True, True]  # stalled: 0, 1, 2, 3, 4
    moved = still()
    moved["pose"][2] += 1.0
    action = step(moved)
    assert action["forward"] and not action["jump"]  # it moved: the count is back to 0
