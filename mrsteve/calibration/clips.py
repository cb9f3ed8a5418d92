"""Labelled clips of the embedded world: what an encoder's thresholds are calibrated on.

A clip is what the agent's encoder embeds at one step: the last ``window`` (16) frames of a short
stretch of an agent's life, here a walk, a look around or a pause of 16 steps from a pose in a
world. Thresholds are fitted on clips of procedural calibration worlds (:data:`CALIBRATION_WORLDS`:
the maps' blocks and mobs placed at random) and measured on clips of the paper's evaluation maps
(:data:`HELD_OUT_WORLDS`), which they never see. Most poses face a thing from 1.5 to 40 blocks
away (a mob, or an exposed block of a class some prompt names), the rest are anywhere; pitches are
0 to 20 degrees (looking level to slightly down, as the agent walks), and for a share
(``ClipConfig.any_pitch``) anywhere from the sky to the feet.

Labels come from the renderer's ground truth, the class and depth of every pixel (which is what
is visible and how far away it is). For a prompt with classes ``K`` and visible fraction ``v``
(``data/lexicon.toml``), let ``near(f)`` be the share of frame ``f`` that classes ``K`` fill within
``near_distance`` (R) of the eye and ``far(f)`` the same within ``far_distance`` (2R):

* *true* when ``near >= v`` in the last frame and in at least half of the frames (the thing is
  near and clearly visible where the step is stored);
* *false* when ``far < false_fraction * v`` in every frame (not visible, or farther than 2R);
* otherwise *ambiguous*, and left out of the calibration.

R = 8 blocks: the mode selector walks to a remembered frame's position, stops within 3 blocks of
it and turns to its heading, so the thing is then at most 11 blocks away and in view, where the
instruction policy locks onto it (a cow 11 blocks away still fills about 1 % of a 40 x 64 view).

:func:`collect_event_pairs` takes pairs of clips at one place (the second pose within 3 blocks
and 30 degrees of the first, so both fall into one place cluster of Place Event Memory) with and
without a change of the scene between them: burning zombies gone (Zombies' Death Spot), sugar
cane blown up and mobs appearing in view (Long-Navigation's dynamic scenes).
"""

from __future__ import annotations

import math
from collections import deque
from collections.abc import Hashable, Sequence
from dataclasses import dataclass
from typing import NamedTuple

import gymnasium
import numpy as np

from mrsteve.agent.factory import build_agent, explorer_agent_config
from mrsteve.env import make_env
from mrsteve.naming import check_name
from mrsteve.perception.encoder import Observation
from mrsteve.perception.lexicon import Lexicon, load_lexicon
from mrsteve.tasks.driver import Driver, EpisodeCallback, Step
from mrsteve.world.content import load_content
from mrsteve.world.layout import ScheduledEvent
from mrsteve.world.recipes import WORLD_RECIPES
from mrsteve.world.world import World


@dataclass(frozen=True)
class LabelledClip:
    """A clip of observations with what is true in it."""

    frames: Sequence[Observation]
    """The observations (an encoder embeds the last ``window``)."""
    prompts: frozenset[str] = frozenset()
    """Prompts true in the clip (e.g. water near and in view -> ``"near water"``)."""
    ambiguous: frozenset[str] = frozenset()
    """Prompts neither true nor false in it (left out when calibrating them); the rest are false."""
    place: Hashable = None
    """Where the clip was taken; clips of one place calibrate the event thresholds."""
    scene: Hashable = None
    """What was happening there; same place and scene: same event, else a changed scene."""
    world: str | None = None
    """The world recipe the clip was taken in."""


CALIBRATION_WORLDS = ("calib_meadow", "calib_dunes", "calib_camp")
"""Worlds the thresholds are fitted in: procedural worlds with the evaluation maps' blocks and
mobs, everything placed at random from the seed (``data/worlds.toml``); none is an evaluation map
or a test terrain (``plains``, ABA-Random's and SEQ(4)'s world, included)."""

HELD_OUT_WORLDS = (
    "map1",
    "map2",
    "map3",
    "find_water",
    "zombie_spot",
    "two_houses",
    "long_instruction",
    "long_navigation",
)
"""Worlds the fitted thresholds are measured in: the paper's evaluation maps (ABA-Sparse Maps 1-3,
the memory tasks' worlds, Long-Instruction and Long-Navigation)."""

