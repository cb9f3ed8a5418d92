"""The ``Encoder`` interface: every implementation passes these tests."""

from __future__ import annotations

import numpy as np
import pytest
from synthetic_scenes import BURNING, FOREST, PASTURE, POND, clip, view

from mrsteve.perception import Encoder, SemanticEncoder
from mrsteve.perception.pixels import PixelEncoder

ENCODERS = [pytest.param(SemanticEncoder, id="semantic"), pytest.param(PixelEncoder, id="pixels")]


@pytest.fixture(params=ENCODERS)
def encoder(request) -> Encoder:
    return request.param()


def episode(n: int, seed: int = 0) -> list[dict[str, np.ndarray]]:
    """``n`` observations from an agent turning and walking past several scenes."""
    rng = np.random.default_rng(seed)
    scenes = (PASTURE, FOREST, POND, BURNING)
    return [
        view(scenes[(i // 10) % 4], rng.uniform(-2, 2), rng.uniform(-2, 2), rng.uniform(0, 360))
        for i in range(n)
    ]


def test_implements_the_protocol(encoder):
    assert isinstance(encoder, Encoder)


def test_embeddings_are_unit_norm_float32_of_dim(encoder):
    frames = episode(3)
    for embedding in (
        encoder.observe(frames[0]),
        encoder.encode_frames(frames),
        encoder.encode_text("near water"),
    ):
        assert embedding.shape == (encoder.dim,)
        assert embedding.dtype == np.float32
        assert np.linalg.norm(embedding) == pytest.approx(1.0, abs=1e-5)


def test_observe_gives_the_clip_of_the_last_window_frames(encoder):
    frames = episode(2 * encoder.window + 5)
    encoder.reset()
    for i, frame in enumerate(frames):
        incremental = encoder.observe(frame)
        batch = encoder.encode_frames(frames[max(0, i + 1 - encoder.window) : i + 1])
        np.testing.assert_allclose(incremental, batch, atol=1e-6)


def test_encode_frames_keeps_only_the_last_window(encoder):
    frames = episode(encoder.window + 10, seed=1)
    np.testing.assert_array_equal(
        encoder.encode_frames(frames), encoder.encode_frames(frames[-encoder.window :])
    )
    assert encoder.encode_frames(frames) @ encoder.encode_frames(frames[: encoder.window]) < 0.99


def test_reset_forgets_the_window(encoder):
    first, second = episode(2 * encoder.window, seed=2)[:: encoder.window]
    for frame in episode(5):
        encoder.observe(frame)
    encoder.reset()
    np.testing.assert_allclose(encoder.observe(second), encoder.encode_frames([second]), atol=1e-6)
    assert not np.allclose(encoder.observe(first), encoder.encode_frames([first]))


def test_a_clip_of_one_scene_is_similar_to_itself_and_not_to_another(encoder):
    rng = np.random.default_rng(3)
    one = encoder.encode_frames(clip(FOREST, 0, 0, 0, rng))
    again = encoder.encode_frames(clip(FOREST, 0, 0, 0, rng))
    other = encoder.encode_frames(clip(POND, 0, 0, 0, rng))
    assert one @ again > 0.9 > one @ other


def test_unknown_prompt_raises_listing_the_known_ones(encoder):
    with pytest.raises(ValueError, match="unknown prompt 'near lava'; known: .*near water"):
        encoder.encode_text("near lava")


def test_every_prompt_has_a_task_threshold(encoder):
    for prompt in encoder.lexicon.texts:
        assert -1.0 <= encoder.task_threshold(prompt) <= 1.0


def test_task_threshold_is_looked_up_by_prompt_text(encoder):
    assert encoder.task_threshold("near water") == encoder.thresholds.task["near water"]
    with pytest.raises(ValueError, match="unknown task prompt 'water_bucket'; known: .*near water"):
        encoder.task_threshold("water_bucket")  # an item: the task tells the agent its prompts


def test_event_thresholds_are_ordered_like_the_papers(encoder):
    thresholds = encoder.thresholds
    assert -1.0 <= thresholds.event_fold <= thresholds.event_merge <= 1.0


def test_an_empty_window_is_an_error(encoder):
    with pytest.raises(ValueError, match="at least one"):
        encoder.encode_frames([])
