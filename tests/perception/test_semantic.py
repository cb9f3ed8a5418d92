"""The semantic encoder behaves like MineCLIP relative to its own thresholds."""

from __future__ import annotations

import numpy as np
import pytest
from synthetic_scenes import (
    BURNING,
    DESERT,
    DIRT_FIELD,
    FAR_POND,
    FOREST,
    MEADOW,
    PASTURE,
    PLAIN,
    POND,
    Pillar,
    Scene,
    clip,
    view,
    zombies,
)

from mrsteve.calibration.thresholds import estimate_thresholds
from mrsteve.perception import SemanticEncoder, SemanticEncoderConfig
from mrsteve.world.content import load_content

ZOMBIES_GONE = PLAIN
NOT_BURNING = Scene(pillars=zombies(burning=False))
FAR_COW = Scene(pillars=(Pillar("cow", 0.0, 24.0, 0.45, 1.4),))
ROCK = Scene(ground="stone")


@pytest.fixture(scope="module")
def encoder() -> SemanticEncoder:
    return SemanticEncoder()


def embed(encoder, scene, x=0.0, z=0.0, yaw=0.0, seed=0):
    return encoder.encode_frames(clip(scene, x, z, yaw, np.random.default_rng(seed)))


@pytest.mark.parametrize("scene", [PLAIN, POND, FOREST, PASTURE, MEADOW, BURNING])
@pytest.mark.parametrize("move", [(0, 0, 0), (0, 0, 30), (0, 0, -30), (3, 0, 0), (0, -3, 0)])
def test_one_scene_within_a_place_cluster_is_one_event(encoder, scene, move):
    """Frames of a static scene from within one place cluster (6 blocks, 60 degree yaw bin) stay
    above the event threshold, so DP-Means keeps them in one event."""
    base = embed(encoder, scene)
    moved = embed(encoder, scene, move[0], move[1], move[2], seed=1)
    assert base @ moved >= encoder.thresholds.event_fold
    if move == (0, 0, 0):
        assert base @ moved > 0.95


@pytest.mark.parametrize(
    "before, after",
    [
        (BURNING, ZOMBIES_GONE),
        (BURNING, NOT_BURNING),
        pytest.param(
            PLAIN, POND, marks=pytest.mark.xfail(strict=True, reason=(
                "calibrated on procedural calibration worlds (not the evaluation maps), event_fold "
                "is 0.797: grass vs a small pond 4-10 blocks ahead score 0.813, one event; "
                "thresholds fitted on the evaluation maps themselves had 0.838"))),
        (PASTURE, FOREST),
        (DESERT, DIRT_FIELD),
    ],
)
def test_a_changed_scene_at_one_place_is_a_new_event(encoder, before, after):
    """Burning zombies present vs gone (Zombies' Death Spot) and different places separate."""
    similarity = embed(encoder, before) @ embed(encoder, after)
    assert similarity < encoder.thresholds.event_fold
    assert similarity < encoder.thresholds.image_goal


def test_a_goal_image_matches_its_scene_and_not_the_scene_after_the_event(encoder):
    goal = embed(encoder, BURNING, seed=5)
    assert embed(encoder, BURNING, 1, 1, 10, seed=6) @ goal >= encoder.thresholds.image_goal
    assert embed(encoder, ZOMBIES_GONE, seed=6) @ goal < encoder.thresholds.image_goal


PROMPT_CASES = {
    "near water": (POND, [PLAIN, FAR_POND, FOREST, DESERT]),
    "near tree": (FOREST, [PLAIN, POND, PASTURE]),
    "near cow": (PASTURE, [PLAIN, FAR_COW, BURNING, FOREST]),
    "near sheep": (PASTURE, [PLAIN, BURNING]),
    "near sand": (DESERT, [PLAIN, DIRT_FIELD, POND]),
    "near dirt": (DIRT_FIELD, [PLAIN, DESERT]),
    "near grass": (MEADOW, [PLAIN, DIRT_FIELD, DESERT]),
    "near pasture": (PASTURE, [DESERT, DIRT_FIELD, ROCK]),
    "near desert": (DESERT, [PLAIN, DIRT_FIELD]),
    "near zombies": (BURNING, [PLAIN, PASTURE]),
    "near burning zombies": (BURNING, [NOT_BURNING, PLAIN]),
}


@pytest.mark.parametrize("prompt", sorted(PROMPT_CASES))
def test_a_prompt_scores_above_its_threshold_exactly_when_its_target_is_clearly_visible(
    encoder, prompt
):
    text = encoder.encode_text(prompt)
    threshold = encoder.task_threshold(prompt)
    positive, negatives = PROMPT_CASES[prompt]
    assert embed(encoder, positive) @ text >= threshold
    for scene in negatives:
        assert embed(encoder, scene) @ text < threshold


def test_water_scores_above_threshold_only_while_in_view(encoder):
    text = encoder.encode_text("near water")
    threshold = encoder.task_threshold("near water")
    facing = embed(encoder, POND, yaw=0)
    turned_away = embed(encoder, POND, yaw=180)
    assert facing @ text >= threshold > turned_away @ text


def test_the_embedding_says_where_in_the_view(encoder):
    frame = view(PASTURE, 0, 0, 0)
    mirrored = {"semantic": np.ascontiguousarray(frame["semantic"][:, ::-1])}
    a, b = encoder.encode_frames([frame]), encoder.encode_frames([mirrored])
    assert a @ b < 0.99
    assert a @ encoder.encode_text("near cow") == pytest.approx(b @ encoder.encode_text("near cow"))


