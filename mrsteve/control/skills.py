"""Instruction execution: the ``InstructionPolicy`` interface and the embedded world's scripted skills.

In the paper the instruction policy pi_Inst is STEVE-1, run in Execute mode with the task's
execute prompt ("cut a tree", "get water bucket", ...; appendix "Solver Module Details", Table
"Prompts used in MrSteve") once the agent stands where memory saw the resource. In the embedded
world :class:`ScriptedSkills` stands in for it without weights. It reads what STEVE-1 gets (the
first-person frame, here as depth and semantics, and the inventory) plus the pose, and for each
prompt follows the rules of ``data/skills.toml`` (target classes, item to hold, attack or use):

- find the target classes in view and lock onto the nearest (by depth): a block cell, or a mob
  followed from frame to frame as it moves;
- turn toward it (a bounded turn per step), walk up to it (sprinting when far, jumping when
  stalled at a one-block step, a sideways detour when no progress is made);
- once it is under the crosshair within reach, hold attack or press use until the item arrives;
- skip targets that do not pay off (a sheared sheep, a block it cannot get to) for a while, and
  keep heading for a target that left the view (a fleeing mob, water below the view) for a while;
- with no target in view, look around once (a full turn on the spot: when the task starts and
  after a target was got, skipped or lost), then wander like STEVE-1's "go explore"
  (:class:`~mrsteve.control.explorers.WanderExplorer`) until a target comes into view.

Every random choice (detour sides, turn directions, the wanderer's) comes from the generator given
to :meth:`ScriptedSkills.reset`, so the same generator and observations give the same actions.
"""

from __future__ import annotations

import math
import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any, Protocol, runtime_checkable

import numpy as np

from mrsteve.control.explorers import Explorer, WanderExplorer
from mrsteve.control.navigation import Action, Observation, heading_to, wrap_degrees
from mrsteve.world.content import Content, load_content
from mrsteve.world.physics import EYE_HEIGHT
from mrsteve.world.render import camera_rays

INTERACTIONS = ("attack", "use")
"""Buttons a skill presses on its target."""


@runtime_checkable
class InstructionPolicy(Protocol):
    """pi_Inst: follows a text instruction (an execute prompt) from observations; STEVE-1 in the
    paper."""

    def reset(self, rng: np.random.Generator) -> None:
        """Start a new episode; every random choice afterwards comes from ``rng``."""

    def act(self, obs: Observation, prompt: str) -> Action:
        """The next action for ``prompt``; an unknown prompt raises ``KeyError`` listing the known
        ones."""


# ------------------------------------------------------------------------------------- the rules


@dataclass(frozen=True)
class SkillMethod:
    """One way to get a skill's item: what to hold and which button to press on the target."""

    interaction: str
    """``attack`` or ``use``."""
    hold: str | None = None
    """Item to hold (equipped when it is in the inventory); ``None``: whatever is in hand."""


@dataclass(frozen=True)
class Skill:
    """The rules of one execute prompt (an entry of ``data/skills.toml``)."""

    prompt: str
    """The instruction."""
    aliases: tuple[str, ...]
    """Other spellings of the instruction."""
    targets: tuple[str, ...]
    """Semantic classes of the targets (all blocks, or all mobs)."""
    success: str
    """The item whose count rising in the inventory means the instruction is done."""
    methods: tuple[SkillMethod, ...]
    """Ways to get the item, preferred first; the last is the fallback."""
    on_mobs: bool
    """Whether the targets are mobs (followed as they move) rather than blocks."""


@dataclass(frozen=True)
class SkillBook:
    """Every skill, looked up by prompt or alias."""

    skills: tuple[Skill, ...]

    @property
    def prompts(self) -> tuple[str, ...]:
        """Every accepted prompt, aliases included."""
        return tuple(p for s in self.skills for p in (s.prompt, *s.aliases))

    def skill(self, prompt: str) -> Skill:
        """The skill of ``prompt``; an unknown prompt raises ``KeyError`` listing the known ones."""
        for skill in self.skills:
            if prompt == skill.prompt or prompt in skill.aliases:
                return skill
        raise KeyError(
            f"no skill for prompt {prompt!r}; known prompts: {', '.join(map(repr, self.prompts))}"
        )


