"""The Gymnasium environment over the embedded voxel world (``mrsteve/Voxel-v0``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any, ClassVar

import gymnasium as gym
import numpy as np
from gymnasium import spaces

from mrsteve.env.commands import parse_commands
from mrsteve.naming import check_name, unknown_name
from mrsteve.world.camera import DEFAULT_FOV_DEG, Camera
from mrsteve.world.content import load_content
from mrsteve.world.crafting import load_recipes
from mrsteve.world.interaction import WorldEvent
from mrsteve.world.layout import WorldLayout
from mrsteve.world.recipes import WORLD_RECIPES, build_layout
from mrsteve.world.render import Renderer
from mrsteve.world.spawning import SpawnRules
from mrsteve.world.world import Controls, Regrowth, World, WorldConfig

DEFAULT_OBS_SIZE = (40, 64)
"""Default ``(height, width)`` of the image observations: 16:10 like MineDojo's 160 x 256."""

BUTTONS = ("forward", "back", "left", "right", "jump", "sneak", "sprint", "attack", "use")
"""The 0/1 keys of the action, as in MineRL."""

MAX_CAMERA_DEGREES = 180.0
"""Largest camera change per step, in degrees, on each axis (MineRL's bound)."""

MAX_INVENTORY_COUNT = np.iinfo(np.int32).max

NOOP = Controls()

_BUTTON_SLOTS = {name: slot for slot, name in enumerate(BUTTONS)}
_ACTION_KEYS = (*BUTTONS, "camera", "equip", "place", "craft")


