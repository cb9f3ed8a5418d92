"""VPT's action and observation spaces, and this package's actions in them (pure numpy).

VPT (Baker et al. 2022; ``openai/Video-Pre-Training``), and STEVE-1 and VPT-Nav built on it, act in
a *hierarchical* space of two indices per step:

- ``buttons``: one of 8,641 button combinations: the product of the mutually exclusive groups of
  :data:`BUTTON_GROUPS` (hotbar 10 x fore/back 3 x left/right 3 x sprint/sneak 3 x use 2 x drop 2
  x attack 2 x jump 2 x camera on/off 2 = 8,640, last group fastest) and ``inventory`` alone
  (index 8,640) -- ``lib/action_mapping.py``, ``CameraHierarchicalMapping``;
- ``camera``: one of 121 = 11 x 11 camera bins, index ``11 * pitch_bin + yaw_bin``; a combination
  whose camera group is ``none`` moves no camera whatever this index says.

Each axis's bin is a mu-law quantisation of the camera change in degrees (``lib/actions.py``,
``CameraQuantizer``; ``agent.py``'s ``camera_binsize=2, camera_maxval=10, camera_mu=10``): the
change is clipped to +-10 degrees, mu-law encoded to ``v`` in [-10, 10] and rounded to one of the
11 bins ``(v + 10) / 2``; bin 5 is no motion. The bins' degrees are ``0, +-0.615, +-1.610, +-3.215,
+-5.810, +-10``. MineRL's environment action (VPT's ``policy2env``, MineStudio's ``env`` action
type) is a dict of the 20 :data:`BUTTONS` (0/1) and ``camera`` (pitch, yaw) in degrees.

This package's action (:mod:`mrsteve.spaces`) has MineRL's nine movement and hand buttons and the
camera in degrees, plus ``equip``, ``place`` and ``craft``, which VPT's space lacks. VPT's
``drop`` and ``inventory`` keys, and ``hotbar.N`` unless a hotbar layout says what each slot
holds, have no counterpart here. A round trip ours -> VPT -> ours is therefore the identity on the
actions VPT can express (:func:`expressible`) and :func:`canonical` on the rest: conflicting
keys resolved as VPT resolves them and the camera quantised, within :func:`camera_error_bound`.

Frames: VPT sees 128 x 128 RGB frames resized with OpenCV's bilinear ``INTER_LINEAR``
(``agent.py``, ``resize_image``); :func:`resize_bilinear` is that resize in numpy.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from mrsteve.spaces import Action

HOTBAR = tuple(f"hotbar.{i}" for i in range(1, 10))
"""MineRL's hotbar keys: ``hotbar.N`` selects hotbar slot ``N - 1``."""

BUTTONS = ("attack", "back", "forward", "jump", "left", "right", "sneak", "sprint", "use",
           "drop", "inventory", *HOTBAR)
"""VPT's factored buttons, in its order (``lib/actions.py``, ``Buttons.ALL``)."""

OUR_BUTTONS = ("forward", "back", "left", "right", "jump", "sneak", "sprint", "attack", "use")
"""The buttons of this package's action (those of :class:`mrsteve.env.voxel_env.VoxelEnv`)."""

BUTTON_GROUPS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("hotbar", ("none", *HOTBAR)),
    ("fore_back", ("none", "forward", "back")),
    ("left_right", ("none", "left", "right")),
    ("sprint_sneak", ("none", "sprint", "sneak")),
    ("use", ("none", "use")),
    ("drop", ("none", "drop")),
    ("attack", ("none", "attack")),
    ("jump", ("none", "jump")),
    ("camera", ("none", "camera")),
)
"""The mutually exclusive groups of the joint buttons index, in order (``lib/action_mapping.py``:
``ActionMapping.BUTTONS_GROUPS`` plus ``CameraHierarchicalMapping``'s camera on/off)."""

GROUP_SIZES = tuple(len(options) for _, options in BUTTON_GROUPS)
N_BUTTON_COMBINATIONS = math.prod(GROUP_SIZES) + 1
"""8,641: every combination of the groups, and ``inventory`` alone."""
INVENTORY_INDEX = N_BUTTON_COMBINATIONS - 1
"""The buttons index that opens the inventory (and moves nothing else)."""
NULL_BUTTONS_INDEX = 0
"""The buttons index of no button (every group ``none``)."""


