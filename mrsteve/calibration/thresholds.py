"""Calibrating an encoder's thresholds on the embedded world, as the authors ship MineCLIP's.

:func:`calibrate_on_world` is what the shipped ``mrsteve/perception/data/thresholds.toml``
comes from (``mrsteve calibrate --write`` reruns it). It takes labelled clips of the world
(:mod:`mrsteve.calibration.clips`: poses in the worlds, labels from the renderer's ground truth),
fits the thresholds with :func:`calibrate` on clips of procedural calibration worlds (the maps'
blocks and mobs placed at random from the seed, never an evaluation map) and measures them with
:func:`measure` on held-out clips of the paper's evaluation maps:

* a prompt's task threshold is the cut with the best F1 between the clips where it is true and
  those where it is false (of equally good cuts, the middle one; separable scores get the middle of
  the gap). F1 rather than balanced accuracy: true clips are rare, as in an agent's memory, and a
  false match sends the agent walking to the wrong place;
* the event fold threshold (the paper's c) is the cut with the best balanced accuracy between
  pairs of clips at one place with the scene unchanged (one event) and with it changed (burning
  zombies gone, sugar cane blown up, mobs walked into view: a new event); the merge threshold
  (``thr2``) is ``MERGE_MARGIN`` above it and the image-goal threshold equals it.

:func:`estimate_thresholds` derives thresholds without the world from *reference views* (sky
above the horizon, stone below, a prompt's classes filling its visible fraction in one patch), for
encoder configurations nobody has calibrated yet.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import textwrap
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from types import MappingProxyType

import numpy as np

from mrsteve.calibration.clips import (
    ClipConfig,
    LabelledClip,
    collect_clips,
    collect_event_pairs,
)
from mrsteve.perception.encoder import Encoder
from mrsteve.perception.lexicon import Lexicon, load_lexicon
from mrsteve.perception.semantic import SemanticEncoder, SemanticEncoderConfig
from mrsteve.perception.thresholds import EncoderThresholds, format_thresholds
from mrsteve.world.content import load_content

__all__ = [
    "MERGE_MARGIN",
    "Calibration",
    "EventFit",
    "LabelledClip",
    "Measurement",
    "PromptFit",
    "WorldCalibration",
    "calibrate",
    "calibrate_on_world",
    "estimate_thresholds",
    "f1_threshold",
    "format_world_calibration",
    "measure",
    "reference_view",
    "threshold_between",
]

MERGE_MARGIN = 0.005
"""``event_merge - event_fold``: the paper's thr2 = 74.0 vs c = 73.5, in cosine."""

MIN_CLIPS = 5
"""A prompt is calibrated only with at least this many true and this many false clips."""

REFERENCE_SHAPE = (80, 128)
"""Height and width of reference views: fine enough for 1 % of the view to be a patch of pixels."""


# ------------------------------------------------------------------------------------- cuts


def _candidate_cuts(positives: np.ndarray, negatives: np.ndarray) -> np.ndarray:
    """Cuts midway between consecutive distinct scores, and beyond both ends."""
    if positives.size == 0 or negatives.size == 0:
        raise ValueError(f"need positive and negative scores, got {positives.size} and "
                         f"{negatives.size}")
    values = np.unique(np.concatenate([positives, negatives]))
    return np.concatenate([[values[0] - 1e-3], (values[:-1] + values[1:]) / 2,
                           [values[-1] + 1e-3]])


