"""Plan4MC's low level: a DQN over the RGB frame and the goal, acting epsilon-greedily, run by
numpy."""

from __future__ import annotations

import numpy as np
import pytest

from mrsteve.control.dqn_navigator import (
    DQN_ACTIONS,
    DQNArchitecture,
    DQNNavigator,
    DQNWeights,
    dqn_action,
)
from mrsteve.control.navigation import NavigatorConfig
from mrsteve.control.registry import navigator_spec


def preferring(action: int) -> DQNWeights:
    """Weights whose Q-values are the bias of the last layer alone: ``action`` the best."""
    architecture = DQNArchitecture()
    parameters = {name: np.zeros(shape, np.float32)
                  for name, shape in architecture.parameter_shapes().items()}
    parameters["q.bias"][action] = 1.0
    return DQNWeights(architecture, parameters)


def view(x: float = 0.0, z: float = 0.0, yaw: float = 0.0, pitch: float = 0.0) -> dict:
    return {"rgb": np.zeros((40, 64, 3), np.uint8),
            "pose": np.array([x, 64.0, z, yaw, pitch], np.float32)}


@pytest.mark.parametrize("best", range(len(DQN_ACTIONS)))
def test_it_takes_the_best_action_but_one_step_in_twenty_at_random(best):
    navigator = DQNNavigator(weights=preferring(best))
    navigator.reset(np.random.default_rng(0), None)
    forward, jump, turn = DQN_ACTIONS[best]
    actions = [navigator.act(view(), (0.0, 15.0)) for _ in range(2000)]
    chosen = [int(a["forward"]) == forward and int(a["jump"]) == jump
              and float(a["camera"][1]) == turn for a in actions]
    assert 0.94 < np.mean(chosen) < 0.98  # 0.95 + 0.05 / 6 on average


def test_it_levels_the_view_stops_at_the_goal_and_never_judges_a_goal_out_of_reach():
    config = NavigatorConfig()
    action = dqn_action(0, pitch=40.0, config=config)
    assert float(action["camera"][0]) == -config.max_turn  # looking down: raise the view
    navigator = DQNNavigator(config, weights=preferring(0))
    navigator.reset(np.random.default_rng(0), None)
    at_goal = navigator.act(view(1.0, 1.0), (0.0, 0.0))
    assert not at_goal.get("forward") and navigator.reached(view(1.0, 1.0), (0.0, 0.0))
    assert not navigator.blocked(view(), (500.0, 500.0))
    small = {**view(), "rgb": np.zeros((24, 40, 3), np.uint8)}
    with pytest.raises(ValueError, match=r"take frames of \(40, 64, 3\), got \(24, 40, 3\)"):
        navigator.act(small, (0.0, 15.0))


def test_the_registry_builds_it_on_the_shipped_weights_reading_rgb_and_pose():
    spec = navigator_spec("dqn")
    navigator = spec.make()
    assert isinstance(navigator, DQNNavigator) and spec.reads == ("rgb", "pose")
    assert not spec.agents_walk  # Plan4MC's own rows, not MrSteve's
    assert spec.paper_row == "Low-level Navigator in Plan4MC"