@dataclass(frozen=True)
class CameraQuantizer:
    """VPT's mu-law camera quantisation (``lib/actions.py``, ``CameraQuantizer``) with the
    released models' settings (``agent.py``: binsize 2, maxval 10, mu 10)."""

    maxval: float = 10.0
    """Largest camera change per step and axis, degrees (larger ones are clipped)."""
    binsize: float = 2.0
    """Bin width in the mu-law encoded space."""
    mu: float = 10.0
    """The mu-law's curvature."""

    @property
    def n_bins(self) -> int:
        """Bins per axis: 11."""
        return int(round(2 * self.maxval / self.binsize)) + 1

    @property
    def null_bin(self) -> int:
        """The bin of no motion: 5."""
        return self.n_bins // 2

    def discretize(self, degrees: Any) -> np.ndarray:
        """``int64`` bin of each camera change (degrees): clip, mu-law encode, round."""
        x = np.clip(np.asarray(degrees, dtype=np.float64), -self.maxval, self.maxval) / self.maxval
        encoded = np.sign(x) * np.log1p(self.mu * np.abs(x)) / math.log1p(self.mu) * self.maxval
        return np.round((encoded + self.maxval) / self.binsize).astype(np.int64)

    def undiscretize(self, bins: Any) -> np.ndarray:
        """``float64`` degrees of each bin's centre (the inverse mu-law)."""
        v = (np.asarray(bins, dtype=np.float64) * self.binsize - self.maxval) / self.maxval
        return np.sign(v) * ((1.0 + self.mu) ** np.abs(v) - 1.0) / self.mu * self.maxval

    @property
    def centres(self) -> np.ndarray:
        """``float64[n_bins]``: the degrees each bin stands for."""
        return self.undiscretize(np.arange(self.n_bins))

    def error_bound(self, degrees: Any) -> np.ndarray:
        """The largest ``|quantised - degrees|`` for a change of ``degrees``: a bin spans 2 of
        the encoded 20, so within +-maxval ``1 + mu |q| / maxval`` is within a factor
        ``(1 + mu) ** (binsize / 2 / maxval)`` (1.271) of ``1 + mu |x| / maxval``, i.e.
        ``|q - x| <= ((1 + mu) ** 0.1 - 1) (maxval / mu + |x|)``: 0.27 degrees at rest, 2.98 at
        10 degrees (the outer bin's half width is 2.36); beyond maxval add the clipped part."""
        x = np.abs(np.asarray(degrees, dtype=np.float64))
        within = np.minimum(x, self.maxval)
        ratio = (1.0 + self.mu) ** (self.binsize / 2.0 / self.maxval) - 1.0
        return ratio * (self.maxval / self.mu + within) + (x - within)


QUANTIZER = CameraQuantizer()
"""The released VPT, VPT-Nav and STEVE-1 models' camera quantiser."""
N_CAMERA_BINS = QUANTIZER.n_bins
N_CAMERA_COMBINATIONS = N_CAMERA_BINS**2
"""121: a pitch bin and a yaw bin."""
CAMERA_NULL_INDEX = QUANTIZER.null_bin * N_CAMERA_BINS + QUANTIZER.null_bin
"""60: the camera index of no motion."""


def _button_tables() -> tuple[np.ndarray, np.ndarray]:
    """``(int8[8641, 20] factored buttons, bool[8641] camera on)`` of every buttons index
    (``CameraHierarchicalMapping._precompute_to_factored``)."""
    factored = np.zeros((N_BUTTON_COMBINATIONS, len(BUTTONS)), dtype=np.int8)
    camera_on = np.zeros(N_BUTTON_COMBINATIONS, dtype=bool)
    slots = {name: slot for slot, name in enumerate(BUTTONS)}
    combinations = itertools.product(*(options for _, options in BUTTON_GROUPS))
    for index, combination in enumerate(combinations):
        for choice in combination[:-1]:
            if choice != "none":
                factored[index, slots[choice]] = 1
        camera_on[index] = combination[-1] == "camera"
    factored[INVENTORY_INDEX, slots["inventory"]] = 1
    camera_on[INVENTORY_INDEX] = True  # upstream never sets its camera meta-action off
    return factored, camera_on


