"""Training the pixel encoder (torch): the loss, a tiny run, resuming, and numpy inference
matching torch."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from mrsteve.calibration.thresholds import average_precision
from mrsteve.perception.lexicon import load_lexicon
from mrsteve.perception.pixels import (
    PixelEncoder,
    load_shipped_weights,
    load_weights,
    placeholder_thresholds,
)
from mrsteve.train.encoder import (
    LOSS_PARAMETERS,
    TrainingConfig,
    build_model,
    caption_variants,
    false_match_margins,
    hard_negative_order,
    mine_hard_negatives,
    multi_positive_loss,
    pairwise_sigmoid_loss,
    render_clips,
    train_encoder,
)

TINY = TrainingConfig(clips=48, validation_clips=24, epochs=3, batch=16, frames_per_clip=4,
                      learning_rate=3e-3)


def torch_model(weights):
    model = build_model(weights.architecture)
    state = {name: torch.from_numpy(value) for name, value in weights.parameters.items()}
    model.load_state_dict({**state, **{name: torch.tensor(0.0) for name in LOSS_PARAMETERS}})
    return model.eval()


def test_numpy_inference_matches_torch_within_1e_4():
    weights = load_shipped_weights()
    model = torch_model(weights)
    encoder = PixelEncoder()
    rgb = np.random.default_rng(0).integers(0, 256, (16, 40, 64, 3), dtype=np.uint8)
    with torch.no_grad():
        expected = model.image(torch.from_numpy(rgb)[None]).numpy()[0]
    np.testing.assert_allclose(encoder.encode_frames([{"rgb": f} for f in rgb]), expected,
                               atol=1e-4)
    for frame in rgb:
        observed = encoder.observe({"rgb": frame})
    np.testing.assert_allclose(observed, expected, atol=1e-4)
    from mrsteve.train.encoder import _word_batch

    index = {w: i for i, w in enumerate(weights.architecture.vocabulary)}
    with torch.no_grad():
        text = model.text(*_word_batch(["near water"], index)).numpy()[0]
    np.testing.assert_allclose(encoder.encode_text("near water"), text, atol=1e-4)


def test_ambiguous_pairs_do_not_count_in_the_loss():
    logits = torch.tensor([[5.0, 0.0, 1.0], [0.0, 4.0, 2.0]])
    labels = torch.tensor([[1, 0, -1], [0, 1, 0]], dtype=torch.int8)
    changed = logits.clone()
    changed[0, 2] = 100.0  # an ambiguous pair's score is free
    assert torch.isclose(multi_positive_loss(logits, labels), multi_positive_loss(changed, labels))
    worse = logits.clone()
    worse[1, 2] = 100.0  # a false pair scoring high costs
    assert multi_positive_loss(worse, labels) > multi_positive_loss(logits, labels)


def test_the_pairwise_loss_prices_each_false_pair_by_its_own_score():
    """InfoNCE only ranks: a false pair well below its clip's true pair costs it next to
    nothing, however high its own score. The pairwise loss charges it for crossing the boundary
    (logit 0), and leaves ambiguous pairs free."""
    labels = torch.tensor([[1, 0, -1]], dtype=torch.int8)
    low = torch.tensor([[30.0, -5.0, 0.0]])
    high = torch.tensor([[30.0, 5.0, 0.0]])  # the false pair crosses the boundary
    assert multi_positive_loss(high, labels) < 1e-6
    assert pairwise_sigmoid_loss(high, labels) > 100 * pairwise_sigmoid_loss(low, labels)
    free = low.clone()
    free[0, 2] = 50.0
    assert torch.isclose(pairwise_sigmoid_loss(free, labels), pairwise_sigmoid_loss(low, labels))
    assert pairwise_sigmoid_loss(low, torch.full((1, 3), -1, dtype=torch.int8)) == 0


def test_every_true_prompt_is_a_positive():
    """Multi-positive: mass on any true prompt is as good as on another."""
    labels = torch.tensor([[1, 1, 0]], dtype=torch.int8)
    first = multi_positive_loss(torch.tensor([[6.0, 0.0, 0.0]]), labels)
    second = multi_positive_loss(torch.tensor([[0.0, 6.0, 0.0]]), labels)
    assert torch.isclose(first, second)


def test_captions_rephrase_near_prompts_and_keep_the_prompt_first():
    assert caption_variants("near cow")[0] == "near cow"
    assert "cow nearby" in caption_variants("near cow")
    assert caption_variants("kill cow")[0] == "kill cow"


def test_average_precision_counts_ties_against():
    assert average_precision(np.array([0.9, 0.8]), np.array([0.1])) == 1.0
    assert average_precision(np.array([0.5]), np.array([0.5])) == 0.5


@pytest.mark.parametrize("pairwise", [0.0, 1.0])
def test_a_tiny_run_lowers_the_loss_resumes_and_gives_loadable_weights(tmp_path, pairwise):
    threads, deterministic = torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()
    config = dataclasses.replace(TINY, pairwise=pairwise)
    result = train_encoder(tmp_path / "run", config, progress=False, say=lambda line: None)
    # torch's process-wide settings are the caller's again
    assert (torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()) == (
        threads, deterministic)
    losses = [row["train_loss"] for row in result.history]
    assert losses[-1] < losses[0]
    for name in ("pixels.npz", "curve.png", "history.json", "checkpoint.pt", "clips.npz"):
        assert (tmp_path / "run" / name).is_file()
    loaded = load_weights(tmp_path / "run" / "pixels.npz")
    assert loaded.sha256 == result.weights.sha256
    embedding = PixelEncoder(loaded, placeholder_thresholds()).encode_text("near cow")
    assert embedding.shape == (loaded.architecture.dim,)
    said = []
    again = train_encoder(tmp_path / "run", config, progress=False, say=said.append)
    assert any("resuming after epoch 3" in line for line in said)
    assert again.weights.sha256 == result.weights.sha256


def test_the_same_seed_trains_the_same_weights(tmp_path):
    one = train_encoder(tmp_path / "a", TINY, progress=False, say=lambda line: None)
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "clips.npz").write_bytes((tmp_path / "a" / "clips.npz").read_bytes())
    two = train_encoder(tmp_path / "b", TINY, progress=False, say=lambda line: None)
    assert one.weights.sha256 == two.weights.sha256


def test_hard_negatives_are_false_clips_ranked_by_how_far_above_a_threshold_they_score():
    thresholds = np.array([0.5, 0.4])
    scores = np.array([[0.9, 0.1],    # true for prompt 0: its high score is no mistake
                       [0.6, 0.45],   # false for both: 0.1 above prompt 0's threshold
                       [0.2, 0.6],    # false for prompt 1 only: 0.2 above
                       [0.3, 0.3],    # false for both, below both thresholds: -0.1
                       [0.9, 0.9]])   # ambiguous and true: never a negative
    labels = np.array([[1, -1], [0, 0], [1, 0], [0, 0], [-1, 1]])
    assert hard_negative_order(false_match_margins(scores, labels, thresholds)
                               ).tolist() == [2, 1, 3]


def test_mining_keeps_the_pools_hardest_false_clips():
    config = TrainingConfig(hard_negatives=3, hard_negative_pool=10, explored=0.0)
    lexicon = load_lexicon()
    mined = mine_hard_negatives(config, lexicon, np.random.default_rng(0), say=lambda _: None,
                                chunk=5)
    assert mined.rgb.shape[:2] == (3, 16) and mined.labels.shape == (3, len(lexicon.texts))
    # the same pool, rendered whole and ranked at once: the two chunks kept its hardest three
    rng = np.random.default_rng(0)
    chunks = [render_clips(5, rng, lexicon, any_pitch=config.any_pitch, aimed=0.0)
              for _ in range(2)]
    rgb = np.concatenate([chunk.rgb for chunk in chunks])
    labels = np.concatenate([chunk.labels for chunk in chunks])
    encoder = PixelEncoder()
    texts = np.stack([encoder.encode_text(text) for text in lexicon.texts])
    thresholds = np.array([encoder.task_threshold(text) for text in lexicon.texts])
    scores = np.stack([encoder.encode_frames([{"rgb": frame} for frame in clip])
                       for clip in rgb]) @ texts.T
    hardest = hard_negative_order(false_match_margins(scores, labels, thresholds))[:3]
    assert (mined.labels == 0).any(axis=1).all()  # each has a false prompt
    np.testing.assert_array_equal(mined.rgb, rgb[hardest])
    np.testing.assert_array_equal(mined.labels, labels[hardest])


def test_mining_joins_the_clip_cache_key_only_when_on():
    assert TrainingConfig().data_key() == TrainingConfig(hard_negative_pool=50).data_key()
    assert TrainingConfig().data_key() != TrainingConfig(hard_negatives=1).data_key()
    with pytest.raises(ValueError, match="hard_negatives must be in"):
        TrainingConfig(hard_negatives=11, hard_negative_pool=10)


def test_colour_jitter_is_in_the_recipe_only_when_on_and_trains_on_the_same_clips(tmp_path):
    """The shipped recipe records no jitter and renders the same clips with it; a jittered tiny
    run trains and records its strength; a strength outside 0-1 is refused."""
    assert "colour_jitter" not in TINY.recipe()
    jittered = dataclasses.replace(TINY, colour_jitter=0.35)
    assert jittered.data_key() == TINY.data_key()
    result = train_encoder(tmp_path / "run", jittered, progress=False, say=lambda line: None)
    assert result.weights.info["training"]["colour_jitter"] == 0.35
    losses = [row["train_loss"] for row in result.history]
    assert losses[-1] < losses[0]
    with pytest.raises(ValueError, match="colour_jitter must be from 0 to 1"):
        dataclasses.replace(TINY, colour_jitter=1.5)