FRAME_KEYS = ("semantic", "rgb", "depth")
"""Observation keys a clip's frames can keep."""

MOTIONS = ("walk", "look", "pause")
"""How the agent moves during a clip: walks on (steering a little), turns on the spot, or
stands looking around a little."""

MAX_WORLD_TRIES = 10
"""Seeds tried in a row for one calibration world (a random draw may not fit its mobs)."""

MAX_POSE_TRIES = 1000
"""Poses drawn for one clip before giving up on a world (most draws can be stood on)."""

SCENES = {
    "static": ("static", "static"),
    "zombies_gone": ("burning zombies", "zombies gone"),
    "cane_exploded": ("sugar cane", "sugar cane blown up"),
    "mobs_appeared": ("no mobs near", "mobs in view"),
}
"""The pairs of :func:`collect_event_pairs`: the scene of their first and second clip."""


@dataclass(frozen=True)
class ClipConfig:
    """How clips are taken and labelled (see the module docstring)."""

    worlds: tuple[str, ...] = CALIBRATION_WORLDS
    """World recipes clips are taken in (to fit thresholds on), visited in turn with fresh seeds."""
    held_out_worlds: tuple[str, ...] = HELD_OUT_WORLDS
    """World recipes the held-out clips are taken in (to measure fitted thresholds on);
    :func:`~mrsteve.calibration.thresholds.calibrate_on_world` needs them apart from ``worlds``."""
    obs_size: tuple[int, int] = (40, 64)
    """Frame height and width (the environment's default)."""
    window: int = 16
    """Frames per clip (the encoder's window; MineCLIP: 16)."""
    frame_keys: tuple[str, ...] = ("semantic",)
    """Observation keys each clip frame keeps (what the encoder reads: ``semantic``, ``rgb``,
    ``depth``)."""
    near_distance: float = 8.0
    """R: a prompt is true when its classes are visible within this many blocks."""
    far_distance: float = 16.0
    """2R: a prompt is false when its classes are not visible within this many blocks."""
    false_fraction: float = 0.25
    """... where "not visible" is filling less than this share of the prompt's visible fraction
    (ground classes are seldom wholly out of view)."""
    clips_per_world: int = 24
    """Clips taken in one world before the next world is built."""
    aimed: float = 0.75
    """Share of clips whose pose faces a thing; the others are anywhere, facing anywhere."""
    facing_wall: float = 0.0
    """Share of clips (drawn before the others) whose pose faces the world's wall ring from
    ``wall_distance`` blocks: where an exploring agent spends much of its time (it walks to the
    walls and gives up goals beyond them), rare among the other poses."""
    wall_distance: tuple[float, float] = (1.5, 12.0)
    """Range of distances from the wall ring of the wall-facing poses."""
    explored: float = 0.0
    """Share of clips (taken first in each world) from the view of an agent exploring it:
    MrSteve's count-based explorer walking from the player's spawn, a clip every
    ``explore_gap`` steps. What an exploring agent looks at (slopes, hollows and walls up close,
    while it walks) is rare among the posed views."""
    explore_gap: tuple[int, int] = (32, 96)
    """Range of steps the explorer walks from one of its clips to the next (at least ``window``,
    so that they share no frame)."""
    target_distance: tuple[float, float] = (1.5, 40.0)
    """Range of distances from a faced thing, drawn log-uniformly (about half within R)."""
    aim_error: float = 40.0
    """Headings stray up to this many degrees from the faced thing (the view is about 96 degrees
    wide at 40 x 64)."""
    pitch: tuple[float, float] = (0.0, 20.0)
    """Range of pitches at the start of a clip, degrees (positive looks down)."""
    any_pitch: float = 0.0
    """Share of the posed clips whose pitch is drawn from the whole range a camera can take
    (-90 to 90 degrees) instead of ``pitch``: an agent whose navigator or instruction policy
    turns its view to the sky or its feet stores such clips too."""
    place_offset: float = 3.0
    """Event pairs: the second pose is within this many blocks of the first ..."""
    place_turn: float = 30.0
    """... and within this many degrees of its heading (half a place cluster's yaw bin)."""
    pairs_per_world: int = 8
    """Event pairs taken in one world before the next world is built."""

    def __post_init__(self) -> None:
        for field in ("worlds", "held_out_worlds"):
            names = getattr(self, field)
            if not names:
                raise ValueError(f"{field} must name world recipes ({', '.join(WORLD_RECIPES)})")
            for name in names:
                check_name(name, WORLD_RECIPES, "world")
        if not self.frame_keys or not set(self.frame_keys) <= set(FRAME_KEYS):
            raise ValueError(f"frame_keys must name observation keys of {FRAME_KEYS}, got "
                             f"{self.frame_keys}")
        if not (0 <= self.facing_wall <= 1 and 0 <= self.aimed <= 1):
            raise ValueError(f"facing_wall and aimed are shares in [0, 1], got "
                             f"{self.facing_wall} and {self.aimed}")
        if not 0 < self.wall_distance[0] < self.wall_distance[1]:
            raise ValueError(f"wall_distance must be (low, high) with 0 < low < high, got "
                             f"{self.wall_distance}")
        if not 0 <= self.explored <= 1:
            raise ValueError(f"explored is a share in [0, 1], got {self.explored}")
        if not 0 <= self.any_pitch <= 1:
            raise ValueError(f"any_pitch is a share in [0, 1], got {self.any_pitch}")
        if not -90.0 <= self.pitch[0] <= self.pitch[1] <= 90.0:
            raise ValueError(f"pitch must be (low, high) degrees with -90 <= low <= high <= 90, "
                             f"got {self.pitch}")
        low, high = self.explore_gap
        if not (isinstance(low, int) and isinstance(high, int) and self.window <= low <= high):
            raise ValueError(f"explore_gap must be (low, high) steps with window ({self.window}) "
                             f"<= low <= high, got {self.explore_gap}")
        if not 0 < self.near_distance < self.far_distance:
            raise ValueError(f"need 0 < near_distance < far_distance, got {self.near_distance} "
                             f"and {self.far_distance}")
        if self.window < 1 or self.clips_per_world < 1 or self.pairs_per_world < 1:
            raise ValueError("window, clips_per_world and pairs_per_world must be positive")
        low, high = self.target_distance
        if not 0 < low < high:
            raise ValueError(f"target_distance must be (low, high) with 0 < low < high, got "
                             f"{self.target_distance}")


