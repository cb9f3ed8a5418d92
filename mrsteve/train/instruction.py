"""Training the learned instruction policy (:mod:`mrsteve.control.instruction`): STEVE-1's
recipe in the embedded world (torch, the ``train`` extra).

1. **Trajectories.** STEVE-1 was trained on VPT's contractor play; ours on the embedded world's
   competent play: the scripted skills (:class:`~mrsteve.control.skills.ScriptedSkills`)
   obtaining each item of the task catalog, holding the task's tool, in procedural
   calibration worlds with herds (:data:`INSTRUCTION_WORLDS`; never an evaluation map),
   starting within 12 blocks of a target in ``near_share`` of the episodes, 20 to 40 blocks from
   the nearest one in ``far_share`` (out of view range, as STEVE-1's human data has the player
   search) and at the world's spawn otherwise (so searching is in the data too). Every step
   keeps the RGB frame, the keys and camera the skills pressed (camera binned as VPT bins it),
   and the pixel encoder's clip embedding of the 16 frames ending there (MineCLIP's role).
   Beyond STEVE-1, a few steps now and then have the camera's pitch pushed off while the skills
   label (DART's remedy for a scripted teacher), so the data shows the view levelled again after
   a drift.
2. **Goal-conditioned behaviour cloning** (STEVE-1's): the image encoder and core start from the
   learned navigator's foundation policy (VPT's role; the shipped navigator's by default); each
   step's goal is the clip embedding of a later step of the same episode, 15 to 200 steps ahead,
   one goal serving the steps up to it ("packed hindsight relabelling"); the goal is dropped
   (zeroed) for ``goal_dropout`` of the sequences, so the policy also learns the unconditioned
   distribution classifier-free guidance needs; the learning rate follows a half cosine.
   Each episode is cloned up to the step its item last arrived (its idle tail would teach
   digging in place under any goal).
3. **DAgger** (beyond STEVE-1, which only clones; Ross et al., 2011): in each round the policy
   acts from a start near a target (or, in ``dagger_far_share`` of the episodes, out of view
   range of every target) with its prior's goal, the scripted skills label every step
   it takes as a teacher (:attr:`~mrsteve.control.skills.SkillConfig.labelling`), and training
   goes on over the cloned steps and every round's, the rounds' steps under the goal the policy
   was given. Cloning alone leaves the policy in states the skills' own play never reaches
   (looking into the sky under a tree, digging the grass beside a beach, walking off) with no
   example of leaving them.
4. **The prior**: an MLP from the pixel encoder's text embedding of an execute prompt to the
   clip embedding of the 16 frames before the prompt's item arrived (the clips and their
   captions); trained on 80 % of the episodes, its held-out cosine reported beside the
   cosine to other prompts' clips.
5. **The guidance scales** (the keys' and the camera head's own, beyond STEVE-1's one scale)
   are picked on fresh seeds of the training worlds, each episode started near a target
   (:func:`validate`), and stored with the weights as the run-time default.

Seeded throughout; a run folder keeps the rendered data and a checkpoint after every epoch, so an
interrupted run resumes (and a finished one given other validation settings only re-validates);
``curve.png`` shows the losses and the policy's success per round.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any

import numpy as np

from mrsteve.control.instruction import (
    INSTRUCTION_BUTTONS,
    InstructionArchitecture,
    InstructionWeights,
)
from mrsteve.control.learned_navigator import CAMERA_BINS, NavigatorWeights, camera_bins
from mrsteve.env.commands import TREE_CUTS
from mrsteve.nn import PolicyArchitecture
from mrsteve.protocols import Decision
from mrsteve.seeding import episode_rng
from mrsteve.tasks.driver import EpisodeCallback, Step
from mrsteve.train.episodes import training_worlds
from mrsteve.train.layers import (
    action_head,
    causal_core,
    check_jitter,
    frame_encoder,
    jitter_colours,
    optimise,
    torch_session,
)
from mrsteve.train.navigator import (
    PitchNudges,
    action_loss,
    plot_curve,
    windows,
)
from mrsteve.train.runs import TrainingRun, render_streams

INSTRUCTION_WORLDS = ("calib_meadow", "calib_dunes", "calib_shores")
"""World recipes the instruction policy learns in (``data/worlds.toml``: procedural, with trees,
ponds, tall grass, cows and sheep; sand as dunes and a hill, and as beaches around ponds)."""


@dataclass(frozen=True)
class InstructionTrainingConfig:
    """How the learned instruction policy is trained; the defaults make the shipped weights."""

    episodes: int = 2400
    """Episodes of the scripted skills, spread evenly over the task catalog's items."""
    episode_steps: int = 300
    """Steps per episode."""
    near_share: float = 0.75
    """Share of the episodes that start within ``near_distance`` blocks of a target."""
    near_distance: float = 12.0
    far_share: float = 0.0
    """Share of the episodes that start ``far_distance`` blocks from the nearest target (out of
    view range: the skills must search); the rest start at the world's spawn."""
    far_distance: tuple[float, float] = (20.0, 40.0)
    cut_tree_share: float = 0.0
    """Share of the log episodes (cloned and DAgger) whose world's trees are cut before the
    episode, eye or foot at random (:data:`~mrsteve.env.commands.TREE_CUTS`): the trees agents
    leave behind, which the skills take logs from and whole-tree episodes never show (0: none)."""
    nudge_rate: float = 0.02
    """Chance per rendered step that a nudge starts (beyond STEVE-1, DART's remedy for a
    scripted teacher): for ``nudge_steps`` steps the camera's pitch turns ``nudge_degrees`` a
    step, up or down at random, while the skills' labels are recorded, so the data shows the
    skills levelling the view again, a state their own play never reaches (0: none)."""
    nudge_steps: int = 6
    nudge_degrees: float = 10.0
    goal_offsets: tuple[int, int] = (15, 200)
    """A step's goal is the clip ending this many steps later (STEVE-1's window)."""
    success_goals: bool = False
    """Relabelled goals stop at the moments the item arrived (:func:`relabel`), so the clips the
    prior gives at run time are the goals of the steps that led to them (beyond STEVE-1)."""
    goal_dropout: float = 0.1
    colour_jitter: float = 0.0
    """Strength of the photometric augmentation of the training batches
    (:func:`~mrsteve.train.layers.jitter_colours`: each sequence's channels scaled by up to
    ``exp(2 x colour_jitter)``; 0: none), so the policy is not bound to the training worlds'
    one light."""
    until_last_success: bool = True
    """Clone each episode only up to the step its item last arrived
    (:meth:`Trajectories.until_last_success`): after it the skills cannot get more (a full
    bucket, a herd killed) and idle or dig where they stand, steps that taught the policy to
    dig into the ground under any goal (beyond STEVE-1, whose data has no such tails)."""
    epochs: int = 12
    """Epochs of goal-conditioned behaviour cloning."""
    dagger_rounds: int = 10
    """Rounds of DAgger after the cloning (module docstring); each renders ``dagger_episodes``
    episodes of the policy, started near a target and ended at its first success or after
    ``episode_steps``."""
    dagger_episodes: int = 300
    dagger_far_share: float = 0.0
    """Share of each round's episodes started ``far_distance`` from the nearest target, so the
    teacher labels the policy's search too (the rest start near one)."""
    dagger_steps: int = 1000
    """Optimiser steps after each round, the learning rate on a half cosine from
    ``dagger_learning_rate``."""
    dagger_share: float = 0.5
    """Share of each batch's sequences drawn from the rounds' steps (the rest: the cloned
    steps, with their relabelled goals)."""
    dagger_learning_rate: float = 2e-4
    prior_steps: int = 1500
    prior_holdout: float = 0.2
    """Share of the episodes whose success clips are held out of the prior's training."""
    guidance: float = 7.0
    """Guidance scale the DAgger rounds' policy acts with (STEVE-1's ``l = 6``)."""
    validation_episodes: int = 200
    """Episodes the final policy runs (:func:`validate`) in each set-up of
    :func:`validation_setups` (0: none); the best set-up is stored with the weights as the
    run-time default. Changing only the validation settings re-validates a finished run
    folder without training again."""
    validation_guidance: tuple[float, ...] = (3.0, 7.0)
    validation_camera_guidance: tuple[float | None, ...] = (None, 1.0)
    """The camera head's scales tried at each scale of :attr:`validation_guidance` (``None``:
    the keys' scale, every head alike; :attr:`InstructionPolicyConfig.camera_guidance
    <mrsteve.control.instruction.InstructionPolicyConfig.camera_guidance>`)."""
    validation_steps: int = 600
    """Steps of a validation episode; validation episodes start within ``near_distance`` of a
    target, as MrSteve's Execute mode calls the policy."""
    sequence: int = 32
    batch: int = 24
    learning_rate: float = 5e-4
    """Peak learning rate, decayed along a half cosine over each round's epochs."""
    weight_decay: float = 1e-4
    seed: int = 0
    """Seed of the worlds, batches and initial weights."""
    threads: int = 2
    """torch CPU threads."""
    workers: int = 2
    """Processes that render trajectories at once, one per seeded stream at most (the data is
    drawn in :data:`~mrsteve.train.runs.RENDER_STREAMS` streams, the same for any number of
    processes)."""
    foundation: str | None = None
    """A navigator weights file (``foundation.npz`` of ``mrsteve train navigator``, or a
    navigator's) whose image encoder and core start the policy; default: the shipped
    navigator's."""

    def __post_init__(self) -> None:
        for name in ("episodes", "episode_steps", "epochs", "dagger_episodes", "dagger_steps",
                     "prior_steps", "validation_steps", "sequence", "batch", "threads",
                     "workers"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        low, high = self.goal_offsets
        if not 1 <= low <= high:
            raise ValueError(f"goal_offsets must be 1 <= low <= high, got {self.goal_offsets}")
        if self.dagger_rounds < 0 or not 0 <= self.goal_dropout < 1:
            raise ValueError("need dagger_rounds >= 0 and 0 <= goal_dropout < 1")
        if not (0 < self.dagger_share < 1 and self.dagger_learning_rate > 0):
            raise ValueError(f"need 0 < dagger_share < 1 and dagger_learning_rate > 0, got "
                             f"{self.dagger_share} and {self.dagger_learning_rate}")
        cameras = [scale for scale in self.validation_camera_guidance if scale is not None]
        if (self.validation_episodes < 0 or not self.validation_guidance
                or not self.validation_camera_guidance
                or min((self.guidance, *self.validation_guidance, *cameras)) < 0):
            raise ValueError("need validation_episodes >= 0, guidance scales >= 0 (camera "
                             "scales: >= 0 or None) and at least one scale of each")
        PitchNudges(self.nudge_rate, self.nudge_steps, self.nudge_degrees)  # checks them
        check_jitter(self.colour_jitter)
        if not (0 <= self.near_share <= 1 and 0 < self.prior_holdout < 1):
            raise ValueError("need 0 <= near_share <= 1 and 0 < prior_holdout < 1")
        if not (0 <= self.far_share <= 1 - self.near_share and 0 <= self.dagger_far_share <= 1):
            raise ValueError(f"need 0 <= far_share <= 1 - near_share and 0 <= dagger_far_share "
                             f"<= 1, got {self.far_share} and {self.dagger_far_share}")
        if not 0 <= self.cut_tree_share <= 1:
            raise ValueError(f"cut_tree_share must be in [0, 1], got {self.cut_tree_share}")
        low, high = self.far_distance
        if not 0 <= low <= high:
            raise ValueError(f"far_distance must be 0 <= low <= high, got {self.far_distance}")

    def recipe(self) -> dict[str, Any]:
        """The settings as the weights record them (``info["training"]``): all of them, the
        camera's validation scales only when they try one of their own and the far starts only
        when there are some, so weights and run folders made before those existed keep the
        recipe they recorded."""
        settings = asdict(self)
        if self.validation_camera_guidance == (None,):
            del settings["validation_camera_guidance"]
        if not (self.far_share or self.dagger_far_share):
            for name in ("far_share", "far_distance", "dagger_far_share"):
                del settings[name]
        if not self.colour_jitter:
            del settings["colour_jitter"]
        if not self.cut_tree_share:
            del settings["cut_tree_share"]
        return settings

    def validation_settings(self) -> dict[str, Any]:
        """The settings that decide only :func:`validate` (not the trained weights)."""
        return {name: value for name, value in asdict(self).items()
                if name.startswith("validation_")}

    def data_key(self) -> str:
        """Hash of what decides the trajectories (a run folder's data is reused on a match)."""
        fields = [self.episodes, self.episode_steps, self.near_share, self.near_distance,
                  self.seed, INSTRUCTION_WORLDS]
        if self.nudge_rate:
            fields += [self.nudge_rate, self.nudge_steps, self.nudge_degrees]
        if self.far_share:
            fields += [self.far_share, list(self.far_distance)]
        if self.cut_tree_share:
            fields += [{"cut_tree_share": self.cut_tree_share}]
        return hashlib.sha256(json.dumps(fields).encode()).hexdigest()[:16]


# ------------------------------------------------------------------------------------- data


@dataclass
class Trajectories:
    """Steps of episodes: what the policy saw and what the skills pressed."""

    rgb: np.ndarray
    """``uint8[N, H, W, 3]``."""
    embedding: np.ndarray
    """``float32[N, goal_dim]``: the pixel encoder's clip embedding of the frames ending at
    each step (``float32[N, 0]`` for the policy's own episodes, whose goal is their prompt's)."""
    buttons: np.ndarray
    """``uint8[N, len(INSTRUCTION_BUTTONS)]``."""
    camera: np.ndarray
    """``int8[N, 2]``: camera bins (pitch, yaw)."""
    segment: np.ndarray
    """``int32[N]``: the episode of each step (steps of an episode are consecutive)."""
    success: np.ndarray
    """``bool[N]``: the item's count rose after this step's action."""
    prompt: np.ndarray
    """``int16[episodes]``: index of each episode's execute prompt in :func:`prompts`."""

    FIELDS = ("rgb", "embedding", "buttons", "camera", "segment", "success", "prompt")

    @staticmethod
    def concatenate(parts: Sequence[Trajectories]) -> Trajectories:
        if len(parts) == 1:
            return parts[0]
        offset, segments = 0, []
        for part in parts:
            segments.append(part.segment + offset)
            offset += len(part.prompt)
        joined = {name: np.concatenate([getattr(p, name) for p in parts])
                  for name in Trajectories.FIELDS}
        joined["segment"] = np.concatenate(segments).astype(np.int32)
        return Trajectories(**joined)

    def until_last_success(self) -> Trajectories:
        """These trajectories without each episode's steps after its item last arrived (an
        episode that never got its item is kept whole)."""
        last = np.full(len(self.prompt), np.iinfo(np.int64).max)
        steps = np.flatnonzero(self.success)
        last[self.segment[steps]] = steps  # ascending: each episode keeps its last success
        keep = np.arange(len(self.segment)) <= last[self.segment]
        return Trajectories(**{name: getattr(self, name)[keep] if name != "prompt"
                               else self.prompt for name in self.FIELDS})

    def episode_success(self) -> np.ndarray:
        """``bool[episodes]``: whether each episode got its item at least once."""
        got = np.zeros(len(self.prompt), bool)
        got[self.segment[self.success]] = True
        return got

    def save(self, path: Path) -> None:
        from mrsteve.fileio import atomic_path

        with atomic_path(path) as tmp, open(tmp, "wb") as handle:
            np.savez(handle, **{name: getattr(self, name) for name in self.FIELDS})

    @staticmethod
    def load(path: Path) -> Trajectories:
        with np.load(path, allow_pickle=False) as saved:
            return Trajectories(**{name: saved[name] for name in Trajectories.FIELDS})


def prompts() -> tuple[str, ...]:
    """The distinct execute prompts of the task catalog's items (the captions)."""
    from mrsteve.tasks.catalog import load_catalog

    return tuple(dict.fromkeys(task.prompts.execute for task in load_catalog().items.values()))


class TrajectoryRecorder(EpisodeCallback):
    """What an episode keeps of each step (a callback of the collector's driver): the frame the
    decision was made on, the clip embedding of ``encoder`` (``None``: none, the policy's own
    episodes), the teacher's label (keys, camera bins), the episode's index and whether the
    item arrived; :meth:`start` begins an episode, :meth:`trajectories` gives them all."""

    def __init__(self, encoder: Any | None) -> None:
        self.encoder = encoder
        self.columns: dict[str, list] = {name: [] for name in Trajectories.FIELDS}
        self.success, self.prompt = self.columns["success"], self.columns["prompt"]
        self._episode, self._slot = 0, 0

    def start(self, episode: int, slot: int) -> None:
        """Episode ``episode`` begins; its item is in inventory slot ``slot``."""
        self._episode, self._slot = episode, slot

    def on_step(self, step: Step) -> None:
        view, label, columns = step.view, step.decision.notes["label"], self.columns
        columns["rgb"].append(view["rgb"])
        if self.encoder is not None:
            columns["embedding"].append(self.encoder.observe(view))
        columns["buttons"].append([int(label.get(name, 0)) for name in INSTRUCTION_BUTTONS])
        columns["camera"].append(camera_bins(label["camera"]))
        columns["segment"].append(self._episode)
        columns["success"].append(int(step.obs["inventory"][self._slot])
                                  > int(view["inventory"][self._slot]))

    def trajectories(self) -> Trajectories:
        columns = self.columns
        embedding = (np.stack(columns["embedding"]) if columns["embedding"]
                     else np.zeros((len(columns["rgb"]), 0)))
        return Trajectories(
            np.stack(columns["rgb"]), embedding.astype(np.float32),
            np.array(columns["buttons"], np.uint8), np.array(columns["camera"], np.int8),
            np.array(columns["segment"], np.int32), np.array(columns["success"], bool),
            np.array(columns["prompt"], np.int16))


def collect_episodes(config: InstructionTrainingConfig, seed: int, episodes: int, first: int,
                     weights: InstructionWeights | None = None,
                     guidance: float | None = None,
                     camera_guidance: float | None = None) -> Trajectories:
    """Episodes ``first .. first + episodes - 1`` of the item rotation: the scripted skills act
    (``weights`` None), or the learned policy of ``weights`` does with ``guidance`` (default
    ``config.guidance``; DAgger, validation) and the camera head's ``camera_guidance``
    (default: the same) while the skills label every step as a teacher
    (:attr:`~mrsteve.control.skills.SkillConfig.labelling`), until the item first arrives; a
    world of the training worlds each (:func:`~mrsteve.train.episodes.training_worlds`), its steps
    kept by a :class:`TrajectoryRecorder`."""
    from mrsteve.control.instruction import InstructionPolicyConfig, LearnedSkills
    from mrsteve.control.skill_book import load_skills
    from mrsteve.control.skills import ScriptedSkills, SkillConfig
    from mrsteve.perception.pixels import PixelEncoder
    from mrsteve.tasks.catalog import load_catalog
    from mrsteve.tasks.placement import start_near, target_positions

    rng = np.random.default_rng(seed)
    catalog = load_catalog()
    skills = load_skills()
    items = list(catalog.items)
    captions = prompts()
    encoder = PixelEncoder()
    recorder = TrajectoryRecorder(encoder if weights is None else None)
    nudges = PitchNudges(config.nudge_rate, config.nudge_steps, config.nudge_degrees)
    task = None
    cut = None  # how the episode's trees are cut (a key of TREE_CUTS), None: whole
    cuts = episode_rng(seed, "task")

    def set_up() -> dict:
        options: dict = {"clear": True}
        if task.tool is not None:
            options.update(give={task.tool: 1}, equip=task.tool)
        if cut is not None:
            options["cut_trees"] = cut
        return options

    worlds = training_worlds(INSTRUCTION_WORLDS, rng, callbacks=[recorder], options=set_up)
    try:
        for episode in range(episodes):
            task = catalog.item(items[(first + episode) % len(items)])
            cut = None  # a stream of its own: every other draw is as without cut trees
            if task.item == "log" and cuts.random() < config.cut_tree_share:
                cut = list(TREE_CUTS)[int(cuts.integers(len(TREE_CUTS)))]
            driver, info = next(worlds)
            world = driver.env.unwrapped.world
            draw = rng.random()
            if draw < config.near_share + config.far_share:
                distance = ((0.0, config.near_distance) if draw < config.near_share
                            else config.far_distance)
                try:
                    skill = skills.skill(task.prompts.execute)
                    start_near(driver, target_positions(world, skill.targets, skill.on_mobs),
                               rng, distance)
                except ValueError:
                    pass  # no place fits in this world: the episode starts at the spawn
            expert = ScriptedSkills(SkillConfig(labelling=weights is not None))
            expert.reset(rng, info["camera"])
            actor = None
            if weights is not None:
                actor = LearnedSkills(encoder.embed_words, encoder.weights.sha256,
                                      InstructionPolicyConfig(
                                          guidance=config.guidance if guidance is None
                                          else guidance, camera_guidance=camera_guidance),
                                      weights=weights)
                actor.reset(rng, info["camera"])
            encoder.reset()
            recorder.start(episode, world.content.item_names.index(task.item))
            prompt = task.prompts.execute
            nudges.reset()

            def labelled(view, t):
                label = expert.act(view, prompt)
                action = nudges(label, rng) if actor is None else actor.act(view, prompt)
                return Decision(action, notes={"label": label})

            def arrived(step) -> bool:
                return recorder.success[-1] and actor is not None  # the policy's end at a success

            driver.run(labelled, steps=config.episode_steps, until=arrived)
            recorder.prompt.append(captions.index(prompt))
    finally:
        worlds.close()
    return recorder.trajectories()


def collect(config: InstructionTrainingConfig, seed: int, episodes: int,
            weights: InstructionWeights | None = None, guidance: float | None = None,
            camera_guidance: float | None = None) -> Trajectories:
    """:func:`collect_episodes` in the rendering's seeded streams
    (:func:`~mrsteve.train.runs.render_streams`), ``config.workers`` processes at once."""
    return Trajectories.concatenate(render_streams(
        collect_episodes, seed, episodes,
        lambda s, n, first: (config, s, n, first, weights, guidance, camera_guidance),
        config.workers))


def relabel(data: Trajectories, rng: np.random.Generator, offsets: tuple[int, int],
            success_goals: bool = False) -> np.ndarray:
    """``int[N]``: the goal step of every step, STEVE-1's packed hindsight relabelling: from
    an episode's first step, a goal ``offsets`` steps ahead (at most the episode's last step)
    serves every step up to it, then the next goal is drawn from the step after. With
    ``success_goals`` a draw that passes a step where the item arrived stops there: that
    moment's clip is the goal of the steps leading to it."""
    goal = np.empty(len(data.segment), np.int64)
    low, high = offsets
    borders = np.flatnonzero(np.diff(data.segment)) + 1
    successes = np.flatnonzero(data.success) if success_goals else np.empty(0, np.int64)
    for start, end in zip(np.r_[0, borders], np.r_[borders, len(data.segment)], strict=True):
        t = start
        while t < end:
            g = min(t + int(rng.integers(low, high + 1)), end - 1)
            passed = successes[np.searchsorted(successes, t):np.searchsorted(successes, g)]
            if len(passed):
                g = int(passed[0])
            goal[t:g + 1] = g
            t = g + 1
    return goal


# ------------------------------------------------------------------------------------- model


def build_instruction_policy(architecture: InstructionArchitecture):
    """The torch policy and prior of ``architecture`` (parameter names as
    :meth:`InstructionArchitecture.parameter_shapes`)."""
    from torch import nn

    arch, d = architecture, architecture.dim

    class Policy(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.image = frame_encoder(arch.obs_size, arch.channels, arch.strides, d)
            self.core = causal_core(d, arch.heads, arch.context, arch.mlp_dim)
            self.goal = nn.Linear(arch.goal_dim, d)
            self.head = action_head(d, len(INSTRUCTION_BUTTONS), CAMERA_BINS)
            hidden = arch.prior_hidden
            self.prior = nn.Sequential(nn.Linear(arch.text_dim, hidden), nn.ReLU(),
                                       nn.Linear(hidden, hidden), nn.ReLU(),
                                       nn.Linear(hidden, arch.goal_dim))

        def forward(self, rgb, goal, segment):
            """Button logits ``[B, L, buttons]`` and camera logits ``[B, L, 2, bins]`` for
            ``rgb [B, L, H, W, 3]``, goal embeddings ``[B, L, goal_dim]`` (zero: none) and
            ``segment [B, L]``."""
            batch, length = rgb.shape[:2]
            x = self.image(rgb.flatten(0, 1)).view(batch, length, d) + self.goal(goal)
            return self.head(self.core(x, segment))

    return Policy()


def export_weights(model, architecture: InstructionArchitecture,
                   info: dict) -> InstructionWeights:
    parameters = {name: tensor.detach().cpu().numpy().astype(np.float32)
                  for name, tensor in model.state_dict().items()}
    return InstructionWeights(architecture, parameters, info)


# ------------------------------------------------------------------------------------- training


@dataclass
class InstructionTrainingResult:
    weights: InstructionWeights
    history: list[dict]
    seconds: float


def train_instruction_policy(out: Path, config: InstructionTrainingConfig | None = None, *,
                             progress: bool = True, say: Callable[[str], None] = print
                             ) -> InstructionTrainingResult:
    """Train the learned instruction policy in run folder ``out`` (resuming its checkpoint) and
    write ``out/instruction.npz``, ``out/history.json`` and ``out/curve.png``."""
    config = config or InstructionTrainingConfig()
    with torch_session("the instruction policy", config.threads):
        out.mkdir(parents=True, exist_ok=True)
        return _train(out, config, progress, say)


def foundation_weights(config: InstructionTrainingConfig) -> NavigatorWeights:
    """The navigator weights whose image encoder and core start the policy."""
    from mrsteve.control.learned_navigator import load_navigator_weights, load_shipped_navigator

    if config.foundation is None:
        return load_shipped_navigator()
    return load_navigator_weights(config.foundation)


def _train(out: Path, config: InstructionTrainingConfig, progress: bool,
           say: Callable[[str], None]) -> InstructionTrainingResult:
    import torch

    from mrsteve.perception.pixels import load_shipped_weights

    foundation = foundation_weights(config)
    base = foundation.architecture
    text = load_shipped_weights()
    architecture = InstructionArchitecture(
        **{f.name: getattr(base, f.name) for f in fields(PolicyArchitecture)},
        goal_dim=text.architecture.dim, text_dim=text.architecture.dim, goal_encoder=text.sha256)
    key = config.data_key()
    fingerprint = json.dumps({**config.recipe(), "foundation_sha256": foundation.sha256},
                             sort_keys=True)
    run = TrainingRun(out, fingerprint, {"epoch": 0, "rounds": 0}, say=say,
                      extendable=("dagger_rounds",))
    state = run.state

    def render() -> Trajectories:
        say(f"rendering {config.episodes} episodes of the scripted skills in "
            f"{', '.join(INSTRUCTION_WORLDS)}")
        return collect(config, config.seed, config.episodes)

    data = run.cached("trajectories", key, render, Trajectories.load)
    say(f"{len(data.rgb)} steps; the skills got their item in "
        f"{data.episode_success().mean():.0%} of {len(data.prompt)} episodes")
    if config.until_last_success:
        data = data.until_last_success()
        say(f"{len(data.rgb)} steps up to each episode's last success")
    torch.manual_seed(config.seed)
    model = build_instruction_policy(architecture)
    start = {name: torch.from_numpy(value) for name, value in foundation.parameters.items()
             if name.startswith(("image.", "core."))}
    model.load_state_dict(start, strict=False)
    optimiser = torch.optim.AdamW([p for n, p in model.named_parameters()
                                   if not n.startswith("prior.")],
                                  lr=config.learning_rate, weight_decay=config.weight_decay)
    if run.restore(model=model, optimiser=optimiser):
        say(f"resuming at round {state['rounds']}, epoch {state['epoch']}")
        if state["rounds"] < config.dagger_rounds:  # more rounds: validate them afresh
            state.pop("validation_settings", None)

    def save_checkpoint() -> None:
        run.save(model=model, optimiser=optimiser)

    # the prior first: the DAgger rounds act with its goals
    if "prior" not in state:
        state["prior"] = _train_prior(model, data, config, text, say)
        save_checkpoint()
    while state["epoch"] < config.epochs:
        loss = _epoch(model, optimiser, data, config, state, config.epochs, progress)
        run.log("cloning", state["epoch"], loss=loss)
        say(f"cloning epoch {state['epoch']}: loss {loss:.3f}")
        save_checkpoint()
    if state["rounds"] < config.dagger_rounds:
        rounds = [Trajectories.load(out / f"dagger-{i}.npz")
                  for i in range(1, state["rounds"] + 1)]
        goals = prompt_goals(model, text)
        starts = replace(config, near_share=1.0 - config.dagger_far_share,
                         far_share=config.dagger_far_share)
    while state["rounds"] < config.dagger_rounds:
        number = state["rounds"] + 1
        weights = export_weights(model, architecture, {})
        walked = run.cached(
            f"dagger-{number}", f"{key}-{number}-{weights.sha256[:16]}",
            lambda weights=weights, number=number: collect(
                starts, config.seed + 1000 * number, config.dagger_episodes, weights),
            Trajectories.load)
        reached = float(walked.episode_success().mean())
        where = ("near a target" if not config.dagger_far_share else
                 f"near a target or, {config.dagger_far_share:.0%} of them, out of view range")
        say(f"DAgger round {number}: the policy got its item in {reached:.0%} of "
            f"{len(walked.prompt)} episodes started {where}")
        rounds.append(walked)
        loss = _dagger_round(model, optimiser, data, rounds, goals, config, number, progress)
        state["rounds"] = number
        run.log(f"dagger-{number}", number, loss=loss, reached=reached)
        say(f"DAgger round {number}: loss {loss:.3f}")
        save_checkpoint()
    if config.validation_episodes and (state.get("validation_settings")
                                       != config.validation_settings()):
        state["validation"] = validate(config, export_weights(model, architecture, {}), say)
        state["validation_settings"] = config.validation_settings()
        state["history"] = [row for row in run.history if row["stage"] != "validation"]
        run.log("validation", 0, reached=max(state["validation"].values()))
        save_checkpoint()
    validation = state.get("validation", {}) if config.validation_episodes else {}
    guidance, camera_guidance = best_setup(config, validation)
    info = {"training": config.recipe(), "seconds": round(run.seconds, 1),
            "guidance": float(guidance), "camera_guidance": camera_guidance,
            "validation": validation,
            "foundation_sha256": foundation.sha256, "prior": state["prior"],
            "data": f"{config.episodes} scripted-skill episodes in "
                    f"{', '.join(INSTRUCTION_WORLDS)}, seed {config.seed}"
                    + (f", {config.dagger_rounds} DAgger rounds of {config.dagger_episodes}"
                       if config.dagger_rounds else ""),
            "history": run.history[-1]}
    weights = export_weights(model, architecture, info)
    run.finish(weights, "instruction.npz",
               lambda history, path: plot_curve(history, path,
                                                "episodes the policy got its item in (%)"))
    return InstructionTrainingResult(weights, run.history, run.seconds)


def validation_setups(config: InstructionTrainingConfig
                      ) -> list[tuple[str, float, float | None]]:
    """``(name, guidance, camera guidance)`` of every set-up :func:`validate` runs: each scale
    of ``validation_guidance`` with each camera scale of ``validation_camera_guidance`` (a
    camera scale equal to the keys' is the set-up with every head alike, run once)."""
    setups = dict.fromkeys((scale, None if camera == scale else camera)
                           for scale in config.validation_guidance
                           for camera in config.validation_camera_guidance)
    return [(str(scale) if camera is None else f"{scale}, camera {camera}", scale, camera)
            for scale, camera in setups]


def best_setup(config: InstructionTrainingConfig, validation: dict[str, float]
               ) -> tuple[float, float | None]:
    """``(guidance, camera guidance)`` of the set-up with the highest validated success (ties:
    the lower scale, then the camera alike); ``config.guidance`` when nothing was validated."""
    setups = [setup for setup in validation_setups(config) if setup[0] in validation]
    if not setups:
        return config.guidance, None
    _, guidance, camera = max(setups, key=lambda setup: (validation[setup[0]], -setup[1],
                                                          setup[2] is None))
    return guidance, camera


def validate(config: InstructionTrainingConfig, weights: InstructionWeights,
             say: Callable[[str], None] = print) -> dict[str, float]:
    """``{set-up name: success}``: the share of ``config.validation_episodes`` episodes on
    fresh seeds of the training worlds, each started near a target and at most
    ``validation_steps`` long, in which the policy of ``weights`` got its item, for each of
    :func:`validation_setups` (the same episodes for each)."""
    near = replace(config, near_share=1.0, far_share=0.0, cut_tree_share=0.0,
                   episode_steps=config.validation_steps)  # whole trees: recipes compare
    captions = prompts()
    success = {}
    for name, scale, camera in validation_setups(config):
        walked = collect(near, config.seed + 99_999, config.validation_episodes, weights, scale,
                         camera)
        got = walked.episode_success()
        success[name] = float(got.mean())
        camera_text = "" if camera is None else f", camera {camera:g}"
        by_prompt = ", ".join(f"{captions[prompt]} {got[walked.prompt == prompt].mean():.0%}"
                              for prompt in np.unique(walked.prompt))
        say(f"validation, guidance {scale:g}{camera_text}: the policy got its item in "
            f"{success[name]:.0%} of {config.validation_episodes} episodes started near a "
            f"target on fresh seeds of the training worlds ({by_prompt})")
    return success


def prior_pairs(data: Trajectories) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The prior's examples: ``(caption index, clip embedding, episode)`` of every step whose
    action brought the episode's item (the 16 frames ending there)."""
    steps = np.flatnonzero(data.success)
    episodes = data.segment[steps]
    return data.prompt[episodes].astype(np.int64), data.embedding[steps], episodes


def caption_texts(text) -> np.ndarray:
    """``float32[len(prompts()), text_dim]``: the text embedding of each caption by the pixel
    encoder of weights ``text``."""
    from mrsteve.perception.pixels import PixelEncoder, placeholder_thresholds

    tower = PixelEncoder(text, thresholds=placeholder_thresholds())
    return np.stack([tower.embed_words(caption) for caption in prompts()])


def prompt_goals(model, text) -> np.ndarray:
    """``float32[len(prompts()), goal_dim]``: the prior's unit goal for each caption, the goal
    the policy acts with (:meth:`~mrsteve.control.instruction.LearnedSkills.goal`)."""
    import torch

    with torch.no_grad():
        goals = model.prior(torch.from_numpy(caption_texts(text)))
        return torch.nn.functional.normalize(goals, dim=-1).numpy()


def _train_prior(model, data: Trajectories, config: InstructionTrainingConfig, text,
                 say: Callable[[str], None]) -> dict:
    """Fit the prior on the success clips of most episodes (cosine loss); its held-out cosine
    to clips of the same prompt and to those of other prompts."""
    import torch

    captions = prompts()
    texts = torch.from_numpy(caption_texts(text))
    prompt, clip, episode = prior_pairs(data)
    rng = np.random.default_rng([config.seed, 7])
    held = rng.random(len(data.prompt)) < config.prior_holdout
    train = ~held[episode]
    if train.sum() == 0 or (~train).sum() == 0:
        raise ValueError("too few successful episodes to train and check the prior; render "
                         "more episodes")
    optimiser = torch.optim.Adam(model.prior.parameters(), lr=1e-3)
    x, y = texts[prompt[train]], torch.from_numpy(clip[train])
    for _ in range(config.prior_steps):
        index = torch.from_numpy(rng.integers(0, len(x), min(256, len(x))))
        loss = 1 - torch.nn.functional.cosine_similarity(model.prior(x[index]), y[index]).mean()
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
    with torch.no_grad():
        predicted = torch.nn.functional.normalize(model.prior(texts), dim=-1).numpy()
    cosines = clip[~train] @ predicted.T  # [held-out clips, captions]
    own = cosines[np.arange(len(cosines)), prompt[~train]]
    others = (cosines.sum(axis=1) - own) / max(len(captions) - 1, 1)
    top = (cosines.argmax(axis=1) == prompt[~train]).mean()
    report = {"held_out_clips": int((~train).sum()), "cosine_same_prompt": float(own.mean()),
              "cosine_other_prompts": float(others.mean()), "top1": float(top)}
    say(f"prior: held-out success clips {report['held_out_clips']}, cosine to its prompt's "
        f"goal {report['cosine_same_prompt']:.3f} vs other prompts' "
        f"{report['cosine_other_prompts']:.3f}, "
        f"nearest goal is its prompt's for {top:.0%}")
    return report


def _epoch(model, optimiser, data: Trajectories, config: InstructionTrainingConfig,
           state: dict, epochs: int, progress: bool) -> float:
    """One pass of cloning (as many sequences as the data has steps, the learning rate on a
    half cosine over ``epochs``) and the mean loss."""
    from tqdm import tqdm

    rng = np.random.default_rng([config.seed, state["rounds"], state["epoch"]])
    goal_step = relabel(data, rng, config.goal_offsets, config.success_goals)
    steps = max(1, len(data.rgb) // (config.sequence * config.batch))
    model.train()
    losses = []
    bar = tqdm(range(steps), disable=not progress, unit="step", leave=False,
               desc=f"cloning epoch {state['epoch'] + 1}")
    for step in bar:
        done = (state["epoch"] * steps + step) / (epochs * steps)
        for group in optimiser.param_groups:
            group["lr"] = config.learning_rate * 0.5 * (1.0 + np.cos(np.pi * done))
        index = windows(data, rng, config.batch, config.sequence)
        goals = data.embedding[goal_step[index]]
        goals[rng.random(config.batch) < config.goal_dropout] = 0.0
        loss = _batch_loss(model, goals, *(getattr(data, name)[index] for name in BATCH_FIELDS),
                           rng=rng, colour_jitter=config.colour_jitter)
        optimise(optimiser, loss, losses, bar)
    state["epoch"] += 1
    return float(np.mean(losses))


def _dagger_round(model, optimiser, cloned: Trajectories, rounds: list[Trajectories],
                  goals: np.ndarray, config: InstructionTrainingConfig, number: int,
                  progress: bool) -> float:
    """``config.dagger_steps`` steps after DAgger round ``number`` and their mean loss:
    ``config.dagger_share`` of each batch's sequences from the ``rounds``' steps under the goal
    their policy was given (``goals``, one per caption), the rest cloned steps under their
    relabelled goals; the learning rate on a half cosine from ``config.dagger_learning_rate``."""
    from tqdm import tqdm

    rng = np.random.default_rng([config.seed, number, config.epochs])
    walked = Trajectories.concatenate(rounds)
    goal_step = relabel(cloned, rng, config.goal_offsets, config.success_goals)
    given = goals[walked.prompt[walked.segment]]
    own = min(config.batch, max(1, round(config.batch * config.dagger_share)))
    model.train()
    losses = []
    bar = tqdm(range(config.dagger_steps), disable=not progress, unit="step", leave=False,
               desc=f"DAgger round {number}")
    for step in bar:
        for group in optimiser.param_groups:
            group["lr"] = config.dagger_learning_rate * 0.5 * (
                1.0 + np.cos(np.pi * step / config.dagger_steps))
        copied = windows(cloned, rng, config.batch - own, config.sequence)
        index = windows(walked, rng, own, config.sequence)
        goal = np.concatenate([cloned.embedding[goal_step[copied]], given[index]])
        goal[rng.random(config.batch) < config.goal_dropout] = 0.0
        loss = _batch_loss(model, goal, *(np.concatenate([getattr(cloned, name)[copied],
                                                          getattr(walked, name)[index]])
                                          for name in BATCH_FIELDS),
                           rng=rng, colour_jitter=config.colour_jitter)
        optimise(optimiser, loss, losses, bar)
    return float(np.mean(losses))


BATCH_FIELDS = ("rgb", "segment", "buttons", "camera")
"""The fields of :class:`Trajectories` a batch takes at its step indices (after the goals)."""


def _batch_loss(model, goals: np.ndarray, rgb: np.ndarray, segment: np.ndarray,
                buttons: np.ndarray, camera: np.ndarray, *, rng: np.random.Generator,
                colour_jitter: float = 0.0):
    """The cloning loss (:func:`~mrsteve.train.navigator.action_loss`) of a batch of
    sequences ``[B, L]`` under ``goals [B, L, goal_dim]``, its frames jittered
    (:func:`~mrsteve.train.layers.jitter_colours`) with strength ``colour_jitter``."""
    import torch

    rgb = jitter_colours(rgb, rng, colour_jitter)
    predicted = model(torch.from_numpy(rgb), torch.from_numpy(goals), torch.from_numpy(segment))
    return action_loss(*predicted, torch.from_numpy(buttons), torch.from_numpy(camera))


__all__ = [
    "INSTRUCTION_WORLDS",
    "InstructionTrainingConfig",
    "InstructionTrainingResult",
    "Trajectories",
    "build_instruction_policy",
    "collect",
    "relabel",
    "train_instruction_policy",
    "validate",
]
