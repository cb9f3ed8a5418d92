"""Threshold calibration: the cut rules, calibration on labelled clips, the shipped file."""

from __future__ import annotations

import dataclasses
import re
import tomllib

import numpy as np
import pytest
from synthetic_scenes import BURNING, DESERT, FOREST, PASTURE, PLAIN, POND, clip

from mrsteve.calibration.clips import CALIBRATION_WORLDS, HELD_OUT_WORLDS
from mrsteve.calibration.thresholds import (
    MERGE_MARGIN,
    MIN_CLIPS,
    LabelledClip,
    calibrate,
    estimate_thresholds,
    f1_threshold,
    measure,
    reference_view,
    threshold_between,
)
from mrsteve.perception import SemanticEncoder, load_lexicon
from mrsteve.perception._data import data_path
from mrsteve.perception.semantic import SHIPPED_THRESHOLDS, load_shipped_thresholds
from mrsteve.world.content import load_content


def test_threshold_between_separable_scores_is_the_middle_of_the_gap():
    assert threshold_between([0.5, 0.6, 0.9], [0.1, 0.3]) == pytest.approx(0.4)
    assert f1_threshold([0.5, 0.6, 0.9], [0.1, 0.3]) == pytest.approx(0.4)


def test_threshold_between_overlapping_scores_maximises_balanced_accuracy():
    assert threshold_between([0.2, 0.6, 0.7, 0.8], [0.1, 0.3, 0.4, 0.75]) == pytest.approx(0.5)
    for rule in (threshold_between, f1_threshold):
        with pytest.raises(ValueError, match="positive and negative"):
            rule([], [0.1])


def test_f1_keeps_precision_where_true_clips_are_rare():
    """With few true clips, balanced accuracy buys one more true clip with many false ones; F1
    (the task-threshold rule) does not."""
    positives = [0.3, 0.7, 0.8]
    negatives = [0.1] * 20 + [0.4, 0.5, 0.55, 0.6]
    assert threshold_between(positives, negatives) == pytest.approx(0.2)
    assert f1_threshold(positives, negatives) == pytest.approx(0.65)


def test_reference_view_fills_the_requested_shares():
    view = reference_view({"water": 0.03, "cow": 0.01})
    semantic = view["semantic"]
    content = load_content()
    for name, share in (("water", 0.03), ("cow", 0.01)):
        assert (semantic == content.semantic_id(name)).mean() == pytest.approx(share, abs=1e-3)
    assert (semantic == content.semantic_id("sky")).mean() == pytest.approx(0.5)
    with pytest.raises(ValueError, match="more than the view"):
        reference_view({"water": 0.7, "sand": 0.5})


def test_the_shipped_thresholds_are_calibrated_on_the_world_and_say_how():
    shipped = load_shipped_thresholds()
    assert shipped.status == "calibrated"
    assert set(shipped.task) == set(load_lexicon().texts)
    assert shipped.event_merge == pytest.approx(shipped.event_fold + MERGE_MARGIN, abs=1e-4)
    assert shipped.image_goal == shipped.event_fold
    text = data_path(SHIPPED_THRESHOLDS).read_text("utf-8")
    assert "# Reproduce: mrsteve calibrate --clips" in text
    # fitted on the procedural calibration worlds only, held out on the evaluation maps
    header = " ".join(line[2:] for line in text.splitlines() if line.startswith("# "))
    fitted = re.search(r"Calibration worlds \(fitted on;[^)]*\): ([\w, ]+)\.", header)
    held = re.search(r"Held-out worlds \(measured on; the evaluation maps\): ([\w, ]+)\.", header)
    assert fitted and held, header[:600]
    assert fitted.group(1).split(", ") == list(CALIBRATION_WORLDS)
    assert held.group(1).split(", ") == list(HELD_OUT_WORLDS)
    table = [line.split() for line in text.splitlines() if line.startswith("# near ")]
    rows = {" ".join(row[1:3]): row for row in table}
    for prompt in ("near water", "near cow", "near sheep", "near tree"):
        precision, recall = map(float, rows[prompt][-2:])  # held out
        assert precision >= 0.9 and recall >= 0.9, rows[prompt]
        assert float(rows[prompt][3]) == pytest.approx(shipped.task[prompt], abs=1e-4)
    assert tomllib.loads(text)["status"] == "calibrated"


