"""The package's world behind MineStudio's simulator interface: :class:`VoxelMinecraftSim`.

A real simulator (the voxel world of ``mrsteve/Voxel-v0``, :class:`mrsteve.env.voxel_env.
VoxelEnv`), presented as MineStudio's ``MinecraftSim`` with ``action_type="env"``
(``minestudio/simulator/entry.py``) presents Minecraft, so that the code that runs the agent in
Minecraft (:mod:`mrsteve.minecraft.sim`) runs here unchanged:

- ``reset()`` and ``step(action)`` call the callbacks' hooks in MineStudio's order
  (``before_reset``, ``after_reset``, ``before_step``, ``after_step``), ``close()`` and
  ``render()`` theirs, and ``_wrap_obs_info`` keeps ``info`` keys from step to step as MineStudio
  does; a reset is hard unless a ``before_reset`` returns ``False`` (a fast reset: the world goes
  on), then ``num_empty_frames`` no-op steps (MineStudio's 20; 0 runs the package's own episode
  step for step);
- the observation is ``{"image": frame}``; ``info`` has ``pov``, ``player_pos`` ``{x, y, z,
  pitch, yaw}`` (the world's pose: feet, Minecraft's angles), ``inventory`` ``{slot: {"type",
  "quantity"}}`` over 36 slots (an item takes the first free slot when it arrives and leaves it
  when it runs out, the hotbar first, as Minecraft fills them; one slot per item, whatever the
  count), ``equipped_items``, ``is_gui_open``, ``location_stats`` (``xpos``, ``ypos``, ``zpos``,
  ``pitch``, ``yaw``), MineRL's statistics counted from the world's events (``mine_block``,
  ``craft_item``, ``pickup``, ``use_item``, ``kill_entity``; ``break_item``, ``damage_dealt`` and
  ``custom`` empty); and, beyond MineStudio, ``depth`` and ``semantic`` (the frames the
  package's stand-in parts read, which Minecraft does not render); ``image_size`` resizes the
  image as MineStudio's ``obs_size`` does;
- actions are MineRL's environment actions: the buttons, ``camera`` degrees, and ``hotbar.N``,
  which holds the item in slot ``N - 1`` (an empty slot: an empty hand); ``inventory``, ``drop``,
  ``ESC``, ``pickItem`` and ``swapHands`` do nothing here;
- ``sim.env.execute_cmd`` runs ``/give``, ``/clear``, ``/tp`` and ``/summon`` (Minecraft's
  syntax; ``/time``, ``/weather``, ``/gamerule`` and ``/difficulty`` change nothing here) and takes
  a game tick, as MineRL does; with ``command_ticks=False`` the command lands between steps, as the
  package's own tasks give items (so, with ``num_empty_frames=0`` too, the facade runs the
  package's episode step for step).
"""

from __future__ import annotations

import shlex
from collections.abc import Mapping, Sequence
from typing import Any

import gymnasium as gym
import numpy as np

from mrsteve.env import make_env
from mrsteve.minecraft.actions import BUTTONS, HOTBAR, from_env_action
from mrsteve.minecraft.sim import EMPTY, ItemNames, item_names

N_SLOTS = 36
"""Slots of MineStudio's ``info["inventory"]`` (0-8: the hotbar)."""

IGNORED_KEYS = ("ESC", "pickItem", "swapHands", "chat")
"""MineRL action keys the package's world has no use for (``chat`` when empty)."""

COMMAND_USAGE = ("commands are /give @p minecraft:ITEM [COUNT], /clear @p [minecraft:ITEM], "
                 "/tp @p X Y Z [YAW PITCH] (~ for relative), /summon minecraft:MOB [X Y Z], and "
                 "/time, /weather, /gamerule, /difficulty (accepted, no effect here)")
"""What :meth:`VoxelMinecraftSim.run_command` accepts, in one line."""

IGNORED_COMMANDS = ("/time", "/weather", "/gamerule", "/difficulty")
"""Minecraft commands MineStudio's callbacks send that the package's world has nothing for."""

NUM_EMPTY_FRAMES = 20
"""No-op steps after a reset, MineStudio's default (``MinecraftSim(num_empty_frames=20)``: past
the game's black first frames)."""

STAT_KEYS = ("mine_block", "craft_item", "pickup", "use_item", "break_item", "damage_dealt",
             "kill_entity", "custom")
"""MineRL's statistics in ``info``, each ``{name: count}`` since the hard reset."""

EVENT_STATS = {"broke": "mine_block", "crafted": "craft_item", "collected": "pickup",
               "consumed": "use_item", "killed": "kill_entity"}