BUTTON_TABLE, CAMERA_ON = _button_tables()
BUTTON_TABLE.setflags(write=False)
CAMERA_ON.setflags(write=False)
_STRIDES = np.array([math.prod(GROUP_SIZES[i + 1:]) for i in range(len(GROUP_SIZES))])
_GROUP_SLOTS = [[BUTTONS.index(choice) for choice in options[1:]]
                for _, options in BUTTON_GROUPS[:-1]]


def buttons_index(buttons: Any, camera_bins: Any) -> np.ndarray:
    """The joint buttons index of factored ``buttons`` (``int[..., 20]`` in :data:`BUTTONS`
    order) and ``camera_bins`` (``int[..., 2]``): VPT's ``from_factored``. In each group the
    later button wins (sneak over sprint, hotbar.9 over hotbar.1), forward and back together (and
    left and right) are neither, ``inventory`` overrides everything, and the camera group is on
    when the camera bins are not both the null bin."""
    buttons = np.asarray(buttons)
    bins = np.asarray(camera_bins)
    choice = np.zeros((*buttons.shape[:-1], len(BUTTON_GROUPS)), dtype=np.int64)
    for group, slots in enumerate(_GROUP_SLOTS):
        pressed = buttons[..., slots] != 0
        if BUTTON_GROUPS[group][0] in ("fore_back", "left_right"):
            pressed = pressed & ~pressed.all(axis=-1, keepdims=True)
        later = np.where(pressed, np.arange(1, len(slots) + 1), 0)
        choice[..., group] = later.max(axis=-1)
    choice[..., -1] = np.any(bins != QUANTIZER.null_bin, axis=-1)
    index = choice @ _STRIDES
    return np.where(buttons[..., BUTTONS.index("inventory")] != 0, INVENTORY_INDEX, index)


def camera_index(camera_bins: Any) -> np.ndarray:
    """The joint camera index ``11 * pitch_bin + yaw_bin`` of ``int[..., 2]`` bins."""
    bins = np.asarray(camera_bins, dtype=np.int64)
    return bins[..., 0] * N_CAMERA_BINS + bins[..., 1]