class VoxelEnv(gym.Env):
    """First-person Minecraft-like world of blocks, mobs and items, simulated in-process.

    ## Description
    The embedded world of ``mrsteve`` (see :mod:`mrsteve.world`): a voxel grid of the paper's maps
    or procedural terrain, Minecraft's units and physics at 20 steps per second, mobs (cows and
    sheep wander and flee, zombies burn in daylight, spiders appear at scheduled times), breaking
    blocks and using items along the crosshair, and inventory-based success as in MineDojo. One
    step is one game tick. ``world`` names a recipe (``mrsteve worlds`` lists them) or is a
    function ``rng -> WorldLayout`` for a world of your own.

    ## Observation Space
    A ``Dict``:
    - ``rgb``: ``uint8[H, W, 3]`` first-person frame (``fov_deg``, by default 70 degrees, vertical
      field of view; the camera is ``env.unwrapped.camera``, also ``info["camera"]`` after
      ``reset``).
    - ``depth``: ``float32[H, W]`` distance along each pixel's ray in blocks, ``inf`` for sky.
    - ``semantic``: ``uint8[H, W]`` class of each pixel (``content.semantic_classes``: sky, each
      block, each mob, ``burning_zombie``).
    - ``pose``: ``float64[5]`` ``(x, y, z, yaw, pitch)``: the feet position in absolute world
      coordinates (blocks, y up) and the camera angles in degrees (yaw in [-180, 180), 0 faces +z,
      90 faces -x; pitch in [-90, 90], positive looks down). The paper's agent uses the pose
      relative to the episode's start: subtract ``env.unwrapped.start_pose`` (also
      ``info["start_pose"]`` after ``reset``).
    - ``inventory``: ``int64[n_items]`` count of each item, in content order
      (``env.unwrapped.item_names``).

    ## Action Space
    A ``Dict`` in MineRL's form; missing keys mean "not pressed" / "no change":
    - ``forward``, ``back``, ``left``, ``right``, ``jump``, ``sneak``, ``sprint``, ``attack``,
      ``use``: ``Discrete(2)``. Attack held on a block breaks it after its hardness time; on a mob
      it hits (with a cooldown). Use applies the held item (bucket on water or a cow, shears on a
      sheep).
    - ``camera``: ``Box(-180, 180, (2,))``: change of pitch and yaw in degrees (positive pitch looks
      down, positive yaw turns right); values outside the box are rejected.
    - ``equip``: ``Discrete(1 + n_items)``: 0 keeps the held item, ``k`` holds item ``k - 1`` (an
      item not in the inventory leaves the hand empty until one arrives).
    - ``place``: ``Discrete(2)``: put the held block item (a crafting table, planks, dirt, ...)
      down in front of the face the crosshair points at (MineDojo's functional action).
    - ``craft``: ``Discrete(1 + n_recipes)``: 0 crafts nothing, ``k`` crafts recipe ``k - 1``
      once (``env.unwrapped.recipe_names``; the item's name is accepted too). A recipe larger than
      the 2 x 2 grid needs a crafting table within reach; a craft that cannot happen changes
      nothing and ``info["craft"]`` says why.

    ## Rewards
    Always 0: tasks (:mod:`mrsteve.tasks`) judge success from the inventory, as MineDojo does.
    ``info["events"]`` lists what happened in the step (:class:`~mrsteve.world.interaction.WorldEvent`:
    items collected or consumed, blocks broken, mobs killed, died, spawned, explosions) and
    ``info["inventory_changes"]`` the net change per item.

    ## Starting State
    The world's spawn point and heading, then the set-up commands of ``reset(options=...)``
    (:mod:`mrsteve.env.commands`: give / clear / equip items, teleport, spawn mobs, schedule
    events), then ``noop_steps`` no-op steps (the paper uses 200; this environment defaults to 0).
    ``env.unwrapped.apply_commands(options)`` runs the same commands mid-episode.

    ## Termination
    Never terminates (peaceful: the player cannot die). Truncated after ``max_steps`` steps when
    given (``None``: never).

    ## Registered Configurations
    - ``mrsteve/Voxel-v0``: ``gymnasium.make("mrsteve/Voxel-v0", world=NAME, obs_size=(H, W),
      max_steps=None, noop_steps=0, spawn_cycle=False, look="day", log_regrowth=0,
      herds="wander")`` for every ``NAME`` of ``mrsteve.world.recipes.WORLD_RECIPES``: bounded
      maps and unbounded worlds (chunks generated as the player walks, :mod:`mrsteve.world.chunks`;
      the pose is then in the frame of the first loaded window). ``spawn_cycle=True`` runs
      Minecraft 1.11's passive spawn cycle (:mod:`mrsteve.world.spawning`). ``log_regrowth=N``
      (a bounded world; a diagnostic beyond Minecraft, :class:`~mrsteve.world.world.Regrowth`)
      puts a broken oak log back in its cell ``N`` steps later; ``herds="static"`` (another
      diagnostic, :attr:`~mrsteve.world.world.WorldConfig.herds`) keeps a pasture's animals where
      they first stood and brings killed ones back there. ``look`` is the light the frames are
      rendered in: ``day``, or ``dusk`` and ``overcast``, which no learned part is trained on
      (:data:`~mrsteve.world.render.LOOKS`).
    """

    metadata: ClassVar[dict[str, Any]] = {"render_modes": ["rgb_array"], "render_fps": 20}

    def __init__(
        self,
        world: str | Callable[[np.random.Generator], WorldLayout] = "plains",
        obs_size: tuple[int, int] = DEFAULT_OBS_SIZE,
        max_steps: int | None = None,
        noop_steps: int = 0,
        fov_deg: float = DEFAULT_FOV_DEG,
        render_mode: str | None = None,
        config: WorldConfig | None = None,
        spawn_cycle: bool = False,
        look: str = "day",
        log_regrowth: int = 0,
        herds: str = "wander",
    ):
        if isinstance(world, str):
            check_name(world, WORLD_RECIPES, "world")
        elif not callable(world):
            raise TypeError(
                f"world must be a recipe name ({', '.join(WORLD_RECIPES)}) or a "
                f"function rng -> WorldLayout, got {world!r}"
            )
        if (
            not isinstance(obs_size, (tuple, list))
            or len(obs_size) != 2
            or not all(_is_count(n, minimum=1) for n in obs_size)
        ):
            raise ValueError(
                f"obs_size must be (height, width) with two positive integers, got {obs_size!r}"
            )
        if max_steps is not None and not _is_count(max_steps, minimum=1):
            raise ValueError(f"max_steps must be a positive integer or None, got {max_steps!r}")
        if not _is_count(noop_steps, minimum=0):
            raise ValueError(f"noop_steps must be a non-negative integer, got {noop_steps!r}")
        if render_mode is not None and render_mode not in self.metadata["render_modes"]:
            raise unknown_name("render_mode", render_mode, [*self.metadata["render_modes"], "None"])
        self.world_name = world if isinstance(world, str) else getattr(world, "__name__", "custom")
        self._make_layout = (
            (lambda rng: build_layout(world, rng)) if isinstance(world, str) else world
        )
        self.obs_size = (int(obs_size[0]), int(obs_size[1]))
        self.max_steps = max_steps
        self.noop_steps = int(noop_steps)
        self.render_mode = render_mode
        if not isinstance(spawn_cycle, bool):
            raise TypeError(f"spawn_cycle must be True or False, got {spawn_cycle!r}")
        self.config = config if config is not None else WorldConfig()
        if spawn_cycle and self.config.spawn_cycle is None:
            self.config = dataclasses.replace(self.config, spawn_cycle=SpawnRules())
        if not _is_count(log_regrowth, minimum=0):
            raise ValueError(f"log_regrowth must be a non-negative integer (steps; 0: never), "
                             f"got {log_regrowth!r}")
        if log_regrowth:
            self.config = dataclasses.replace(self.config, regrowth=Regrowth(int(log_regrowth)))
        if herds != "wander":  # as with the options above: a given config's herds stay
            self.config = dataclasses.replace(self.config, herds=herds)
        self.content = load_content()
        self.item_names = self.content.item_names
        self.recipe_names = load_recipes().names
        """The craftable items, in the ``craft`` action's order (``k`` crafts ``[k - 1]``)."""
        self._renderer = Renderer(*self.obs_size, fov_deg=fov_deg, content=self.content,
                                  look=look)
        self.look = look
        """The light the world is rendered in (:data:`~mrsteve.world.render.LOOKS`)."""
        self.camera: Camera = self._renderer.camera
        """The camera the observations are rendered with (also ``info["camera"]`` after
        ``reset``): parts that turn pixels into world points take it from here."""

        height, width = self.obs_size
        n_items = len(self.content.items)
        self.observation_space = spaces.Dict({
            "rgb": spaces.Box(0, 255, (height, width, 3), np.uint8),
            "depth": spaces.Box(0.0, np.inf, (height, width), np.float32),
            "semantic": spaces.Box(0, len(self.content.semantic_classes) - 1, (height, width), np.uint8),
            "pose": spaces.Box(
                np.array([-np.inf, -np.inf, -np.inf, -180.0, -90.0]),
                np.array([np.inf, np.inf, np.inf, 180.0, 90.0]), dtype=np.float64,
            ),
            "inventory": spaces.Box(0, MAX_INVENTORY_COUNT, (n_items,), np.int64),
        })  # fmt: skip
        self.action_space = spaces.Dict({
            **{name: spaces.Discrete(2) for name in BUTTONS},
            "camera": spaces.Box(-MAX_CAMERA_DEGREES, MAX_CAMERA_DEGREES, (2,), np.float32),
            "equip": spaces.Discrete(1 + n_items),
            "place": spaces.Discrete(2),
            "craft": spaces.Discrete(1 + len(self.recipe_names)),
        })  # fmt: skip
        self.world: World | None = None
        """The running world (rebuilt by every ``reset``): scripted policies and tests read it."""
        self.start_pose = np.zeros(5)
        """Pose at the start of the episode (after set-up and no-op steps)."""
        self._steps = 0
        self._n_equip = 1 + n_items
        self._rgb: np.ndarray | None = None

    def reset(self, *, seed: int | None = None, options: Mapping[str, Any] | None = None):
        super().reset(seed=seed)
        commands = parse_commands(options)
        self.world = World(
            self._make_layout(self.np_random), self.np_random, self.config, self.content
        )
        commands.apply(self.world)
        for _ in range(self.noop_steps):
            self.world.step(NOOP)
        self._steps = 0
        self.start_pose = np.array(self.world.frame_pose)
        observation = self._observe()
        info = {"events": (), "inventory_changes": {}, "start_pose": self.start_pose.copy(),
                "camera": self.camera}
        return observation, info

    def apply_commands(self, options: Mapping[str, Any]) -> None:
        """Run set-up commands (the ``reset`` options, :mod:`mrsteve.env.commands`) on the running
        world, e.g. to give the item of a new task mid-episode as the paper does."""
        if self.world is None:
            raise RuntimeError("call reset() before apply_commands()")
        parse_commands(options).apply(self.world)

    def step(self, action: Mapping[str, Any]):
        if self.world is None:
            raise RuntimeError("call reset() before step()")
        controls = self._controls(action)
        events = self.world.step(controls)
        self._steps += 1
        observation = self._observe()
        truncated = self.max_steps is not None and self._steps >= self.max_steps
        info = {"events": events, "inventory_changes": inventory_changes(events) if events else {}}
        if controls.craft >= 0:
            result = self.world.last_craft
            info["craft"] = {"item": result.item, "crafted": result.crafted,
                             "reason": result.reason}
        return observation, 0.0, False, truncated, info

    def render(self) -> np.ndarray | None:
        """The last RGB frame (``render_mode="rgb_array"``); ``None`` without a render mode."""
        if self.render_mode is None or self._rgb is None:
            return None
        return self._rgb.copy()

    def _observe(self) -> dict[str, np.ndarray]:
        world = self.world
        frame = self._renderer.render(
            world.blocks,
            world.eye,
            world.yaw,
            world.pitch,
            world.mob_boxes(),
            time=world.t,
            heights=world.heights,
            origin=world.origin,
        )
        self._rgb = frame.rgb.copy()
        return {
            "rgb": self._rgb,
            "depth": frame.depth.copy(),
            "semantic": frame.semantic.copy(),
            "pose": np.array(world.frame_pose),
            "inventory": world.inventory.counts.copy(),
        }

    def _controls(self, action: Mapping[str, Any]) -> Controls:
        """Check an action and turn it into the world's :class:`~mrsteve.world.world.Controls`."""
        if not isinstance(action, Mapping):
            raise TypeError(
                f"action must be a dict with keys from {', '.join(_ACTION_KEYS)}, "
                f"got {type(action).__name__}"
            )
        pressed = [False] * len(BUTTONS)
        pitch = yaw = 0.0
        equip = craft = -1
        place = False
        for key, value in action.items():
            slot = _BUTTON_SLOTS.get(key)
            if slot is not None:
                if value != 0 and value != 1:
                    raise ValueError(f"action {key!r} must be 0 or 1, got {value!r}")
                pressed[slot] = value == 1
            elif key == "camera":
                pitch, yaw = _camera(value)
            elif key == "equip":
                if value != 0:
                    if not (isinstance(value, (int, np.integer)) and 0 < value < self._n_equip):
                        raise ValueError(
                            f"action 'equip' must be an integer in 0..{self._n_equip - 1} "
                            f"(0 keeps the held item, k holds {', '.join(self.item_names)}"
                            f"[k - 1]), got {value!r}"
                        )
                    equip = int(value) - 1
            elif key == "place":
                if value != 0 and value != 1:
                    raise ValueError(f"action 'place' must be 0 or 1, got {value!r}")
                place = value == 1
            elif key == "craft":
                craft = self._recipe_index(value)
            else:
                raise unknown_name("action key", key, _ACTION_KEYS)
        return Controls(*pressed, pitch, yaw, equip, place, craft)

    def _recipe_index(self, value: Any) -> int:
        """The recipe a ``craft`` value names (an index from 1, or the item's name); -1: none."""
        if isinstance(value, str):
            return self.recipe_names.index(check_name(value, self.recipe_names, "recipe"))
        if isinstance(value, (int, np.integer)) and not isinstance(value, bool) and (
                0 <= value <= len(self.recipe_names)):
            return int(value) - 1
        raise ValueError(f"action 'craft' must be 0 (nothing), 1..{len(self.recipe_names)} or "
                         f"an item name ({', '.join(self.recipe_names)}), got {value!r}")