"""The statistic each of the world's events counts in (tools never break here and damage is
not dealt in points: ``break_item``, ``damage_dealt`` and ``custom`` stay empty)."""


def resized(image: np.ndarray, size: tuple[int, int]) -> np.ndarray:
    """``image`` resized to ``size`` ``(width, height)`` with bilinear filtering, as MineStudio's
    ``cv2.resize(..., interpolation=cv2.INTER_LINEAR)``."""
    from PIL import Image

    return np.asarray(Image.fromarray(image).resize(size, Image.Resampling.BILINEAR))


class _Commands:
    """``sim.env`` of a :class:`VoxelMinecraftSim`: the chat commands MineStudio's callbacks
    run (``execute_cmd``) and its no-op action."""

    def __init__(self, sim: VoxelMinecraftSim) -> None:
        self._sim = sim

    def execute_cmd(self, command: str) -> tuple[dict, float, bool, dict]:
        """Run ``/give @p minecraft:ITEM [COUNT]`` or ``/clear @p [minecraft:ITEM]`` and, as
        MineRL sends a command as a chat action, take one no-op step (a game tick; not with
        ``command_ticks=False``); returns MineRL's raw ``(obs, reward, done, info)`` after it
        (the simulator's callbacks are not called: MineRL's inner environment steps)."""
        sim = self._sim
        sim.run_command(command)
        if not sim.command_ticks:
            return sim._raw_observation(), 0.0, False, {}
        sim._voxel_obs, reward, terminated, truncated, voxel_info = sim.voxel.step(
            sim._our_action(sim.noop_action()))
        info = sim._step_info(voxel_info)
        return sim._raw_observation(), float(reward), bool(terminated or truncated), info

    def noop_action(self) -> dict[str, Any]:
        return self._sim.noop_action()


