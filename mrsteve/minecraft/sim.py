"""MrSteve in MineStudio's Minecraft simulator (``minestudio.simulator.MinecraftSim``).

MineStudio (CraftJarvis/MineStudio, ``minestudio/simulator/entry.py``) steps Minecraft with
MineRL's environment actions (``action_type="env"``: the buttons, ``hotbar.1``-``hotbar.9`` and
``camera`` degrees) and returns ``obs["image"]`` (the frame, resized with OpenCV's bilinear
resize) and an ``info`` dict: ``info["player_pos"]`` ``{x, y, z, pitch, yaw}`` (the feet
position, Minecraft's angles), ``info["inventory"]`` ``{slot: {"type", "quantity"}}`` (slots
0-8 the hotbar). Its *callbacks* hook every call (``before_reset``, ``after_reset``,
``before_step``, ``after_step``, ``before_close``, ...), and tasks, commands and rewards are
callbacks (``callbacks/*.py``).

This module runs the package's agent there unchanged:

- :class:`MinecraftEnv` presents a simulator with MineStudio's interface as the environment the
  package's driver steps: :func:`observation` turns ``(obs, info)`` into the package's
  observation (the frame, the pose, the inventory counts) and :func:`mrsteve.minecraft.actions.
  to_env_action` the agent's actions into MineRL's (``equip`` is the hotbar key of the slot
  holding the item). Minecraft's yaw has the package's convention (0 faces +z, 90 faces -x,
  positive pitch looks down) but is not wrapped: :func:`player_pose` wraps it to [-180, 180);
  the pose is absolute, and the driver makes it relative to the start as in the package's world.
- :class:`ItemTasksCallback` is the package's item tasks (:class:`mrsteve.tasks.wrapper.
  ItemTasks`) as a MineStudio callback: it hands each task's tool over with ``/give`` and holds
  it, reads success from the inventory and reports the tasks in ``info`` as the driver expects.
- :func:`run_item_tasks` runs one episode of item tasks for an agent on such a simulator (the
  memory, the mode selector and the explorer of :class:`mrsteve.agent.mrsteve.MrSteve` read the
  frame and the pose as in the package's world); :func:`make_minecraft_sim` builds MineStudio's
  simulator for one of the release's ABA tasks (:func:`aba_tasks`, ``data/minecraft.toml``).

MineStudio, Java 8 and the engine are needed only by :func:`make_minecraft_sim`;
:func:`minecraft_unavailable` says in one line what is missing before any work.
:mod:`mrsteve.minecraft.facade` is the package's own world behind this same interface.
"""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import tempfile
import tomllib
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache, cached_property
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np

from mrsteve.minecraft.actions import HOTBAR, hotbar_slot, to_env_action
from mrsteve.naming import lookup
from mrsteve.protocols import Agent
from mrsteve.seeding import episode_rng
from mrsteve.tasks.catalog import load_catalog
from mrsteve.tasks.driver import EpisodeCallback
from mrsteve.tasks.episode import drive_tasks
from mrsteve.tasks.outcomes import EpisodeResult, TaskLedger, TaskOutcome
from mrsteve.world.camera import DEFAULT_FOV_DEG, Camera

MINECRAFT_FOV_DEG = DEFAULT_FOV_DEG
"""Vertical field of view of MineStudio's simulator (``fov_range=[70, 70]``), degrees."""

NOOP_STEPS = 200
"""No-op steps after a reset before the first task (the release: "to remove black screen")."""

ENGINE_JAR = Path("engine", "build", "libs", "mcprec-6.13.jar")
"""The engine MineStudio runs, below its directory (``entry.py``, ``check_engine``)."""

INSTALL = ("--world minecraft needs MineStudio, Java 8 and the Minecraft engine: pip install "
           "minestudio, a Java 8 runtime on PATH, then python -m minestudio.simulator.entry -y "
           "(downloads the engine)")
