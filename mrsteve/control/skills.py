"""Instruction execution: the ``InstructionPolicy`` interface and the embedded world's scripted skills.

In the paper the instruction policy pi_Inst is STEVE-1, run in Execute mode with the task's
execute prompt ("cut a tree", "get water bucket", ...; appendix "Solver Module Details", Table
"Prompts used in MrSteve") once the agent stands where memory saw the resource. In the embedded
world :class:`ScriptedSkills` stands in for it without weights. It reads what STEVE-1 gets (the
first-person frame, here as depth and semantics, and the inventory) plus the pose, and for each
prompt follows the rules of ``data/skills.toml`` (target classes, item to hold, attack or use):

- find the target classes it can make out in view (the shared rule of :mod:`mrsteve.visibility`:
  a target's region must fill a quarter of a percent of the view, within 48 blocks: a cow up to
  about 12 blocks away; one 30 blocks away, a speck of a pixel or two, is not pursued) and lock
  onto the nearest (by depth): a block cell, or a mob followed from frame to frame as it moves;
- turn toward it (a bounded turn per step), walk up to it (sprinting when far, jumping when
  stalled at a one-block step, a sideways detour when no progress is made);
- once it is under the crosshair within reach, hold attack or press use until the item arrives;
- skip targets that do not pay off (a sheared sheep, a block it cannot get to) for a while, and
  keep heading for a target that left the view (a fleeing mob, water below the view) for a while;
- with no target in view, look around once (a full turn on the spot: when the task starts and
  after a target was got, skipped or lost), then wander like STEVE-1's "go explore"
  (:class:`~mrsteve.control.wander.WanderExplorer`) until a target comes into view.

The rules live in :mod:`mrsteve.control.skill_book`, the pixel-to-world geometry in
:mod:`mrsteve.control.view_geometry`, the stall and progress rules in :mod:`mrsteve.control.motion`.

Every random choice (detour sides, turn directions, the wanderer's) comes from the generator given
to :meth:`ScriptedSkills.reset`, so the same generator and observations give the same actions.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

import numpy as np

from mrsteve.control.motion import (
    ProgressTracker,
    StallTracker,
    clamp,
    heading_to,
    wrap_degrees,
)
from mrsteve.control.skill_book import Skill, SkillBook, SkillMethod, load_skills
from mrsteve.control.view_geometry import ViewFrame, ray_enters_box
from mrsteve.control.wander import WanderExplorer
from mrsteve.spaces import Action, Observation
from mrsteve.visibility import VISIBILITY, RegionLabeller, VisibilityRule
from mrsteve.world.camera import EYE_HEIGHT, Camera, basis_matrix
from mrsteve.world.content import Content, load_content


@runtime_checkable
class InstructionPolicy(Protocol):
    """pi_Inst: follows a text instruction (an execute prompt) from observations; STEVE-1 in the
    paper."""

    def reset(self, rng: np.random.Generator, camera: Camera) -> None:
        """Start a new episode; every random choice afterwards comes from ``rng``; ``camera`` is
        the environment's."""

    def act(self, obs: Observation, prompt: str) -> Action:
        """The next action for ``prompt``; an unknown prompt raises ``ValueError`` listing the known
        ones."""


GO_EXPLORE = "go explore"
"""The instruction STEVE-1 is given to explore (the paper's Table 1 baseline)."""