def _is_count(value, minimum: int) -> bool:
    return isinstance(value, (int, np.integer)) and not isinstance(value, bool) and value >= minimum


def _camera(value) -> tuple[float, float]:
    try:
        pitch, yaw = float(value[0]), float(value[1])
        size = len(value)
    except (TypeError, IndexError, ValueError):
        size = -1
    if size != 2 or not (
        -MAX_CAMERA_DEGREES <= pitch <= MAX_CAMERA_DEGREES
        and -MAX_CAMERA_DEGREES <= yaw <= MAX_CAMERA_DEGREES
    ):
        raise ValueError(
            f"action 'camera' must be (pitch, yaw) degrees, each in "
            f"[-{MAX_CAMERA_DEGREES:g}, {MAX_CAMERA_DEGREES:g}], got {value!r}"
        )
    return pitch, yaw


def inventory_changes(events: tuple[WorldEvent, ...]) -> dict[str, int]:
    """Net inventory change per item from a step's events (collected minus consumed)."""
    changes: dict[str, int] = {}
    for event in events:
        if event.kind == "collected":
            changes[event.name] = changes.get(event.name, 0) + event.count
        elif event.kind == "consumed":
            changes[event.name] = changes.get(event.name, 0) - event.count
    return {item: n for item, n in changes.items() if n}
