"""Held-out evaluation: the held-out world family and the renderer's other looks reach the
experiments as groups of their own, no training or calibration world is held out, and records
of the paper's set-up keep their digests."""

from __future__ import annotations

import pytest

from mrsteve.calibration.clips import CALIBRATION_WORLDS, HELD_OUT_WORLDS
from mrsteve.digests import HELD_OUT_WORLD_DATA, plain
from mrsteve.env import make_env
from mrsteve.eval.exploration import EXPLORATION, PAPER_SETUP, ExplorationTaskConfig
from mrsteve.eval.instruction import INSTRUCTION, InstructionTaskConfig
from mrsteve.eval.navigation import NAVIGATION, PAPER_TERRAINS, NavigationTaskConfig
from mrsteve.train.instruction import INSTRUCTION_WORLDS
from mrsteve.train.navigator import NAVIGATOR_WORLDS
from mrsteve.world.recipes import OWN_FILES, WORLD_RECIPES, held_out_world_names


def test_no_learned_part_trains_or_calibrates_in_a_held_out_world():
    held_out = held_out_world_names()
    assert held_out == {"heldout_highlands"} and held_out <= set(WORLD_RECIPES)
    for used in (INSTRUCTION_WORLDS, NAVIGATOR_WORLDS, CALIBRATION_WORLDS, HELD_OUT_WORLDS):
        assert not held_out & set(used)


def test_the_held_out_terrain_is_chosen_by_name_and_all_means_the_papers_four():
    assert NavigationTaskConfig().terrains == list(PAPER_TERRAINS)
    assert NavigationTaskConfig(terrain="highlands").terrains == ["highlands"]


def test_each_look_is_a_group_and_the_days_groups_are_those_of_before():
    config = NavigationTaskConfig(terrain="flat,highlands", look="day,dusk")
    groups = NAVIGATION.groups(config)
    assert [g.label for g in groups] == ["flat", "flat-dusk", "highlands", "highlands-dusk"]
    assert [g.spec.task.look for g in groups] == ["day", "dusk", "day", "dusk"]
    day = NAVIGATION.groups(NavigationTaskConfig(terrain="flat"))[0]
    assert day.spec.digest == groups[0].spec.digest
    assert "look" not in plain(day.spec.task) and plain(groups[1].spec.task)["look"] == "dusk"

    labels = [g.label for g in INSTRUCTION.groups(InstructionTaskConfig(
        item="log", look="day,overcast", world="heldout_highlands"))]
    assert labels == ["log.near.learned", "log.near-overcast.learned", "log.far.learned",
                      "log.far-overcast.learned"]
    labels = [g.label for g in EXPLORATION.groups(ExplorationTaskConfig(look="all"))]
    assert labels == ["count-based", "count-based-dusk", "count-based-overcast"]


@pytest.mark.parametrize(("terrain", "recipes"), [("highlands", HELD_OUT_WORLD_DATA),
                                                  ("forest", "world/data/forest_worlds.toml"),
                                                  ("desert", "world/data/desert_worlds.toml")])
def test_only_episodes_in_a_world_of_a_recipe_file_of_its_own_record_it(terrain, recipes):
    (paper,) = NAVIGATION.groups(NavigationTaskConfig(terrain="river"))
    (own,) = NAVIGATION.groups(NavigationTaskConfig(terrain=terrain))
    assert not {path for path, _ in paper.spec.data} & {f"world/{name}" for name in OWN_FILES}
    assert recipes in dict(own.spec.data) and "world/data/worlds.toml" in dict(own.spec.data)
    assert dict(own.spec.episode(3, 45).data) == dict(own.spec.data)


def test_a_run_in_another_look_is_not_the_papers_set_up():
    assert ExplorationTaskConfig().matches(PAPER_SETUP)
    assert not ExplorationTaskConfig(look="dusk").matches(PAPER_SETUP)


@pytest.mark.parametrize("config", [
    lambda: NavigationTaskConfig(look="noon"),
    lambda: InstructionTaskConfig(look="day,noon"),
    lambda: ExplorationTaskConfig(look=""),
])
def test_an_unknown_look_names_the_known_ones(config):
    with pytest.raises(ValueError, match="known: day, dusk, overcast"):
        config()


def test_the_environment_renders_in_its_look():
    frames = {}
    for look in ("day", "dusk"):
        with make_env(world="heldout_highlands", obs_size=(16, 24), look=look) as env:
            obs, _ = env.reset(seed=3)
            assert env.unwrapped.look == look
            frames[look] = obs
    assert (frames["day"]["depth"] == frames["dusk"]["depth"]).all()
    assert (frames["day"]["rgb"] != frames["dusk"]["rgb"]).any()


def test_a_table_of_several_looks_sets_them_side_by_side():
    config = NavigationTaskConfig(terrain="flat,river", look="day,dusk")
    groups = NAVIGATION.groups(config)
    summaries = {g.label: {"success_rate": {"mean": 100.0 if g.spec.task.look == "day" else 10.0,
                                            "stderr": 0.0, "n": 5},
                           "spl": {"mean": 0.9, "stderr": 0.01, "n": 5}} for g in groups}
    lines = NAVIGATION.table(config, groups, summaries).splitlines()
    assert lines[0].split() == ["terrain", "navigator", "success", "%", "(day)", "SPL", "(day)",
                                "success", "%", "(dusk)", "SPL", "(dusk)"]
    assert [line.split()[0] for line in lines[2:]] == ["flat", "river"]
    assert "100.0" in lines[2] and "10.0" in lines[2]