# ------------------------------------------------------------------------------------- labels


class PromptLabeller:
    """Labels clips for every prompt of a lexicon from the frames' classes and depths."""

    def __init__(self, lexicon: Lexicon, config: ClipConfig) -> None:
        self.lexicon = lexicon
        self.config = config
        self._n_classes = len(load_content().semantic_classes)
        self._members = np.zeros((len(lexicon.prompts), self._n_classes))
        """``[prompts, classes]``: 1 where a prompt names a class."""
        for p, meaning in enumerate(lexicon.prompts):
            for name in meaning.classes:
                self._members[p, load_content().semantic_id(name)] = 1.0
        self._fractions = np.array([m.visible_fraction for m in lexicon.prompts])

    def label(self, semantic: np.ndarray, depth: np.ndarray) -> tuple[frozenset[str], frozenset[str]]:
        """``(true prompts, ambiguous prompts)`` of a clip (``uint8`` / ``float32[frames, H, W]``)."""
        near = self._shares(semantic, depth, self.config.near_distance) @ self._members.T
        far = self._shares(semantic, depth, self.config.far_distance) @ self._members.T
        true = _near_and_clear(near, self._fractions)
        false = (far < self.config.false_fraction * self._fractions).all(axis=0)
        texts = self.lexicon.texts
        return (frozenset(texts[p] for p in np.flatnonzero(true)),
                frozenset(texts[p] for p in np.flatnonzero(~true & ~false)))

    def clearly_near(self, semantic: np.ndarray, depth: np.ndarray, cls: int) -> bool:
        """Whether class ``cls`` is near and clearly visible in a clip (the rule of a true
        prompt, with the smallest visible fraction of the prompts naming the class)."""
        named = self._members[:, cls] > 0
        fraction = self._fractions[named].min() if named.any() else 0.0
        near = self._shares(semantic, depth, self.config.near_distance)[:, cls]
        return bool(_near_and_clear(near, fraction))

    def _shares(self, semantic: np.ndarray, depth: np.ndarray, distance: float) -> np.ndarray:
        """``[frames, classes]``: share of each frame each class fills within ``distance``."""
        frames = semantic.shape[0]
        index = (np.arange(frames)[:, None, None] * self._n_classes + semantic)[depth <= distance]
        counts = np.bincount(index, minlength=frames * self._n_classes)
        return counts.reshape(frames, self._n_classes) / semantic[0].size


