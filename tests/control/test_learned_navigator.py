"""The learned navigator (VPT-Nav's role): its goal encoder's inputs, VPT's camera bins, the
weights file, the shipped weights acting, and what it reads of an observation."""

from __future__ import annotations

import dataclasses
import json
import math
import warnings
from collections.abc import Mapping
from dataclasses import replace

import numpy as np
import pytest

from mrsteve.agent.factory import make_navigator
from mrsteve.control.learned_navigator import (
    BUTTONS,
    CAMERA_BINS,
    GOAL_CLIP,
    LearnedNavigator,
    NavigatorArchitecture,
    NavigatorWeights,
    camera_bin_values,
    camera_bins,
    goal_features,
    load_navigator_weights,
    load_shipped_navigator,
)
from mrsteve.control.navigation import NavigatorConfig
from mrsteve.env import make_env
from mrsteve.nn import press_probability, weights_sha256
from mrsteve.spaces import AgentFrame


def test_the_goal_is_rescaled_to_length_20_then_squashed_by_symlog():
    near = goal_features(3.0, -4.0, 0.0, 0.0)
    assert near[:2] == pytest.approx([math.log1p(3.0), -math.log1p(4.0)], abs=1e-6)
    far = goal_features(30.0, 40.0, 90.0, 30.0)  # length 50 -> (12, 16)
    assert far[:2] == pytest.approx([math.log1p(12.0), math.log1p(16.0)], abs=1e-6)
    assert math.hypot(math.expm1(far[0]), math.expm1(far[1])) == pytest.approx(GOAL_CLIP, 1e-5)
    assert far[2:] == pytest.approx([0.0, 1.0, math.cos(math.radians(30)), 0.5], abs=1e-6)
    batch = goal_features(np.array([0.0, 100.0]), np.array([0.0, 0.0]), np.zeros(2), np.zeros(2))
    assert batch.shape == (2, 6) and batch.dtype == np.float32
    assert batch[0, :2].tolist() == [0.0, 0.0] and batch[1, 0] == pytest.approx(math.log1p(20))


def test_one_steps_goal_features_are_the_batch_ones_to_the_bit():
    """The scalar path (one step's Python floats) gives what the array path gives."""
    rng = np.random.default_rng(0)
    dx, dz = rng.uniform(-60, 60, (2, 400))
    dx[::7], dz[::11] = 0.0, -0.0
    yaw, pitch = rng.uniform(-360, 360, 400), rng.uniform(-90, 90, 400)
    batch = goal_features(dx, dz, yaw, pitch)
    one_by_one = np.array([goal_features(float(a), float(b), float(c), float(d))
                           for a, b, c, d in zip(dx, dz, yaw, pitch, strict=True)])
    assert one_by_one.dtype == np.float32
    np.testing.assert_array_equal(one_by_one, batch)


def test_camera_bins_are_vpts_mu_law_bins():
    values = camera_bin_values()
    assert len(values) == CAMERA_BINS == 11
    assert values[5] == 0.0 and values[-1] == pytest.approx(10.0) and values[0] == -values[-1]
    assert np.all(np.diff(values) > 0)
    assert np.diff(values)[5] < np.diff(values)[-1]  # finer near zero
    assert camera_bins(values).tolist() == list(range(CAMERA_BINS))
    assert camera_bins(np.array([-45.0, 0.2, 45.0])).tolist() == [0, 5, 10]


def small_weights(conditioning: str = "head", seed: int = 0,
                  give_up: bool = False) -> NavigatorWeights:
    architecture = NavigatorArchitecture(channels=(4, 8), strides=(2, 2), dim=16, context=4,
                                         heads=2, mlp_dim=24, goal_hidden=8,
                                         conditioning=conditioning, give_up=give_up)
    rng = np.random.default_rng(seed)
    parameters = {name: rng.normal(0.0, 0.2, shape).astype(np.float32)
                  for name, shape in architecture.parameter_shapes().items()}
    return NavigatorWeights(architecture, parameters, {"made by": "the test"})


