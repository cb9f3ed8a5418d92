"""The navigation experiment: goals 10-20 blocks away on walkable ground (across the river on
``river``), shortest paths on the true terrain, and the metrics an episode reports."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from mrsteve.control.heightmap import HeightMap
from mrsteve.control.path_planning import WorldGround, reachable
from mrsteve.env import make_env
from mrsteve.eval.navigation import (
    NAVIGATION,
    TERRAINS,
    NavigationTaskConfig,
    navigation_episode,
)
from mrsteve.tasks.driver import compact_trajectory
from mrsteve.tasks.navigation import METRICS, pick_goal
from mrsteve.world.content import load_content


def start_world(terrain: str, seed: int):
    env = make_env(world=TERRAINS[terrain], obs_size=(8, 8))
    obs, _ = env.reset(seed=seed)
    return env.unwrapped.world.blocks, (float(obs["pose"][0]), float(obs["pose"][2]))


def river_world(exit_x: int | None) -> np.ndarray:
    """A 40 x 40 walled floor (top y = 8) with water across z = 24..28 a block below the banks,
    and a shore level with the water at ``exit_x .. exit_x + 2`` on the far bank."""
    content = load_content()
    blocks = np.zeros((40, 20, 40), dtype=np.uint8)
    blocks[:, :8, :] = content.block("dirt").id
    blocks[:, 7, 24:29] = 0
    blocks[:, 4:7, 24:29] = content.block("water").id
    if exit_x is not None:
        blocks[exit_x : exit_x + 3, 7, 29] = 0
    wall = content.block("wall").id
    blocks[0], blocks[-1], blocks[:, :, 0], blocks[:, :, -1] = wall, wall, wall, wall
    return blocks


@pytest.mark.parametrize("terrain", ["flat", "mountain", "forest", "desert", "unbounded"])
def test_goals_are_walkable_reachable_and_10_to_20_blocks_away(terrain):
    blocks, start = start_world(terrain, 0)
    world = HeightMap.from_blocks(blocks)
    config = NavigationTaskConfig(terrain=terrain)
    for seed in range(5):
        task = pick_goal(WorldGround(blocks), start, np.random.default_rng(seed), config)
        cell = world.cell(*task.goal)
        assert 10 <= math.dist(start, task.goal) <= 20
        assert not world.water[cell] and reachable(world, start)[cell]
        assert task.shortest >= math.dist(start, task.goal) - 3.0 - 1e-9


def test_the_goal_range_is_an_option_that_reaches_the_goals(tmp_path):
    """``--min-distance`` / ``--max-distance`` set how far from the spawn the goals lie."""
    from typer.testing import CliRunner

    from mrsteve.cli import app

    result = CliRunner().invoke(app, [
        "eval", "navigation", "--parts", "stand-in", "--terrain", "flat", "--min-distance", "30",
        "--max-distance", "40", "--episodes", "2", "--max-steps", "5", "--no-progress",
        "--json", str(tmp_path / "far.json")])
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for line in (tmp_path / "far.episodes.jsonl").read_text().splitlines()]
    assert len(records) == 2
    for record in records:
        assert 30 <= math.dist(record["trajectory"][0], record["goal"]) <= 40
    refused = CliRunner().invoke(app, ["eval", "navigation", "--min-distance", "30",
                                       "--max-distance", "20", "--no-progress",
                                       "--json", str(tmp_path / "bad.json")])
    assert refused.exit_code != 0 and "min_distance <= max_distance" in refused.output
    assert not (tmp_path / "bad.episodes.jsonl").exists()


def test_river_goals_lie_across_the_water_and_the_path_leaves_it_at_the_shore():
    blocks, start = river_world(exit_x=30), (20.5, 14.5)
    world = HeightMap.from_blocks(blocks)
    dry = reachable(world, start, allow_water=False)
    for seed in range(5):
        task = pick_goal(WorldGround(blocks), start, np.random.default_rng(seed),
                         NavigationTaskConfig(), across_water=True)
        assert 10 <= math.dist(start, task.goal) <= 20 and task.goal[1] > 29
        assert reachable(world, start)[world.cell(*task.goal)] and not dry[world.cell(*task.goal)]
        assert task.shortest > math.dist(start, (31.5, 29.5)) - 1  # by way of the shore
    with pytest.raises(ValueError, match="no goal 10-20 blocks .* across water"):
        pick_goal(WorldGround(river_world(exit_x=None)), start, np.random.default_rng(0),
                  NavigationTaskConfig(), across_water=True)


def test_shortest_path_on_flat_ground_is_the_straight_line_to_the_success_disc():
    blocks, start = start_world("flat", 0)
    task = pick_goal(WorldGround(blocks), start, np.random.default_rng(0),
                     NavigationTaskConfig())
    assert task.shortest == pytest.approx(math.dist(start, task.goal) - 3.0)


def test_the_learned_navigator_runs_by_default_and_the_depth_one_with_parts_stand_in():
    assert NavigationTaskConfig().navigators == ["learned"]
    assert NavigationTaskConfig(parts="stand-in").navigators == ["depth"]
    assert NavigationTaskConfig(parts="stand-in", navigator="depth,straight").navigators == [
        "depth", "straight"]
    with pytest.raises(ValueError, match="unknown parts 'pixels'; known: learned, stand-in"):
        NavigationTaskConfig(parts="pixels")


def test_unknown_terrain_or_navigator_names_the_valid_ones():
    with pytest.raises(ValueError, match="known: flat, plains, mountain, river"):
        NavigationTaskConfig(terrain="swamp")
    with pytest.raises(ValueError, match="known: depth, straight"):
        NavigationTaskConfig(navigator="vpt")


def test_an_episode_reports_the_metrics_and_its_trajectory():
    config = NavigationTaskConfig(terrain="flat", navigator="depth", max_steps=300,
                                  obs_size=(24, 40))
    (group,) = NAVIGATION.groups(config)
    (spec,) = group.episodes(1, 7)
    assert (spec.task.max_steps, spec.task.obs_size, spec.agent.name) == (300, (24, 40), "depth")
    assert spec.agent.navigator.success_radius == config.success_radius
    record = navigation_episode(spec)
    assert set(METRICS) <= set(record)
    assert record["success_rate"] == 100.0 and 0.5 < record["spl"] <= 1.0
    assert math.dist(record["trajectory"][-1], record["goal"]) <= 3.0
    assert record["trajectory"][0] == [32.5, 32.5]


def test_compact_trajectory_keeps_every_nth_position_and_the_last():
    path = np.arange(14, dtype=float).reshape(7, 2)
    assert compact_trajectory(path, 3) == [[0, 1], [6, 7], [12, 13]]
    assert compact_trajectory(path, 4) == [[0, 1], [8, 9], [12, 13]]


def test_trained_variants_run_beside_the_navigators_with_the_papers_rows(tmp_path):
    from mrsteve.eval.navigation import PAPER_CONDITIONING, PAPER_NAVIGATORS

    _small_weights("trxl", "adapter", 1e-4).save(tmp_path / "trxl.npz")
    _small_weights("head", "full", 1e-3).save(tmp_path / "kl.npz")
    config = NavigationTaskConfig(
        terrain="flat", navigator="straight",
        navigator_weights=f"{tmp_path / 'trxl.npz'},{tmp_path / 'kl.npz'}")
    groups = NAVIGATION.groups(config)
    assert [group.label for group in groups] == [
        "flat.straight", "flat.learned-trxl-adapter-kl0.0001", "flat.learned-head-full-kl0.001"]
    assert groups[1].spec.agent.training == ("trxl", "adapter", 1e-4)
    summaries = {group.label: {"success_rate": {"mean": 50.0, "stderr": 1.0, "n": 2},
                               "spl": {"mean": 0.5, "stderr": 0.1, "n": 2}} for group in groups}
    table = NAVIGATION.table(config, groups, summaries)
    lines = table.splitlines()
    trxl = next(line for line in lines if "learned-trxl" in line)
    assert "trxl/adapter" in trxl and f"{PAPER_CONDITIONING['trxl', 'adapter']['flat'][0]:.3f}" in trxl
    kl = next(line for line in lines if "learned-head-full" in line)
    assert "VPT-Nav (KL = 1e-3)" in kl
    assert f"{PAPER_NAVIGATORS['VPT-Nav (KL = 1e-3)']['flat'][0]:.3f}" in kl
    assert len(lines) == 2 + len(groups), "a header, a rule and one row per group"
    with pytest.raises(ValueError, match="not a navigator weights file"):
        (tmp_path / "bad.npz").write_text("no")
        NAVIGATION.groups(NavigationTaskConfig(terrain="flat",
                                               navigator_weights=str(tmp_path / "bad.npz")))


def test_retrains_of_one_recipe_run_side_by_side_told_apart_by_their_digests(tmp_path):
    """Two weights files trained alike (a retrain's spread) get groups and table rows of their
    own; the same file twice keeps one name, which the sweep refuses."""
    first, second = (_small_weights("head", "full", 1e-4, seed) for seed in (0, 1))
    first.save(tmp_path / "a.npz")
    second.save(tmp_path / "b.npz")
    config = NavigationTaskConfig(terrain="flat", navigator_weights=f"{tmp_path / 'a.npz'},"
                                                          f"{tmp_path / 'b.npz'}")
    groups = NAVIGATION.groups(config)
    assert [group.label for group in groups] == [
        "flat.learned", f"flat.learned-head-full-kl0.0001-{first.sha256[:8]}",
        f"flat.learned-head-full-kl0.0001-{second.sha256[:8]}"]
    summaries = {group.label: {"success_rate": {"mean": 50.0, "stderr": 1.0, "n": 2},
                               "spl": {"mean": 0.5, "stderr": 0.1, "n": 2}} for group in groups}
    table = NAVIGATION.table(config, groups, summaries)
    assert f"learned-head-full-kl0.0001-{second.sha256[:8]}" in table
    twice = NAVIGATION.groups(NavigationTaskConfig(
        terrain="flat", navigator_weights=f"{tmp_path / 'a.npz'},{tmp_path / 'a.npz'}"))
    assert twice[1].label == twice[2].label


def _small_weights(conditioning, finetune, kl, seed=0):
    from mrsteve.control.learned_navigator import NavigatorArchitecture, NavigatorWeights

    architecture = NavigatorArchitecture(channels=(4,), strides=(4,), dim=8, context=2, heads=2,
                                         mlp_dim=8, goal_hidden=4, conditioning=conditioning)
    rng = np.random.default_rng(seed)
    parameters = {name: rng.normal(0.0, 0.1, shape).astype(np.float32)
                  for name, shape in architecture.parameter_shapes().items()}
    return NavigatorWeights(architecture, parameters,
                            {"training": {"finetune": finetune, "kl": kl}})