def _near_and_clear(shares: np.ndarray, fractions: np.ndarray | float) -> np.ndarray:
    """A prompt is true: its share ``[frames, ...]`` reaches its fraction in the last frame and in
    at least half of the frames."""
    clear = shares >= fractions
    return clear[-1] & (clear.mean(axis=0) >= 0.5)


# ------------------------------------------------------------------------------------- sampling


class Frames(NamedTuple):
    """The frames ``[window, H, W]`` of one clip."""

    semantic: np.ndarray
    """``uint8`` class ids."""
    depth: np.ndarray
    """``float32`` distances."""
    rgb: np.ndarray | None = None
    """``uint8[window, H, W, 3]`` colour images (taken when ``ClipConfig.frame_keys`` asks)."""


@dataclass(frozen=True)
class Pose:
    """Where a clip starts: feet ``(x, z)`` on the ground there, heading and pitch in degrees."""

    x: float
    z: float
    yaw: float
    pitch: float


def heading(from_x: float, from_z: float, to_x: float, to_z: float) -> float:
    """Yaw that faces ``(to_x, to_z)`` from ``(from_x, from_z)`` (yaw 0 faces +z, 90 faces -x)."""
    return math.degrees(math.atan2(-(to_x - from_x), to_z - from_z))


class RecentFrames(EpisodeCallback):
    """The last ``window`` observations' ``keys`` (a clip of what the player just saw)."""

    def __init__(self, window: int, keys: tuple[str, ...]) -> None:
        self.keys = keys
        self.recent: deque[dict[str, np.ndarray]] = deque(maxlen=window)

    def on_step(self, step: Step) -> None:
        self.recent.append({key: step.obs[key].copy() for key in self.keys})

    def stacked(self) -> dict[str, np.ndarray]:
        return {key: np.stack([seen[key] for seen in self.recent]) for key in self.keys}


