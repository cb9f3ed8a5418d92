"""Training the learned navigator (:mod:`mrsteve.control.learned_navigator`): VPT-Nav's recipe in the
embedded world (torch, the ``train`` extra).

1. **Demonstrations.** VPT was cloned from people playing; ours is cloned from the embedded
   world's competent play: the depth navigator (:class:`~mrsteve.control.navigation.
   DepthNavigator`) walking chains of goals 5-25 blocks apart (across the river half the time
   where there is one) in the navigator training worlds (:data:`TRAINING_WORLDS`, never a test
   terrain), recorded as RGB frames, the pose and the keys and camera it pressed (the camera
   binned as VPT bins it). One run toward one goal is one *segment*; the policy's memory never
   reaches across segments.
2. **Foundation policy** (VPT's role): behaviour cloning of those frames and actions, no goal
   (conditioning ``none``).
3. **Goal-conditioned fine-tuning** (VPT-Nav's role): the goal encoder is added where the
   architecture says (``head``: after the core, the paper's choice; ``trxl``; ``dual``) with its
   last layer at zero, so the fine-tuned policy starts as the foundation; the whole network, low-
   rank adapters (LoRA, merged into the weights at export) or only the goal encoder and heads are
   trained (``finetune``) to imitate the demonstrations' actions given the goal, with a KL term to
   the foundation policy (``kl``: the paper's coefficients 0, 1e-4, 1e-3, 1e-2). Then rounds of
   DAgger: the policy walks to goals itself, the depth navigator labels every step it takes, and
   those steps join the data (on-policy data, as PPO's, with the expert's action as the target in
   place of a return). Last, ``anneal_epochs`` over all the data with the learning rate falling
   to zero. The paper fine-tunes with PPO from a reward; we imitate a goal-aware expert
   instead (what the run's note and the README say).
4. **Give-up head** (beyond the paper, ``give_up_goals``): the final policy walks to goals
   beyond, inside and away from the training worlds' walls and a logistic head on its features
   is fitted to the depth navigator's verdicts, the policy frozen
   (:mod:`mrsteve.train.navigator_give_up`): how an explorer over it finds a goal beyond a wall
   out from the view, as the depth navigator does from its map.

Everything is seeded (demonstrations, batches, initial weights); a run folder keeps the rendered
data and a checkpoint after every epoch, so an interrupted run resumes; ``curve.png`` shows the
losses and the success of each DAgger round's walks.
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from mrsteve.control.learned_navigator import (
    BUTTONS,
    CAMERA_BINS,
    CAMERA_MAX,
    CONDITIONING,
    NavigatorArchitecture,
    NavigatorWeights,
    camera_bins,
    goal_features,
)
from mrsteve.naming import choose
from mrsteve.protocols import Decision
from mrsteve.tasks.driver import EpisodeCallback, Step
from mrsteve.train.episodes import take, training_worlds
from mrsteve.train.layers import (
    action_head,
    causal_core,
    check_jitter,
    frame_encoder,
    jitter_colours,
    optimise,
    torch_session,
)
from mrsteve.train.navigator_ppo import PPOConfig, draw_goal, kl_to, ppo_finetune
from mrsteve.train.runs import TrainingRun, render_streams

TRAINING_WORLDS = ("nav_meadow", "nav_crags", "nav_stream")
"""World recipes the navigator learns in (``data/worlds.toml``); the navigation experiment's
terrains (``flat``, ``plains_nav``, ``mountain``, ``river``) are not among them."""

NAVIGATOR_WORLDS = (*TRAINING_WORLDS, "nav_forest", "nav_desert")
"""World recipes made for the navigator to learn in (no experiment runs in them):
:data:`TRAINING_WORLDS`, ``nav_forest``, a forest as dense as Minecraft's
(``data/forest_worlds.toml``), and ``nav_desert``, a desert (``data/desert_worlds.toml``)."""


FINETUNING = ("full", "adapter", "head")
"""What fine-tuning trains: everything; low-rank adapters on the core and heads (plus the goal
encoder); the goal encoder and the heads only."""

EXPERT_MAPS = ("world", "segment")
"""How long the depth navigator that demonstrates and labels keeps its height map: for all the
goals walked in one world, or for one segment (one goal), the span of the policy's own memory."""


