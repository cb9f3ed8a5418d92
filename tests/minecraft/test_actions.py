"""The VPT action and frame adapter: VPT's tables, the mu-law camera, round trips, the resize."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from mrsteve.env.voxel_env import BUTTONS as ENV_BUTTONS
from mrsteve.minecraft import actions as A


@pytest.fixture(scope="module")
def env_space():
    """Our environment's action space."""
    from mrsteve.env.voxel_env import VoxelEnv

    return VoxelEnv().action_space


BUTTON_INDICES = st.integers(0, A.N_BUTTON_COMBINATIONS - 1)
CAMERA_INDICES = st.integers(0, A.N_CAMERA_COMBINATIONS - 1)
DEGREES = st.floats(-180.0, 180.0, allow_nan=False)
CENTRES = st.sampled_from([float(c) for c in A.QUANTIZER.centres.astype(np.float32)])


def our_actions(camera=DEGREES):
    return st.builds(
        lambda pressed, pitch, yaw: {**dict(zip(A.OUR_BUTTONS, pressed)),
                                     "camera": np.array([pitch, yaw], dtype=np.float32)},
        st.lists(st.integers(0, 1), min_size=9, max_size=9), camera, camera)


def test_the_tables_have_vpts_sizes_and_order():
    assert A.OUR_BUTTONS == ENV_BUTTONS
    assert (A.N_BUTTON_COMBINATIONS, A.N_CAMERA_COMBINATIONS) == (8641, 121)
    assert A.BUTTONS[:11] == ("attack", "back", "forward", "jump", "left", "right", "sneak",
                              "sprint", "use", "drop", "inventory")
    assert A.CAMERA_NULL_INDEX == 60 and A.INVENTORY_INDEX == 8640
    # itertools.product order, last group fastest: index 1 is the camera on, 2 jump, 4 attack
    assert A.CAMERA_ON[1] and not A.CAMERA_ON[0]
    assert A.BUTTON_TABLE[2, A.BUTTONS.index("jump")] == 1
    assert A.BUTTON_TABLE[4, A.BUTTONS.index("attack")] == 1
    assert A.BUTTON_TABLE[8640].tolist() == [int(b == "inventory") for b in A.BUTTONS]
    # the hotbar group is slowest: 864 combinations per hotbar choice
    assert A.BUTTON_TABLE[864, A.BUTTONS.index("hotbar.1")] == 1
    assert A.BUTTON_TABLE[863].sum() == 7  # back, right, sneak, use, drop, attack, jump


def test_the_mu_law_bins_are_vpts():
    # v in {-10, -8, ..., 10}; degrees = sign(v) ((1 + mu) ** (|v| / 10) - 1) / mu * 10
    expected = [np.sign(v) * (11.0 ** (abs(v) / 10) - 1.0) for v in range(-10, 11, 2)]
    np.testing.assert_allclose(A.QUANTIZER.centres, expected, rtol=1e-12)
    np.testing.assert_allclose(A.QUANTIZER.centres[6:], [0.6154, 1.6095, 3.2154, 5.8095, 10.0],
                               atol=1e-4)
    assert A.QUANTIZER.discretize([0.0, 0.27, 0.28, -10.0, 90.0]).tolist() == [5, 5, 6, 0, 10]
    assert A.QUANTIZER.discretize(A.QUANTIZER.centres).tolist() == list(range(11))


@given(DEGREES)
def test_the_camera_quantisation_error_is_within_the_stated_bound(degrees):
    kept = A.QUANTIZER.undiscretize(A.QUANTIZER.discretize(degrees))
    assert abs(kept - degrees) <= A.QUANTIZER.error_bound(degrees) + 1e-9
    assert kept == 0.0 or np.sign(kept) == np.sign(degrees)