class WorldSession:
    """One built world to take clips in: exposed blocks and mobs to face, poses, short walks."""

    def __init__(self, env: gymnasium.Env, seed: int, config: ClipConfig, lexicon: Lexicon):
        self.env = env
        self.config = config
        _, info = env.reset(seed=seed)
        self._camera = info["camera"]
        self.world: World = env.unwrapped.world
        self.name: str = self.world.layout.name
        """The world recipe."""
        content = self.world.content
        wanted = sorted({content.semantic_id(c) for m in lexicon.prompts for c in m.classes})
        self._mob_class = np.array([content.semantic_id(m.name) for m in content.mobs])
        self._burning_class = content.semantic_id("burning_zombie")
        self._target_classes = np.array(wanted)
        self._exposed = _exposed_blocks(self.world.blocks, content.block_semantic, wanted)
        self._spawn_scheduled_mobs()

    # -- what there is to face

    def mob_classes(self) -> np.ndarray:
        """Semantic class of each live mob (burning zombies as ``burning_zombie``)."""
        records = self.world.mobs.records
        classes = self._mob_class[records["kind"]]
        return np.where(records["burning"], self._burning_class, classes)

    def present_classes(self) -> list[int]:
        """Target classes with an exposed block or a live mob in the world now."""
        mobs = set(self.mob_classes().tolist())
        return [int(c) for c in self._target_classes if c in self._exposed or c in mobs]

    def target_point(self, cls: int, rng: np.random.Generator) -> tuple[float, float]:
        """``(x, z)`` of a random exposed block or live mob of class ``cls``."""
        mobs = np.flatnonzero(self.mob_classes() == cls)
        if mobs.size:
            record = self.world.mobs.records[rng.choice(mobs)]
            return float(record["x"]), float(record["z"])
        cells = self._exposed[cls]
        x, z = cells[rng.integers(len(cells))]
        return float(x) + 0.5, float(z) + 0.5

    # -- poses

    def aimed_pose(self, x: float, z: float, distance: tuple[float, float], aim_error: float,
                   rng: np.random.Generator) -> Pose | None:
        """A pose ``distance`` blocks (log-uniform) from ``(x, z)`` roughly facing it, or
        ``None`` when the spot drawn cannot be stood on."""
        low, high = distance
        d = math.exp(rng.uniform(math.log(low), math.log(high)))
        bearing = rng.uniform(0.0, 2 * math.pi)
        px, pz = x + d * math.cos(bearing), z + d * math.sin(bearing)
        yaw = heading(px, pz, x, z) + rng.uniform(-aim_error, aim_error)
        return self._standable(Pose(px, pz, yaw, self._pitch(rng)))

    def random_pose(self, rng: np.random.Generator) -> Pose | None:
        sx, _, sz = self.world.blocks.shape
        return self._standable(Pose(rng.uniform(1.5, sx - 1.5), rng.uniform(1.5, sz - 1.5),
                                    rng.uniform(-180.0, 180.0), self._pitch(rng)))

    def wall_pose(self, distance: tuple[float, float], aim_error: float,
                  rng: np.random.Generator) -> Pose | None:
        """A pose ``distance`` blocks (uniform) inside a random side of the wall ring, roughly
        facing it, or ``None`` when the spot drawn cannot be stood on."""
        sx, _, sz = self.world.blocks.shape
        d = 1.0 + rng.uniform(*distance)  # the ring is the outermost column
        side = rng.integers(4)
        along = rng.uniform(1.5, (sx if side < 2 else sz) - 1.5)
        x, z, yaw = ((d, along, 90.0), (sx - d, along, -90.0), (along, d, 180.0),
                     (along, sz - d, 0.0))[side]
        pitch = self._pitch(rng)
        return self._standable(Pose(x, z, yaw + rng.uniform(-aim_error, aim_error), pitch))

    def nearby_pose(self, pose: Pose, rng: np.random.Generator) -> Pose | None:
        """A pose within ``place_offset`` blocks and ``place_turn`` degrees of ``pose``."""
        r = self.config.place_offset * math.sqrt(rng.uniform())
        angle = rng.uniform(0.0, 2 * math.pi)
        low, high = self.config.pitch
        pitches = (low, high) if low <= pose.pitch <= high else (-90.0, 90.0)
        return self._standable(Pose(
            pose.x + r * math.cos(angle), pose.z + r * math.sin(angle),
            pose.yaw + rng.uniform(-self.config.place_turn, self.config.place_turn),
            float(np.clip(pose.pitch + rng.uniform(-5.0, 5.0), *pitches)),
        ))

    def _pitch(self, rng: np.random.Generator) -> float:
        """A posed clip's pitch: from anywhere with probability ``config.any_pitch``, else from
        ``config.pitch`` (no extra draw when the share is 0: older clip sets stay as they were)."""
        if self.config.any_pitch and rng.uniform() < self.config.any_pitch:
            return rng.uniform(-90.0, 90.0)
        return rng.uniform(*self.config.pitch)

    def _standable(self, pose: Pose) -> Pose | None:
        """``pose`` if the player can stand there (inside the walls, on dry ground)."""
        sx, _, sz = self.world.blocks.shape
        if not (1.5 <= pose.x <= sx - 1.5 and 1.5 <= pose.z <= sz - 1.5):
            return None
        try:
            self.world.teleport(pose.x, pose.z, yaw=pose.yaw, pitch=pose.pitch)
        except ValueError:
            return None
        return None if self.world.in_water else pose

    # -- clips

    def clip(self, pose: Pose, rng: np.random.Generator) -> Frames:
        """The frames of a short motion from ``pose`` (colour too if the config asks)."""
        self.world.teleport(pose.x, pose.z, yaw=pose.yaw, pitch=pose.pitch)
        window = self.config.window
        semantic = np.empty((window, *self.config.obs_size), dtype=np.uint8)
        depth = np.empty((window, *self.config.obs_size), dtype=np.float32)
        rgb = (np.empty((window, *self.config.obs_size, 3), dtype=np.uint8)
               if "rgb" in self.config.frame_keys else None)
        for i, action in enumerate(_motion(rng, window)):
            observation, *_ = self.env.step(action)
            semantic[i], depth[i] = observation["semantic"], observation["depth"]
            if rgb is not None:
                rgb[i] = observation["rgb"]
        return Frames(semantic, depth, rgb)

    def explored_clips(self, count: int, rng: np.random.Generator) -> list[Frames]:
        """``count`` clips from the view of MrSteve's count-based explorer walking from where the
        player stands: the last ``window`` frames after every ``explore_gap`` steps (uniform)."""
        keys = ("semantic", "depth") + (("rgb",) if "rgb" in self.config.frame_keys else ())
        recent = RecentFrames(self.config.window, keys)
        driver = Driver(self.env, [recent])
        driver.attach(self.env.step({})[0])
        explorer = build_agent(explorer_agent_config("count-based"))
        explorer.reset(driver.view, np.random.default_rng(rng.integers(2**63)), self._camera)
        clips = []
        low, high = self.config.explore_gap
        for _ in range(count):
            driver.run(explorer.act, steps=int(rng.integers(low, high + 1)))
            stacked = recent.stacked()
            clips.append(Frames(stacked["semantic"], stacked["depth"], stacked.get("rgb")))
        return clips

    def noop(self) -> None:
        """One step without input (lets a scheduled event happen)."""
        self.env.step({})

    # -- changes of the scene

    def remove_class(self, cls: int) -> None:
        """Every mob of class ``cls`` dies, or every block of it blows up."""
        doomed = np.flatnonzero(self.mob_classes() == cls)
        if doomed.size:
            self.world.mobs.remove(doomed)
            return
        cells = self._exposed.pop(cls)
        low, high = cells.min(axis=0), cells.max(axis=0) + 1
        (x, z), radius = (low + high) / 2, float(np.linalg.norm(high - low)) / 2 + 1.0
        block = self.world.content.semantic_classes[cls]
        self.world.schedule(ScheduledEvent(self.world.t + 1, "explode", float(x), float(z),
                                           radius=radius, block=block))
        self.noop()

    def spawn_in_view(self, pose: Pose, rng: np.random.Generator) -> int:
        """One to three mobs of one kind appear 3 to R blocks ahead of ``pose``; their class."""
        content = self.world.content
        kind = ("cow", "sheep", "spider", "zombie")[rng.integers(4)]
        sx, _, sz = self.world.blocks.shape
        for _ in range(rng.integers(1, 4)):
            distance = rng.uniform(3.0, self.config.near_distance)
            yaw = math.radians(pose.yaw + rng.uniform(-20.0, 20.0))
            x = float(np.clip(pose.x - distance * math.sin(yaw), 1.5, sx - 1.5))
            z = float(np.clip(pose.z + distance * math.cos(yaw), 1.5, sz - 1.5))
            self.world.spawn_mob(kind, x, z, roam=2.0, burning=kind == "zombie")
        return content.semantic_id("burning_zombie" if kind == "zombie" else kind)

    def _spawn_scheduled_mobs(self) -> None:
        """Mobs the world would spawn later (Long-Navigation's spiders) appear now."""
        for event in self.world.pending_events:
            if event.kind == "spawn_mob":
                self.world.schedule(ScheduledEvent(self.world.t + 1, "spawn_mob", event.x,
                                                   event.z, event.mob, event.count, event.radius))
        self.noop()


