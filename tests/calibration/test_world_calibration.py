"""The calibrated encoder on the world: "near" means near, and calibration reruns the same."""

from __future__ import annotations

import json
import math
import tomllib

import numpy as np
import pytest
import typer
from typer.testing import CliRunner

from mrsteve.calibration.clips import CALIBRATION_WORLDS, HELD_OUT_WORLDS, ClipConfig
from mrsteve.calibration.thresholds import calibrate_on_world, format_world_calibration
from mrsteve.cli import calibrate as calibrate_cli
from mrsteve.env import make_env
from mrsteve.perception import SemanticEncoder
from mrsteve.perception.thresholds import parse_thresholds


def heading(x: float, z: float, to_x: float, to_z: float) -> float:
    return math.degrees(math.atan2(-(to_x - x), to_z - z))


def score_at(env, encoder, prompt, x, z, target, pitch=10.0) -> float:
    """Score of ``prompt`` for the clip of 16 steps standing at ``(x, z)`` facing ``target``."""
    env.unwrapped.world.teleport(x, z, yaw=heading(x, z, *target), pitch=pitch)
    encoder.reset()
    for _ in range(encoder.window):
        observation, *_ = env.step({})
        embedding = encoder.observe(observation)
    return float(embedding @ encoder.encode_text(prompt))


@pytest.fixture(scope="module")
def encoder() -> SemanticEncoder:
    return SemanticEncoder()


@pytest.mark.parametrize("seed", [0, 1])
def test_near_cow_is_a_cow_nearby_not_a_herd_on_the_horizon(encoder, seed):
    """Map 2: from the spawn on the ridge's pass the herd is about 30 blocks away (specks of a
    pixel or two), and from 24 blocks off its centre the nearest cow is still over 2R = 16 blocks
    away; 6 blocks from a cow, it fills the view."""
    env = make_env(world="map2")
    env.reset(seed=seed)
    world = env.unwrapped.world
    threshold = encoder.task_threshold("near cow")
    for pitch in (0.0, 10.0, 20.0):
        herd = world.layout.landmarks["cows"]
        assert score_at(env, encoder, "near cow", 50.5, 50.5, herd, pitch) < threshold
    cows = np.array([(m["x"], m["z"]) for i, m in enumerate(world.mobs.records)
                     if world.mobs.kind_name(i) == "cow"])
    centre = cows.mean(axis=0)
    towards_spawn = (np.array([50.5, 50.5]) - centre) / np.linalg.norm([50.5, 50.5] - centre)
    x, z = centre + 24.0 * towards_spawn
    assert np.linalg.norm(cows - [x, z], axis=1).min() > 16.0
    assert score_at(env, encoder, "near cow", x, z, tuple(centre)) < threshold
    x, z = cows[0]
    for angle in (0.0, 120.0, 240.0):
        sx, sz = x + 6 * math.cos(math.radians(angle)), z + 6 * math.sin(math.radians(angle))
        assert score_at(env, encoder, "near cow", sx, sz, (x, z)) >= threshold


@pytest.mark.parametrize("seed", [0, 1])
def test_near_water_is_the_pond_rim_not_30_blocks_away(encoder, seed):
    """Map 1: the pond in the upper-right corner, seen from its rim and from 30 blocks away."""
    env = make_env(world="map1")
    env.reset(seed=seed)
    pond = env.unwrapped.world.layout.landmarks["water"]
    threshold = encoder.task_threshold("near water")
    for angle in (60.0, 120.0, 180.0):  # from below and left of the corner
        for distance, near in ((6.5, True), (30.0, False)):
            x = pond[0] + distance * math.cos(math.radians(angle))
            z = pond[1] + distance * math.sin(math.radians(angle))
            score = score_at(env, encoder, "near water", x, z, pond)
            assert (score >= threshold) == near, (angle, distance, score)


def test_calibration_on_the_world_is_seeded_and_writes_a_thresholds_file():
    config = ClipConfig(worlds=("calib_camp",), held_out_worlds=("zombie_spot", "map2"),
                        clips_per_world=12, pairs_per_world=3)
    runs = [calibrate_on_world(24, seed=3, event_pairs=6, config=config) for _ in range(2)]
    assert runs[0].thresholds == runs[1].thresholds
    assert runs[0].calibration.fit.worlds == ("calib_camp",)
    assert runs[0].held_out.worlds == ("zombie_spot", "map2")
    text = format_world_calibration(runs[0], "mrsteve calibrate --clips 24 --seed 3")
    assert "# Reproduce: mrsteve calibrate --clips 24 --seed 3" in text
    header = " ".join(line[2:] for line in text.splitlines() if line.startswith("# "))
    assert "Calibration worlds (fitted on; procedural" in header
    assert ("seed): calib_camp. Held-out worlds (measured on; the evaluation maps): zombie_spot, "
            "map2.") in header
    parsed, fitted = parse_thresholds(tomllib.loads(text)), runs[0].thresholds
    assert parsed.task == pytest.approx(dict(fitted.task), abs=1e-4)
    assert parsed.event_fold == pytest.approx(fitted.event_fold, abs=1e-4)
    held_out = runs[0].held_out
    assert held_out.events is not None and "burning zombies / zombies gone" in held_out.events.changed
    summary = runs[0].summary("test")
    assert summary["seed"] == 3 and set(summary["thresholds"]["task"]) == set(runs[0].thresholds.task)
    assert list(summary["config"]["held_out_worlds"]) == ["zombie_spot", "map2"]


def test_calibration_and_held_out_worlds_must_differ():
    config = ClipConfig(worlds=("calib_camp", "map1"), held_out_worlds=("map1", "map2"))
    with pytest.raises(ValueError, match=r"must differ; both name \['map1'\]"):
        calibrate_on_world(10, config=config)


def test_the_command_writes_the_thresholds_and_a_json_summary(tmp_path):
    app = typer.Typer()
    app.command()(calibrate_cli.command)
    out, summary = tmp_path / "thresholds.toml", tmp_path / "calibration.json"
    result = CliRunner().invoke(app, ["--clips", "10", "--event-pairs", "2", "--seed", "1",
                                      "--out", str(out), "--json", str(summary)])
    assert result.exit_code == 0, result.output
    assert parse_thresholds(tomllib.loads(out.read_text())).status == "calibrated"
    report = json.loads(summary.read_text())
    assert report["clips"] == 10
    # by default, fitted only on calibration worlds and measured only on the evaluation maps
    assert report["fitted"]["worlds"] and set(report["fitted"]["worlds"]) <= set(CALIBRATION_WORLDS)
    assert report["held_out"]["worlds"] and set(report["held_out"]["worlds"]) <= set(HELD_OUT_WORLDS)
    both = CliRunner().invoke(app, ["--out", str(out), "--write"])
    assert both.exit_code == 2 and "not both" in both.output