def test_weights_round_trip_and_bad_files_are_refused_with_the_reason(tmp_path):
    weights = small_weights()
    weights.save(tmp_path / "nav.npz")
    loaded = load_navigator_weights(tmp_path / "nav.npz")
    assert loaded.sha256 == weights.sha256 and loaded.architecture == weights.architecture
    (tmp_path / "text.npz").write_text("not an archive")
    with pytest.raises(ValueError, match="not a navigator weights file"):
        load_navigator_weights(tmp_path / "text.npz")
    from mrsteve.perception.pixels import load_shipped_weights

    load_shipped_weights().save(tmp_path / "pixels.npz")
    with pytest.raises(ValueError, match="format is 'mrsteve-pixel-encoder'"):
        load_navigator_weights(tmp_path / "pixels.npz")
    parameters = dict(weights.parameters)
    parameters["core.qkv.weight"] = parameters["core.qkv.weight"][:-1]
    replace(weights, parameters=parameters).save(tmp_path / "shape.npz")
    with pytest.raises(ValueError, match="core.qkv.weight"):
        load_navigator_weights(tmp_path / "shape.npz")
    parameters = dict(weights.parameters)
    parameters["head.camera.bias"] = np.full_like(parameters["head.camera.bias"], np.nan)
    replace(weights, parameters=parameters).save(tmp_path / "nan.npz")
    with pytest.raises(ValueError, match="NaN"):
        load_navigator_weights(tmp_path / "nan.npz")
    parameters = dict(weights.parameters)
    del parameters["goal_out.0.weight"]
    replace(weights, parameters=parameters).save(tmp_path / "missing.npz")
    with pytest.raises(ValueError, match="missing.*goal_out.0.weight"):
        load_navigator_weights(tmp_path / "missing.npz")
    with pytest.raises(ValueError, match="foundation policy"):
        LearnedNavigator(weights=small_weights("none"))


class ReadSpy(Mapping):
    """An observation that records the keys read from it."""

    def __init__(self, obs, read):
        self._obs, self._read = obs, read

    def __getitem__(self, key):
        self._read.add(key)
        return self._obs[key]

    def __iter__(self):
        return iter(self._obs)

    def __len__(self):
        return len(self._obs)


def test_it_reads_only_the_rgb_frame_and_the_pose():
    env = make_env(world="flat")
    obs, info = env.reset(seed=0)
    frame = AgentFrame.of(obs)
    navigator = make_navigator("learned")
    navigator.reset(np.random.default_rng(0), info["camera"])
    read: set[str] = set()
    for _ in range(5):
        navigator.observe(ReadSpy(frame.view(obs), read))
        navigator.blocked(ReadSpy(frame.view(obs), read), (12.0, 0.0))
        action = navigator.act(ReadSpy(frame.view(obs), read), (12.0, 0.0))
        obs, *_ = env.step(action)
    assert read == {"rgb", "pose"} == set(LearnedNavigator.reads)


def test_frames_of_another_size_are_refused():
    navigator = LearnedNavigator(weights=small_weights())
    navigator.reset(np.random.default_rng(0), None)
    obs = {"rgb": np.zeros((24, 40, 3), np.uint8), "pose": np.zeros(5)}
    with pytest.raises(ValueError, match=r"frames of \(40, 64, 3\)"):
        navigator.act(obs, (10.0, 0.0))


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_the_shipped_navigator_walks_to_a_goal_on_flat_ground(seed):
    weights = load_shipped_navigator()
    assert weights.architecture.conditioning == "head"
    env = make_env(world="flat")
    obs, info = env.reset(seed=seed)
    frame = AgentFrame.of(obs)
    rng = np.random.default_rng(seed)
    angle = rng.uniform(0, 2 * math.pi)
    goal = (12 * math.cos(angle), 12 * math.sin(angle))
    navigator = make_navigator("learned")
    navigator.reset(rng, info["camera"])
    for _ in range(300):
        view = frame.view(obs)
        if navigator.reached(view, goal):
            break
        obs, *_ = env.step(navigator.act(view, goal))
    assert navigator.reached(frame.view(obs), goal)