def _exposed_blocks(blocks: np.ndarray, block_semantic: np.ndarray, classes: list[int]
                    ) -> dict[int, np.ndarray]:
    """``{class: int[n, 2]}`` columns ``(x, z)`` of blocks of each class with an air neighbour."""
    air = blocks == 0
    exposed = np.zeros_like(air)
    exposed[:, :-1] |= air[:, 1:]
    exposed[1:] |= air[:-1]
    exposed[:-1] |= air[1:]
    exposed[:, :, 1:] |= air[:, :, :-1]
    exposed[:, :, :-1] |= air[:, :, 1:]
    semantic = block_semantic[blocks]
    found = {}
    for cls in classes:
        x, _, z = np.nonzero(exposed & (semantic == cls))
        if x.size:
            found[cls] = np.stack([x, z], axis=1)
    return found


def _motion(rng: np.random.Generator, steps: int) -> list[dict]:
    """Actions of one clip: a walk (steering a little), a turn on the spot, or a pause."""
    kind = MOTIONS[rng.choice(len(MOTIONS), p=(0.5, 0.25, 0.25))]
    pitch = rng.normal(0.0, 0.5, steps)
    if kind == "walk":
        yaw = rng.normal(0.0, 2.0, steps)
    elif kind == "look":
        yaw = np.full(steps, rng.uniform(-5.0, 5.0))
    else:
        yaw = rng.normal(0.0, 1.0, steps)
    camera = np.stack([pitch, yaw], axis=1).astype(np.float32)
    return [{"forward": int(kind == "walk"), "camera": camera[i]} for i in range(steps)]


