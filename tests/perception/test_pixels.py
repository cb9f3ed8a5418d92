"""The pixel encoder: shipped weights and thresholds, numpy inference, weights files."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest
from synthetic_scenes import FOREST, POND, clip

from mrsteve.perception.pixels import (
    PixelEncoder,
    PixelWeights,
    load_shipped_pixel_thresholds,
    load_shipped_weights,
    load_weights,
    placeholder_thresholds,
    shipped_thresholds_hash,
)

MAX_SHIPPED_BYTES = 20 * 2**20
"""The package's limit on the size of the shipped weights."""


@pytest.fixture(scope="module")
def weights() -> PixelWeights:
    return load_shipped_weights()


def test_the_shipped_weights_load_and_embed_a_clip_in_the_default_install(weights):
    from mrsteve.perception._data import data_path

    assert data_path("pixels.npz").stat().st_size <= MAX_SHIPPED_BYTES
    encoder = PixelEncoder()
    embedding = encoder.encode_frames(clip(POND, 0, 0, 0, np.random.default_rng(0)))
    assert embedding.dtype == np.float32 and embedding.shape == (encoder.dim,)
    assert abs(float(np.linalg.norm(embedding)) - 1.0) < 1e-5


def test_the_shipped_thresholds_name_the_shipped_weights(weights):
    assert shipped_thresholds_hash() == weights.sha256
    assert load_shipped_pixel_thresholds().status == "calibrated"


def test_the_hash_changes_with_any_parameter(weights):
    changed = dict(weights.parameters)
    changed["text.head.2.bias"] = changed["text.head.2.bias"] + np.float32(1e-3)
    assert PixelWeights(weights.architecture, changed).sha256 != weights.sha256


def test_other_weights_need_their_own_thresholds(weights):
    changed = dict(weights.parameters)
    changed["image.frame.bias"] = changed["image.frame.bias"] + np.float32(0.5)
    with pytest.raises(ValueError, match="calibrated for weights .*, not these"):
        PixelEncoder(PixelWeights(weights.architecture, changed))
    assert PixelEncoder(weights).thresholds == load_shipped_pixel_thresholds()


def test_water_scores_higher_for_near_water_on_a_pond_than_in_a_forest():
    encoder = PixelEncoder()
    rng = np.random.default_rng(1)
    text = encoder.encode_text("near water")
    pond = encoder.encode_frames(clip(POND, 0, 0, 0, rng))
    forest = encoder.encode_frames(clip(FOREST, 0, 0, 0, rng))
    assert pond @ text > forest @ text
    tree = encoder.encode_text("near tree")
    assert forest @ tree > pond @ tree


def test_views_of_the_sky_are_not_water():
    """The agent's navigator and policy turn its view up at times; every prompt stays below its
    threshold on clips of the sky in a calibration world (an encoder trained only on level views
    scored them as water), while the same world's pond still matches "near water"."""
    from mrsteve.calibration.clips import ClipConfig, collect_clips

    encoder = PixelEncoder()
    config = ClipConfig(worlds=("calib_meadow",), frame_keys=("rgb",), pitch=(-90.0, -50.0),
                        clips_per_world=12)
    sky = np.stack([encoder.encode_frames(c.frames)
                    for c in collect_clips(12, np.random.default_rng(3), config)])
    for prompt in ("near water", "get water bucket", "near cow", "near grass"):
        assert (sky @ encoder.encode_text(prompt)).max() < encoder.thresholds.task_threshold(prompt)


def test_rephrasings_embed_near_their_prompt():
    encoder = PixelEncoder()
    cow, sand = encoder.encode_text("near cow"), encoder.encode_text("near sand")
    assert encoder.embed_words("cow nearby") @ cow > encoder.embed_words("cow nearby") @ sand


def test_an_unknown_word_is_an_error_naming_the_known_ones():
    with pytest.raises(ValueError, match="knows none of \\['lava'\\]; its words: .*water"):
        PixelEncoder().embed_words("near lava")


def test_a_frame_of_the_wrong_size_is_an_error():
    encoder = PixelEncoder()
    with pytest.raises(ValueError, match=r"uint8\[40, 64, 3\]"):
        encoder.observe({"rgb": np.zeros((20, 32, 3), np.uint8)})
    with pytest.raises(KeyError, match="reads observation\\['rgb'\\]"):
        encoder.observe({"semantic": np.zeros((40, 64), np.uint8)})


# ------------------------------------------------------------------------------------- files


def test_weights_round_trip_through_a_file(weights, tmp_path):
    path = tmp_path / "copy.npz"
    weights.save(path)
    again = load_weights(path)
    assert again.sha256 == weights.sha256 and again.architecture == weights.architecture


def test_a_file_that_is_not_npz_is_refused_clearly(tmp_path):
    path = tmp_path / "bad.npz"
    path.write_text("not weights")
    with pytest.raises(ValueError, match="not a pixel encoder weights file"):
        load_weights(path)


def test_a_missing_file_is_a_file_not_found_error(tmp_path):
    with pytest.raises(FileNotFoundError):
        load_weights(tmp_path / "none.npz")


def test_a_parameter_of_the_wrong_shape_is_named(weights, tmp_path):
    changed = dict(weights.parameters)
    changed["image.frame.bias"] = np.zeros(3, np.float32)
    PixelWeights(weights.architecture, changed).save(tmp_path / "w.npz")
    with pytest.raises(ValueError, match="image.frame.bias"):
        load_weights(tmp_path / "w.npz")


def test_a_missing_parameter_is_named(weights, tmp_path):
    changed = {k: v for k, v in weights.parameters.items() if k != "text.words.weight"}
    PixelWeights(weights.architecture, changed).save(tmp_path / "w.npz")
    with pytest.raises(ValueError, match="missing \\['text.words.weight'\\]"):
        load_weights(tmp_path / "w.npz")


def test_non_finite_parameters_are_refused(weights, tmp_path):
    changed = dict(weights.parameters)
    changed["image.head.0.bias"] = np.full_like(changed["image.head.0.bias"], np.nan)
    PixelWeights(weights.architecture, changed).save(tmp_path / "w.npz")
    with pytest.raises(ValueError, match="NaN"):
        load_weights(tmp_path / "w.npz")


def test_a_newer_version_is_refused_clearly(weights, tmp_path, monkeypatch):
    monkeypatch.setattr(PixelWeights, "VERSION", 99)
    weights.save(tmp_path / "w.npz")
    monkeypatch.setattr(PixelWeights, "VERSION", 1)
    with pytest.raises(ValueError, match="version 99 \\(this code reads version 1\\)"):
        load_weights(tmp_path / "w.npz")


def test_saving_over_a_non_regular_file_is_refused(weights, tmp_path):
    (tmp_path / "folder.npz").mkdir()
    with pytest.raises((ValueError, IsADirectoryError, OSError)):
        weights.save(tmp_path / "folder.npz")
    assert (tmp_path / "folder.npz").is_dir()


def test_an_architecture_whose_lists_do_not_match_is_refused(weights):
    with pytest.raises(ValueError, match="channels and strides"):
        dataclasses.replace(weights.architecture, strides=(2, 2))


def test_placeholder_thresholds_cover_the_lexicon():
    encoder = PixelEncoder(load_shipped_weights(), placeholder_thresholds())
    assert encoder.thresholds.status == "estimate"
    assert set(encoder.lexicon.texts) <= set(encoder.thresholds.task)
