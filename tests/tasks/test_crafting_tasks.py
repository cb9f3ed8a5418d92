"""Crafting tasks (appendix "LLM-Augmented Agent with MrSteve"): the appendix's task table as data,
and success read from the inventory."""

from __future__ import annotations

import pytest

from mrsteve.env import make_env
from mrsteve.tasks.catalog import CraftingTask
from mrsteve.tasks.crafting import crafting_env_kwargs, find_crafting, run_crafting

APPENDIX_TABLE = {"oak_stairs": 3000, "sign": 3000, "fence": 3000, "bed": 6000,
                  "painting": 6000, "carpet": 6000, "item_frame": 6000, "leather_boots": 6000,
                  "leather_chestplate": 6000, "leather_helmet": 6000, "leather_leggings": 6000}


def test_the_tasks_are_the_appendix_table():
    tasks = find_crafting("all")
    assert {task.item: task.max_steps for task in tasks} == APPENDIX_TABLE
    assert all(task.tools == ("sword",) and task.world == "plains" for task in tasks)
    with pytest.raises(ValueError, match="oak-stairs"):
        find_crafting("oak_stair")


class Crafter:
    """Crafts ``item`` every step (or nothing): a scripted agent."""

    name = "crafter"

    def __init__(self, item: str | None) -> None:
        self.item = item
        self.told = None

    def reset(self, obs, rng, camera):
        pass

    def set_task(self, task, t):
        self.told = task

    def act(self, obs, t):
        return {"craft": self.item} if self.item else {}


@pytest.mark.parametrize(("item", "success"), [("planks", True), (None, False)])
def test_success_is_the_item_arriving_in_the_inventory(item, success):
    task = CraftingTask("planks", "planks", "flat", max_steps=50, tools=("log",))
    agent = Crafter(item)
    with make_env(**crafting_env_kwargs(task)) as env:
        result = run_crafting(env, agent, task, seed=0)
    assert agent.told is task
    assert result.success is success
    assert result.steps == (1 if success else 50)
