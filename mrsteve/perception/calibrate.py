"""Calibrating the semantic encoder's thresholds, as the authors ship MineCLIP's.

Two routes to an :class:`~mrsteve.perception.thresholds.EncoderThresholds`:

* :func:`estimate_thresholds` needs no world. It scores *reference views*: sky above the horizon,
  plain stone below (salience 1, like most of a real view), and the things a prompt names filling
  one compact patch. A prompt's task threshold is the score of the view where its classes fill
  exactly the lexicon's ``visible_fraction``. The event fold threshold is the similarity of a view
  with and without a mob filling ``event_fraction`` = 1.5 % of it: between a cow wandering into
  view 6 blocks away (about 1 %, the same event) and the burning zombies of Zombies' Death Spot
  (about 2 %, a new event), so the smaller change stays one event and the larger starts a new one.
* :func:`calibrate` measures them on labelled clips of the world: for each prompt the cut that best
  separates clips where it is true from the others (balanced accuracy), and for events the cut
  between clip pairs of the same scene and pairs of different scenes at the same place.

The shipped ``data/thresholds.toml`` is ``python -m mrsteve.perception.calibrate`` (the estimate);
run :func:`calibrate` on clips of the embedded world and save with
:func:`~mrsteve.perception.thresholds.format_thresholds` to replace it.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Hashable, Mapping, Sequence
from dataclasses import dataclass
from types import MappingProxyType

import numpy as np

from mrsteve.perception.encoder import Encoder, Observation
from mrsteve.perception.lexicon import Lexicon, load_lexicon
from mrsteve.perception.semantic import SemanticEncoder, SemanticEncoderConfig
from mrsteve.perception.thresholds import EncoderThresholds, format_thresholds
from mrsteve.world.content import load_content

MERGE_MARGIN = 0.005
"""``event_merge - event_fold``: the paper's thr2 = 74.0 vs c = 73.5, in cosine."""

REFERENCE_SHAPE = (80, 128)
"""Height and width of reference views: fine enough for 1 % of the view to be a patch of pixels."""


@dataclass(frozen=True)
class LabelledClip:
    """A clip of observations from the world with what is true in it."""

    frames: Sequence[Observation]
    """The observations (the encoder embeds the last ``window``)."""
    prompts: frozenset[str] = frozenset()
    """Prompts true in the clip (e.g. water within reach and in view -> ``"near water"``)."""
    place: Hashable = None
    """Where the clip was taken (e.g. a place-cluster key); pairs of one place calibrate events."""
    scene: Hashable = None
    """What was happening there (e.g. ``"burning zombies"``); same place and scene: same event."""


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
    """Thresholds of a semantic encoder from reference views (see the module docstring)."""
    lexicon = lexicon or load_lexicon()
    encoder = SemanticEncoder(config, _placeholder_thresholds(lexicon), lexicon)
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


def threshold_between(positives: Sequence[float], negatives: Sequence[float]) -> float:
    """The cut ``h`` (positive when ``score >= h``) with the best balanced accuracy.

    Candidate cuts lie midway between consecutive distinct scores (and beyond both ends); of the
    equally good cuts the middle one is returned, so separable scores give the middle of the gap.
    """
    pos = np.asarray(positives, dtype=np.float64)
    neg = np.asarray(negatives, dtype=np.float64)
    if pos.size == 0 or neg.size == 0:
        raise ValueError(f"need positive and negative scores, got {pos.size} and {neg.size}")
    values = np.unique(np.concatenate([pos, neg]))
    cuts = np.concatenate([[values[0] - 1e-3], (values[:-1] + values[1:]) / 2, [values[-1] + 1e-3]])
    true_positive = (pos[None, :] >= cuts[:, None]).mean(axis=1)
    true_negative = (neg[None, :] < cuts[:, None]).mean(axis=1)
    balanced = true_positive + true_negative
    best = np.flatnonzero(balanced >= balanced.max() - 1e-12)
    return float(cuts[best[len(best) // 2]])


@dataclass(frozen=True)
class Calibration:
    """Thresholds measured by :func:`calibrate` and what they rest on."""

    thresholds: EncoderThresholds
    calibrated_prompts: tuple[str, ...]
    """Prompts with positive and negative clips; the others kept the encoder's threshold."""
    event_pairs: tuple[int, int]
    """Numbers of same-scene and different-scene clip pairs the event thresholds rest on."""


def calibrate(encoder: Encoder, clips: Sequence[LabelledClip], prompts: Sequence[str]) -> Calibration:
    """Thresholds of ``encoder`` measured on labelled clips (see the module docstring).

    Each of ``prompts`` with both positive and negative clips gets the best separating cut; the
    event thresholds come from clip pairs at one place (same scene vs different scenes) and keep
    the encoder's values when there are no such pairs. The image-goal threshold is the event fold
    threshold: a goal image matches frames of its own scene and event.
    """
    if not clips:
        raise ValueError("calibrate needs labelled clips")
    embeddings = np.stack([encoder.encode_frames(clip.frames) for clip in clips])
    old = encoder.thresholds
    task = dict(old.task)
    calibrated = []
    for prompt in prompts:
        scores = embeddings @ encoder.encode_text(prompt)
        truth = np.array([prompt in clip.prompts for clip in clips])
        if truth.any() and not truth.all():
            task[prompt] = threshold_between(scores[truth], scores[~truth])
            calibrated.append(prompt)

    same, different = [], []
    for i, j in itertools.combinations(range(len(clips)), 2):
        a, b = clips[i], clips[j]
        if a.place is None or a.place != b.place or a.scene is None or b.scene is None:
            continue
        (same if a.scene == b.scene else different).append(float(embeddings[i] @ embeddings[j]))
    if same and different:
        fold = threshold_between(same, different)
        merge, image_goal = min(1.0, fold + MERGE_MARGIN), fold
    else:
        fold, merge, image_goal = old.event_fold, old.event_merge, old.image_goal
    thresholds = EncoderThresholds(MappingProxyType(task), image_goal, merge, fold, "calibrated")
    return Calibration(thresholds, tuple(calibrated), (len(same), len(different)))


def _placeholder_thresholds(lexicon: Lexicon) -> EncoderThresholds:
    """Zero thresholds for an encoder that is only used to measure scores."""
    return EncoderThresholds(MappingProxyType({p: 0.0 for p in lexicon.texts}), 0.0, 0.0, 0.0)


SHIPPED_HEADER = """\
Thresholds of the semantic encoder (mrsteve.perception.SemanticEncoder, default configuration).
Cosines in [-1, 1]; each encoder carries its own (MineCLIP's: task 0.2274, thr2 0.74, c 0.735).

status "estimate": derived without the world by mrsteve.perception.calibrate.estimate_thresholds
(regenerate: python -m mrsteve.perception.calibrate > mrsteve/perception/data/thresholds.toml):
  task.<prompt>: score of a reference view (sky, stone ground) where the prompt's classes fill the
    lexicon's visible_fraction of the view;
  event_fold: similarity of a reference view with and without a mob filling 1.5 % of it (between a
    cow wandering into view, the same event, and burning zombies appearing, a new one);
    event_merge = event_fold + 0.005 (thr2 - c); image_goal = event_fold.
TO BE RECALIBRATED on the embedded world with mrsteve.perception.calibrate.calibrate (status
"calibrated"); pending."""


if __name__ == "__main__":
    print(format_thresholds(estimate_thresholds(), SHIPPED_HEADER), end="")