_SKILL_KEYS = ("prompt", "aliases", "targets", "success", "methods")


def parse_skills(raw: Mapping[str, Any], content: Content) -> SkillBook:
    """Build and check a :class:`SkillBook` from the parsed TOML mapping (names against the world's
    semantic classes and items)."""
    mob_names = {mob.name for mob in content.mobs}
    skills = []
    for entry in raw.get("skill", ()):
        prompt = entry.get("prompt")
        if not isinstance(prompt, str) or not prompt:
            raise ValueError(f"skills: every skill needs a prompt, got {entry!r}")
        unknown = sorted(set(entry) - set(_SKILL_KEYS))
        if unknown:
            raise ValueError(
                f"skills: {prompt!r}: unknown keys {unknown}; accepted: {', '.join(_SKILL_KEYS)}"
            )
        targets = tuple(entry.get("targets", ()))
        if not targets:
            raise ValueError(f"skills: {prompt!r} has no targets")
        for name in targets:
            if name not in content.semantic_classes or name == "sky":
                raise ValueError(
                    f"skills: {prompt!r}: target {name!r} is not a block or mob class; "
                    f"classes: {', '.join(content.semantic_classes[1:])}"
                )
        on_mobs = {name in mob_names for name in targets}
        if len(on_mobs) != 1:
            raise ValueError(f"skills: {prompt!r}: targets must be all blocks or all mobs")
        success = entry.get("success")
        methods = tuple(_parse_method(prompt, m, content) for m in entry.get("methods", ()))
        if not methods:
            raise ValueError(f"skills: {prompt!r} has no methods")
        if success not in content.item_names:
            raise ValueError(
                f"skills: {prompt!r}: success {success!r} is not an item; "
                f"items: {', '.join(content.item_names)}"
            )
        skills.append(Skill(
            prompt=prompt,
            aliases=tuple(entry.get("aliases", ())),
            targets=targets,
            success=success,
            methods=methods,
            on_mobs=on_mobs.pop(),
        ))  # fmt: skip
    book = SkillBook(tuple(skills))
    if len(set(book.prompts)) != len(book.prompts):
        raise ValueError(f"skills: a prompt or alias appears twice: {book.prompts}")
    return book


def _parse_method(prompt: str, raw: Mapping[str, Any], content: Content) -> SkillMethod:
    unknown = sorted(set(raw) - {"interaction", "hold"})
    if unknown:
        raise ValueError(
            f"skills: {prompt!r}: unknown method keys {unknown}; accepted: interaction, hold"
        )
    interaction, hold = raw.get("interaction"), raw.get("hold")
    if interaction not in INTERACTIONS:
        raise ValueError(
            f"skills: {prompt!r}: interaction must be one of {', '.join(INTERACTIONS)}, "
            f"got {interaction!r}"
        )
    if hold is not None and hold not in content.item_names:
        raise ValueError(
            f"skills: {prompt!r}: hold {hold!r} is not an item; items: {', '.join(content.item_names)}"
        )
    return SkillMethod(interaction, hold)


@cache
def load_skills() -> SkillBook:
    """The shipped skills (``data/skills.toml``), parsed and checked once per process."""
    text = resources.files("mrsteve.control").joinpath("data/skills.toml").read_text("utf-8")
    return parse_skills(tomllib.loads(text), load_content())


# ------------------------------------------------------------------------------------- the policy