def test_the_bound_is_tight_where_it_is_stated():
    x = np.linspace(-10.0, 10.0, 400_001)
    error = np.abs(A.QUANTIZER.undiscretize(A.QUANTIZER.discretize(x)) - x)
    assert 2.34 < error.max() <= 2.35  # the outer bin's half width: 10 - (11 ** 0.9 - 1)
    assert float(A.QUANTIZER.error_bound(10.0)) == pytest.approx(2.98, abs=0.01)
    assert float(A.QUANTIZER.error_bound(0.0)) == pytest.approx(0.271, abs=0.001)


@settings(max_examples=300)
@given(our_actions(camera=CENTRES))
def test_our_action_to_vpt_and_back_is_the_identity_on_what_vpt_expresses(action):
    if not A.expressible(action):  # conflicting buttons: VPT keeps the canonical form
        assert A.expressible(A.canonical(action))
        action = A.canonical(action)
    back = A.from_vpt(*A.vpt_index(action))
    assert {k: back[k] for k in A.OUR_BUTTONS} == {k: action[k] for k in A.OUR_BUTTONS}
    np.testing.assert_array_equal(back["camera"], action["camera"])


@settings(max_examples=300)
@given(our_actions())
def test_every_action_round_trips_to_its_canonical_form(action):
    back = A.from_vpt(*A.vpt_index(action))
    kept = A.canonical(action)
    assert {k: back[k] for k in A.OUR_BUTTONS} == {k: kept[k] for k in A.OUR_BUTTONS}
    np.testing.assert_array_equal(back["camera"], kept["camera"])
    error = np.abs(back["camera"].astype(np.float64) - action["camera"])
    assert np.all(error <= A.QUANTIZER.error_bound(action["camera"]) + 1e-5)


@settings(max_examples=300)
@given(BUTTON_INDICES, CAMERA_INDICES)
def test_every_vpt_index_is_a_valid_action_of_our_world(env_space, buttons, camera):
    action = A.from_vpt(buttons, camera, hotbar=[0, None, 3, None, None, None, None, None, 7])
    assert set(action) <= set(env_space.spaces)
    for key, value in action.items():
        assert env_space[key].contains(np.asarray(value, dtype=env_space[key].dtype)), (key, value)


@settings(max_examples=300)
@given(BUTTON_INDICES, CAMERA_INDICES)
def test_vpt_indices_round_trip_through_the_env_action(buttons, camera):
    got = A.env_action_index(A.env_action(buttons, camera))
    # a camera switched off moves nothing, and a null camera switched on is the same action
    camera_on = A.CAMERA_ON[buttons] and camera != A.CAMERA_NULL_INDEX
    if buttons == A.INVENTORY_INDEX:
        assert got == (buttons, A.CAMERA_NULL_INDEX)
    else:
        expected_buttons = buttons if camera_on or not A.CAMERA_ON[buttons] else buttons - 1
        assert got == (expected_buttons, camera if camera_on else A.CAMERA_NULL_INDEX)


def test_the_inventory_index_keeps_the_camera_as_upstream_to_factored_does():
    """VPT's ``_precompute_to_factored`` leaves the camera meta-action of "inventory" on, so
    ``to_factored`` keeps the camera head's bins there (``from_factored`` is what nulls them)."""
    turn = A.camera_index(np.array([3, 8]))
    buttons, bins = A.factored(A.INVENTORY_INDEX, turn)
    assert buttons[A.BUTTONS.index("inventory")] == 1 and buttons.sum() == 1
    assert bins.tolist() == [3, 8]
    assert A.env_action_index(A.env_action(A.INVENTORY_INDEX, turn)) == (
        A.INVENTORY_INDEX, A.CAMERA_NULL_INDEX)


def test_conflicting_buttons_resolve_as_vpt_does():
    both = {"forward": 1, "back": 1, "left": 1, "right": 1, "sprint": 1, "sneak": 1}
    buttons, _ = A.factored(*A.vpt_index(both))
    pressed = {name for name, value in zip(A.BUTTONS, buttons) if value}
    assert pressed == {"sneak"}
    env = {"hotbar.2": 1, "hotbar.7": 1, "camera": [0.0, 0.0]}
    assert "equip" not in A.from_env_action(env, hotbar=[None] * 9)  # empty slots: no change
    assert "equip" not in A.from_env_action(env)  # no layout: the hotbar means nothing here
    hotbar = [None, 4, None, None, None, None, 2, None, None]
    assert A.from_env_action(env, hotbar)["equip"] == 3  # hotbar.7 wins: item 2


