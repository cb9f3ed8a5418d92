"""The instruction experiment (the instruction policy alone): where the evaluator places the
agent, success read from the inventory, and the groups it runs."""

from __future__ import annotations

import numpy as np
import pytest

from mrsteve.agent.factory import agent_config
from mrsteve.env import make_env
from mrsteve.eval.instruction import (
    EVERYWHERE,
    INSTRUCTION,
    STEEP_PITCH,
    EpisodeWatch,
    InstructionTask,
    InstructionTaskConfig,
    instruction_episode,
    target_positions,
)
from mrsteve.eval.spec import RunSpec
from mrsteve.tasks.placement import place_agent


@pytest.mark.parametrize(("item", "distance"), [("beef", (0.0, 12.0)), ("water_bucket",
                                                                        (20.0, 40.0))])
def test_the_agent_is_placed_at_the_asked_distance_from_the_nearest_target(item, distance):
    env = make_env(world="plains")
    env.reset(seed=4)
    world = env.unwrapped.world
    targets = target_positions(world, item)
    assert len(targets)
    place = place_agent(world, targets, np.random.default_rng(0), distance)
    nearest = np.min(np.hypot(targets[:, 0] - place["x"], targets[:, 1] - place["z"]))
    assert distance[0] <= nearest <= distance[1]
    with pytest.raises(ValueError, match="no standing place"):
        place_agent(world, target_positions(world, "dirt"), np.random.default_rng(0),
                    (20.0, 40.0))


def test_success_is_read_from_the_inventory():
    task = InstructionTask("wool", "near", (0.0, 12.0), "plains", 300, (40, 64))
    record = instruction_episode(RunSpec("instruction", "wool.near.scripted", "instruction/wool",
                                         task, agent_config("steve1", parts="stand-in"), seed=3))
    assert record["success_rate"] == 100.0 and 0 < record["steps"] < 300
    assert record["closest"] <= 4.0  # it reached a sheep to shear
    short = InstructionTask("wool", "near", (0.0, 12.0), "plains", 1, (40, 64))
    record = instruction_episode(RunSpec("instruction", "wool.near.scripted", "instruction/wool",
                                         short, agent_config("steve1", parts="stand-in"), seed=3))
    assert record["success_rate"] == 0.0 and record["steps"] == 1


def test_the_watch_reports_the_closest_approach_other_items_and_looking_down_or_up():
    env = make_env(world="plains")
    obs, _ = env.reset(seed=4)
    world = env.unwrapped.world
    names = world.content.item_names
    target = target_positions(world, "log")[0]
    watch = EpisodeWatch(world, "log", obs["inventory"])

    def at(x, z, pitch):
        return {"pose": np.array([x, 70.0, z, 0.0, pitch], np.float32)}

    watch.update(at(target[0] + 40, target[1], 0.0))
    watch.update(at(target[0] + 0.5, target[1], STEEP_PITCH + 10))  # over the target, looking down
    watch.update(at(target[0] + 20, target[1], -30.0))  # a little up counts as neither
    watch.update(at(target[0] + 20, target[1], -(STEEP_PITCH + 20)))  # at the sky
    inventory = obs["inventory"].copy()
    inventory[names.index("log")] += 2  # the task's item is not an other item
    inventory[names.index("dirt")] += 3
    seen = watch.metrics(inventory)
    assert seen["closest"] <= 0.5
    assert seen["other_items"] == 3.0
    assert seen["looking_down"] == pytest.approx(100 / 4)
    assert seen["looking_up"] == pytest.approx(100 / 4)


def test_the_watch_counts_the_presses_aimed_at_a_target_of_the_skill():
    env = make_env(world="plains")
    obs, _ = env.reset(seed=4)
    world = env.unwrapped.world
    watch = EpisodeWatch(world, "log", obs["inventory"])
    assert watch.metrics(obs["inventory"])["aimed"] is None  # nothing pressed yet
    ahead = tuple(int(v) for v in np.floor(np.asarray(world.eye) + 2.0 * np.asarray(world.look)))
    content = world.content
    for block, action in [("oak_log", {"attack": 1}),  # a log of the skill: aimed
                          ("oak_log", {"forward": 1}),  # no attack or use: not counted
                          ("dirt", {"attack": 1}),  # another block: a press, not aimed
                          ("air", {"use": 1})]:  # no log ahead: a press, not aimed
        world.blocks[ahead] = content.block(block).id
        watch.pressed(action)
    assert watch.presses == 3 and watch.aimed == 1
    assert watch.metrics(obs["inventory"])["aimed"] == pytest.approx(100 / 3)


def test_groups_pair_every_policy_on_the_same_task_and_skip_far_for_ground_cover():
    groups = INSTRUCTION.groups(InstructionTaskConfig(instruction_policy="scripted,learned"))
    labels = [group.label for group in groups]
    assert "beef.far.learned" in labels and "beef.near.scripted" in labels
    assert not any(label.startswith(tuple(f"{item}.far" for item in EVERYWHERE))
                   for label in labels)
    assert {g.spec.agent.instruction_policy for g in groups} == {"scripted", "learned"}
    with pytest.raises(ValueError, match="placement"):
        InstructionTaskConfig(placement="above")


def test_the_learned_policy_runs_by_default_and_the_scripted_one_with_parts_stand_in():
    """STEVE-1's role is played by the policy over the RGB frame unless --parts stand-in (or
    --instruction-policy) says otherwise."""
    def policies(**options) -> set[str]:
        config = InstructionTaskConfig(item="beef", **options)
        return {group.spec.agent.instruction_policy for group in INSTRUCTION.groups(config)}

    assert policies() == {"learned"}
    assert policies(parts="stand-in") == {"scripted"}
    assert policies(parts="stand-in", instruction_policy="learned") == {"learned"}


def test_cut_trees_are_a_condition_of_their_own_and_whole_trees_keep_their_specs():
    """--trees runs the same placements on a world whose trees were cut (its own groups and
    digests); the default's specs are those of a config without the option."""
    whole = INSTRUCTION.groups(InstructionTaskConfig(item="log", placement="near"))
    foot = INSTRUCTION.groups(InstructionTaskConfig(item="log", placement="near", trees="foot"))
    assert [g.label for g in whole] == ["log.near.learned"]
    assert [g.label for g in foot] == ["log.near-trees-foot.learned"]
    assert whole[0].spec.task.trees == "whole" and foot[0].spec.task.trees == "foot"
    assert whole[0].spec.digest != foot[0].spec.digest
    plain = InstructionTask("log", "near", (0.0, 12.0), "plains", 600, (40, 64))
    assert plain == InstructionTask("log", "near", (0.0, 12.0), "plains", 600, (40, 64),
                                    "day", "whole")
    with pytest.raises(ValueError, match="unknown trees 'stumps'; known: whole, eye, foot"):
        InstructionTaskConfig(trees="stumps")
    every = INSTRUCTION.groups(InstructionTaskConfig(item="log", placement="near",
                                                     trees="whole,eye,foot"))
    assert [g.label for g in every] == ["log.near.learned", "log.near-trees-eye.learned",
                                        "log.near-trees-foot.learned"]
    task = InstructionTask("log", "near", (0.0, 12.0), "long_instruction", 1, (40, 64),
                           trees="foot")
    record = instruction_episode(RunSpec("instruction", "log.near-trees-foot.scripted",
                                         "instruction/log", task,
                                         agent_config("steve1", parts="stand-in"), seed=3))
    assert record["success_rate"] == 0.0 and record["steps"] == 1
