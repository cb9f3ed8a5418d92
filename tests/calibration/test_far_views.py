"""Far views: poses far from every target of the prompt, scored with the encoder's threshold;
an encoder that reads the true classes (the semantic stand-in) never matches there."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from mrsteve.calibration.clips import ClipConfig, WorldSession
from mrsteve.calibration.far_views import _far_pose, _instances, far_views
from mrsteve.cli import app
from mrsteve.env import make_env
from mrsteve.perception import make_encoder


def test_far_poses_keep_their_distance_from_every_block_and_mob_of_the_prompt():
    encoder = make_encoder("semantic")
    config = ClipConfig(window=encoder.window, frame_keys=encoder.reads,
                        worlds=("heldout_highlands",))
    with make_env(world="heldout_highlands", obs_size=config.obs_size) as env:
        session = WorldSession(env, 5, config, encoder.lexicon)
        for prompt, least in (("near cow", 8), ("near water", 20)):
            targets = _instances(session, list(encoder.lexicon.meaning(prompt).classes))
            assert len(targets) >= least
            rng = np.random.default_rng(0)
            for _ in range(10):
                pose = _far_pose(session, targets, 40.0, rng)
                distance = np.hypot(targets[:, 0] - pose.x, targets[:, 1] - pose.z).min()
                assert distance >= 40.0


def test_the_semantic_encoder_never_matches_far_from_its_targets():
    counted = far_views(make_encoder("semantic"), "near cow", "heldout_highlands", worlds=2,
                        views=8, seed=3)
    assert counted.views == 16 and counted.worlds == 2
    assert counted.false_matches == 0 and counted.highest_margin < 0
    assert counted.per_thousand == 0.0


def test_a_prompt_whose_targets_cover_the_world_has_no_far_view():
    counted = far_views(make_encoder("semantic"), "near grass", "heldout_highlands", worlds=1,
                        views=3)
    assert counted.views == 0 and counted.worlds == 0 and np.isnan(counted.per_thousand)


@pytest.mark.parametrize(("arguments", "message"), [
    (["--prompt", "near rock"], "unknown prompt 'near rock'; known: near tree"),
    (["--world", "plains_unbounded"], "is unbounded"),
    (["--look", "noon"], "unknown look 'noon'"),
])
def test_bad_options_are_refused_with_the_accepted_values(arguments, message):
    result = CliRunner().invoke(app, ["far-views", *arguments])
    assert result.exit_code == 2 and message in result.output


@pytest.mark.parametrize(("arguments", "message"), [
    (["--weights", "pixels.npz"], "--weights and --thresholds go together"),
    (["--encoder", "semantic", "--weights", "a.npz", "--thresholds", "a.toml"],
     "give --encoder pixels, not semantic"),
])
def test_a_trained_encoder_comes_with_its_thresholds(arguments, message):
    result = CliRunner().invoke(app, ["far-views", *arguments])
    assert result.exit_code == 2 and message in result.output


def test_trained_weights_are_counted_with_the_thresholds_calibrated_for_them(tmp_path):
    """The shipped files given as a trained pair count as the shipped encoder does; thresholds
    calibrated for other weights are refused."""
    from mrsteve.perception._data import data_path
    from mrsteve.perception.pixels import SHIPPED_PIXEL_THRESHOLDS, SHIPPED_WEIGHTS

    weights, thresholds = data_path(SHIPPED_WEIGHTS), data_path(SHIPPED_PIXEL_THRESHOLDS)
    options = ["--prompt", "near cow", "--worlds", "1", "--views", "3", "--seed", "4"]
    shipped = CliRunner().invoke(app, ["far-views", *options])
    given = CliRunner().invoke(app, ["far-views", *options, "--weights", str(weights),
                                     "--thresholds", str(thresholds)])
    assert shipped.exit_code == 0 == given.exit_code, given.output
    assert f"with weights {weights}" in given.output
    assert shipped.output.splitlines()[-1] == given.output.splitlines()[-1]
    other = tmp_path / "other.toml"
    text = Path(thresholds).read_text()
    other.write_text(text.replace('weights_sha256 = "', 'weights_sha256 = "0', 1))
    refused = CliRunner().invoke(app, ["far-views", *options, "--weights", str(weights),
                                       "--thresholds", str(other)])
    assert refused.exit_code == 2 and "was calibrated for weights 0" in refused.output