class _Sessions:
    """World sessions in turn over ``config.worlds``, each with a fresh seed from ``rng``."""

    def __init__(self, config: ClipConfig, lexicon: Lexicon, rng: np.random.Generator):
        self.config, self.lexicon, self.rng = config, lexicon, rng
        self._envs: dict[str, gymnasium.Env] = {}
        self._turn = 0

    def next(self) -> WorldSession:
        name = self.config.worlds[self._turn % len(self.config.worlds)]
        self._turn += 1
        if name not in self._envs:
            self._envs[name] = make_env(world=name,
                                              obs_size=self.config.obs_size)
        for _ in range(MAX_WORLD_TRIES):
            seed = int(self.rng.integers(2**31))
            try:
                return WorldSession(self._envs[name], seed, self.config, self.lexicon)
            except ValueError as error:  # a procedural draw that does not fit (too few spots)
                failure = error
        raise RuntimeError(f"world {name!r} could not be built from {MAX_WORLD_TRIES} seeds in a "
                           f"row: {failure}")

    def close(self) -> None:
        for env in self._envs.values():
            env.close()


def _draw_pose(session: WorldSession, rng: np.random.Generator) -> Pose:
    """A pose facing the wall ring with probability ``config.facing_wall``, else one facing a
    random thing (a random target class, then a random one of it) with probability
    ``config.aimed``, else anywhere."""
    config = session.config
    for _ in range(MAX_POSE_TRIES):
        if config.facing_wall and rng.uniform() < config.facing_wall:
            pose = session.wall_pose(config.wall_distance, config.aim_error, rng)
            if pose is not None:
                return pose
            continue
        present = session.present_classes()
        if present and rng.uniform() < config.aimed:
            x, z = session.target_point(present[rng.integers(len(present))], rng)
            pose = session.aimed_pose(x, z, config.target_distance, config.aim_error, rng)
        else:
            pose = session.random_pose(rng)
        if pose is not None:
            return pose
    raise RuntimeError(f"found no spot to stand on in {MAX_POSE_TRIES} tries in world "
                       f"{session.name!r}")


def _observations(frames: Frames, keys: tuple[str, ...]) -> list[dict[str, np.ndarray]]:
    """The clip as the observations an encoder reads (``keys`` of each frame)."""
    return [{key: getattr(frames, key)[i] for key in keys} for i in range(len(frames.semantic))]


def collect_clips(count: int, rng: np.random.Generator, config: ClipConfig | None = None,
                  lexicon: Lexicon | None = None) -> list[LabelledClip]:
    """``count`` clips across ``config.worlds``, labelled for every prompt of ``lexicon``."""
    config = config or ClipConfig()
    lexicon = lexicon or load_lexicon()
    labeller = PromptLabeller(lexicon, config)
    sessions = _Sessions(config, lexicon, rng)
    clips: list[LabelledClip] = []
    try:
        while len(clips) < count:
            session = sessions.next()
            wanted = min(config.clips_per_world, count - len(clips))
            explored = int(rng.binomial(wanted, config.explored)) if config.explored else 0
            taken = session.explored_clips(explored, rng) if explored else []
            taken += [session.clip(_draw_pose(session, rng), rng) for _ in range(wanted - explored)]
            for frames in taken:
                true, ambiguous = labeller.label(frames.semantic, frames.depth)
                clips.append(LabelledClip(_observations(frames, config.frame_keys), true,
                                          ambiguous, world=session.name))
    finally:
        sessions.close()
    return clips