def test_rare_things_are_not_drowned_by_the_ground(encoder):
    """A cow filling about 1 % of the view moves the embedding more than 10 % more grass."""
    cow = embed(encoder, Scene(pillars=(Pillar("cow", 0.0, 6.0, 0.45, 1.4),)))
    plain = embed(encoder, PLAIN)
    low = encoder.encode_frames([view(PLAIN, 0, 0, 0, pitch=8.0)])
    assert plain @ cow < plain @ low


def test_bad_observations_raise_clear_errors(encoder):
    frame = view(PLAIN, 0, 0, 0)
    with pytest.raises(KeyError, match="semantic"):
        encoder.observe({"rgb": np.zeros((4, 4, 3), np.uint8)})
    with pytest.raises(ValueError, match="uint8"):
        encoder.observe({"semantic": frame["semantic"].astype(np.int64)})
    bad = frame["semantic"].copy()
    bad[0, 0] = 200
    with pytest.raises(ValueError, match="unknown class ids \\[200\\]"):
        encoder.encode_frames([{"semantic": bad}])
    with pytest.raises(ValueError, match="one shape"):
        encoder.encode_frames([frame, {"semantic": frame["semantic"][:20]}])


def test_a_failed_observe_leaves_the_window_intact(encoder):
    frames = [view(PASTURE, 0, 0, yaw) for yaw in (0, 10, 20)]
    encoder.reset()
    encoder.observe(frames[0])
    encoder.observe(frames[1])
    bad = frames[2]["semantic"].copy()
    bad[5, 5] = 99
    with pytest.raises(ValueError):
        encoder.observe({"semantic": bad})
    with pytest.raises(ValueError, match="shape changed"):
        encoder.observe({"semantic": frames[2]["semantic"][:10]})
    np.testing.assert_allclose(encoder.observe(frames[2]), encoder.encode_frames(frames), atol=1e-6)


def test_config_is_validated_and_custom_configs_need_their_own_thresholds():
    with pytest.raises(ValueError, match="window"):
        SemanticEncoderConfig(window=0)
    with pytest.raises(ValueError, match="salience"):
        SemanticEncoderConfig(salience={"sky": 1.0})
    with pytest.raises(ValueError, match="clear_region_share"):
        SemanticEncoderConfig(clear_region_share=1.5)
    config = SemanticEncoderConfig(window=4, grid=(2, 2))
    with pytest.raises(ValueError, match="estimate_thresholds"):
        SemanticEncoder(config)
    encoder = SemanticEncoder(config, estimate_thresholds(config))
    assert encoder.dim == 19 * (1 + 2 * 2)
    assert encoder.window == 4


def region_weights(semantic: np.ndarray, clear_pixels: int) -> np.ndarray:
    """Per pixel ``min(region size, clear_pixels)``, regions by flood fill (8-connected)."""
    height, width = semantic.shape
    weights = np.zeros(semantic.shape, dtype=np.int64)
    for start in np.ndindex(semantic.shape):
        if weights[start]:
            continue
        region, todo = {start}, [start]
        while todo:
            r, c = todo.pop()
            for dr in (-1, 0, 1):
                for dc in (-1, 0, 1):
                    n = (r + dr, c + dc)
                    if (0 <= n[0] < height and 0 <= n[1] < width and n not in region
                            and semantic[n] == semantic[start]):
                        region.add(n)
                        todo.append(n)
        for pixel in region:
            weights[pixel] = min(len(region), clear_pixels)
    return weights


def test_pixels_count_by_the_size_of_their_region():
    """The encoder's run-based region counting equals a flood fill, cell by cell of the grid."""
    config = SemanticEncoderConfig(grid=(2, 3), clear_region_share=0.05)
    encoder = SemanticEncoder(config, estimate_thresholds(config))
    rng = np.random.default_rng(0)
    n_classes = len(config.salience)
    for _ in range(5):
        semantic = np.where(rng.random((12, 17)) < 0.6, 1, rng.integers(0, 4, (12, 17)))
        semantic = semantic.astype(np.uint8)
        weights = region_weights(semantic, round(0.05 * semantic.size))
        counts = np.zeros((1 + 2 * 3, n_classes))
        for (r, c), k in np.ndenumerate(semantic):
            counts[0, k] += weights[r, c]
            counts[1 + (r * 2 // 12) * 3 + c * 3 // 17, k] += weights[r, c]
        salience = np.array(list(config.salience.values()))
        expected = np.sqrt(salience * counts) * np.array([1.0] + [config.layout_weight] * 6)[:, None]
        expected = (expected / np.linalg.norm(expected)).ravel()
        np.testing.assert_allclose(encoder.encode_frames([{"semantic": semantic}]), expected,
                                   atol=1e-6)


def test_specks_count_less_than_a_thing_one_can_make_out(encoder):
    """Forty cow pixels scattered as specks (a far herd) score far below forty in one region (a
    cow nearby), and a thin diagonal region counts like a lump."""
    cow = load_content().semantic_id("cow")
    plain = view(PLAIN, 0, 0, 0)["semantic"]
    specks, lump, diagonal = plain.copy(), plain.copy(), plain.copy()
    specks[21:31:2, 8:56:6] = cow
    lump[25:30, 28:36] = cow
    diagonal[np.arange(0, 40), np.arange(10, 50)] = cow
    assert (specks == cow).sum() == (lump == cow).sum() == (diagonal == cow).sum() == 40
    text = encoder.encode_text("near cow")
    score = {name: encoder.encode_frames([{"semantic": frame}]) @ text
             for name, frame in (("specks", specks), ("lump", lump), ("diagonal", diagonal))}
    assert score["specks"] < 0.3 * score["lump"]
    assert score["diagonal"] == pytest.approx(score["lump"], rel=1e-3)
    assert score["specks"] < encoder.task_threshold("near cow") <= score["lump"]
