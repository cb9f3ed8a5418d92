"""Each task starts with its own tool in hand, or an empty hand: shears left from a leaves task
must not turn a seeds task's grass into grass (Minecraft: tall grass gives seeds only by hand)."""

from __future__ import annotations

from mrsteve.env import make_env
from mrsteve.tasks.wrapper import ItemTasks


def test_a_task_without_a_tool_starts_with_an_empty_hand():
    env = make_env(world="flat", obs_size=(24, 40))
    tasks = ItemTasks(env, ["leaves", "wheat_seeds"])
    tasks.reset(seed=0)
    world = env.unwrapped.world
    assert world.inventory.held_item == "shears"
    tasks.env.unwrapped.apply_commands({"give": {"leaves": 1}})  # leaves obtained
    _, _, _, _, info = tasks.step({})
    assert info["task"].item == "wheat_seeds"
    assert world.inventory.held_item is None
    assert world.inventory.counts[env.unwrapped.item_names.index("shears")] == 1