def test_equip_becomes_the_hotbar_key_of_the_slot_holding_the_item():
    hotbar = [5, None, 2, None, None, None, None, None, None]
    env = A.to_env_action({"forward": 1, "equip": 3}, hotbar)
    assert env["hotbar.3"] == 1 and env["forward"] == 1
    assert sum(env[k] for k in A.HOTBAR) == 1
    assert A.from_env_action(env, hotbar)["equip"] == 3
    # an item in no slot: the first empty slot, an empty hand; a full hotbar: no key
    assert A.to_env_action({"equip": 9}, hotbar)["hotbar.2"] == 1
    assert sum(A.to_env_action({"equip": 10}, list(range(9)))[k] for k in A.HOTBAR) == 0
    with pytest.raises(ValueError, match="'craft' has no MineRL key"):
        A.to_env_action({"craft": 2})


def test_indices_out_of_range_are_refused():
    with pytest.raises(ValueError, match=r"buttons index must be in 0\.\.8640, got 8641"):
        A.factored(8641, 60)
    with pytest.raises(ValueError, match=r"camera index must be in 0\.\.120, got -1"):
        A.factored(0, -1)


def test_the_resize_matches_a_hand_computed_bilinear_case():
    # 2 x 4 -> 1 x 2: rows: position (0 + 0.5) * 2 - 0.5 = 0.5 -> rows 0 and 1 half each;
    # columns: (j + 0.5) * 2 - 0.5 = 0.5, 2.5 -> columns (0, 1) and (2, 3) half each
    frame = np.array([[0, 10, 20, 30], [40, 50, 60, 71]], dtype=np.uint8)
    out = A.resize_bilinear(frame, (1, 2))
    assert out.tolist() == [[25, 45]]  # (0 + 10 + 40 + 50) / 4, (20 + 30 + 60 + 71) / 4 = 45.25
    # 2 -> 3 upscaling: positions (i + 0.5) * 2 / 3 - 0.5 = -1/6 (clamped to 0), 1/2, 7/6
    # (past the last pixel: the last pixel)
    row = np.array([[0, 90]], dtype=np.uint8)
    assert A.resize_bilinear(row, (1, 3)).tolist() == [[0, 45, 90]]
    # 1 -> 4 upscaling by 4: positions -0.375, -0.125, 0.125 ... all the one pixel
    assert A.resize_bilinear(np.array([[7]], np.uint8), (4, 4)).tolist() == [[7] * 4] * 4


def test_the_resize_to_vpts_frame_keeps_channels_and_constant_frames():
    frame = np.full((360, 640, 3), (12, 200, 99), dtype=np.uint8)
    out = A.resize_bilinear(frame)
    assert out.shape == (128, 128, 3) and out.dtype == np.uint8
    assert np.all(out == (12, 200, 99))
    ramp = np.tile(np.arange(256, dtype=np.uint8), (4, 1))
    half = A.resize_bilinear(ramp, (2, 128))  # 2:1 -> each output the mean of a pixel pair
    assert half[0].tolist() == [int(np.rint(2 * j + 0.5)) for j in range(128)]
    with pytest.raises(ValueError, match="frame must be"):
        A.resize_bilinear(np.zeros((2, 2, 2, 2)), (1, 1))


def test_product_order_matches_itertools():
    combos = list(itertools.product(*(options for _, options in A.BUTTON_GROUPS)))
    for index in (0, 1, 100, 4321, 8639):
        expected = [0] * len(A.BUTTONS)
        for choice in combos[index][:-1]:
            if choice != "none":
                expected[A.BUTTONS.index(choice)] = 1
        assert A.BUTTON_TABLE[index].tolist() == expected
        assert A.CAMERA_ON[index] == (combos[index][-1] == "camera")