@dataclass(frozen=True)
class NavigatorTrainingConfig:
    """How the learned navigator is trained; the defaults make the shipped weights."""

    segments: int = 2400
    """Demonstration segments (runs to one goal) of the depth navigator."""
    worlds: str = ",".join(TRAINING_WORLDS)
    """World recipes it learns in, comma-separated: of nav_meadow, nav_crags and nav_stream (the
    shipped recipe's), nav_forest (a forest as dense as Minecraft's) and nav_desert (a
    desert)."""
    world_weights: str = ""
    """Relative weights of drawing each of the worlds, comma-separated in their order
    (``1,1,2``: the third drawn half the time); empty: each drawn as often."""
    goals_per_world: int = 10
    """Goals walked one after another in one world before the next world is generated."""
    max_segment_steps: int = 300
    """Steps a run toward one goal lasts at most."""
    min_distance: float = 5.0
    """Goals lie at least this many blocks from where the previous run ended."""
    max_distance: float = 25.0
    """Goals lie at most this many blocks from where the previous run ended (the goal encoder
    sees a goal rescaled to 20 blocks at most, so farther goals only lengthen the walks)."""
    across_water: float = 0.5
    """Share of goals drawn across water where a world has water that separates the ground."""
    foundation_epochs: int = 5
    """Epochs of behaviour cloning of the foundation policy (no goal)."""
    finetune_epochs: int = 4
    """Epochs of goal-conditioned fine-tuning before DAgger (0: none, the paper's path with
    --dagger-rounds 0 --anneal-epochs 0 --ppo-iterations N: the foundation policy, its goal
    encoder added with its last layer at zero, fine-tuned by PPO alone)."""
    dagger_rounds: int = 6
    """Rounds of DAgger after the first fine-tuning."""
    dagger_segments: int = 600
    """Segments the policy walks (the expert labelling) per DAgger round."""
    dagger_epochs: int = 2
    """Epochs over all data after each DAgger round."""
    dagger_beta: float = 0.0
    """DAgger's mixing (Ross et al., 2011: the i-th policy is beta_i times the expert's plus
    1 - beta_i times the learned one, beta_i = p^(i-1)): in round ``i`` each step takes the
    depth navigator's action with chance ``dagger_beta ** i`` and the policy's otherwise, the
    labels being the depth navigator's either way (the demonstrations are the round with
    beta 1). 0: the policy acts alone from the first round, the shipped recipe."""
    turn_hold: float = 0.0
    """Labels that keep the acting policy's turn (beyond VPT-Nav, :class:`TurnHold`): in the
    DAgger rounds, where the depth navigator's heading lies more than ``turn_hold`` degrees off
    the view and the policy's last action turned by the largest step, the label turns by the
    largest step the same way, whichever side the depth navigator's plan would take (0: off, the
    shipped recipe)."""
    # Where the way on is out of view (a bank to swim along), the side the depth navigator turns
    # follows its plan, which the policy's frames do not show: trained on those labels it gives
    # both sides even chances and turns back and forth (docs/training.md). Held labels follow the
    # policy's own last turn instead; with the goal after the core (``head``) the shipped policy
    # did not learn to carry a turn on from its frames, and the river fell from 96 to 74 %
    # (results/navigation-river-10000).
    anneal_epochs: int = 3
    """Epochs over all data after the last DAgger round with the learning rate falling linearly
    from ``finetune_learning_rate`` to zero (beyond VPT-Nav, whose schedule the paper does not
    give; 0: none)."""
    # At the constant rate the weights end wherever the last steps put them, and how the policy
    # crosses a river moved with that from one draw to the next: three draws without the
    # annealing reached 92, 70 and 79 % of the river terrain's goals; with one annealing epoch
    # four draws reached 92, 86, 86 and 75 %, with three the two draws trained (seeds 0 and 3)
    # 91 and 92 %, and on Map 1 under MrSteve's explorer the draw that lingered most came back
    # to its cells half as often (results/navigation-learned/NOTES.md).
    validation_segments: int = 200
    """Goals the final policy walks to on fresh seeds of the training worlds (the validation
    success in the history and the curve; 0: none)."""
    conditioning: str = "head"
    """Where the goal enters the policy: head (after the core, the paper's choice), trxl
    (before it) or dual."""
    finetune: str = "full"
    """What fine-tuning trains: full, adapter (LoRA) or head."""
    kl: float = 1e-4
    """Weight of the KL divergence to the foundation policy while fine-tuning."""
    lora_rank: int = 8
    sequence: int = 32
    """Steps per training sequence."""
    batch: int = 24
    """Sequences per step."""
    learning_rate: float = 1e-3
    finetune_learning_rate: float = 5e-4
    weight_decay: float = 1e-4
    context: int = 16
    dim: int = 256
    seed: int = 0
    """Seed of the worlds, goals, batches and initial weights."""
    threads: int = 2
    """torch CPU threads."""
    workers: int = 2
    """Processes that render demonstrations at once, one per seeded stream at most (the data is
    drawn in :data:`~mrsteve.train.runs.RENDER_STREAMS` streams, the same for any number of
    processes)."""
    nudge_rate: float = 0.0
    """Chance per demonstration step that a nudge starts (beyond VPT-Nav, DART's remedy for a
    scripted teacher, :class:`PitchNudges`): for ``nudge_steps`` steps the camera's pitch turns
    ``nudge_degrees`` a step up while the depth navigator's labels are recorded, so the data
    shows it levelling a view of the sky again, a state its own play never reaches (0: none,
    the shipped recipe)."""
    # Only up: a policy that strays into the sky sees nothing to steer by, while from a view of
    # the ground it levels without help. What it does to the policy is measured in
    # results/navigation-learned/NOTES.md.
    nudge_steps: int = 8
    nudge_degrees: float = 10.0
    colour_jitter: float = 0.0
    """Strength of the photometric augmentation of every stage's training batches
    (:func:`~mrsteve.train.layers.jitter_colours`: each sequence's channels scaled by up to
    ``exp(2 x colour_jitter)``; 0: none, the shipped recipe), so the policy is not bound to the
    training worlds' one light."""
    expert_map: str = "world"
    """How long the depth navigator that demonstrates and labels keeps its height map: world
    (all the goals walked in one world, the shipped recipe) or segment (one goal, as the
    policy's memory does)."""
    # With ``world`` it walks and labels the later goals of a world knowing the ground the
    # earlier ones showed it (a river's exits among it), which the policy, whose memory starts
    # afresh at each goal, cannot know; with ``segment`` it maps each segment from nothing, as
    # it does on a test terrain, so its labels rest only on what the segment's frames showed.
    foundation: str | None = None
    """An earlier run folder whose foundation policy this run fine-tunes instead of cloning one,
    and whose demonstrations it reuses when rendered alike (the studies share one
    foundation)."""
    ppo: PPOConfig = field(default_factory=PPOConfig)
    """PPO fine-tuning after the DAgger rounds (``ppo.iterations = 0``: none, the shipped
    recipe)."""
    give_up_goals: int = 640
    """Goals the trained policy walks to for its give-up head, fitted last with the policy
    frozen (:mod:`mrsteve.train.navigator_give_up`; 0: no head)."""
    give_up_false_alarms: float = 0.02
    """Share of the give-up walks' within-reach steps toward goals inside the walls that the
    calibrated head flags at the run-time threshold."""

    def __post_init__(self) -> None:
        _ = self.world_names, self.world_shares  # refuse unknown or repeated names, bad weights
        for name in ("segments", "goals_per_world", "max_segment_steps", "foundation_epochs",
                     "sequence", "batch", "context", "threads", "workers"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        for name in ("finetune_epochs", "anneal_epochs"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be at least 0, got {getattr(self, name)}")
        if self.give_up_goals < 0 or not 0 < self.give_up_false_alarms < 1:
            raise ValueError(f"need give_up_goals >= 0 and give_up_false_alarms in (0, 1), got "
                             f"{self.give_up_goals} and {self.give_up_false_alarms}")
        if self.dagger_rounds < 0 or self.dagger_segments < 1 or self.dagger_epochs < 1:
            raise ValueError("dagger_rounds must be >= 0, dagger_segments and dagger_epochs >= 1")
        TurnHold(self.turn_hold)  # checks it
        if not 0 <= self.dagger_beta < 1:
            raise ValueError(f"dagger_beta is the base of the expert's share of a round's steps, "
                             f"from 0 (the policy acts alone) to below 1; got {self.dagger_beta}")
        if self.conditioning not in CONDITIONING[1:]:
            raise ValueError(f"conditioning must be one of {', '.join(CONDITIONING[1:])}, got "
                             f"{self.conditioning!r}")
        if self.finetune not in FINETUNING:
            raise ValueError(f"finetune must be one of {', '.join(FINETUNING)}, got "
                             f"{self.finetune!r}")
        if self.kl < 0:
            raise ValueError(f"kl must be >= 0, got {self.kl}")
        if not 0 < self.min_distance <= self.max_distance:
            raise ValueError(f"goals need 0 < min_distance <= max_distance, got "
                             f"{self.min_distance} and {self.max_distance}")
        if not 0 <= self.across_water <= 1:
            raise ValueError(f"across_water is a share of goals, from 0 to 1; got "
                             f"{self.across_water}")
        PitchNudges(self.nudge_rate, self.nudge_steps, self.nudge_degrees)  # checks them
        check_jitter(self.colour_jitter)
        if self.expert_map not in EXPERT_MAPS:
            raise ValueError(f"expert_map must be one of {', '.join(EXPERT_MAPS)}, got "
                             f"{self.expert_map!r}")

    @property
    def world_names(self) -> tuple[str, ...]:
        """:attr:`worlds` as a tuple of recipe names (unknown or repeated ones refused)."""
        return tuple(choose(self.worlds, NAVIGATOR_WORLDS, "training world", allow_all=False))

    @property
    def world_shares(self) -> tuple[float, ...] | None:
        """The probability of drawing each world (:attr:`world_weights` normalised; ``None``:
        each as often, drawn as before weights existed)."""
        if not self.world_weights.strip():
            return None
        names = self.world_names
        accepted = (f"world_weights takes one positive number per training world, "
                    f"comma-separated in their order ({', '.join(names)})")
        try:
            weights = [float(value) for value in self.world_weights.split(",")]
        except ValueError:
            raise ValueError(f"{accepted}; got {self.world_weights!r}") from None
        if len(weights) != len(names) or not all(0 < w < math.inf for w in weights):
            raise ValueError(f"{accepted}; got {self.world_weights!r}")
        total = sum(weights)
        return tuple(weight / total for weight in weights)

    def architecture(self, conditioning: str) -> NavigatorArchitecture:
        return NavigatorArchitecture(context=self.context, dim=self.dim,
                                     conditioning=conditioning)

    def recipe(self) -> dict[str, Any]:
        """The settings as the weights record them (``info["training"]``): all of them, the
        nudge settings only when nudges are on, the expert's map only when it is not the
        world's, the give-up walks and the annealing only when there are any, so weights and
        run folders made before these existed keep the recipe they recorded."""
        settings = asdict(self)
        if not self.anneal_epochs:
            del settings["anneal_epochs"]
        if not self.give_up_goals:
            del settings["give_up_goals"], settings["give_up_false_alarms"]
        if not self.nudge_rate:
            for name in ("nudge_rate", "nudge_steps", "nudge_degrees"):
                del settings[name]
        if self.expert_map == "world":
            del settings["expert_map"]
        if not self.colour_jitter:
            del settings["colour_jitter"]
        if self.world_names == TRAINING_WORLDS:
            del settings["worlds"]
        if self.world_shares is None:
            del settings["world_weights"]
        if not self.dagger_beta:
            del settings["dagger_beta"]
        if not self.turn_hold:
            del settings["turn_hold"]
        return settings

    def teacher_share(self, round_number: int) -> float:
        """The chance that a step of DAgger round ``round_number`` (from 1) takes the depth
        navigator's action (:attr:`dagger_beta`)."""
        return self.dagger_beta ** round_number if self.dagger_beta else 0.0

    def data_key(self) -> str:
        """Hash of what decides the demonstrations (a run folder's data is reused on a match)."""
        fields = [self.segments, self.goals_per_world, self.max_segment_steps, self.min_distance,
                  self.max_distance, self.across_water, self.seed]
        if self.nudge_rate:
            fields += [self.nudge_rate, self.nudge_steps, self.nudge_degrees]
        if self.expert_map != "world":
            fields.append(self.expert_map)
        if self.world_names != TRAINING_WORLDS:
            fields.append(list(self.world_names))
        if self.world_shares is not None:
            fields.append(list(self.world_shares))
        return hashlib.sha256(json.dumps(fields).encode()).hexdigest()[:16]


# ------------------------------------------------------------------------------------- data


class PitchNudges:
    """DART-style pushes of the camera's pitch while a scripted teacher acts (Laskey et al.,
    2017): with chance ``rate`` per step a push starts and for ``steps`` steps the pitch turns
    ``degrees`` a step in place of the teacher's pitch, the teacher's yaw and keys kept. The
    steps are recorded with the teacher's own labels, so the data holds the teacher bringing the
    view back from states its own play never reaches. A push turns up (toward the sky) with
    chance ``up_share``, else down; the draws come from the generator passed with each
    action."""

    def __init__(self, rate: float, steps: int, degrees: float, up_share: float = 0.5) -> None:
        if not (0 <= rate < 1 and steps >= 1 and degrees > 0 and 0 <= up_share <= 1):
            raise ValueError(f"need 0 <= nudge_rate < 1, nudge_steps >= 1, nudge_degrees > 0 "
                             f"and 0 <= up_share <= 1, got {rate}, {steps}, {degrees}, "
                             f"{up_share}")
        self.rate, self.steps, self.degrees, self.up_share = rate, steps, degrees, up_share
        self.reset()

    def reset(self) -> None:
        """End any push (a new episode)."""
        self._left, self._turn = 0, 0.0

    def __call__(self, action: dict, rng: np.random.Generator) -> dict:
        """The action to take in place of the teacher's ``action``."""
        if not self.rate:
            return action
        if self._left == 0 and rng.random() < self.rate:
            self._left = self.steps
            up = rng.random() >= 1.0 - self.up_share
            self._turn = -self.degrees if up else self.degrees  # positive pitch looks down
        if not self._left:
            return action
        self._left -= 1
        return {**action, "camera": np.array([self._turn, action["camera"][1]], np.float32)}


class TurnHold:
    """DAgger labels that carry on the acting policy's long turn: where the teacher's heading
    lies more than ``degrees`` off the view (:attr:`~mrsteve.control.navigation.DepthNavigator.
    heading_error`) and the action taken last turned by the largest step (:data:`~mrsteve.
    control.learned_navigator.CAMERA_MAX`), the label turns by the largest step that way; other
    labels are the teacher's. A turn back to the heading the long way round still ends facing
    it, so a policy that follows the labels still gets there. 0: off. One hold spans the goals
    walked in one world (the last action taken before a new goal counts)."""

    def __init__(self, degrees: float) -> None:
        if not (degrees == 0 or 0 < degrees <= 180):
            raise ValueError(f"turn_hold is an angle in degrees, from above 0 to 180 (0: off); "
                             f"got {degrees}")
        self.degrees = degrees
        self._side = 0.0

    def taken(self, action: dict) -> None:
        """Record the action taken this step."""
        yaw = float(action["camera"][1])
        self._side = math.copysign(1.0, yaw) if abs(yaw) >= CAMERA_MAX else 0.0

    def __call__(self, label: dict, heading_error: float) -> dict:
        """The label to record in place of the teacher's ``label``, whose heading lies
        ``heading_error`` degrees off the view."""
        if not (self.degrees and self._side and abs(heading_error) > self.degrees):
            return label
        pitch = label["camera"][0]
        return {**label, "camera": np.array([pitch, self._side * CAMERA_MAX], np.float32)}


@dataclass
class Demonstrations:
    """Steps of segments: what the policy saw and what the expert pressed."""

    rgb: np.ndarray
    """``uint8[N, H, W, 3]``."""
    goal: np.ndarray
    """``float32[N, 6]``: :func:`~mrsteve.control.learned_navigator.goal_features`."""
    buttons: np.ndarray
    """``uint8[N, len(BUTTONS)]``."""
    camera: np.ndarray
    """``int8[N, 2]``: camera bins (pitch, yaw)."""
    segment: np.ndarray
    """``int32[N]``: the segment of each step (steps of a segment are consecutive)."""
    reached: np.ndarray
    """``bool[segments]``: whether the actor reached each segment's goal."""

    @staticmethod
    def concatenate(parts: Sequence[Demonstrations]) -> Demonstrations:
        if len(parts) == 1:
            return parts[0]
        offset, segments = 0, []
        for part in parts:
            segments.append(part.segment + offset)
            offset += len(part.reached)
        return Demonstrations(*(np.concatenate([getattr(p, name) for p in parts])
                                for name in ("rgb", "goal", "buttons", "camera")),
                              np.concatenate(segments).astype(np.int32),
                              np.concatenate([p.reached for p in parts]))

    def save(self, path: Path) -> None:
        from mrsteve.fileio import atomic_path

        with atomic_path(path) as tmp, open(tmp, "wb") as handle:
            np.savez(handle, **{name: getattr(self, name) for name in (
                "rgb", "goal", "buttons", "camera", "segment", "reached")})

    @staticmethod
    def load(path: Path) -> Demonstrations:
        with np.load(path, allow_pickle=False) as saved:
            return Demonstrations(*(saved[name] for name in (
                "rgb", "goal", "buttons", "camera", "segment", "reached")))


class SegmentRecorder(EpisodeCallback):
    """What a demonstration keeps of each step (a callback of the collector's driver): the
    frame the decision was made on, the goal's features from the pose then, the teacher's label
    (keys, camera bins) and the segment's index (:attr:`segment`, set by the collector)."""

    def __init__(self) -> None:
        self.rgb, self.goal, self.buttons, self.camera, self.segments = [], [], [], [], []
        self.segment = 0

    def on_step(self, step: Step) -> None:
        view, target, label = step.view, step.decision.goal, step.decision.notes["label"]
        x, _, z, yaw, pitch = view["pose"][:5]
        self.rgb.append(view["rgb"])
        self.goal.append(goal_features(target[0] - x, target[1] - z, yaw, pitch))
        self.buttons.append([int(label.get(name, 0)) for name in BUTTONS])
        self.camera.append(camera_bins(label["camera"]))
        self.segments.append(self.segment)


def collect_segments(config: NavigatorTrainingConfig, seed: int, segments: int,
                     weights: NavigatorWeights | None = None,
                     teacher_share: float = 0.0) -> Demonstrations:
    """``segments`` runs toward goals in the training worlds (:func:`~mrsteve.train.episodes.
    training_worlds`), the depth navigator labelling every step (its map kept for the world or
    the segment, ``config.expert_map``); the depth navigator acts (``weights`` None) or the
    learned policy of ``weights`` does (DAgger; its labels held to its long turns by
    ``config.turn_hold``, :class:`TurnHold`), each step the depth navigator's action taken
    instead with chance ``teacher_share`` (DAgger's mixing, drawn from a stream of its own). A
    segment ends when the expert finds the goal reached; a :class:`SegmentRecorder` keeps its
    steps."""
    from mrsteve.control.learned_navigator import LearnedNavigator
    from mrsteve.control.navigation import DepthNavigator

    rng = np.random.default_rng(seed)
    nudge_rng = np.random.default_rng([seed, 1])  # nudges do not shift the worlds' draws
    mixing_rng = np.random.default_rng([seed, 2])  # nor does the mixing
    recorder, reached = SegmentRecorder(), []
    worlds = training_worlds(config.world_names, rng, callbacks=[recorder],
                             shares=config.world_shares)
    for driver, info in take(lambda: len(reached), segments, worlds):
        expert = None
        actor = None
        hold = TurnHold(config.turn_hold)
        if weights is not None:
            actor = LearnedNavigator(weights=weights)
            actor.reset(rng, info["camera"])
        blocks = driver.env.unwrapped.world.blocks
        nudges = PitchNudges(config.nudge_rate, config.nudge_steps, config.nudge_degrees,
                             up_share=1.0)
        for _ in range(config.goals_per_world):
            if len(reached) >= segments:
                break
            target = draw_goal(blocks, driver.position, rng,
                               (config.min_distance, config.max_distance), config.across_water)
            if target is None:
                break
            target = driver.frame.from_world(*target)
            if expert is None or config.expert_map == "segment":
                expert = DepthNavigator()  # draws nothing: the worlds and goals stay alike
                expert.reset(rng, info["camera"])
            success = False

            def labelled(view, t, target=target, expert=expert, actor=actor, nudges=nudges,
                         hold=hold):
                nonlocal success
                if expert.reached(view, target):
                    success = True
                    return None
                label = expert.act(view, target)
                if actor is None:
                    return Decision(nudges(label, nudge_rng), goal=target,
                                    notes={"label": label})
                action = actor.act(view, target)  # its memory sees every frame either way
                if teacher_share and mixing_rng.random() < teacher_share:
                    action = label
                held = hold(label, expert.heading_error)
                hold.taken(action)
                return Decision(action, goal=target, notes={"label": held})

            recorder.segment = len(reached)
            driver.run(labelled, steps=config.max_segment_steps)
            reached.append(success)
    return Demonstrations(np.stack(recorder.rgb), np.stack(recorder.goal),
                          np.array(recorder.buttons, np.uint8),
                          np.array(recorder.camera, np.int8),
                          np.array(recorder.segments, np.int32), np.array(reached, bool))


def collect(config: NavigatorTrainingConfig, seed: int, segments: int,
            weights: NavigatorWeights | None = None,
            teacher_share: float = 0.0) -> Demonstrations:
    """:func:`collect_segments` in the rendering's seeded streams
    (:func:`~mrsteve.train.runs.render_streams`), ``config.workers`` processes at once."""
    return Demonstrations.concatenate(render_streams(
        collect_segments, seed, segments,
        lambda s, n, first: (config, s, n, weights, teacher_share), config.workers))


# ------------------------------------------------------------------------------------- model


def build_policy(architecture: NavigatorArchitecture):
    """The torch policy of ``architecture`` (parameter names as
    :meth:`NavigatorArchitecture.parameter_shapes`)."""
    from torch import nn

    arch = architecture
    d = arch.dim

    def goal_encoder() -> nn.Sequential:
        widths = (6, arch.goal_hidden, arch.goal_hidden, arch.goal_hidden, d)
        layers: list[nn.Module] = []
        for i in range(4):
            layers.append(nn.Linear(widths[i], widths[i + 1]))
            if i < 3:
                layers.append(nn.ReLU())
        nn.init.zeros_(layers[-1].weight)
        nn.init.zeros_(layers[-1].bias)
        return nn.Sequential(*layers)

    class Policy(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.image = frame_encoder(arch.obs_size, arch.channels, arch.strides, d)
            self.core = causal_core(d, arch.heads, arch.context, arch.mlp_dim)
            self.head = action_head(d, len(BUTTONS), CAMERA_BINS)
            for site in arch.goal_sites:
                setattr(self, site, goal_encoder())

        def trunk(self, rgb, goal, segment):
            """The policy head's input for ``rgb [B, L, H, W, 3]``, ``goal [B, L, 6]``,
            ``segment [B, L]``."""
            batch, length = rgb.shape[:2]
            x = self.image(rgb.flatten(0, 1)).view(batch, length, d)
            if "goal_in" in arch.goal_sites:
                x = x + self.goal_in(goal)
            x = self.core(x, segment)
            if "goal_out" in arch.goal_sites:
                x = x + self.goal_out(goal)
            return x

        def forward(self, rgb, goal, segment):
            """Button logits ``[B, L, 3]`` and camera logits ``[B, L, 2, bins]``."""
            return self.head(self.trunk(rgb, goal, segment))

    return Policy()


def lora(linear, rank: int):
    """Low-rank adapters on a frozen linear layer: ``W + up @ down`` (``up`` starts at zero, so
    the adapted layer starts as the layer)."""
    import torch
    from torch import nn

    class Adapted(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.base = linear
            for parameter in self.base.parameters():
                parameter.requires_grad_(False)
            self.down = nn.Parameter(torch.randn(rank, linear.in_features) / rank)
            self.up = nn.Parameter(torch.zeros(linear.out_features, rank))

        def merged(self):
            return self.base.weight + self.up @ self.down

        def forward(self, x):
            return nn.functional.linear(x, self.merged(), self.base.bias)

    return Adapted()


ADAPTED = ("core.qkv", "core.out", "core.mlp.0", "core.mlp.2", "head.buttons", "head.camera")
"""The linear layers that get adapters under ``finetune = "adapter"``."""


def prepare_finetuning(model, finetune: str, rank: int) -> None:
    """Freeze or adapt ``model``'s parameters for the fine-tuning mode (:data:`FINETUNING`)."""
    if finetune == "full":
        return
    goal_sites = ("goal_in.", "goal_out.")
    for name, parameter in model.named_parameters():
        trainable = name.startswith(goal_sites) or (finetune == "head" and
                                                    name.startswith("head."))
        parameter.requires_grad_(trainable)
    if finetune == "adapter":
        for name in ADAPTED:
            parent_name, child = name.rsplit(".", 1)
            parent = model.get_submodule(parent_name)
            setattr(parent, child, lora(getattr(parent, child), rank))


def export_weights(model, architecture: NavigatorArchitecture, info: dict) -> NavigatorWeights:
    """The model's parameters (adapters merged) as :class:`NavigatorWeights`."""
    parameters = {}
    for name, tensor in model.state_dict().items():
        if ".base." in name or name.endswith((".down", ".up")):
            continue
        parameters[name] = tensor.detach().cpu().numpy().astype(np.float32)
    for name in ADAPTED:
        module = model.get_submodule(name)
        if hasattr(module, "merged"):
            parameters[f"{name}.weight"] = module.merged().detach().numpy().astype(np.float32)
            parameters[f"{name}.bias"] = module.base.bias.detach().numpy().astype(np.float32)
    return NavigatorWeights(architecture, parameters, info)


def action_loss(buttons, camera, target_buttons, target_camera):
    """Behaviour cloning loss: binary cross-entropy per button plus cross-entropy per camera
    axis, averaged over steps."""
    from torch.nn import functional

    keys = buttons.shape[-1]
    return (functional.binary_cross_entropy_with_logits(buttons, target_buttons.float()) * keys
            + functional.cross_entropy(camera.reshape(-1, CAMERA_BINS),
                                       target_camera.reshape(-1).long()) * 2) / (keys + 2)


# ------------------------------------------------------------------------------------- training


@dataclass
class NavigatorTrainingResult:
    weights: NavigatorWeights
    history: list[dict]
    seconds: float


def train_navigator(out: Path, config: NavigatorTrainingConfig | None = None, *,
                    progress: bool = True,
                    say: Callable[[str], None] = print) -> NavigatorTrainingResult:
    """Train the learned navigator in run folder ``out`` (resuming its checkpoint) and write
    ``out/navigator.npz``, ``out/foundation.npz``, ``out/history.json`` and ``out/curve.png``."""
    config = config or NavigatorTrainingConfig()
    with torch_session("the navigator", config.threads):
        out.mkdir(parents=True, exist_ok=True)
        return _train(out, config, progress, say)


def _train(out: Path, config: NavigatorTrainingConfig, progress: bool,
           say: Callable[[str], None]) -> NavigatorTrainingResult:
    import torch

    from mrsteve.fileio import atomic_path

    key = config.data_key()
    earlier = None if config.foundation is None else Path(config.foundation)
    # PPO starts from the behaviour-cloned policy (bc.pt) and the give-up head from the final
    # one, so their settings stay out of the fingerprint: a run with others reuses what is before
    fingerprint = json.dumps({k: v for k, v in config.recipe().items()
                              if k not in ("ppo", "give_up_goals", "give_up_false_alarms")},
                             sort_keys=True)
    run = TrainingRun(out, fingerprint, {"stage": 0, "epoch": 0, "rounds": 0}, say=say)
    state = run.state

    def render() -> Demonstrations:
        say(f"rendering {config.segments} demonstration segments in "
            f"{', '.join(config.world_names)}")
        return collect(config, config.seed, config.segments)

    data = run.cached("demonstrations", key, render, Demonstrations.load, earlier)
    say(f"{len(data.rgb)} steps, the depth navigator reached {data.reached.mean():.0%} of goals")
    if run.saved is not None:
        say(f"resuming at stage {state['stage']}, epoch {state['epoch']}")

    # -- stage 0: the foundation policy ----------------------------------------------------------
    foundation_arch = config.architecture("none")
    torch.manual_seed(config.seed)
    foundation = build_policy(foundation_arch)
    optimiser = torch.optim.AdamW(foundation.parameters(), lr=config.learning_rate,
                                  weight_decay=config.weight_decay)
    if state["stage"] == 0:
        run.restore(model=foundation, optimiser=optimiser)
    if state["stage"] == 0 and config.foundation is not None:
        weights = _foundation_weights(earlier / "foundation.npz", foundation_arch)
        say(f"starting from the foundation policy {config.foundation}")
        weights.save(out / "foundation.npz")
        state.update(stage=1, epoch=0)
    resumed = run.saved is not None and state["stage"] > 0
    if state["stage"] == 0:
        while state["epoch"] < config.foundation_epochs:
            loss = _epoch(foundation, optimiser, data, config, state, goal=False,
                          progress=progress, label=f"foundation epoch {state['epoch'] + 1}")
            run.log("foundation", state["epoch"], loss=loss)
            say(f"foundation epoch {state['epoch']}: loss {loss:.3f}")
            run.save(model=foundation, optimiser=optimiser)
        export_weights(foundation, foundation_arch, {"stage": "foundation"}).save(
            out / "foundation.npz")
        state.update(stage=1, epoch=0)
    else:
        foundation.load_state_dict(_foundation_state(out, foundation_arch))
    for parameter in foundation.parameters():
        parameter.requires_grad_(False)

    # -- stage 1: goal-conditioned fine-tuning, then DAgger rounds ------------------------------
    architecture = config.architecture(config.conditioning)
    torch.manual_seed(config.seed + 1)
    model = build_policy(architecture)
    missing = model.load_state_dict(foundation.state_dict(), strict=False).missing_keys
    assert all(name.startswith(("goal_in.", "goal_out.")) for name in missing), missing
    prepare_finetuning(model, config.finetune, config.lora_rank)
    trainable = [p for p in model.parameters() if p.requires_grad]
    optimiser = torch.optim.AdamW(trainable, lr=config.finetune_learning_rate,
                                  weight_decay=config.weight_decay)
    if resumed:
        run.restore(model=model, optimiser=optimiser)
    rounds = [data]
    for i in range(1, state["rounds"] + 1):
        rounds.append(Demonstrations.load(out / f"dagger-{i}.npz"))
    while True:
        epochs = config.finetune_epochs if state["rounds"] == 0 else config.dagger_epochs
        pool = Demonstrations.concatenate(rounds)
        while state["epoch"] < epochs:
            loss = _epoch(model, optimiser, pool, config, state, goal=True, progress=progress,
                          label=f"fine-tuning round {state['rounds']} epoch {state['epoch'] + 1}",
                          reference=foundation)
            run.log(f"finetune-{state['rounds']}", state["epoch"], loss=loss)
            say(f"fine-tuning round {state['rounds']} epoch {state['epoch']}: loss {loss:.3f}")
            run.save(model=model, optimiser=optimiser)
        if state["rounds"] >= config.dagger_rounds:
            break
        state["rounds"] += 1
        state["epoch"] = 0
        weights = export_weights(model, architecture, {})
        share = config.teacher_share(state["rounds"])
        round_key = f"{key}-{state['rounds']}-{weights.sha256[:16]}"
        if share:
            round_key += f"-teacher{share:.6g}"
        if config.turn_hold:
            round_key += f"-hold{config.turn_hold:g}"
        walked = run.cached(f"dagger-{state['rounds']}", round_key,
                            lambda w=weights, share=share: collect(
                                config, config.seed + 1000 * state["rounds"],
                                config.dagger_segments, w, share),
                            Demonstrations.load)
        acting = (f"the policy (the depth navigator on {share:.0%} of its steps)" if share
                  else "the policy")
        say(f"DAgger round {state['rounds']}: {acting} reached {walked.reached.mean():.0%} of "
            f"{len(walked.reached)} goals ({len(walked.rgb)} steps labelled)")
        run.log(f"dagger-{state['rounds']}", 0, reached=float(walked.reached.mean()))
        rounds.append(walked)
        run.save(model=model, optimiser=optimiser)
    while state.get("annealed", 0) < config.anneal_epochs:
        done = state.get("annealed", 0)
        loss = _epoch(model, optimiser, pool, config, state, goal=True, progress=progress,
                      label=f"annealing epoch {done + 1}", reference=foundation,
                      rate=lambda share, done=done: annealed_rate(config, done + share))
        state["annealed"] = done + 1
        run.log("anneal", state["annealed"], loss=loss)
        say(f"annealing epoch {state['annealed']}: loss {loss:.3f}")
        run.save(model=model, optimiser=optimiser)
    bc_path = out / "bc.pt"
    if "ppo" not in state:  # behaviour cloning just finished
        with atomic_path(bc_path) as tmp:
            torch.save({"config": fingerprint, "model": model.state_dict(),
                        "history": run.history}, tmp)
        state["ppo"] = None
        run.save(model=model, optimiser=optimiser)
    ppo_key = json.dumps(asdict(config.ppo), sort_keys=True) if config.ppo.iterations else None
    if state["ppo"] != ppo_key:  # start PPO (or its absence) from the behaviour-cloned policy
        cloned = torch.load(bc_path, weights_only=False)
        model.load_state_dict(cloned["model"])
        state["history"] = list(cloned["history"])
        if ppo_key is not None:
            say(f"PPO: {config.ppo.iterations} iterations of {config.ppo.envs} x "
                f"{config.ppo.steps} steps, KL {config.kl:g} to the foundation policy")
            ppo_finetune(model, foundation, trainable, architecture, config.kl, config.ppo,
                         config.world_names, config.goals_per_world, config.across_water,
                         config.seed + 2,
                         lambda m: export_weights(m, architecture, {}), say, run.history,
                         progress, shares=config.world_shares)
        state["ppo"] = ppo_key
        run.save(model=model, optimiser=optimiser)

    validated = [row.get("goals") for row in run.history if row["stage"] == "validation"]
    if config.validation_segments and validated != [config.validation_segments]:
        walked = collect(config, config.seed + 99_999, config.validation_segments,
                         export_weights(model, architecture, {}))
        state["history"] = [row for row in run.history if row["stage"] != "validation"]
        run.log("validation", 0, reached=float(walked.reached.mean()),
                goals=config.validation_segments)
        say(f"validation: the policy reached {walked.reached.mean():.0%} of "
            f"{config.validation_segments} goals on fresh seeds of the training worlds")
        run.save(model=model, optimiser=optimiser)
    state["history"] = [row for row in run.history if row["stage"] != "give-up"]
    weights = export_weights(model, architecture, {})
    if config.give_up_goals:
        weights = _give_up_head(run, config, weights, key)
    info = {"training": config.recipe(), "seconds": round(run.seconds, 1),
            "data": f"{config.segments} depth-navigator segments in "
                    f"{', '.join(config.world_names)}, seed {config.seed}, "
                    f"{config.dagger_rounds} DAgger rounds of {config.dagger_segments}, "
                    f"{config.ppo.iterations} PPO iterations, "
                    f"{config.give_up_goals} give-up walks",
            "history": run.history[-1]}
    weights = NavigatorWeights(weights.architecture, weights.parameters, info)
    run.finish(weights, "navigator.npz", plot_curve)
    return NavigatorTrainingResult(weights, run.history, run.seconds)


def _give_up_head(run: TrainingRun, config: NavigatorTrainingConfig, weights: NavigatorWeights,
                  key: str) -> NavigatorWeights:
    """The final policy's give-up head (:mod:`mrsteve.train.navigator_give_up`): its walks
    (rendered once per policy, cached in the ``run``'s folder), the fit, and its scores in the
    run's history."""
    say = run.say
    from mrsteve.control.navigation import NavigatorConfig
    from mrsteve.train.navigator_give_up import (
        GiveUpWalks,
        calibrate_give_up_head,
        fit_give_up_head,
        give_up_scores,
        walk_give_up,
        walks_key,
        with_give_up_head,
    )

    def render() -> GiveUpWalks:
        say(f"give-up head: the policy walks to {config.give_up_goals} goals beyond, inside and "
            f"away from the walls of {', '.join(config.world_names)}")
        return GiveUpWalks.concatenate(render_streams(
            walk_give_up, config.seed + 77_777, config.give_up_goals,
            lambda s, n, first: (weights, s, n, config.world_names, config.max_segment_steps,
                                 config.world_shares),
            config.workers))

    walks = run.cached("give-up", walks_key(key, config.give_up_goals, weights), render,
                       GiveUpWalks.load)
    probability = NavigatorConfig().give_up_probability
    weight, bias = fit_give_up_head(walks, config.seed)
    bias = calibrate_give_up_head(walks, weight, bias, probability, config.give_up_false_alarms)
    headed = with_give_up_head(weights, weight, bias, {})
    scores = give_up_scores(walks, headed, probability)
    run.log("give-up", 0, steps=len(walks.kind), out_of_reach=float(walks.out_of_reach.mean()),
            **scores)
    say(f"give-up head on {len(walks.kind)} steps ({walks.out_of_reach.mean():.0%} out of reach "
        f"by the depth navigator): at p >= {probability:g} it flags "
        f"{scores['recall_all']:.0%} of them and {scores['false_alarms_all']:.1%} of the others")
    return headed


def _foundation_weights(path: Path, architecture: NavigatorArchitecture) -> NavigatorWeights:
    from mrsteve.control.learned_navigator import load_navigator_weights

    weights = load_navigator_weights(path)
    if weights.architecture != architecture:
        raise ValueError(f"{path} is not a foundation policy of this configuration's "
                         f"architecture: {weights.architecture} (expected {architecture})")
    return weights


def _foundation_state(out: Path, architecture: NavigatorArchitecture) -> dict:
    import torch

    weights = _foundation_weights(out / "foundation.npz", architecture)
    return {name: torch.from_numpy(value) for name, value in weights.parameters.items()}


def windows(data: Demonstrations, rng: np.random.Generator, count: int,
            length: int) -> np.ndarray:
    """``int[count, length]`` step indices of training sequences: consecutive steps from random
    starts (a sequence may cross a segment border; attention never does)."""
    starts = rng.integers(0, max(len(data.rgb) - length, 0) + 1, count)
    return np.minimum(starts[:, None] + np.arange(length)[None], len(data.rgb) - 1)


def annealed_rate(config: NavigatorTrainingConfig, epochs_done: float) -> float:
    """The learning rate ``epochs_done`` epochs into the annealing
    (:attr:`NavigatorTrainingConfig.anneal_epochs`): linear from the fine-tuning rate to zero."""
    return config.finetune_learning_rate * max(0.0, 1.0 - epochs_done / config.anneal_epochs)


def _epoch(model, optimiser, data: Demonstrations, config: NavigatorTrainingConfig,
           state: dict, *, goal: bool, progress: bool, label: str, reference=None,
           rate: Callable[[float], float] | None = None) -> float:
    """One pass (as many sequences as the data has steps) and the mean loss, its progress bar
    titled ``label``; ``rate`` gives the learning rate at each share of the pass done (None: the
    optimiser's own)."""
    import torch
    from tqdm import tqdm

    rng = np.random.default_rng([config.seed, state["stage"], state["rounds"], state["epoch"]])
    steps = max(1, len(data.rgb) // (config.sequence * config.batch))
    model.train()
    losses = []
    bar = tqdm(range(steps), disable=not progress, unit="step", leave=False, desc=label)
    for step in bar:
        if rate is not None:
            for group in optimiser.param_groups:
                group["lr"] = rate(step / steps)
        index = windows(data, rng, config.batch, config.sequence)
        rgb = torch.from_numpy(jitter_colours(data.rgb[index], rng, config.colour_jitter))
        goals = torch.from_numpy(data.goal[index]) if goal else torch.zeros(*index.shape, 6)
        segment = torch.from_numpy(data.segment[index])
        buttons, camera = model(rgb, goals, segment)
        loss = action_loss(buttons, camera, torch.from_numpy(data.buttons[index]),
                           torch.from_numpy(data.camera[index]))
        if reference is not None and config.kl > 0:
            with torch.no_grad():
                reference_buttons, reference_camera = reference(rgb, goals, segment)
            loss = loss + config.kl * kl_to(buttons, camera, reference_buttons, reference_camera)
        optimise(optimiser, loss, losses, bar)
    state["epoch"] += 1
    return float(np.mean(losses))


def plot_curve(history: list[dict], path: Path,
               success: str = "goals reached by the policy (%)") -> None:
    """Loss per epoch (one label per stage) and the policy's ``success`` in each DAgger round
    and the validation."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from mrsteve.fileio import atomic_path

    figure, (left, right) = plt.subplots(1, 2, figsize=(9, 3.5))
    rows = [row for row in history if "loss" in row]
    left.plot(range(1, len(rows) + 1), [row["loss"] for row in rows], marker=".")
    for i, row in enumerate(rows):
        if i == 0 or rows[i - 1]["stage"] != row["stage"]:
            left.annotate(row["stage"], (i + 1, row["loss"]), fontsize=7)
    left.set(xlabel="epoch", ylabel="behaviour cloning loss", title="loss")
    rounds = [row for row in history if "reached" in row]
    right.bar([row["stage"] for row in rounds], [100 * row["reached"] for row in rounds],
              color="C2")
    right.set(ylabel=success, title="the policy acting",
              ylim=(0, 100))
    figure.tight_layout()
    with atomic_path(path) as tmp:
        figure.savefig(tmp, format="png", dpi=100)
    plt.close(figure)


__all__ = [
    "EXPERT_MAPS",
    "FINETUNING",
    "NAVIGATOR_WORLDS",
    "TRAINING_WORLDS",
    "Demonstrations",
    "NavigatorTrainingConfig",
    "NavigatorTrainingResult",
    "PitchNudges",
    "annealed_rate",
    "build_policy",
    "collect",
    "collect_segments",
    "export_weights",
    "train_navigator",
]