def factored(buttons_idx: Any, camera_idx: Any) -> tuple[np.ndarray, np.ndarray]:
    """``(int8[..., 20] buttons, int64[..., 2] camera bins)`` of joint indices: VPT's
    ``to_factored`` (the camera is the null bin when the buttons index has the camera off)."""
    buttons_idx = np.asarray(buttons_idx, dtype=np.int64)
    camera_idx = np.asarray(camera_idx, dtype=np.int64)
    _check_range(buttons_idx, N_BUTTON_COMBINATIONS, "buttons")
    _check_range(camera_idx, N_CAMERA_COMBINATIONS, "camera")
    bins = np.stack([camera_idx // N_CAMERA_BINS, camera_idx % N_CAMERA_BINS], axis=-1)
    bins = np.where(CAMERA_ON[buttons_idx][..., None], bins, QUANTIZER.null_bin)
    return BUTTON_TABLE[buttons_idx], bins


def _check_range(index: np.ndarray, size: int, what: str) -> None:
    if index.size and (index.min() < 0 or index.max() >= size):
        raise ValueError(f"VPT {what} index must be in 0..{size - 1}, got "
                         f"{index.min() if index.min() < 0 else index.max()}")


# ------------------------------------------------------------------------------ env actions


def env_action(buttons_idx: int, camera_idx: int) -> dict[str, Any]:
    """MineRL's environment action of one joint action (VPT's ``to_factored`` then
    ``policy2env``): the 20 buttons as 0/1 ints and ``camera`` float32 (pitch, yaw) degrees."""
    buttons, bins = factored(int(buttons_idx), int(camera_idx))
    action: dict[str, Any] = {name: int(value) for name, value in zip(BUTTONS, buttons)}
    action["camera"] = QUANTIZER.undiscretize(bins).astype(np.float32)
    return action


def env_action_index(action: Mapping[str, Any]) -> tuple[int, int]:
    """The joint ``(buttons, camera)`` indices of a MineRL environment action (VPT's
    ``env2policy`` then ``from_factored``; missing keys are not pressed, a missing camera is
    still)."""
    buttons = np.array([int(action.get(name, 0) != 0) for name in BUTTONS])
    bins = QUANTIZER.discretize(np.asarray(action.get("camera", (0.0, 0.0)), dtype=np.float64))
    if buttons[BUTTONS.index("inventory")]:
        bins = np.full(2, QUANTIZER.null_bin)
    return int(buttons_index(buttons, bins)), int(camera_index(bins))


# ------------------------------------------------------------------------------ our actions

_PAIRS = (("forward", "back"), ("left", "right"))
_FUNCTIONAL = ("equip", "place", "craft")
"""Keys of our action VPT's space lacks."""


def canonical(action: Mapping[str, Any]) -> Action:
    """What VPT keeps of our ``action``: the buttons resolved as VPT resolves them (forward and
    back together are neither, as are left and right -- our world moves by their difference, so
    nothing changes -- and sneak wins over sprint), the camera quantised to the mu-law bins, and
    no ``equip``, ``place`` or ``craft``."""
    out: Action = {name: int(action.get(name, 0) != 0) for name in OUR_BUTTONS}
    for first, second in _PAIRS:
        if out[first] and out[second]:
            out[first] = out[second] = 0
    if out["sneak"]:
        out["sprint"] = 0
    bins = QUANTIZER.discretize(_camera(action))
    out["camera"] = QUANTIZER.undiscretize(bins).astype(np.float32)
    return out


def expressible(action: Mapping[str, Any]) -> bool:
    """Whether VPT's space holds ``action`` exactly: no ``equip``, ``place`` or ``craft``, and
    :func:`canonical` leaves its buttons and camera as they are."""
    if any(action.get(key, 0) not in (0, None) for key in _FUNCTIONAL):
        return False
    kept = canonical(action)
    return all(kept[name] == int(action.get(name, 0) != 0) for name in OUR_BUTTONS) and bool(
        np.array_equal(kept["camera"], _camera(action).astype(np.float32)))


def vpt_index(action: Mapping[str, Any]) -> tuple[int, int]:
    """The joint ``(buttons, camera)`` indices of our ``action`` (what :func:`canonical` keeps
    of it)."""
    return env_action_index({name: action.get(name, 0) for name in OUR_BUTTONS}
                            | {"camera": _camera(action)})


def from_vpt(buttons_idx: int, camera_idx: int, hotbar: Sequence[int | None] | None = None
             ) -> Action:
    """Our action of a joint VPT action: its movement and hand buttons and its camera in
    degrees. ``hotbar[n]`` is our item index in hotbar slot ``n`` (``None``: empty); with it a
    ``hotbar.N`` key becomes ``equip`` of that item (an empty slot: no change). ``drop`` and
    ``inventory`` have no counterpart and do nothing."""
    return from_env_action(env_action(buttons_idx, camera_idx), hotbar)


def from_env_action(action: Mapping[str, Any], hotbar: Sequence[int | None] | None = None
                    ) -> Action:
    """Our action of a MineRL environment action (see :func:`from_vpt` for ``hotbar``)."""
    out: Action = {name: int(action.get(name, 0) != 0) for name in OUR_BUTTONS}
    out["camera"] = _camera(action).astype(np.float32)
    if hotbar is not None:
        for slot in reversed(range(len(HOTBAR))):  # the later key wins, as in VPT
            if action.get(HOTBAR[slot], 0) and slot < len(hotbar) and hotbar[slot] is not None:
                out["equip"] = int(hotbar[slot]) + 1
                break
    return out


def to_env_action(action: Mapping[str, Any], hotbar: Sequence[int | None] | None = None
                  ) -> dict[str, Any]:
    """MineRL's environment action of our ``action`` (MineStudio's ``env`` action type): the
    buttons as they are and the camera in degrees, unquantised. ``equip`` of an item becomes the
    ``hotbar.N`` key of the slot holding it in ``hotbar`` (as :func:`from_vpt`), of the first
    empty slot when it is in none (an absent item: an empty hand), and nothing when every slot
    holds something else; ``place`` and ``craft`` have no MineRL key and are refused."""
    for key in ("place", "craft"):
        if action.get(key, 0):
            raise ValueError(f"action {key!r} has no MineRL key (MineStudio's env actions are "
                             f"{', '.join(BUTTONS)} and camera)")
    out: dict[str, Any] = {name: 0 for name in BUTTONS}
    for name in OUR_BUTTONS:
        out[name] = int(action.get(name, 0) != 0)
    out["camera"] = _camera(action).astype(np.float32)
    equip = int(action.get("equip", 0) or 0)
    if equip and hotbar is not None:
        slot = hotbar_slot(hotbar, equip - 1)
        if slot is not None:
            out[HOTBAR[slot]] = 1
    return out


def hotbar_slot(hotbar: Sequence[int | None], item: int | None) -> int | None:
    """The hotbar slot to select to hold ``item`` (our item index; ``None``: an empty hand): the
    first slot holding it, else the first empty one, else ``None``."""
    slots = list(hotbar[:len(HOTBAR)])
    if item is not None and item in slots:
        return slots.index(item)
    return slots.index(None) if None in slots else None


def _camera(action: Mapping[str, Any]) -> np.ndarray:
    camera = action.get("camera")
    return np.zeros(2) if camera is None else np.asarray(camera, dtype=np.float64).reshape(2)


# ------------------------------------------------------------------------------ frames

VPT_FRAME = (128, 128)
"""``(height, width)`` of the frames VPT, VPT-Nav and STEVE-1 see (``agent.py``)."""


def resize_bilinear(frame: np.ndarray, size: tuple[int, int] = VPT_FRAME) -> np.ndarray:
    """``frame`` (``uint8[H, W, C]`` or ``[H, W]``) resized to ``size`` ``(height, width)``
    bilinearly as OpenCV's ``INTER_LINEAR`` does: output pixel centres mapped to the source by
    ``(i + 0.5) * scale - 0.5``, the two neighbours weighted by distance, clamped at the border;
    rounded to the nearest level (OpenCV's fixed-point weights may differ by one level)."""
    frame = np.asarray(frame)
    height, width = int(size[0]), int(size[1])
    if frame.ndim not in (2, 3) or height < 1 or width < 1:
        raise ValueError(f"frame must be [H, W] or [H, W, C] and size positive, got "
                         f"{frame.shape} -> {size}")
    rows, row_w = _taps(frame.shape[0], height)
    cols, col_w = _taps(frame.shape[1], width)
    src = frame.astype(np.float64)
    if frame.ndim == 3:
        row_w, col_w = row_w[:, None, None], col_w[:, None]
    else:
        row_w = row_w[:, None]
    across = src[rows[0]] * (1.0 - row_w) + src[rows[1]] * row_w
    out = across[:, cols[0]] * (1.0 - col_w) + across[:, cols[1]] * col_w
    if np.issubdtype(frame.dtype, np.integer):
        info = np.iinfo(frame.dtype)
        return np.clip(np.rint(out), info.min, info.max).astype(frame.dtype)
    return out.astype(frame.dtype)


def _taps(src: int, dst: int) -> tuple[tuple[np.ndarray, np.ndarray], np.ndarray]:
    """The two source indices and the second one's weight of each of ``dst`` output positions
    (OpenCV's ``INTER_LINEAR`` coordinates: below 0 or past the last pixel, the border pixel)."""
    position = (np.arange(dst) + 0.5) * (src / dst) - 0.5
    low = np.floor(position).astype(np.int64)
    weight = position - low
    outside = (low < 0) | (low >= src - 1)
    weight[outside] = 0.0
    low = np.clip(low, 0, src - 1)
    return (low, np.minimum(low + 1, src - 1)), weight