@dataclass(frozen=True)
class SkillConfig:
    """Parameters of :class:`ScriptedSkills`."""

    interact_distance: float = 4.0
    """Press the button when the target under the crosshair is this close to the eye (blocks; the
    world's reach is 4.5)."""
    approach_distance: float = 2.0
    """Walk until the target is this close on the ground plane (blocks)."""
    follow_distance: float = 1.5
    """Keep walking after a mob until it is this close on the ground plane (blocks)."""
    max_turn: float = 15.0
    """Largest camera turn per step on each axis, degrees."""
    walk_cone: float = 45.0
    """Walk only when the target's heading is within this many degrees of the view."""
    sprint_distance: float = 5.0
    """Sprint toward targets farther than this on the ground plane (when facing them)."""
    mob_radius: float = 1.2
    """Target pixels within this distance (blocks) of a mob's nearest pixel belong to that mob."""
    track_radius: float = 2.0
    """A mob seen within this distance of where it was last seen is the same mob."""
    stall_speed: float = 0.06
    """Horizontal blocks per step below which a step with forward pressed counts as stalled."""
    stuck_steps: int = 40
    """Steps without getting 0.5 blocks closer to the target before a sideways detour."""
    detour_steps: int = 12
    """Length of a detour: steps of strafing forward while jumping, to a random side."""
    max_detours: int = 3
    """Detours on one target before it is skipped as unreachable."""
    give_up_steps: int = 400
    """Steps on one target without the item arriving before it is skipped."""
    give_up_uses: int = 40
    """Steps pressing use on the target without the item arriving before it is skipped (a sheep
    that was already sheared)."""
    skip_radius: float = 1.5
    """Target pixels within this distance (blocks) of a skipped target are ignored..."""
    skip_steps: int = 600
    """... for this many steps."""
    lost_steps: int = 40
    """Steps to keep heading for a target that left the view before looking around."""
    scan: float = 360.0
    """Degrees to turn on the spot looking for a target before wandering, when a task starts and
    whenever a target was got, skipped or lost."""
    fov_deg: float = 70.0
    """Vertical field of view of the observations (the environment's)."""

    def __post_init__(self) -> None:
        for name in ("interact_distance", "approach_distance", "follow_distance", "max_turn",
                     "walk_cone", "mob_radius", "track_radius", "skip_radius"):  # fmt: skip
            if not getattr(self, name) > 0:
                raise ValueError(f"{name} must be positive, got {getattr(self, name)}")
        for name in ("stuck_steps", "detour_steps", "give_up_steps", "give_up_uses",
                     "skip_steps", "lost_steps"):  # fmt: skip
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        if self.scan < 0:
            raise ValueError(f"scan must be non-negative, got {self.scan}")
        if not 0.0 < self.fov_deg < 180.0:
            raise ValueError(f"fov_deg must be in (0, 180), got {self.fov_deg}")


@dataclass(frozen=True)
class _SkillTables:
    """A skill compiled for the per-step code: class lookup table and inventory slots."""

    skill: Skill
    is_target: np.ndarray
    """``bool[256]``: whether a semantic id is a target class."""
    success_slot: int
    method_slots: tuple[int, ...]
    """Inventory slot of each method's ``hold`` item (-1: none)."""