def test_same_seed_same_actions():
    def actions(seed):
        env = make_env(world="plains_nav")
        obs, info = env.reset(seed=seed)
        frame = AgentFrame.of(obs)
        navigator = make_navigator("learned")
        navigator.reset(np.random.default_rng(seed), info["camera"])
        taken = []
        for _ in range(30):
            action = navigator.act(frame.view(obs), (8.0, 9.0))
            taken.append((action.get("forward", 0), action.get("jump", 0),  # a no-op once there
                          *action["camera"].tolist()))
            obs, *_ = env.step(action)
        return taken

    assert actions(3) == actions(3)


def test_a_button_logit_far_below_zero_is_never_pressed_and_warns_of_nothing():
    # policies fine-tuned by PPO reach logits below -88, where float32 exp overflows
    logits = np.array([-1e4, -100.0, 0.0, 100.0], np.float32)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        chances = press_probability(logits)
    assert chances.tolist() == [0.0, pytest.approx(0.0, abs=1e-40), 0.5, 1.0]


def test_a_goal_without_progress_is_given_up_and_a_new_goal_is_not():
    navigator = LearnedNavigator(NavigatorConfig(no_progress_steps=20, progress_gain=1.0,
                                                 stuck_steps=1000, idle_steps=1000),
                                 weights=small_weights())
    navigator.reset(np.random.default_rng(0), None)
    obs = {"rgb": np.zeros((40, 64, 3), np.uint8), "pose": np.zeros(5)}  # it never moves
    goal = (12.0, 0.0)
    assert not navigator.blocked(obs, goal)
    for _ in range(21):  # the first step sets the best distance, 20 more without progress
        assert not navigator.blocked(obs, goal)
        navigator.act(obs, goal)
    assert navigator.blocked(obs, goal)
    assert not navigator.blocked(obs, (-12.0, 0.0))  # another goal: no evidence yet
    navigator.act(obs, (-12.0, 0.0))
    assert not navigator.blocked(obs, (-12.0, 0.0))