class VoxelMinecraftSim:
    """The package's voxel world with MineStudio's ``MinecraftSim`` interface (module
    docstring). ``env_kwargs`` are ``make_env(...)``'s; every reset
    rebuilds the world with ``seed`` (MineStudio fixes the world's seed when the simulator is
    made); ``callbacks`` are MineStudio callbacks."""

    def __init__(self, *, seed: int = 0, callbacks: Sequence[Any] = (),
                 names: ItemNames | None = None, num_empty_frames: int = NUM_EMPTY_FRAMES,
                 image_size: tuple[int, int] | None = None, command_ticks: bool = True,
                 **env_kwargs: Any) -> None:
        self.voxel = make_env(**env_kwargs)
        self.seed = int(seed)
        if int(num_empty_frames) < 0:
            raise ValueError(f"num_empty_frames must be >= 0, got {num_empty_frames}")
        self.num_empty_frames = int(num_empty_frames)
        self.command_ticks = bool(command_ticks)
        """Whether ``env.execute_cmd`` takes a game tick, as MineRL's does (``False``: the
        command lands between steps, as the package's own tasks give items)."""
        self.image_size = (None if image_size is None
                           else (int(image_size[0]), int(image_size[1])))
        """MineStudio's ``obs_size`` ``(width, height)``: the image is resized to it (``None``:
        the world's frame as rendered; ``env_kwargs``' ``obs_size`` is the render size)."""
        self.stats: dict[str, dict[str, int]] = {key: {} for key in STAT_KEYS}
        self.callbacks = list(callbacks)
        self.action_type = "env"
        self.names = names or item_names()
        world_items = tuple(self.voxel.unwrapped.item_names)
        if tuple(self.names.items) != world_items:
            raise ValueError("the item names do not list the world's items in its order")
        self.env = _Commands(self)
        self.obs: dict[str, Any] = {}
        self.info: dict[str, Any] = {}
        self._voxel_obs: Mapping[str, np.ndarray] | None = None
        self._slots: list[int | None] = [None] * N_SLOTS

    # -- MinecraftSim's interface ----------------------------------------------------------------

    def reset(self) -> tuple[dict, dict]:
        """MineStudio's reset: a hard reset (the world rebuilt with :attr:`seed`) unless a
        callback's ``before_reset`` says no (a fast reset: the world goes on, the callbacks move
        the player), then :attr:`num_empty_frames` no-op steps, then ``after_reset``."""
        reset_flag = True
        for callback in self.callbacks:
            reset_flag = callback.before_reset(self, reset_flag)
        if reset_flag or self._voxel_obs is None:
            self._voxel_obs, _ = self.voxel.reset(seed=self.seed)
            self._slots = [None] * N_SLOTS
            self.stats = {key: {} for key in STAT_KEYS}
            self.info = {}
        raw_info = self._step_info({})
        for _ in range(self.num_empty_frames):
            self._voxel_obs, _, _, _, voxel_info = self.voxel.step(
                self._our_action(self.noop_action()))
            raw_info = self._step_info(voxel_info)
        obs, info = self._wrap_obs_info(self._raw_observation(), raw_info)
        for callback in self.callbacks:
            obs, info = callback.after_reset(self, obs, info)
            self.obs, self.info = obs, info
        return obs, info

    def step(self, action: Mapping[str, Any]) -> tuple[dict, float, bool, bool, dict]:
        action = dict(action)
        for callback in self.callbacks:
            action = callback.before_step(self, action)
        ours = self._our_action(action)
        self._voxel_obs, reward, terminated, truncated, voxel_info = self.voxel.step(ours)
        obs, info = self._wrap_obs_info(self._raw_observation(), self._step_info(voxel_info))
        for callback in self.callbacks:
            obs, reward, terminated, truncated, info = callback.after_step(
                self, obs, reward, terminated, truncated, info)
            self.obs, self.info = obs, info
        return obs, reward, terminated, truncated, info

    def _wrap_obs_info(self, obs: Mapping[str, Any], info: Mapping[str, Any]) -> tuple[dict, dict]:
        """MineStudio's ``_wrap_obs_info``: the frame as ``obs["image"]`` (resized to
        :attr:`image_size`, width and height as MineStudio gives them to ``cv2.resize``, when
        set), everything else in ``info``, merged into the keys of earlier steps."""
        merged = {**info, **obs}
        self.info.update(merged)
        image = obs["pov"]
        if self.image_size is not None and image.shape[1::-1] != self.image_size:
            image = resized(image, self.image_size)
        return {"image": image}, dict(self.info)

    def _step_info(self, voxel_info: Mapping[str, Any]) -> dict[str, Any]:
        """The step's events, and MineRL's cumulative statistics counted from them
        (:data:`STAT_KEYS`: ``{stat: {name: count}}``, names as Minecraft's without
        ``minecraft:``)."""
        events = voxel_info.get("events", ())
        for event in events:
            stat = EVENT_STATS.get(event.kind)
            if stat is not None:
                name = self._minecraft_name(event.name)
                self.stats[stat][name] = self.stats[stat].get(name, 0) + int(event.count)
        return {"events": events, **{key: dict(value) for key, value in self.stats.items()}}

    def _minecraft_name(self, name: str) -> str:
        """Minecraft's name of one of the world's items, blocks or mobs (as it is otherwise)."""
        if name in self.names.items:
            return self.names.to_minecraft(name).removeprefix("minecraft:")
        return name

    def noop_action(self) -> dict[str, Any]:
        action: dict[str, Any] = {name: 0 for name in BUTTONS}
        action["camera"] = np.zeros(2, dtype=np.float32)
        return action

    @property
    def action_space(self) -> gym.spaces.Dict:
        """MineStudio's ``env`` action space."""
        return gym.spaces.Dict({
            **{name: gym.spaces.Discrete(2) for name in BUTTONS if name != "drop"},
            "camera": gym.spaces.Box(low=-180, high=180, shape=(2,), dtype=np.float32),
        })

    @property
    def observation_space(self) -> gym.spaces.Dict:
        height, width = self.voxel.unwrapped.obs_size
        return gym.spaces.Dict({"image": gym.spaces.Box(0, 255, (height, width, 3), np.uint8)})

    def render(self) -> np.ndarray:
        image = self.obs["image"]
        for callback in self.callbacks:
            image = callback.before_render(self, image)
        for callback in self.callbacks:
            image = callback.after_render(self, image)
        return image

    def close(self) -> None:
        for callback in self.callbacks:
            callback.before_close(self)
        self.voxel.close()
        for callback in self.callbacks:
            callback.after_close(self)

    # -- commands --------------------------------------------------------------------------------

    def run_command(self, command: str) -> None:
        """Run one of Minecraft's commands on the world (:data:`COMMAND_USAGE`): ``/give``,
        ``/clear``, ``/tp`` and ``/summon`` act; ``/time``, ``/weather``, ``/gamerule`` and
        ``/difficulty`` are accepted and change nothing (the world has no day, weather or game
        rules); anything else is refused naming those."""
        words = shlex.split(command)
        name = words[0] if words else ""
        if name in IGNORED_COMMANDS:
            return
        runs = {"/give": self._give, "/clear": self._clear, "/tp": self._teleport,
                "/teleport": self._teleport, "/summon": self._summon}
        if name not in runs:
            raise ValueError(f"unknown command {command!r}; {COMMAND_USAGE}")
        try:
            runs[name](words[1:])
        except (ValueError, IndexError, KeyError) as error:
            raise ValueError(f"cannot run {command!r} ({error}); {COMMAND_USAGE}") from None

    def _item(self, word: str) -> str:
        index = self.names.index(word)
        if index is None:
            raise ValueError(f"no item of the world is Minecraft's {word!r}")
        return self.names.items[index]

    def _give(self, words: list[str]) -> None:
        if len(words) not in (2, 3) or words[0] != "@p":
            raise ValueError("/give takes @p, an item and a count")
        count = int(words[2]) if len(words) == 3 else 1
        self.voxel.unwrapped.apply_commands({"give": {self._item(words[1]): count}})

    def _clear(self, words: list[str]) -> None:
        if len(words) not in (1, 2) or words[0] != "@p":
            raise ValueError("/clear takes @p and at most an item")
        items = True if len(words) == 1 else [self._item(words[1])]
        self.voxel.unwrapped.apply_commands({"clear": items})

    def _position(self, words: list[str]) -> tuple[float, float, float]:
        """``x y z``, each absolute or ``~``-relative to the player's feet."""
        here = self.voxel.unwrapped.world.frame_pose[:3]  # the observation's frame, as /tp's
        return tuple(float(here[axis]) + float(word[1:] or 0) if word.startswith("~")
                     else float(word) for axis, word in enumerate(words))

    def _teleport(self, words: list[str]) -> None:
        if len(words) not in (4, 6) or words[0] != "@p":
            raise ValueError("/tp takes @p, x y z and optionally yaw pitch")
        x, y, z = self._position(words[1:4])
        target = {"x": x, "y": y, "z": z}
        if len(words) == 6:
            target |= {"yaw": float(words[4]), "pitch": float(words[5])}
        self.voxel.unwrapped.apply_commands({"teleport": target})

    def _summon(self, words: list[str]) -> None:
        if len(words) not in (1, 4):
            raise ValueError("/summon takes a mob and optionally x y z")
        kind = words[0].removeprefix("minecraft:")
        x, _, z = self._position(words[1:4] if len(words) == 4 else ["~", "~", "~"])
        self.voxel.unwrapped.apply_commands({"spawn_mobs": [{"kind": kind, "x": x, "z": z,
                                                              "count": 1}]})

    # -- conversions -----------------------------------------------------------------------------

    def _our_action(self, action: Mapping[str, Any]) -> dict[str, Any]:
        """The world's action of a MineRL environment action: ``hotbar.N`` holds slot ``N - 1``'s
        item; an empty slot empties the hand (before the step, as ``equip`` would)."""
        known = (*BUTTONS, "camera", *IGNORED_KEYS)
        for key, value in action.items():
            if key not in known:
                raise ValueError(f"unknown action key {key!r}; MineStudio's env actions have "
                                 f"{', '.join(known)}")
            if key == "chat" and value:
                self.run_command(str(value))
        hotbar = self._slots[:len(HOTBAR)]
        ours = from_env_action(action, hotbar)
        pressed = [slot for slot, key in enumerate(HOTBAR) if action.get(key, 0)]
        if pressed and hotbar[pressed[-1]] is None:
            self.voxel.unwrapped.apply_commands({"equip": None})
        return ours

    def _raw_observation(self) -> dict[str, Any]:
        """MineRL's raw observation of the world now (before ``_wrap_obs_info``)."""
        obs = self._voxel_obs
        counts = self.voxel.unwrapped.world.inventory.counts
        self._update_slots(counts)
        inventory = {}
        for slot, item in enumerate(self._slots):
            inventory[slot] = ({"type": EMPTY, "quantity": 0} if item is None else
                               {"type": self.names.to_minecraft(self.names.items[item]),
                                "quantity": int(counts[item])})
        held = self.voxel.unwrapped.world.inventory.held_item
        x, y, z, yaw, pitch = (float(v) for v in obs["pose"])
        return {
            "pov": obs["rgb"],
            "location_stats": {"xpos": x, "ypos": y, "zpos": z, "pitch": pitch, "yaw": yaw},
            "inventory": inventory,
            "equipped_items": {"mainhand": {"type": "air" if held is None else
                                            self.names.to_minecraft(held)}},
            "player_pos": {"x": x, "y": y, "z": z, "pitch": pitch, "yaw": yaw},
            "is_gui_open": False,
            "depth": obs["depth"],
            "semantic": obs["semantic"],
        }

    def _update_slots(self, counts: np.ndarray) -> None:
        """Items that ran out leave their slots; new ones take the first free slot."""
        slots = self._slots
        for slot, item in enumerate(slots):
            if item is not None and counts[item] <= 0:
                slots[slot] = None
        held = set(item for item in slots if item is not None)
        for item in np.flatnonzero(counts > 0):
            if int(item) not in held and None in slots:
                slots[slots.index(None)] = int(item)