@runtime_checkable
class GoalConditionedPolicy(InstructionPolicy, Protocol):
    """An instruction policy conditioned on a visual goal, as STEVE-1 is: a prompt reaches it as
    the goal its prior gives (:meth:`goal`), and an image goal as the clip embedding itself
    (:meth:`follow`; STEVE-1's visual goals: text and images embed into one space). It follows
    :data:`GO_EXPLORE` itself."""

    goal_encoder: str
    """SHA-256 of the encoder weights whose clip embeddings are its goals (``""``: none of the
    package's encoders)."""

    def goal(self, prompt: str) -> np.ndarray:
        """The visual goal it acts toward for ``prompt`` (:data:`GO_EXPLORE` included)."""

    def follow(self, obs: Observation, goal: np.ndarray) -> Action:
        """The next action toward the visual goal ``goal`` (a clip embedding of
        :attr:`goal_encoder`); a new goal clears the policy's memory of earlier frames."""


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
    """Horizontal blocks per step below which a step after one with forward pressed counts as
    stalled (:class:`~mrsteve.control.motion.StallTracker`); it jumps after two."""
    stuck_steps: int = 40
    """Steps farther than ``interact_distance`` without getting :attr:`progress_gain` closer to
    the target, beyond which a sideways detour starts
    (:class:`~mrsteve.control.motion.ProgressTracker`)."""
    progress_gain: float = 0.5
    """Blocks closer to the target than ever before that count as progress."""
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
    labelling: bool = False
    """Label another policy's steps (DAgger's teacher) instead of acting: lock onto the target
    under the crosshair when one is within ``interact_distance`` (that policy may be breaking
    another block of the class than the nearest, and turning it away would undo the
    breaking), count a look-around by the turns the view actually made, not by the turns
    labelled, and never detour from or skip a target (a policy that does not follow the labels
    has not shown the target to be out of reach). In the skills' own play each of these rules
    gives what the default ones give."""

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
    :class:`~mrsteve.control.wander.WanderExplorer`)."""

    def __init__(
        self,
        config: SkillConfig | None = None,
        *,
        skills: SkillBook | None = None,
        content: Content | None = None,
        wanderer: WanderExplorer | None = None,
        visibility: VisibilityRule = VISIBILITY,
    ):
        self.config = config if config is not None else SkillConfig()
        self.visibility = visibility
        self._regions = RegionLabeller()
        self.content = content if content is not None else load_content()
        self.skills = skills if skills is not None else load_skills()
        self.wanderer = wanderer if wanderer is not None else WanderExplorer()
        self._tables: dict[str, _SkillTables] = {}
        self.camera: Camera | None = None
        self._stall = StallTracker(self.config.stall_speed)
        # a detour starts on the step after stuck_steps without progress
        self._progress = ProgressTracker(self.config.progress_gain, self.config.stuck_steps + 1)
        self._rng: np.random.Generator | None = None
        self._wanderer_ready = False
        self._start(None)

    # -- interface -------------------------------------------------------------------------------

    def reset(self, rng: np.random.Generator, camera: Camera) -> None:
        self._rng = rng
        self.camera = camera
        self._wanderer_ready = False
        self._start(None)

    def act(self, obs: Observation, prompt: str) -> Action:
        if self._rng is None:
            raise RuntimeError("call reset(rng, camera) before act()")
        tables = self._tables_for(prompt)
        if tables is not self._task:
            self._start(tables)
        self._t += 1
        cfg = self.config
        x, y, z, yaw, pitch = (float(v) for v in obs["pose"])
        eye = np.array([x, y + EYE_HEIGHT, z])
        stalled = self._stall.update(x, z)
        if cfg.labelling:
            self._follow_look_around(yaw)

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
            "jump": int(forward and stalled > 1),
            "camera": np.array(
                [clamp(pitch_error, cfg.max_turn), clamp(yaw_error, cfg.max_turn)],
                dtype=np.float32,
            ),
            "equip": slot + 1,
        }  # fmt: skip
        if on_target:
            self._press(action, method.interaction)
        elif self._detour_left > 0:
            self._detour(action)
        self._stall.pressed(action["forward"])
        return action

    # -- targets ---------------------------------------------------------------------------------

    def _find_target(self, obs: Observation, eye: np.ndarray, yaw: float, pitch: float) -> bool:
        """Update the lock from the frame: the locked target if still in view, else the block or
        mob of the nearest target pixel (skipped targets ignored). Whether any target is made out
        in view (:meth:`_visible_targets`); :class:`~mrsteve.control.view_geometry.ViewFrame`
        keeps this cheap even when targets fill the view (the ground, for dirt)."""
        cfg = self.config
        pixels, depths = self._visible_targets(obs["semantic"], obs["depth"])
        if pixels.size == 0:
            return False
        camera = self._camera(obs["semantic"].shape)
        frame = ViewFrame(camera, basis_matrix(yaw, pitch), eye, pixels, depths)
        self._skips = [(p, until) for p, until in self._skips if until > self._t]
        if self._skips:
            keep = np.ones(pixels.size, dtype=np.bool_)
            for point, _ in self._skips:
                keep[frame.within(point, cfg.skip_radius)] = False
            if not keep.any():
                return False
            frame = frame.subset(keep)
        aimed = self._aimed_pixel(frame, obs["semantic"].shape) if self.config.labelling \
            else None
        if self._task.skill.on_mobs:
            seed = frame.nearest() if aimed is None else frame.points(aimed)
            if self._lock is not None and aimed is None:
                mob = frame.closest_to(self._lock, cfg.track_radius)
                if mob is None:
                    self._drop_lock()
                else:
                    seed = mob
            self._set_lock(frame.points(frame.within(seed, cfg.mob_radius)).mean(axis=0), None)
        elif aimed is not None:
            cell = frame.cell(frame.points(aimed))
            if self._cell is None or not np.array_equal(cell, self._cell):
                self._drop_lock()
                self._set_lock(None, cell)
            self._seen = self._t
        elif self._cell is not None and frame.shows_cell(self._cell):
            self._seen = self._t
        else:
            self._drop_lock()
            self._set_lock(None, frame.cell(frame.nearest()))
        return True

    def _aimed_pixel(self, frame: ViewFrame, shape: tuple[int, int]) -> int | None:
        """Index in ``frame`` of the nearest target pixel at the image centre (the crosshair)
        within ``interact_distance``, else ``None``."""
        height, width = shape
        rows, cols = np.divmod(frame.pixels, width)
        centre = ((rows >= (height - 1) // 2) & (rows <= height // 2)
                  & (cols >= (width - 1) // 2) & (cols <= width // 2)
                  & (frame.depths <= self.config.interact_distance))
        if not centre.any():
            return None
        index = np.flatnonzero(centre)
        return int(index[np.argmin(frame.depths[index])])

    def _visible_targets(self, semantic: np.ndarray, depth: np.ndarray
                         ) -> tuple[np.ndarray, np.ndarray]:
        """Flat indices and depths of the target pixels the skill can make out: in regions of
        the pursue clarity and within range (:mod:`mrsteve.visibility`)."""
        pixels = np.flatnonzero(self._task.is_target[semantic])
        if pixels.size == 0:
            return pixels, pixels.astype(np.float32)
        rule = self.visibility
        sizes = self._regions.region_sizes(semantic).ravel()[pixels]
        depths = depth.ravel()[pixels]
        keep = (sizes >= rule.pursue_pixels(semantic.size)) & (depths <= rule.max_distance)
        return pixels[keep], depths[keep]

    def _set_lock(self, point: np.ndarray | None, cell: np.ndarray | None) -> None:
        if self._lock is None:
            self._lock_steps = self._uses = self._detours = 0
            self._progress.reset()
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
        look = basis_matrix(yaw, pitch)[2]
        return ray_enters_box(eye, look, self._cell, reach)

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
        give the target up (too long without the item, too many uses or detours). Labelling:
        only too many uses give it up."""
        cfg = self.config
        if cfg.labelling:
            return self._uses > cfg.give_up_uses
        stuck = self._progress.update(distance, count=distance > cfg.interact_distance)
        if stuck and self._detour_left == 0:
            self._detours += 1
            self._detour_left = cfg.detour_steps
            self._side = "left" if self._rng.random() < 0.5 else "right"
            self._progress.restart(distance)
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

    def _follow_look_around(self, yaw: float) -> None:
        """Labelling: shorten the look-around by the turn the view made since the last step
        (in the look-around's direction)."""
        if self._last_yaw is not None and self._scan_left != 0.0:
            turned = wrap_degrees(yaw - self._last_yaw)
            if turned * self._scan_left > 0.0:
                left = self._scan_left - turned
                self._scan_left = left if left * self._scan_left > 0.0 else 0.0
        self._last_yaw = yaw

    def _wander(self, obs: Observation, slot: int) -> Action:
        """No target in view: turn on the spot while a look-around lasts, else wander like STEVE-1's
        "go explore"."""
        if self._scan_left != 0.0:
            turn = clamp(self._scan_left, self.config.max_turn)
            if not self.config.labelling:  # labelling follows the turns made instead
                self._scan_left -= turn
            self._stall.pressed(False)
            pitch = clamp(-float(obs["pose"][4]), self.config.max_turn)
            return {"camera": np.array([pitch, turn], dtype=np.float32), "equip": slot + 1}
        if not self._wanderer_ready:
            self.wanderer.reset(obs, self._rng, self.camera)
            self._wanderer_ready = True
        self.wanderer.observe(obs)
        action = dict(self.wanderer.act(obs))
        action["equip"] = slot + 1
        self._stall.pressed(action.get("forward", 0))
        return action

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
        self._last_yaw: float | None = None
        if tables is not None:
            self._look_around()
        self._skips: list[tuple[np.ndarray, int]] = []
        self._lock: np.ndarray | None = None
        self._cell: np.ndarray | None = None
        self._seen = self._lock_steps = self._uses = self._detours = self._detour_left = 0
        self._progress.reset()
        self._side = "left"
        self._stall.reset()

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

    def _camera(self, shape: tuple[int, int]) -> Camera:
        if self.camera is None or self.camera.shape != tuple(shape):
            raise ValueError(f"the skills need the camera of {shape} frames (reset(rng, camera)), "
                             f"got {self.camera}")
        return self.camera
