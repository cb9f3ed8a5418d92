"""Threshold calibration: the estimate behind the shipped file, and calibration on labelled clips."""

from __future__ import annotations

import numpy as np
import pytest
from synthetic_scenes import BURNING, DESERT, FOREST, PASTURE, PLAIN, POND, clip

from mrsteve.perception import SemanticEncoder, load_lexicon
from mrsteve.perception.calibrate import (
    MERGE_MARGIN,
    LabelledClip,
    calibrate,
    estimate_thresholds,
    reference_view,
    threshold_between,
)
from mrsteve.perception.semantic import load_shipped_thresholds
from mrsteve.world.content import load_content


def test_threshold_between_separable_scores_is_the_middle_of_the_gap():
    assert threshold_between([0.5, 0.6, 0.9], [0.1, 0.3]) == pytest.approx(0.4)


def test_threshold_between_overlapping_scores_maximises_balanced_accuracy():
    assert threshold_between([0.2, 0.6, 0.7, 0.8], [0.1, 0.3, 0.4, 0.75]) == pytest.approx(0.5)
    with pytest.raises(ValueError, match="positive and negative"):
        threshold_between([], [0.1])


def test_reference_view_fills_the_requested_shares():
    view = reference_view({"water": 0.03, "cow": 0.01})
    semantic = view["semantic"]
    content = load_content()
    for name, share in (("water", 0.03), ("cow", 0.01)):
        assert (semantic == content.semantic_id(name)).mean() == pytest.approx(share, abs=1e-3)
    assert (semantic == content.semantic_id("sky")).mean() == pytest.approx(0.5)
    with pytest.raises(ValueError, match="more than the view"):
        reference_view({"water": 0.7, "sand": 0.5})


def test_the_shipped_thresholds_are_the_estimate_until_calibrated_on_the_world():
    shipped = load_shipped_thresholds()
    assert set(shipped.task) == set(load_lexicon().texts)
    if shipped.status == "calibrated":
        pytest.skip("thresholds calibrated on the world")
    estimate = estimate_thresholds()
    for prompt, value in estimate.task.items():
        assert shipped.task[prompt] == pytest.approx(value, abs=1e-4)
    assert shipped.event_fold == pytest.approx(estimate.event_fold, abs=1e-4)
    assert shipped.event_merge == pytest.approx(estimate.event_fold + MERGE_MARGIN, abs=1e-4)
    assert shipped.image_goal == pytest.approx(estimate.image_goal, abs=1e-4)


def labelled_clips() -> list[LabelledClip]:
    rng = np.random.default_rng(0)
    clips = []
    for scene, prompts, place, name in (
        (POND, {"near water"}, "pond", "pond"),
        (PLAIN, set(), "pond", "plain"),
        (FOREST, {"near tree"}, "forest", "forest"),
        (PASTURE, {"near cow", "near pasture"}, "pasture", "pasture"),
        (DESERT, {"near desert"}, "desert", "desert"),
        (BURNING, {"near zombies"}, "spot", "burning"),
        (PLAIN, set(), "spot", "gone"),
    ):
        for yaw in (-20.0, 0.0, 20.0):
            clips.append(
                LabelledClip(clip(scene, 0, 0, yaw, rng, frames=8), frozenset(prompts), place, name)
            )
    return clips


def test_calibrate_separates_labelled_clips():
    encoder = SemanticEncoder()
    clips = labelled_clips()
    prompts = ("near water", "near tree", "near cow", "near zombies", "near house")
    result = calibrate(encoder, clips, prompts)
    thresholds = result.thresholds
    assert thresholds.status == "calibrated"
    assert result.calibrated_prompts == prompts[:-1]
    assert thresholds.task["near house"] == encoder.thresholds.task["near house"]
    embeddings = [encoder.encode_frames(c.frames) for c in clips]
    for prompt in prompts[:-1]:
        text = encoder.encode_text(prompt)
        for c, e in zip(clips, embeddings):
            assert (e @ text >= thresholds.task[prompt]) == (prompt in c.prompts)
    same, different = result.event_pairs
    assert same == 3 * 7 and different == 2 * 9
    for i, a in enumerate(clips):
        for j, b in enumerate(clips[:i]):
            if a.place == b.place:
                similar = embeddings[i] @ embeddings[j] > thresholds.event_fold
                assert similar == (a.scene == b.scene)
    assert thresholds.event_merge == pytest.approx(thresholds.event_fold + MERGE_MARGIN)


def test_calibrate_needs_clips():
    with pytest.raises(ValueError, match="labelled clips"):
        calibrate(SemanticEncoder(), [], ["near water"])