class ScriptedSkills:
    """Scripted instruction policy of the embedded world (the stand-in for STEVE-1); see the module
    docstring. ``wanderer`` is what it does with no target in view (default: STEVE-1's "go explore",
    :class:`~mrsteve.control.explorers.WanderExplorer`)."""

    def __init__(
        self,
        config: SkillConfig | None = None,
        *,
        skills: SkillBook | None = None,
        content: Content | None = None,
        wanderer: Explorer | None = None,
    ):
        self.config = config if config is not None else SkillConfig()
        self.content = content if content is not None else load_content()
        self.skills = skills if skills is not None else load_skills()
        self.wanderer = (
            wanderer if wanderer is not None else WanderExplorer(fov_deg=self.config.fov_deg)
        )
        self._tables: dict[str, _SkillTables] = {}
        self._cam: _Camera | None = None
        self._rng: np.random.Generator | None = None
        self._wanderer_ready = False
        self._start(None)

    # -- interface -------------------------------------------------------------------------------

    def reset(self, rng: np.random.Generator) -> None:
        self._rng = rng
        self._wanderer_ready = False
        self._start(None)

    def act(self, obs: Observation, prompt: str) -> Action:
        if self._rng is None:
            raise RuntimeError("call reset(rng) before act()")
        tables = self._tables_for(prompt)
        if tables is not self._task:
            self._start(tables)
        self._t += 1
        cfg = self.config
        x, y, z, yaw, pitch = (float(v) for v in obs["pose"])
        eye = np.array([x, y + EYE_HEIGHT, z])
        moved = self._track_motion(x, z)

        count = int(obs["inventory"][tables.success_slot])
        if self._count is not None and count > self._count:  # got it: the next starts afresh
            self._drop_lock()
            self._look_around()
        self._count = count
        method, slot = self._method(obs["inventory"])

        found = self._find_target(obs, eye, yaw, pitch)
        if not found and (self._lock is None or self._t - self._seen > cfg.lost_steps):
            if self._lock is not None:
                self._drop_lock()
                self._look_around()
            return self._wander(obs, slot)
        self._lock_steps += 1
        point = self._lock
        delta = point - eye
        flat = math.hypot(delta[0], delta[2])
        distance = float(np.linalg.norm(delta))
        on_target = found and self._on_target(obs, eye, yaw, pitch, distance)
        if self._track_progress(distance):
            self._skip(point)
            return self._wander(obs, slot)

        target_yaw = heading_to(x, z, point[0], point[2]) if flat > 0.3 else yaw
        yaw_error = wrap_degrees(target_yaw - yaw)
        pitch_error = math.degrees(math.atan2(-delta[1], flat)) - pitch
        stop = cfg.follow_distance if self._task.skill.on_mobs else cfg.approach_distance
        forward = abs(yaw_error) < cfg.walk_cone and flat > stop
        action = {
            "forward": int(forward),
            "sprint": int(forward and flat > cfg.sprint_distance and abs(yaw_error) < 20.0),
            "jump": int(forward and not moved and self._stalled > 1),
            "camera": np.array(
                [np.clip(pitch_error, -cfg.max_turn, cfg.max_turn),
                 np.clip(yaw_error, -cfg.max_turn, cfg.max_turn)], dtype=np.float32,
            ),
            "equip": slot + 1,
        }  # fmt: skip
        if on_target:
            self._press(action, method.interaction)
        elif self._detour_left > 0:
            self._detour(action)
        self._pressed_forward = bool(action["forward"])
        return action

    # -- targets ---------------------------------------------------------------------------------

    def _find_target(self, obs: Observation, eye: np.ndarray, yaw: float, pitch: float) -> bool:
        """Update the lock from the frame: the locked target if still in view, else the block or
        mob of the nearest target pixel (skipped targets ignored). Whether any target is in view;
        :class:`_Frame` keeps this cheap even when targets fill the view (the ground, for dirt)."""
        cfg = self.config
        semantic, depth = obs["semantic"], obs["depth"]
        pixels = np.flatnonzero(self._task.is_target[semantic])
        if pixels.size == 0:
            return False
        depths = depth.ravel()[pixels]
        frame = _Frame(self._camera(semantic.shape), self._basis(yaw, pitch), eye, pixels, depths)
        self._skips = [(p, until) for p, until in self._skips if until > self._t]
        if self._skips:
            keep = np.ones(pixels.size, dtype=np.bool_)
            for point, _ in self._skips:
                keep[frame.within(point, cfg.skip_radius)] = False
            if not keep.any():
                return False
            frame = frame.subset(keep)
        if self._task.skill.on_mobs:
            seed = frame.nearest()
            if self._lock is not None:
                mob = frame.closest_to(self._lock, cfg.track_radius)
                if mob is None:
                    self._drop_lock()
                else:
                    seed = mob
            self._set_lock(frame.points(frame.within(seed, cfg.mob_radius)).mean(axis=0), None)
        elif self._cell is not None and frame.shows_cell(self._cell):
            self._seen = self._t
        else:
            self._drop_lock()
            self._set_lock(None, frame.cell(frame.nearest()))
        return True

    def _set_lock(self, point: np.ndarray | None, cell: np.ndarray | None) -> None:
        if self._lock is None:
            self._lock_steps = self._uses = self._detours = 0
            self._best = math.inf
            self._since_progress = 0
        if cell is not None:
            self._cell = cell
            point = cell + 0.5
        self._lock = point
        self._seen = self._t

    def _drop_lock(self) -> None:
        self._lock = self._cell = None
        self._detour_left = 0

    def _skip(self, point: np.ndarray) -> None:
        """Ignore the target around ``point`` for ``skip_steps`` and look for another."""
        self._skips.append((point.copy(), self._t + self.config.skip_steps))
        self._drop_lock()
        self._look_around()

    def _on_target(
        self, obs: Observation, eye: np.ndarray, yaw: float, pitch: float, distance: float
    ) -> bool:
        """Whether the crosshair is on a target within ``interact_distance``: a target pixel at the
        image centre that close, or (blocks) the locked cell on the crosshair's ray."""
        reach = self.config.interact_distance
        height, width = obs["depth"].shape
        rows = slice((height - 1) // 2, height // 2 + 1)
        cols = slice((width - 1) // 2, width // 2 + 1)
        centre = self._task.is_target[obs["semantic"][rows, cols]]
        if np.any(centre & (obs["depth"][rows, cols] <= reach)):
            return True
        if self._cell is None or distance > reach + 1.0:
            return False
        look = self._basis(yaw, pitch)[2]
        return _ray_enters_box(eye, look, self._cell, reach)

    # -- acting ----------------------------------------------------------------------------------

    def _press(self, action: Action, interaction: str) -> None:
        """Press the skill's button on the target. A use ray stops at plants (tall grass in front
        of water), so using on a block also taps attack every other step: a one-step tap breaks
        plants, which break in one step, and no other block."""
        action[interaction] = 1
        if interaction == "use":
            self._uses += 1
            if not self._task.skill.on_mobs and self._uses % 2 == 0:
                action["attack"] = 1

    def _track_progress(self, distance: float) -> bool:
        """Follow the progress toward the locked target, starting a detour when stuck; whether to
        give the target up (too long without the item, too many uses or detours)."""
        cfg = self.config
        if distance < self._best - 0.5:
            self._best = distance
            self._since_progress = 0
        elif distance > cfg.interact_distance:
            self._since_progress += 1
        if self._since_progress > cfg.stuck_steps and self._detour_left == 0:
            self._detours += 1
            self._detour_left = cfg.detour_steps
            self._side = "left" if self._rng.random() < 0.5 else "right"
            self._since_progress = 0
            self._best = distance
        return (
            self._lock_steps > cfg.give_up_steps
            or self._uses > cfg.give_up_uses
            or (self._detours > cfg.max_detours and self._detour_left == 0)
        )

    def _detour(self, action: Action) -> None:
        self._detour_left -= 1
        action.update(forward=1, sprint=0, jump=1, **{self._side: 1})

    def _look_around(self) -> None:
        self._scan_left = self.config.scan * (1.0 if self._rng.random() < 0.5 else -1.0)

    def _wander(self, obs: Observation, slot: int) -> Action:
        """No target in view: turn on the spot while a look-around lasts, else wander like STEVE-1's
        "go explore"."""
        if self._scan_left != 0.0:
            turn = float(np.clip(self._scan_left, -self.config.max_turn, self.config.max_turn))
            self._scan_left -= turn
            self._pressed_forward = False
            pitch = float(np.clip(-obs["pose"][4], -self.config.max_turn, self.config.max_turn))
            return {"camera": np.array([pitch, turn], dtype=np.float32), "equip": slot + 1}
        if not self._wanderer_ready:
            self.wanderer.reset(obs, self._rng)
            self._wanderer_ready = True
        self.wanderer.observe(obs)
        action = dict(self.wanderer.act(obs))
        action["equip"] = slot + 1
        self._pressed_forward = bool(action.get("forward", 0))
        return action

    def _track_motion(self, x: float, z: float) -> bool:
        """Whether the last step moved; counts consecutive stalled steps with forward pressed."""
        moved = True
        if self._last_xz is not None and self._pressed_forward:
            moved = (
                math.hypot(x - self._last_xz[0], z - self._last_xz[1]) >= self.config.stall_speed
            )
            self._stalled = 0 if moved else self._stalled + 1
        self._last_xz = (x, z)
        return moved

    def _method(self, inventory: np.ndarray) -> tuple[SkillMethod, int]:
        """The first method whose item is in the inventory (else the last) and the item to hold."""
        methods, slots = self._task.skill.methods, self._task.method_slots
        for method, slot in zip(methods, slots, strict=True):
            if slot < 0 or inventory[slot] > 0:
                return method, slot
        return methods[-1], slots[-1]

    # -- set-up ----------------------------------------------------------------------------------

    def _start(self, tables: _SkillTables | None) -> None:
        """Forget the previous task (a new prompt, or a new episode)."""
        self._task = tables
        self._t = 0
        self._count: int | None = None
        self._scan_left = 0.0
        if tables is not None:
            self._look_around()
        self._skips: list[tuple[np.ndarray, int]] = []
        self._lock: np.ndarray | None = None
        self._cell: np.ndarray | None = None
        self._seen = self._lock_steps = self._uses = self._detours = self._detour_left = 0
        self._best = math.inf
        self._since_progress = 0
        self._side = "left"
        self._last_xz: tuple[float, float] | None = None
        self._pressed_forward = False
        self._stalled = 0

    def _tables_for(self, prompt: str) -> _SkillTables:
        tables = self._tables.get(prompt)
        if tables is None:
            skill = self.skills.skill(prompt)
            is_target = np.zeros(256, dtype=np.bool_)
            is_target[[self.content.semantic_id(name) for name in skill.targets]] = True
            slot_of = {name: i for i, name in enumerate(self.content.item_names)}
            tables = _SkillTables(
                skill=skill,
                is_target=is_target,
                success_slot=slot_of[skill.success],
                method_slots=tuple(
                    -1 if m.hold is None else slot_of[m.hold] for m in skill.methods
                ),
            )
            self._tables[prompt] = tables
        return tables

    def _camera(self, shape: tuple[int, int]) -> _Camera:
        if self._cam is None or self._cam.shape != shape:
            self._cam = _Camera(shape[0], shape[1], self.config.fov_deg)
        return self._cam

    @staticmethod
    def _basis(yaw: float, pitch: float) -> np.ndarray:
        """Rows: the camera's right, up and forward axes in world coordinates."""
        sy, cy = math.sin(math.radians(yaw)), math.cos(math.radians(yaw))
        sp, cp = math.sin(math.radians(pitch)), math.cos(math.radians(pitch))
        return np.array([
            (-cy, 0.0, -sy),  # right
            (-sy * sp, cp, cy * sp),  # up = right x forward
            (-sy * cp, -sp, cy * cp),  # forward (raycast.look_direction)
        ])  # fmt: skip


class _Frame:
    """Target pixels of one frame (flat indices and depths) with their world points on demand.

    A few pixels (a mob, a tree far off) get all their points at once; among many (the ground,
    for dirt) the pixels that could see a given sphere are first picked by depth and by the
    sphere's footprint on the screen, so only a handful of world points are ever computed."""

    def __init__(self, camera: _Camera, basis: np.ndarray, eye: np.ndarray, pixels, depths):
        self.camera, self.basis, self.eye = camera, basis, eye
        self.pixels, self.depths = pixels, depths
        self._directions = self._points = None
        if pixels.size <= _FEW_PIXELS:
            self._directions = self.directions(slice(None))
            self._points = self.points(slice(None))

    def subset(self, keep: np.ndarray) -> _Frame:
        return _Frame(self.camera, self.basis, self.eye, self.pixels[keep], self.depths[keep])

    def directions(self, index) -> np.ndarray:
        """World directions of the pixels ``index`` selects."""
        if self._directions is not None:
            return self._directions[index]
        return self.camera.rays[self.pixels[index]] @ self.basis

    def points(self, index, directions: np.ndarray | None = None) -> np.ndarray:
        """World points seen by the pixels ``index`` selects."""
        if self._points is not None:
            return self._points[index]
        if directions is None:
            directions = self.directions(index)
        return self.eye + self.depths[index, None].astype(np.float64) * directions

    def nearest(self) -> np.ndarray:
        """World point of the nearest pixel."""
        return self.points(int(np.argmin(self.depths)))

    def candidates(self, centre: np.ndarray, radius: float) -> np.ndarray:
        """Indices of the pixels that may see a point within ``radius`` of ``centre``: depth
        within ``radius`` of the centre's distance, and inside the sphere's screen footprint."""
        if self._directions is not None:
            return np.arange(self.pixels.size)
        offset = centre - self.eye
        index = np.flatnonzero(np.abs(self.depths - float(np.linalg.norm(offset))) <= radius)
        right, up, ahead = self.basis @ offset
        if index.size and ahead - radius > 0.1:  # wholly in front: bound its footprint on screen
            u, v = right / ahead, up / ahead
            row, col = self.camera.project(u, v)
            spread = self.camera.focal * radius / (ahead - radius)  # |d(x/z)| <= r(1+|x/z|)/(z-r)
            rows, cols = np.divmod(self.pixels[index], self.camera.shape[1])
            index = index[
                (np.abs(rows - row) <= spread * (1.0 + abs(v)) + 1.0)
                & (np.abs(cols - col) <= spread * (1.0 + abs(u)) + 1.0)
            ]
        return index

    def within(self, centre: np.ndarray, radius: float) -> np.ndarray:
        """Indices of the pixels whose point lies within ``radius`` of ``centre``."""
        index = self.candidates(centre, radius)
        close = ((self.points(index) - centre) ** 2).sum(axis=1) <= radius * radius
        return index[close]

    def closest_to(self, centre: np.ndarray, radius: float) -> np.ndarray | None:
        """The pixel point nearest ``centre`` if one lies within ``radius``, else ``None``."""
        index = self.candidates(centre, radius)
        if index.size == 0:
            return None
        points = self.points(index)
        gaps = ((points - centre) ** 2).sum(axis=1)
        best = int(np.argmin(gaps))
        return points[best] if gaps[best] <= radius * radius else None

    def cell(self, point: np.ndarray) -> np.ndarray:
        """The block cell a pixel's point lies on (nudged into the block along the view)."""
        return np.floor(point + _NUDGE * (point - self.eye) / np.linalg.norm(point - self.eye))

    def shows_cell(self, cell: np.ndarray) -> bool:
        """Whether some pixel sees the block ``cell``."""
        index = self.candidates(cell + 0.5, _HALF_DIAGONAL)
        if index.size == 0:
            return False
        directions = self.directions(index)
        inside = np.floor(self.points(index, directions) + _NUDGE * directions)
        return bool(np.any((inside == cell).all(axis=1)))


class _Camera:
    """The renderer's pinhole camera for one image size (:func:`mrsteve.world.render.camera_rays`)."""

    def __init__(self, height: int, width: int, fov_deg: float):
        self.shape = (height, width)
        self.rays = camera_rays(height, width, fov_deg).astype(np.float64)
        """``float64[H * W, 3]`` camera-space ray of each pixel (right, up, forward)."""
        self.tan_half = math.tan(math.radians(fov_deg) / 2.0)
        self.focal = height / 2.0 / self.tan_half
        """Pixels per unit of ``tan`` of the angle off the axis."""

    def project(self, u: float, v: float) -> tuple[float, float]:
        """Fractional pixel ``(row, col)`` of the camera-space direction ``(u, v, 1)``."""
        height, width = self.shape
        return (height / 2.0 - v * self.focal - 0.5, width / 2.0 + u * self.focal - 0.5)


_FEW_PIXELS = 256
"""Frames with at most this many target pixels compute all their world points at once."""
_NUDGE = 0.02
"""Blocks a hit point is pushed along its ray to fall inside the block it hit."""
_HALF_DIAGONAL = math.sqrt(3.0) / 2.0


def _ray_enters_box(
    origin: np.ndarray, direction: np.ndarray, cell: np.ndarray, length: float
) -> bool:
    """Whether the ray ``origin + t * direction``, ``0 <= t <= length``, enters the unit cell."""
    t_in, t_out = 0.0, length
    for axis in range(3):
        o, d, lo = float(origin[axis]), float(direction[axis]), float(cell[axis])
        if abs(d) < 1e-12:
            if not lo <= o <= lo + 1.0:
                return False
            continue
        t1, t2 = (lo - o) / d, (lo + 1.0 - o) / d
        t_in, t_out = max(t_in, min(t1, t2)), min(t_out, max(t1, t2))
    return t_in <= t_out
