"""The exploration experiment: explorers on Map 1 and the metrics an episode reports."""

from __future__ import annotations

import pytest

from mrsteve.agent.factory import EXPLORERS
from mrsteve.eval.exploration import (
    EXPLORATION,
    PAPER_RESULTS,
    ExplorationTaskConfig,
    exploration_episode,
)
from mrsteve.tasks.exploration import METRICS, walkable_bounds


@pytest.mark.parametrize("agent", EXPLORERS)
def test_every_explorer_runs_an_episode_and_reports_the_metrics(agent):
    size = (40, 64) if "dqn" in agent else (24, 40)  # the DQN's weights take 40 x 64 frames
    config = ExplorationTaskConfig(agent=agent, parts="stand-in", steps=120, obs_size=size)
    (group,) = EXPLORATION.groups(config)
    (spec,) = group.episodes(1, 3)
    assert (spec.task.steps, spec.task.obs_size, spec.agent.name) == (120, size, agent)
    assert spec.agent.explorer.goals.patch_size == config.goal_patch == 15.0
    record = exploration_episode(spec)
    assert set(METRICS) <= set(record)
    assert 0 < record["map_coverage"] <= 100 and record["revisit_count"] == 0.0
    assert len(record["trajectory"]) == 120 // 5 + 1
    assert record["trajectory"][0] == [50.5, 50.5]
    assert bool(record["goals"]) == (agent != "go-explore")
    assert agent in PAPER_RESULTS


def test_walkable_bounds_are_inside_the_wall_ring():
    import numpy as np

    assert walkable_bounds(np.zeros((100, 64, 100), np.uint8)) == (1.0, 1.0, 99.0, 99.0)


def test_unknown_agent_names_the_valid_ones():
    with pytest.raises(ValueError, match="known: count-based, count-based-straight, plan4mc"):
        ExplorationTaskConfig(agent="random")


def test_an_unbounded_world_is_measured_on_the_square_around_the_start():
    """WISE's set-up: coverage of the --area square centred on the start; G defaults to 15 % of
    its side; without --area an unbounded world is refused (it has no walls to measure in)."""
    with pytest.raises(ValueError, match="unbounded: give --area"):
        ExplorationTaskConfig(world="plains_unbounded")
    config = ExplorationTaskConfig(world="plains_unbounded", area=96.0, steps=200,
                                   obs_size=(24, 40), parts="stand-in")
    assert config.goal_patch == round(0.15 * 96)
    (group,) = EXPLORATION.groups(config)
    (spec,) = group.episodes(1, 5)
    record = exploration_episode(spec)
    start = record["trajectory"][0]
    # an 11 x 11 grid of 96 / 11-block cells centred on the start: the start's cell and a few more
    assert 1 / 121 * 100 <= record["map_coverage"] <= 20
    assert all(abs(p[0] - start[0]) < 48 and abs(p[1] - start[1]) < 48
               for p in record["trajectory"][:5])
    table = EXPLORATION.table(config, [group], {group.label: {
        "map_coverage": {"mean": record["map_coverage"], "n": 1},
        "revisit_count": {"mean": 0.0, "n": 1}}})
    assert "coverage % of 96 x 96" in table and "WISE" in table


def test_the_explorers_walk_with_the_navigator_parts_names():
    """MrSteve's explorer walks with the learned navigator by default, the depth one with --parts
    stand-in; explorers with a low level of their own (Plan4MC's) keep it."""
    def navigators(**options) -> dict[str, str]:
        config = ExplorationTaskConfig(agent="count-based,plan4mc-straight", **options)
        return {group.agent: group.spec.agent.explorer.navigator
                for group in EXPLORATION.groups(config)}

    assert navigators() == {"count-based": "learned", "plan4mc-straight": "straight"}
    assert navigators(parts="stand-in") == {"count-based": "depth",
                                            "plan4mc-straight": "straight"}
    assert navigators(parts="stand-in", navigator="learned")["count-based"] == "learned"


def test_the_frontier_option_reaches_the_explorer_and_is_left_out_of_default_trees():
    """``--frontier rings`` (beyond the paper, for unbounded worlds) reaches every count-based
    explorer's goal selector; the default (the paper's nearest patch) leaves the agent tree,
    and so the digests of runs made before the option, as they were."""
    default = ExplorationTaskConfig(world="plains_unbounded", area=384.0)
    rings = ExplorationTaskConfig(world="plains_unbounded", area=384.0, frontier="rings")
    (before,), (after,) = EXPLORATION.groups(default), EXPLORATION.groups(rings)
    assert "frontier" not in before.spec.tree()["agent"]["explorer"]["goals"]
    assert after.spec.tree()["agent"]["explorer"]["goals"]["frontier"] == "rings"
    assert before.spec.digest != after.spec.digest
    with pytest.raises(ValueError, match="unknown frontier 'outward'; known: nearest, rings"):
        ExplorationTaskConfig(frontier="outward")