def test_the_estimate_gives_every_prompt_a_threshold_for_other_configurations():
    estimate = estimate_thresholds()
    assert estimate.status == "estimate"
    assert set(estimate.task) == set(load_lexicon().texts)
    assert estimate.event_merge == pytest.approx(estimate.event_fold + MERGE_MARGIN)


SCENES = (
    (POND, {"near water"}, "pond", "pond"),
    (PLAIN, set(), "pond", "plain"),
    (FOREST, {"near tree"}, "forest", "forest"),
    (PASTURE, {"near cow", "near pasture"}, "pasture", "pasture"),
    (DESERT, {"near desert"}, "desert", "desert"),
    (BURNING, {"near zombies"}, "spot", "burning"),
    (PLAIN, set(), "spot", "gone"),
)
YAWS = (-20.0, -10.0, 0.0, 10.0, 20.0)


def labelled_clips() -> list[LabelledClip]:
    rng = np.random.default_rng(0)
    clips = []
    for scene, prompts, place, name in SCENES:
        for yaw in YAWS:
            frames = clip(scene, 0, 0, yaw, rng, frames=8)
            clips.append(LabelledClip(frames, frozenset(prompts), frozenset(), place, name))
    return clips


def test_calibrate_separates_labelled_clips():
    encoder = SemanticEncoder()
    clips = labelled_clips()
    prompts = ("near water", "near tree", "near cow", "near zombies", "near house")
    result = calibrate(encoder, clips, prompts)
    thresholds = result.thresholds
    assert thresholds.status == "calibrated"
    assert tuple(result.fit.prompts) == prompts[:-1]  # no clip shows a house
    assert thresholds.task["near house"] == encoder.thresholds.task["near house"]
    embeddings = [encoder.encode_frames(c.frames) for c in clips]
    for prompt in prompts[:-1]:
        fit = result.fit.prompts[prompt]
        assert (fit.positives, fit.negatives) == (len(YAWS), len(clips) - len(YAWS))
        assert fit.precision == fit.recall == 1.0
        text = encoder.encode_text(prompt)
        for c, e in zip(clips, embeddings, strict=True):
            assert (e @ text >= thresholds.task[prompt]) == (prompt in c.prompts)
    events = result.fit.events
    assert len(events.same) == 7 * 10  # pairs of one scene at one place
    assert {k: len(v) for k, v in events.changed.items()} == {"pond / plain": 25,
                                                              "burning / gone": 25}
    assert events.kept == events.separated("burning / gone") == 1.0
    assert thresholds.event_merge == pytest.approx(thresholds.event_fold + MERGE_MARGIN)
    assert thresholds.image_goal == thresholds.event_fold


def test_ambiguous_clips_are_left_out():
    clips = labelled_clips()
    plain = [c for c in clips if c.scene == "plain"]
    # Call the plain clips ambiguous for "near water": they leave the prompt's negatives.
    relabelled = [LabelledClip(c.frames, c.prompts, frozenset({"near water"}), c.place, c.scene)
                  if c.scene == "plain" else c for c in clips]
    fit = calibrate(SemanticEncoder(), relabelled, ["near water"]).fit.prompts["near water"]
    assert fit.negatives == len(clips) - len(YAWS) - len(plain)


def test_measure_counts_hits_at_the_given_thresholds():
    encoder = SemanticEncoder()
    clips = labelled_clips()
    permissive = calibrate(encoder, clips, ["near tree"]).thresholds
    task = dict(permissive.task, **{"near tree": -1.0})
    fit = measure(encoder, clips, ["near tree"], dataclasses.replace(permissive, task=task))
    tree = fit.prompts["near tree"]
    assert tree.recall == 1.0
    assert tree.precision == pytest.approx(len(YAWS) / len(clips))


def test_prompts_with_too_few_clips_keep_their_threshold():
    encoder = SemanticEncoder()
    clips = labelled_clips()[: MIN_CLIPS - 1]  # pond clips only: all true, no false ones
    result = calibrate(encoder, clips, ["near water"])
    assert result.fit.prompts == {} and result.fit.events is None
    assert result.thresholds.task == encoder.thresholds.task


def test_calibrate_needs_clips():
    with pytest.raises(ValueError, match="labelled clips"):
        calibrate(SemanticEncoder(), [], ["near water"])