def _middle_best(cuts: np.ndarray, merit: np.ndarray) -> float:
    """The middle one of the cuts with the best ``merit``."""
    best = np.flatnonzero(merit >= merit.max() - 1e-12)
    return float(cuts[best[len(best) // 2]])


def threshold_between(positives: Sequence[float], negatives: Sequence[float]) -> float:
    """The cut ``h`` (positive when ``score >= h``) with the best balanced accuracy.

    Of equally good cuts the middle one is returned, so separable scores give the middle of the gap.
    """
    pos = np.asarray(positives, dtype=np.float64)
    neg = np.asarray(negatives, dtype=np.float64)
    cuts = _candidate_cuts(pos, neg)
    true_positive = (pos[None, :] >= cuts[:, None]).mean(axis=1)
    true_negative = (neg[None, :] < cuts[:, None]).mean(axis=1)
    return _middle_best(cuts, true_positive + true_negative)


def f1_threshold(positives: Sequence[float], negatives: Sequence[float]) -> float:
    """The cut ``h`` (positive when ``score >= h``) with the best F1 (middle of equally good ones)."""
    pos = np.asarray(positives, dtype=np.float64)
    neg = np.asarray(negatives, dtype=np.float64)
    cuts = _candidate_cuts(pos, neg)
    true_positive = (pos[None, :] >= cuts[:, None]).sum(axis=1)
    false_positive = (neg[None, :] >= cuts[:, None]).sum(axis=1)
    f1 = 2 * true_positive / (true_positive + false_positive + pos.size)
    return _middle_best(cuts, f1)


# ------------------------------------------------------------------------------------- fits


@dataclass(frozen=True)
class PromptFit:
    """How a task threshold sorts one prompt's clips."""

    threshold: float
    positives: int
    """Clips where the prompt is true."""
    negatives: int
    """Clips where it is false (ambiguous clips are left out)."""
    precision: float
    """Share of the clips scoring at least the threshold that are true (1 when none does)."""
    recall: float
    """Share of the true clips scoring at least the threshold."""
    average_precision: float = float("nan")
    """Average precision of ranking the true and false clips by score (threshold-free)."""


def average_precision(positives: np.ndarray, negatives: np.ndarray) -> float:
    """Average precision of ranking clips by score: the mean, over the true clips, of the
    precision among the clips scoring at least as high (ties count against)."""
    scores = np.concatenate([positives, negatives])
    truth = np.concatenate([np.ones(len(positives), bool), np.zeros(len(negatives), bool)])
    order = np.lexsort((truth, -scores))  # by score, high first; of equal scores, false first
    hits = truth[order]
    precision = np.cumsum(hits) / np.arange(1, hits.size + 1)
    return float(precision[hits].mean())


@dataclass(frozen=True)
class EventFit:
    """How an event threshold sorts pairs of clips at one place."""

    threshold: float
    same: tuple[float, ...]
    """Similarities of the pairs of one scene (one event: should be at least the threshold)."""
    changed: Mapping[str, tuple[float, ...]]
    """Similarities of the pairs whose scene changed, per change (``"scene a / scene b"``, in clip
    order; new events: should be below the threshold)."""

    @property
    def kept(self) -> float:
        """Share of same-scene pairs kept in one event."""
        return float(np.mean(np.asarray(self.same) >= self.threshold))

    def separated(self, change: str) -> float:
        """Share of the pairs of ``change`` split into two events."""
        return float(np.mean(np.asarray(self.changed[change]) < self.threshold))


@dataclass(frozen=True)
class Measurement:
    """How thresholds sort a set of labelled clips."""

    prompts: Mapping[str, PromptFit]
    """Per prompt with enough true and false clips (:data:`MIN_CLIPS`)."""
    events: EventFit | None
    """``None`` without clips of one place with the scene unchanged and changed."""
    worlds: tuple[str, ...] = ()
    """The world recipes the clips were taken in, in order of first appearance."""

    @property
    def mean_average_precision(self) -> float:
        """Mean over the measured prompts of their average precision (NaN without any)."""
        if not self.prompts:
            return float("nan")
        return float(np.mean([fit.average_precision for fit in self.prompts.values()]))

    def summary(self) -> dict:
        """As plain data (for JSON)."""
        events = None
        if self.events is not None:
            e = self.events
            events = {"threshold": e.threshold, "kept": e.kept, "same": list(e.same),
                      "changed": {change: {"separated": e.separated(change), "similarities":
                                           list(values)} for change, values in e.changed.items()}}
        return {"worlds": list(self.worlds), "mean_average_precision": self.mean_average_precision,
                "prompts": {p: asdict(fit) for p, fit in self.prompts.items()}, "events": events}


@dataclass(frozen=True)
class Calibration:
    """Thresholds fitted by :func:`calibrate`, and how they sort the clips they were fitted on."""

    thresholds: EncoderThresholds
    fit: Measurement
    """Prompts missing here kept the encoder's thresholds, and so did the event thresholds when
    ``fit.events`` is ``None``."""


def _embed(encoder: Encoder, clips: Sequence[LabelledClip]) -> np.ndarray:
    if not clips:
        raise ValueError("calibrating needs labelled clips")
    return np.stack([encoder.encode_frames(clip.frames) for clip in clips])


def _prompt_scores(encoder: Encoder, clips: Sequence[LabelledClip], embeddings: np.ndarray,
                   prompt: str) -> tuple[np.ndarray, np.ndarray] | None:
    """Scores of the clips where ``prompt`` is true and false, or ``None`` with too few of either."""
    scores = embeddings @ encoder.encode_text(prompt)
    true = np.array([prompt in clip.prompts for clip in clips])
    known = np.array([prompt not in clip.ambiguous for clip in clips])
    positives, negatives = scores[true], scores[known & ~true]
    if min(positives.size, negatives.size) < MIN_CLIPS:
        return None
    return positives, negatives


def _pair_similarities(clips: Sequence[LabelledClip], embeddings: np.ndarray
                       ) -> tuple[list[float], dict[str, list[float]]]:
    """Similarities of every two clips of one place: same scene, and changed scene by change."""
    by_place: dict = {}
    for index, clip in enumerate(clips):
        if clip.place is not None and clip.scene is not None:
            by_place.setdefault(clip.place, []).append(index)
    same: list[float] = []
    changed: dict[str, list[float]] = {}
    for indices in by_place.values():
        for i, j in itertools.combinations(indices, 2):
            similarity = float(embeddings[i] @ embeddings[j])
            a, b = clips[i].scene, clips[j].scene
            if a == b:
                same.append(similarity)
            else:
                changed.setdefault(f"{a} / {b}", []).append(similarity)
    return same, changed


def _measure(encoder: Encoder, thresholds: EncoderThresholds, clips: Sequence[LabelledClip],
             embeddings: np.ndarray, prompts: Sequence[str]) -> Measurement:
    fits = {}
    for prompt in prompts:
        scores = _prompt_scores(encoder, clips, embeddings, prompt)
        if scores is None:
            continue
        positives, negatives = scores
        threshold = thresholds.task[prompt]
        hits, false_hits = int((positives >= threshold).sum()), int((negatives >= threshold).sum())
        fits[prompt] = PromptFit(threshold, positives.size, negatives.size,
                                 hits / (hits + false_hits) if hits + false_hits else 1.0,
                                 hits / positives.size, average_precision(positives, negatives))
    same, changed = _pair_similarities(clips, embeddings)
    events = None
    if same and changed:
        events = EventFit(thresholds.event_fold, tuple(same),
                          MappingProxyType({k: tuple(v) for k, v in sorted(changed.items())}))
    worlds = tuple(dict.fromkeys(clip.world for clip in clips if clip.world is not None))
    return Measurement(MappingProxyType(fits), events, worlds)


def measure(encoder: Encoder, clips: Sequence[LabelledClip], prompts: Sequence[str],
            thresholds: EncoderThresholds | None = None) -> Measurement:
    """How ``thresholds`` (default: the encoder's) sort ``clips`` for ``prompts`` and events."""
    return _measure(encoder, thresholds or encoder.thresholds, clips, _embed(encoder, clips),
                    prompts)


def calibrate(encoder: Encoder, clips: Sequence[LabelledClip], prompts: Sequence[str]
              ) -> Calibration:
    """Thresholds of ``encoder`` fitted on labelled clips (the rules of the module docstring).

    Each of ``prompts`` with at least :data:`MIN_CLIPS` true and false clips gets its F1 cut; the
    event thresholds come from clips of one place (same scene vs changed scene) and stay the
    encoder's without such pairs. Every other threshold stays the encoder's.
    """
    embeddings = _embed(encoder, clips)
    old = encoder.thresholds
    task = dict(old.task)
    for prompt in prompts:
        scores = _prompt_scores(encoder, clips, embeddings, prompt)
        if scores is not None:
            task[prompt] = f1_threshold(*scores)
    same, changed = _pair_similarities(clips, embeddings)
    if same and changed:
        fold = threshold_between(same, [s for values in changed.values() for s in values])
        merge, image_goal = min(1.0, fold + MERGE_MARGIN), fold
    else:
        fold, merge, image_goal = old.event_fold, old.event_merge, old.image_goal
    thresholds = EncoderThresholds(MappingProxyType(task), image_goal, merge, fold, "calibrated")
    return Calibration(thresholds, _measure(encoder, thresholds, clips, embeddings, prompts))


# ------------------------------------------------------------------------------------- the world


@dataclass(frozen=True)
class WorldCalibration:
    """The outcome of :func:`calibrate_on_world`: thresholds and how they did on held-out clips."""

    calibration: Calibration
    held_out: Measurement
    """The thresholds on clips and pairs taken in the held-out worlds (the evaluation maps)."""
    seed: int
    clips: int
    """Clips per set (calibration and held-out)."""
    event_pairs: int
    """Event pairs per set."""
    config: ClipConfig
    """How the clips were taken and labelled; ``config.worlds`` fitted, ``config.held_out_worlds``
    measured."""

    @property
    def thresholds(self) -> EncoderThresholds:
        return self.calibration.thresholds

    def summary(self, command: str) -> dict:
        """Everything as plain data (for JSON): thresholds, how the clips were taken, and the
        fit on the calibration and held-out clips; ``command`` is the command line that ran it."""
        t = self.thresholds
        return {
            "command": command,
            "seed": self.seed,
            "clips": self.clips,
            "event_pairs": self.event_pairs,
            "config": asdict(self.config),
            "thresholds": {"task": dict(t.task), "image_goal": t.image_goal,
                           "event_merge": t.event_merge, "event_fold": t.event_fold},
            "fitted": self.calibration.fit.summary(),
            "held_out": self.held_out.summary(),
        }


def calibrate_on_world(
    clips: int = 2000,
    seed: int = 0,
    *,
    event_pairs: int | None = None,
    encoder: Encoder | None = None,
    config: ClipConfig | None = None,
    progress: Callable[[str], None] | None = None,
) -> WorldCalibration:
    """Fit an encoder's thresholds on ``clips`` clips and ``event_pairs`` pairs (default
    ``clips // 8``) taken in ``config.worlds`` (the procedural calibration worlds) and measure them
    on as many more taken in ``config.held_out_worlds`` (the evaluation maps); the two must not
    share a world.

    ``seed`` seeds everything (the two sets draw from two streams of it): same seed, same result.
    ``progress`` receives a line before each stage.
    """
    if clips < 2 * MIN_CLIPS:
        raise ValueError(f"clips must be at least {2 * MIN_CLIPS}, got {clips}")
    event_pairs = clips // 8 if event_pairs is None else event_pairs
    if event_pairs < 1:
        raise ValueError(f"event_pairs must be at least 1, got {event_pairs}")
    encoder = encoder or SemanticEncoder()
    config = config or ClipConfig(window=encoder.window, frame_keys=encoder.reads)
    shared = sorted(set(config.worlds) & set(config.held_out_worlds))
    if shared:
        raise ValueError(f"calibration and held-out worlds must differ; both name {shared}")
    lexicon = encoder.lexicon
    say = progress or (lambda line: None)
    sets = []
    for name, worlds, stream in zip(("calibration", "held-out"),
                                    (config.worlds, config.held_out_worlds),
                                    np.random.SeedSequence(seed).spawn(2), strict=True):
        rng = np.random.default_rng(stream)
        taken = dataclasses.replace(config, worlds=worlds)
        say(f"taking {clips} {name} clips and {event_pairs} event pairs in {', '.join(worlds)}")
        sets.append(collect_clips(clips, rng, taken, lexicon)
                    + collect_event_pairs(event_pairs, rng, taken, lexicon))
    say("fitting thresholds")
    calibration = calibrate(encoder, sets[0], lexicon.texts)
    held_out = measure(encoder, sets[1], lexicon.texts, calibration.thresholds)
    return WorldCalibration(calibration, held_out, seed, clips, event_pairs, config)


def format_world_calibration(result: WorldCalibration, command: str,
                             encoder: str | None = None,
                             weights_sha256: str | None = None) -> str:
    """The thresholds file (``data/thresholds.toml``) of ``result``, with how it was made and how
    well it does in its header; ``command`` is the command line that reproduces it, ``encoder``
    names the encoder (default: the semantic encoder), ``weights_sha256`` its weights (recorded in
    the file)."""
    encoder = encoder or ("the semantic encoder (mrsteve.perception.SemanticEncoder, default "
                          "configuration)")
    config = result.config
    fit, held = result.calibration.fit, result.held_out
    (low, high), (pitch_low, pitch_high) = config.target_distance, config.pitch
    any_pitch = f" ({config.any_pitch:.0%} of them -90 to 90)" if config.any_pitch else ""
    text = f"""
Thresholds of {encoder}.
Cosines in [-1, 1]; each encoder carries its own (MineCLIP's: task 0.2274, thr2 0.74, c 0.735).

status "calibrated": calibrated on procedural calibration worlds, held out on the evaluation maps,
by mrsteve.calibration.calibrate_on_world.

Reproduce: {command}

Calibration worlds (fitted on; procedural, the maps' blocks and mobs placed at random from the
seed): {", ".join(config.worlds)}.

Held-out worlds (measured on; the evaluation maps): {", ".join(config.held_out_worlds)}.

Seed {result.seed}: {result.clips} clips and {result.event_pairs} event pairs to fit on, as many
held out; {config.window} frames of {config.obs_size[0]} x {config.obs_size[1]} pixels each, from
poses {low:g} to {high:g} blocks from things, pitch {pitch_low:g} to {pitch_high:g} degrees{
any_pitch}, walking, turning or pausing.

Labels (ground truth: class and depth of every pixel): a prompt is true when its classes fill at
least its visible fraction (lexicon.toml) of the view within {config.near_distance:g} blocks in the
last frame and half the frames, false when within {config.far_distance:g} blocks they fill less
than {config.false_fraction:g} of it in every frame, else left out.

task.<prompt>: the cut with the best F1 on the clips fitted on (with fewer than {MIN_CLIPS} true
or false clips there, "too few clips", the encoder's threshold stays). event_fold: the cut with the best
balanced accuracy between pairs of clips at one place (within {config.place_offset:g} blocks and
{config.place_turn:g} degrees) with the scene unchanged and changed; event_merge = event_fold +
{MERGE_MARGIN:g} (thr2 - c); image_goal = event_fold. AP: average precision of ranking the clips by
score (threshold-free); mean AP over the prompts, fitted {fit.mean_average_precision:.3f}, held
out {held.mean_average_precision:.3f}."""
    paragraphs = [" ".join(paragraph.split()) for paragraph in text.strip().split("\n\n")]

    def wrap(paragraph: str) -> list[str]:  # the command's options (--any-pitch) stay whole
        command_line = paragraph.startswith("Reproduce:")
        return textwrap.wrap(paragraph, 96, break_on_hyphens=not command_line)

    lines = [line for paragraph in paragraphs for line in (*wrap(paragraph), "")]
    lines.append("prompt                threshold  fitted: true/false  prec. recall     AP   "
                 "held out: true/false  prec. recall     AP")
    for prompt, threshold in result.thresholds.task.items():
        lines.append(f"{prompt:<20s}  {threshold:9.4f}  {_fit_columns(fit.prompts.get(prompt), 18)}"
                     f"  {_fit_columns(held.prompts.get(prompt), 20)}")
    if fit.events is not None:
        lines += ["", "Event pairs: how many: cosine of the two clips (10th, 50th, 90th percentile)",
                  "-> share on the right side of event_fold; fitted | held out:"]
        lines += _event_lines(fit.events, held.events)
    return format_thresholds(result.thresholds, "\n".join(lines), weights_sha256)


def _fit_columns(fit: PromptFit | None, width: int) -> str:
    if fit is None:
        return f"{'too few clips':>{width + 22}s}"
    counts = f"{fit.positives}/{fit.negatives}"
    return (f"{counts:>{width}s}  {fit.precision:.3f}  {fit.recall:.3f}  "
            f"{fit.average_precision:.3f}")


def _event_lines(fit: EventFit, held: EventFit | None) -> list[str]:
    def summary(values: Sequence[float], share: float) -> str:
        q = np.percentile(values, [10, 50, 90])
        return f"{len(values):4d}: {q[0]:.3f} {q[1]:.3f} {q[2]:.3f} -> {share:.3f}"

    rows = [("same scene (one event)", fit.same, fit.kept,
             (held.same, held.kept) if held else None)]
    for change, values in fit.changed.items():
        other = held.changed.get(change) if held else None
        rows.append((f"{change} (new)", values, fit.separated(change),
                     (other, held.separated(change)) if other else None))
    width = max(len(row[0]) for row in rows)
    return [f"  {name:<{width}s} {summary(values, share)} | "
            f"{summary(*other) if other else 'no pairs'}" for name, values, share, other in rows]


# ------------------------------------------------------------------------------------- estimate


def reference_view(targets: Mapping[str, float], shape: tuple[int, int] = REFERENCE_SHAPE
                   ) -> dict[str, np.ndarray]:
    """A synthetic observation: sky above the horizon, stone below, and ``targets``.

    ``targets`` maps semantic classes to shares of the view; they fill one compact patch at the
    bottom centre of the view (where near things are), side by side.
    """
    height, width = shape
    content = load_content()
    stone = content.semantic_id("stone")
    semantic = np.full(shape, stone, dtype=np.uint8)
    semantic[: height // 2] = content.semantic_id("sky")
    pixels = [(content.semantic_id(name), round(share * height * width))
              for name, share in targets.items()]
    total = sum(n for _, n in pixels)
    if total > height * width:
        raise ValueError(f"targets fill more than the view: {dict(targets)}")
    rows = min(height, max(1, math.ceil(math.sqrt(total))))
    cols = math.ceil(total / rows)
    patch = np.full(rows * cols, stone, dtype=np.uint8)
    patch[:total] = np.repeat([cls for cls, _ in pixels], [n for _, n in pixels])
    left = (width - cols) // 2
    semantic[height - rows:, left:left + cols] = patch.reshape(cols, rows).T
    return {"semantic": semantic}


def estimate_thresholds(
    config: SemanticEncoderConfig | None = None,
    lexicon: Lexicon | None = None,
    event_fraction: float = 0.015,
) -> EncoderThresholds:
    """Thresholds of a semantic encoder from reference views, without the world.

    A prompt's task threshold is the score of the view where its classes fill exactly the
    lexicon's ``visible_fraction``. The event fold threshold is the similarity of a view with and
    without a mob filling ``event_fraction`` = 1.5 % of it (between a cow wandering into view 6
    blocks away and the burning zombies of Zombies' Death Spot, about 2 %).
    """
    lexicon = lexicon or load_lexicon()
    placeholder = EncoderThresholds(MappingProxyType({p: 0.0 for p in lexicon.texts}), 0.0, 0.0,
                                    0.0)
    encoder = SemanticEncoder(config, placeholder, lexicon)
    task = {}
    for meaning in lexicon.prompts:
        weight_sum = sum(meaning.classes.values())
        shares = {c: meaning.visible_fraction * w / weight_sum for c, w in meaning.classes.items()}
        view = encoder.encode_frames([reference_view(shares)])
        task[meaning.text] = float(view @ encoder.encode_text(meaning.text))
    salience = encoder.config.salience
    mob = max(load_content().mobs, key=lambda m: salience[m.name]).name
    base = encoder.encode_frames([reference_view({})])
    with_mob = encoder.encode_frames([reference_view({mob: event_fraction})])
    event_fold = float(base @ with_mob)
    return EncoderThresholds(
        task=MappingProxyType(task),
        image_goal=event_fold,
        event_merge=min(1.0, event_fold + MERGE_MARGIN),
        event_fold=event_fold,
        status="estimate",
    )