def pressing_forward(navigator: LearnedNavigator) -> LearnedNavigator:
    """``navigator`` with a policy that always presses forward and never turns."""
    buttons = np.where(np.array(BUTTONS) == "forward", 20.0, -20.0).astype(np.float32)
    camera = np.full((2, CAMERA_BINS), -20.0, np.float32)
    camera[:, CAMERA_BINS // 2] = 20.0
    navigator.policy.step = lambda rgb, goal: (buttons, camera)
    return navigator


def test_a_goal_is_given_up_after_stuck_steps_stalled_steps_in_a_row():
    navigator = pressing_forward(LearnedNavigator(
        NavigatorConfig(stuck_steps=10, no_progress_steps=1000), weights=small_weights()))
    navigator.reset(np.random.default_rng(0), None)
    goal, rgb = (12.0, 0.0), np.zeros((40, 64, 3), np.uint8)
    for x in np.arange(10) * 0.3:  # walking: never stalled
        assert navigator.act({"rgb": rgb, "pose": np.array([x, 0, 0, -90, 0])}, goal)["forward"]
    wall = {"rgb": rgb, "pose": np.array([2.7, 0, 0, -90, 0])}  # then against a wall
    for _ in range(10):
        assert not navigator.blocked(wall, goal)
        navigator.act(wall, goal)
    assert navigator.blocked(wall, goal)
    assert not navigator.blocked(wall, (-12.0, 0.0))  # another goal starts counting afresh
    navigator.act(wall, (-12.0, 0.0))
    assert not navigator.blocked(wall, (-12.0, 0.0))


def standing_still(navigator: LearnedNavigator, turn: float) -> LearnedNavigator:
    """``navigator`` with a policy that never presses a button and turns ``turn`` bins a step."""
    buttons = np.full(len(BUTTONS), -20.0, np.float32)
    camera = np.full((2, CAMERA_BINS), -20.0, np.float32)
    camera[0, CAMERA_BINS // 2 + turn] = camera[1, CAMERA_BINS // 2] = 20.0
    navigator.policy.step = lambda rgb, goal: (buttons, camera)
    return navigator


@pytest.mark.parametrize("turn", [0, 2])
def test_a_goal_is_given_up_after_idle_steps_standing_still_whatever_the_policy_pressed(turn):
    navigator = standing_still(LearnedNavigator(
        NavigatorConfig(idle_steps=12, stuck_steps=1000, no_progress_steps=1000),
        weights=small_weights()), turn)
    navigator.reset(np.random.default_rng(0), None)
    goal, rgb = (12.0, 0.0), np.zeros((40, 64, 3), np.uint8)
    for x in np.arange(8) * 0.3:  # carried along (a current, a push): not standing still
        navigator.act({"rgb": rgb, "pose": np.array([x, 0, 0, -90, 0])}, goal)
    obs = {"rgb": rgb, "pose": np.array([2.1, 0, 0, -90, 0])}
    for _ in range(12):
        assert not navigator.blocked(obs, goal)
        assert not navigator.act(obs, goal)["forward"]
    assert navigator.blocked(obs, goal)
    navigator.act(obs, (-12.0, 0.0))  # another goal starts counting afresh
    assert not navigator.blocked(obs, (-12.0, 0.0))


def test_a_give_up_head_is_recorded_only_where_the_weights_have_one(tmp_path):
    plain, headed = small_weights(), small_weights(give_up=True)
    assert set(headed.parameters) - set(plain.parameters) == {"head.give_up.weight",
                                                            "head.give_up.bias"}
    for name, weights in (("plain", plain), ("headed", headed)):
        weights.save(tmp_path / f"{name}.npz")
        loaded = load_navigator_weights(tmp_path / f"{name}.npz")
        assert loaded.architecture == weights.architecture and loaded.sha256 == weights.sha256
        with np.load(tmp_path / f"{name}.npz") as archive:
            recorded = json.loads(archive["meta"].tobytes().decode())["architecture"]
        assert ("give_up" in recorded) == weights.architecture.give_up
    # weights from before the head keep their digest: it hashes the fields they recorded
    fields = dataclasses.asdict(plain.architecture)
    del fields["give_up"]
    assert plain.sha256 == weights_sha256(fields, plain.parameters)
    assert load_shipped_navigator().architecture.give_up  # the shipped weights have one
    with pytest.raises(ValueError, match="give-up head needs a goal"):
        small_weights("none", give_up=True)
    navigator = LearnedNavigator(weights=plain)
    with pytest.raises(ValueError, match="no give-up head"):
        navigator.policy.give_up_logit()


def judging(probability: float) -> NavigatorWeights:
    """Small weights whose give-up head puts every goal out of reach with ``probability``."""
    weights = small_weights(give_up=True)
    parameters = dict(weights.parameters)
    parameters["head.give_up.weight"] = np.zeros_like(parameters["head.give_up.weight"])
    parameters["head.give_up.bias"] = np.array([math.log(probability / (1 - probability))],
                                               np.float32)
    return replace(weights, parameters=parameters)


@pytest.mark.parametrize(("probability", "threshold", "gives_up"),
                         [(0.95, 0.9, True), (0.8, 0.9, False), (0.8, 0.7, True)])
def test_the_give_up_head_gives_a_goal_up_after_give_up_steps_judged_out_of_reach(
        probability, threshold, gives_up):
    rules_off = NavigatorConfig(stuck_steps=1000, no_progress_steps=1000, idle_steps=1000,
                                give_up_probability=threshold, give_up_steps=6)
    navigator = LearnedNavigator(rules_off, weights=judging(probability))
    navigator.reset(np.random.default_rng(0), None)
    rgb, goal = np.zeros((40, 64, 3), np.uint8), (12.0, 0.0)
    for x in np.arange(6) * 0.3:  # walking toward it: the motion rules see nothing wrong
        obs = {"rgb": rgb, "pose": np.array([x, 0, 0, -90, 0])}
        assert not navigator.blocked(obs, goal)
        navigator.act(obs, goal)
    assert navigator.blocked(obs, goal) == gives_up
    assert not navigator.blocked(obs, (-12.0, 0.0))  # another goal is judged afresh
    navigator.act(obs, (-12.0, 0.0))
    assert not navigator.blocked(obs, (-12.0, 0.0))
    navigator.reset(np.random.default_rng(0), None)
    assert not navigator.blocked(obs, goal)


def test_the_give_up_settings_are_checked():
    for bad in ({"give_up_probability": 1.0}, {"give_up_probability": 0.0},
                {"give_up_steps": 0}, {"idle_steps": 0}):
        with pytest.raises(ValueError, match="give_up|step counts"):
            NavigatorConfig(**bad)