# ------------------------------------------------------------------------------------- events


def collect_event_pairs(count: int, rng: np.random.Generator, config: ClipConfig | None = None,
                        lexicon: Lexicon | None = None) -> list[LabelledClip]:
    """``count`` pairs of clips at one place each (``2 * count`` clips), about half with the
    scene unchanged and half with it changed between the two clips (:data:`SCENES`).

    A pair's clips share ``place`` (the pair's index), have the ``scene`` names of :data:`SCENES`
    and are labelled for every prompt like :func:`collect_clips`'s. A change counts only where it
    shows: what vanished (or appeared) is near and clearly visible in the clip before (after) it,
    by the rule of a true prompt with the smallest visible fraction of a prompt naming it.
    """
    config = config or ClipConfig()
    lexicon = lexicon or load_lexicon()
    labeller = PromptLabeller(lexicon, config)
    sessions = _Sessions(config, lexicon, rng)
    content = load_content()
    vanishing = {"zombies_gone": content.semantic_id("burning_zombie"),
                 "cane_exploded": content.semantic_id("sugar_cane")}
    pairs: list[tuple[str, str, Frames, Frames]] = []
    try:
        while len(pairs) < count:
            session = sessions.next()
            batch = min(config.pairs_per_world, count - len(pairs))
            present = session.present_classes()
            found = []
            for change, cls in vanishing.items():
                if cls in present:
                    found += _vanishing_pairs(session, change, cls, batch, labeller, rng)
            for i in range(batch):
                pair = _pair_in_view(session, i % 2 == 1, labeller, rng)
                if pair is not None:
                    found.append(pair)
            pairs += [(session.name, *pair) for pair in found]
    finally:
        sessions.close()
    clips = []
    for index, (world, kind, *frames) in enumerate(pairs[:count]):
        for clip, scene in zip(frames, SCENES[kind], strict=True):
            true, ambiguous = labeller.label(clip.semantic, clip.depth)
            clips.append(LabelledClip(_observations(clip, config.frame_keys), true, ambiguous,
                                      index, scene, world))
    return clips


def _place_poses(session: WorldSession, first: Pose | None, rng: np.random.Generator
                 ) -> tuple[Pose, Pose] | None:
    """``first`` (a pose drawn by :func:`_draw_pose` if ``None``) and a pose near it."""
    first = first or _draw_pose(session, rng)
    second = session.nearby_pose(first, rng)
    return None if second is None else (first, second)


def _vanishing_pairs(session: WorldSession, change: str, cls: int, count: int,
                     labeller: PromptLabeller, rng: np.random.Generator
                     ) -> list[tuple[str, Frames, Frames]]:
    """Pairs around things of class ``cls``: first clips while they are there, then every such
    thing in the world vanishes (zombies burn out, sugar cane blows up), then the second clips."""
    near = (2.0, session.config.near_distance)
    places = []
    for _ in range(count):
        first = session.aimed_pose(*session.target_point(cls, rng), near, 15.0, rng)
        place = first and _place_poses(session, first, rng)
        if place is not None:
            places.append(place)
    befores = []
    for first, second in places:
        before = session.clip(first, rng)
        if labeller.clearly_near(before.semantic, before.depth, cls):
            befores.append((before, second))
    session.remove_class(cls)
    return [(change, before, session.clip(second, rng)) for before, second in befores]


def _pair_in_view(session: WorldSession, change: bool, labeller: PromptLabeller,
                  rng: np.random.Generator) -> tuple[str, Frames, Frames] | None:
    """A pair at a place drawn like a clip's, unchanged or with mobs appearing in view of the
    second pose."""
    places = _place_poses(session, None, rng)
    if places is None:
        return None
    first, second = places
    before = session.clip(first, rng)
    if not change:
        return "static", before, session.clip(second, rng)
    cls = session.spawn_in_view(second, rng)
    after = session.clip(second, rng)
    return ("mobs_appeared", before, after) if labeller.clearly_near(after.semantic, after.depth, cls) else None