"""What to install for Minecraft runs, in one line."""

EMPTY = "none"
"""The ``type`` of an empty inventory slot in MineStudio's ``info["inventory"]``."""


def minestudio_dir() -> Path:
    """MineStudio's directory: ``$MINESTUDIO_DIR``, else ``<temp>/MineStudio``
    (``minestudio/utils/temp.py``), found without importing or creating anything."""
    return Path(os.environ.get("MINESTUDIO_DIR") or Path(tempfile.gettempdir(), "MineStudio"))


def java_version(java: str) -> str | None:
    """The version ``java -version`` reports (``1.8.0_392``, ``17.0.2``), or ``None`` when it
    cannot be run or says none."""
    try:
        ran = subprocess.run([java, "-version"], capture_output=True, text=True, timeout=20,
                             check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    found = re.search(r'version "([^"]+)"', ran.stderr + ran.stdout)
    return found.group(1) if found else None


def missing_requirements() -> list[str]:
    """What a Minecraft run lacks here: ``MineStudio``, ``Java`` (or ``Java 8`` where another
    version is on PATH: MineStudio's engine, MCP-Reborn, runs on Java 8), ``the engine`` (none:
    ready)."""
    missing = []
    if importlib.util.find_spec("minestudio") is None:
        missing.append("MineStudio")
    java = shutil.which("java")
    if java is None:
        missing.append("Java")
    else:
        version = java_version(java)
        if version is None or not version.startswith("1.8"):
            found = "of no known version" if version is None else f"Java {version}"
            missing.append(f"Java 8 ({java} is {found})")
    if not (minestudio_dir() / ENGINE_JAR).is_file():
        missing.append("the engine")
    return missing


def minecraft_unavailable() -> str | None:
    """One line saying what to install for a Minecraft run, or ``None`` when all is there."""
    missing = missing_requirements()
    return None if not missing else f"{INSTALL}; missing here: {', '.join(missing)}"


# ------------------------------------------------------------------------------ data


@dataclass(frozen=True)
class ItemNames:
    """Minecraft's item types for the package's items (``data/minecraft.toml``)."""

    items: tuple[str, ...]
    """The package's items, in the inventory's order."""
    minecraft: Mapping[str, str]
    """The Minecraft type of each package item whose name differs."""
    suffixes: Mapping[str, str]
    """Minecraft type endings that count as a package item (``_log``: ``log``)."""

    def to_minecraft(self, item: str) -> str:
        """The Minecraft type commands give for the package's ``item``."""
        return self.minecraft.get(item, item)

    def index(self, minecraft_type: str) -> int | None:
        """The package's item index of a Minecraft type (``None``: none of its items)."""
        name = minecraft_type.removeprefix("minecraft:")
        if name in self._exact:
            return self._exact[name]
        for suffix, item in self.suffixes.items():
            if name.endswith(suffix):
                return self._positions[item]
        return None

    @cached_property
    def _positions(self) -> dict[str, int]:
        return {item: i for i, item in enumerate(self.items)}

    @cached_property
    def _exact(self) -> dict[str, int]:
        positions = self._positions
        return {**positions, **{self.minecraft[item]: positions[item] for item in self.minecraft}}


@dataclass(frozen=True)
class MinecraftAbaTask:
    """One of the release's ABA tasks in Minecraft (``data/minecraft.toml``)."""

    name: str
    release: str
    """Its name in the release's ``task_specs.yaml``."""
    biome: str
    max_steps: int
    items: tuple[str, ...]
    """The items to obtain in order (the package's names)."""
    mainhand: tuple[str | None, ...]
    """The Minecraft item each task puts in the main hand (``None``: a bare hand)."""
    mobs: Mapping[str, int]
    mob_range: tuple[tuple[float, float, float], tuple[float, float, float]]
    """Low and high ``(dx, dy, dz)`` offsets from the player of the summoned mobs."""

    def summon_commands(self, rng: np.random.Generator) -> list[str]:
        """The ``/summon`` commands of the task's mobs, offsets drawn from ``rng``."""
        low, high = (np.asarray(bound, dtype=np.float64) for bound in self.mob_range)
        commands = []
        for mob, count in self.mobs.items():
            for dx, dy, dz in rng.uniform(low, high, size=(count, 3)):
                commands.append(f"/summon minecraft:{mob} ~{dx:.2f} ~{dy:.2f} ~{dz:.2f}")
        return commands


@cache
def _data() -> Mapping[str, Any]:
    text = resources.files("mrsteve.minecraft").joinpath("data/minecraft.toml").read_text("utf-8")
    return tomllib.loads(text)


@cache
def item_names() -> ItemNames:
    """The shipped Minecraft names of the package's items (checked against its items)."""
    from mrsteve.world.content import load_content

    items = tuple(load_content().item_names)
    data = _data()
    for item in (*data["items"], *data["suffixes"].values()):
        lookup(dict.fromkeys(items), item, "item (minecraft.toml)")
    return ItemNames(items, MappingProxyType(dict(data["items"])),
                     MappingProxyType(dict(data["suffixes"])))


@cache
def aba_tasks() -> Mapping[str, MinecraftAbaTask]:
    """The release's ABA tasks in Minecraft, by the package's task name (``water-log-water``)."""
    names = item_names()
    tasks = {}
    for name, spec in _data()["aba"].items():
        for item in spec["items"]:
            lookup(dict.fromkeys(names.items), item, f"item (minecraft.toml, {name})")
        tasks[name] = MinecraftAbaTask(
            name, spec["release"], spec["biome"], int(spec["max_steps"]), tuple(spec["items"]),
            tuple(hand or None for hand in spec["mainhand"]),
            MappingProxyType(dict(spec.get("mobs", {}))),
            (tuple(spec.get("mob_range_low", (0, 0, 0))),
             tuple(spec.get("mob_range_high", (0, 0, 0)))))
    return MappingProxyType(tasks)


# ------------------------------------------------------------------------------ observations


def player_pose(player_pos: Mapping[str, float]) -> np.ndarray:
    """``float64[5]`` ``(x, y, z, yaw, pitch)`` of MineStudio's ``info["player_pos"]``: the same
    position (feet, blocks) and angles (Minecraft's yaw, 0 faces +z, 90 faces -x, is the
    package's), the yaw wrapped to [-180, 180) (Minecraft lets it run past a turn); a yaw already
    in range is kept to the last bit."""
    yaw = float(player_pos["yaw"])
    if not -180.0 <= yaw < 180.0:
        yaw = (yaw + 180.0) % 360.0 - 180.0
    return np.array([float(player_pos["x"]), float(player_pos["y"]), float(player_pos["z"]), yaw,
                     float(player_pos["pitch"])], dtype=np.float64)


def inventory_counts(inventory: Mapping[Any, Mapping[str, Any]], names: ItemNames) -> np.ndarray:
    """``int64[n_items]``: the count of each package item over all the slots of MineStudio's
    ``info["inventory"]`` (types the package does not know are left out)."""
    counts = np.zeros(len(names.items), dtype=np.int64)
    for slot in inventory.values():
        index = names.index(str(slot.get("type", EMPTY)))
        if index is not None:
            counts[index] += int(slot.get("quantity", 0))
    return counts


def hotbar_items(inventory: Mapping[Any, Mapping[str, Any]], names: ItemNames
                 ) -> list[int | None]:
    """The package's item index in each hotbar slot (0-8) of ``info["inventory"]`` (``None``:
    empty, or an item the package does not know)."""
    slots: list[int | None] = []
    for slot in range(len(HOTBAR)):
        entry = inventory.get(slot) or inventory.get(str(slot)) or {}
        kind = str(entry.get("type", EMPTY))
        slots.append(None if kind in (EMPTY, "air") or not entry.get("quantity", 0)
                     else names.index(kind))
    return slots


def observation(obs: Mapping[str, Any], info: Mapping[str, Any], names: ItemNames
                ) -> dict[str, np.ndarray]:
    """The package's observation (world frame, :data:`mrsteve.spaces.OBSERVATION_KEYS`) of
    MineStudio's ``(obs, info)``: the frame, the pose, the inventory counts. Minecraft renders no
    depth or semantic frame: they come from ``info["depth"]`` / ``info["semantic"]`` when the
    simulator gives them (:mod:`mrsteve.minecraft.facade` does), else depth is unknown
    (``inf``) and every pixel class 0, and only parts that read the frame alone (MineCLIP, VPT-Nav,
    STEVE-1) make sense."""
    rgb = np.asarray(obs["image"])
    shape = rgb.shape[:2]
    depth = info.get("depth")
    semantic = info.get("semantic")
    return {
        "rgb": rgb,
        "depth": np.full(shape, np.inf, np.float32) if depth is None else depth,
        "semantic": np.zeros(shape, np.uint8) if semantic is None else semantic,
        "pose": player_pose(info["player_pos"]),
        "inventory": inventory_counts(info["inventory"], names),
    }


# ------------------------------------------------------------------------------ callbacks


class SimCallback:
    """MineStudio's callback interface (``callbacks/callback.py``, ``MinecraftCallback``): every
    hook passes its arguments through."""

    def before_reset(self, sim: Any, reset_flag: bool) -> bool:
        return reset_flag

    def after_reset(self, sim: Any, obs: dict, info: dict) -> tuple[dict, dict]:
        return obs, info

    def before_step(self, sim: Any, action: dict) -> dict:
        return action

    def after_step(self, sim: Any, obs: dict, reward: float, terminated: bool, truncated: bool,
                   info: dict) -> tuple[dict, float, bool, bool, dict]:
        return obs, reward, terminated, truncated, info

    def before_close(self, sim: Any) -> None:
        pass

    def after_close(self, sim: Any) -> None:
        pass

    def before_render(self, sim: Any, image: np.ndarray) -> np.ndarray:
        return image

    def after_render(self, sim: Any, image: np.ndarray) -> np.ndarray:
        return image


class CommandsCallback(SimCallback):
    """Chat commands run after every reset (MineStudio's ``CommandsCallback``)."""

    def __init__(self, commands: Sequence[str]) -> None:
        self.commands = list(commands)

    def after_reset(self, sim, obs, info):
        for command in self.commands:
            obs, _, _, info = sim.env.execute_cmd(command)
        return sim._wrap_obs_info(obs, info)


@dataclass(frozen=True)
class SubTask:
    """One item task in Minecraft: the package's item to obtain and the Minecraft item handed
    over and held when it starts (``None``: a bare hand)."""

    item: str
    tool: str | None


class ItemTasksCallback(TaskLedger, SimCallback):
    """The package's item tasks (:class:`mrsteve.tasks.wrapper.ItemTasks`) as a MineStudio
    callback. After a reset the first task starts: its tool is given (``/give``) and held (the
    next step selects its hotbar slot, unless the agent's action selects one, as the package's
    world equips before the step acts; a bare-hand task selects an empty slot), and what earlier
    tasks gathered stays (the release clears the inventory instead; the package's rule keeps the
    records comparable). As in the package's world, the observation of the step a task starts at
    is the one from before its tool was given. A task succeeds when its item's count rises above
    the count when it started; the next then starts, and after the last the episode is
    terminated. Each step's ``info`` has ``task_end`` (the :class:`TaskOutcome`) and ``task``
    (the next :class:`~mrsteve.tasks.catalog.ItemTask`) when they happen -- MineStudio carries ``info`` keys over from
    step to step, so the callback removes its old ones first."""

    def __init__(self, tasks: Sequence[SubTask], names: ItemNames) -> None:
        if not tasks:
            raise ValueError("tasks must be a non-empty list of item tasks")
        self.catalog = load_catalog()
        for task in tasks:
            self.catalog.item(task.item)
        super().__init__()
        self.tasks = list(tasks)
        self.names = names
        self._hold: list[int | None] = []
        """The item to hold at the next step, if one is to be selected (``None``: empty hand)."""
        self._inventory: Mapping[Any, Mapping[str, Any]] = {}

    def after_reset(self, sim, obs, info):
        self.result = EpisodeResult()
        info.pop("task_end", None)
        obs, info = self._start(sim, obs, info, 0)
        return obs, info

    def before_step(self, sim, action):
        if self._hold:
            item = self._hold.pop()
            if not any(action.get(key, 0) for key in HOTBAR):
                slot = hotbar_slot(hotbar_items(self._inventory, self.names), item)
                if slot is not None:
                    action = {**action, HOTBAR[slot]: 1}
        return action

    def after_step(self, sim, obs, reward, terminated, truncated, info):
        info.pop("task", None)
        info.pop("task_end", None)
        self._inventory = info["inventory"]
        self.result.steps += 1
        if self._current is not None:
            task, slot, baseline = self._current
            if inventory_counts(info["inventory"], self.names)[slot] > baseline:
                task.end, task.success = self.result.steps, True
                info["task_end"] = task
                obs, info = self._start(sim, obs, info, self.result.steps)
                terminated = terminated or self._current is None
        return obs, reward, terminated, truncated, info

    def _start(self, sim, obs, info, t: int):
        index = len(self.result.tasks)
        if index >= len(self.tasks):
            self._current = None
            return obs, info
        sub = self.tasks[index]
        self._inventory = info["inventory"]
        held = None
        if sub.tool is not None:
            given, _, _, _ = sim.env.execute_cmd(f"/give @p minecraft:{sub.tool} 1")
            self._inventory = given["inventory"]
            held = self.names.index(sub.tool)
        self._hold = [held]
        slot = self.names.items.index(sub.item)
        outcome = TaskOutcome(item=sub.item, start=t)
        self.result.tasks.append(outcome)
        self._current = (outcome, slot, int(inventory_counts(self._inventory, self.names)[slot]))
        info["task"] = self.catalog.item(sub.item)
        return obs, info

    @property
    def inventory(self) -> Mapping[Any, Mapping[str, Any]]:
        """The latest inventory slots known, the tools given since the last step included (the
        step's ``info`` shows them from the next step on, as the package's world does)."""
        return self._inventory


# ------------------------------------------------------------------------------ the environment


class MinecraftEnv:
    """A simulator with MineStudio's interface (``env`` actions) as the environment the package's
    driver steps (:func:`mrsteve.tasks.episode.drive_tasks`): the package's observations and
    actions, the item tasks of ``tasks`` (installed among the simulator's callbacks), and
    ``info["camera"]`` after a reset (the frame's size, Minecraft's 70 degrees). The world's seed
    is the simulator's (MineStudio fixes it when the simulator is made): ``reset``'s is unused."""

    def __init__(self, sim: Any, tasks: ItemTasksCallback, fov_deg: float = MINECRAFT_FOV_DEG
                 ) -> None:
        self.sim = sim
        self.tasks = tasks
        self.names = tasks.names
        self.fov_deg = float(fov_deg)
        if tasks not in sim.callbacks:
            sim.callbacks.append(tasks)

    @property
    def unwrapped(self) -> MinecraftEnv:
        return self

    @property
    def task(self) -> TaskOutcome | None:
        return self.tasks.task

    @property
    def result(self) -> EpisodeResult:
        return self.tasks.result

    def close_tasks(self) -> TaskOutcome | None:
        return self.tasks.close_tasks()

    def reset(self, *, seed: int | None = None, options: Mapping[str, Any] | None = None):
        if options:
            raise ValueError("a Minecraft episode takes no reset options (set it up with "
                             "MineStudio's callbacks)")
        obs, info = self.sim.reset()
        observed = observation(obs, info, self.names)
        height, width = observed["rgb"].shape[:2]
        out = {"camera": Camera(height, width, self.fov_deg)}
        if "task" in info:
            out["task"] = info["task"]
        return observed, out

    def step(self, action: Mapping[str, Any]):
        env_action = to_env_action(action, hotbar_items(self.tasks.inventory, self.names))
        obs, reward, terminated, truncated, info = self.sim.step(env_action)
        out = {key: info[key] for key in ("task", "task_end") if key in info}
        return observation(obs, info, self.names), reward, terminated, truncated, out

    def close(self) -> None:
        self.sim.close()


def run_item_tasks(sim: Any, agent: Agent, tasks: Sequence[SubTask], *, seed: int,
                   max_steps: int, callbacks: Sequence[EpisodeCallback] = (),
                   fov_deg: float = MINECRAFT_FOV_DEG) -> EpisodeResult:
    """One episode of item ``tasks`` for ``agent`` on a simulator with MineStudio's interface
    (MineStudio's ``MinecraftSim`` with ``action_type="env"``, or
    :class:`mrsteve.minecraft.facade.VoxelMinecraftSim`), at most ``max_steps`` steps: the
    package's episode loop (:func:`mrsteve.tasks.episode.drive_tasks`) with the tasks as a
    MineStudio callback. ``seed`` seeds the agent (:func:`mrsteve.seeding.episode_rng`); the
    world's seed is the simulator's."""
    if max_steps < 1:
        raise ValueError(f"max_steps must be >= 1, got {max_steps}")
    tracker = ItemTasksCallback(tasks, item_names())
    env = MinecraftEnv(sim, tracker, fov_deg)
    try:
        return drive_tasks(env, agent, seed=seed, max_steps=max_steps, callbacks=callbacks)
    finally:
        sim.callbacks.remove(tracker)


def catalog_subtasks(items: Sequence[str], names: ItemNames | None = None) -> list[SubTask]:
    """The item tasks of ``items`` with the package's tools (``data/tasks.toml``), in
    Minecraft's names."""
    names = names or item_names()
    catalog = load_catalog()
    return [SubTask(item, None if catalog.item(item).tool is None
                    else names.to_minecraft(catalog.item(item).tool)) for item in items]


def aba_subtasks(task: MinecraftAbaTask) -> list[SubTask]:
    """The item tasks of one of the release's ABA tasks, its main-hand items as tools."""
    return [SubTask(item, hand) for item, hand in zip(task.items, task.mainhand, strict=True)]


def make_minecraft_sim(task: MinecraftAbaTask, seed: int, *,
                       frame: tuple[int, int] = (160, 256),
                       callbacks: Sequence[Any] = ()) -> Any:
    """MineStudio's ``MinecraftSim`` for ``task`` seeded ``seed`` (the release: 42 + episode):
    ``env`` actions, frames of ``frame`` ``(height, width)`` (MineCLIP's 160 x 256 by default),
    the task's biome, the release's 200 no-op steps after a reset, then its mobs summoned around
    the player. Stops with :data:`INSTALL` when MineStudio, Java or the engine is missing."""
    problem = minecraft_unavailable()
    if problem is not None:
        raise RuntimeError(problem)
    from minestudio.simulator import MinecraftSim  # the optional dependency

    setup = [CommandsCallback(task.summon_commands(episode_rng(seed, "task")))] if task.mobs else []
    return MinecraftSim(action_type="env", obs_size=(frame[1], frame[0]),  # OpenCV's (w, h)
                        seed=int(seed), preferred_spawn_biome=task.biome,
                        num_empty_frames=NOOP_STEPS, callbacks=[*setup, *callbacks])
