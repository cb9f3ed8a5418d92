"""The ground-truth plans of the crafting tasks: the shortest plan from the recipe graph, as long
as the paper's "required subgoals" (appendix table), and what it makes the controller obtain."""

from __future__ import annotations

import pytest

from mrsteve.agent.plans import Subgoal, ground_truth_plan, requirements
from mrsteve.world.crafting import load_recipes

PAPER = {  # task: (required subgoals, items to obtain), the appendix's table
    "oak_stairs": (4, {"log": 3}),
    "sign": (5, {"log": 3}),
    "fence": (5, {"log": 3}),
    "bed": (5, {"log": 3, "wool": 3}),
    "painting": (6, {"log": 2, "wool": 1}),
    "carpet": (2, {"wool": 2}),
    "item_frame": (6, {"log": 2, "leather": 1}),
    "leather_boots": (5, {"log": 1, "leather": 4}),
    "leather_chestplate": (5, {"log": 1, "leather": 8}),
    "leather_helmet": (5, {"log": 1, "leather": 5}),
    "leather_leggings": (5, {"log": 1, "leather": 7}),
}


@pytest.mark.parametrize("target", list(PAPER))
def test_the_plan_is_as_short_as_the_papers_and_obtains_its_items(target):
    plan = ground_truth_plan(target, load_recipes())
    subgoals, items = PAPER[target]
    assert len(plan) == subgoals
    mined = {step.item: step.count for step in plan if step.kind == "mine"}
    if target == "bed":  # 3 planks for the bed and 4 for the table: 2 logs make 8
        assert mined == {"log": 2, "wool": 3}
    else:
        assert mined == items
    assert plan[-1] == Subgoal("craft", target, load_recipes().recipe(target).count)


@pytest.mark.parametrize("target", list(PAPER))
def test_every_craft_of_the_plan_has_its_ingredients_and_table_when_it_comes(target):
    """Replaying the plan on an inventory: each craft finds its ingredients, and a recipe larger
    than 2 x 2 finds the crafting table made before it."""
    recipes = load_recipes()
    inventory: dict[str, int] = {}
    for step in ground_truth_plan(target, recipes):
        if step.kind == "mine":
            inventory[step.item] = step.count
            continue
        recipe = recipes.recipe(step.item)
        for _ in range(step.count // recipe.count):
            assert recipes.check(step.item, inventory, inventory.get("crafting_table", 0) > 0) \
                is None, (step, inventory)
            for name, n in recipe.ingredients.items():
                inventory[name] -= n
            inventory[step.item] = inventory.get(step.item, 0) + recipe.count
    assert inventory[target] >= 1


def test_what_is_held_already_shortens_the_plan():
    recipes = load_recipes()
    assert ground_truth_plan("sign", recipes, {"planks": 12}) == [
        Subgoal("craft", "stick", 4), Subgoal("craft", "crafting_table", 1),
        Subgoal("craft", "sign", 3)]
    crafts, raw = requirements("oak_stairs", recipes, {"crafting_table": 1, "log": 1})
    assert crafts == {"planks": 2, "oak_stairs": 1} and raw == {"log": 1}


def test_a_subgoal_is_checked():
    with pytest.raises(ValueError, match="mine, craft"):
        Subgoal("smelt", "iron")
    with pytest.raises(ValueError, match="count is an int >= 1"):
        Subgoal("mine", "log", 0)
    assert str(Subgoal("mine", "log", 3)) == "mine log x3"
