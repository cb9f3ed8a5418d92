"""Crafting as Minecraft 1.11 has it: the recipes' counts and shapes, the 2 x 2 grid and the
crafting table's 3 x 3 one, crafts that cannot happen changing nothing and saying why, and placing
the held block (MineDojo's functional actions)."""

from __future__ import annotations

import numpy as np
import pytest

from mrsteve.env import make_env
from mrsteve.world.content import load_content, parse_content
from mrsteve.world.crafting import load_recipes, parse_recipes

RECIPES = {  # output: (count, ingredients, fits the inventory's 2 x 2 grid)
    "planks": (4, {"log": 1}, True),
    "stick": (4, {"planks": 2}, True),
    "crafting_table": (1, {"planks": 4}, True),
    "oak_stairs": (4, {"planks": 6}, False),
    "sign": (3, {"planks": 6, "stick": 1}, False),
    "fence": (3, {"planks": 4, "stick": 2}, False),
    "bed": (1, {"wool": 3, "planks": 3}, False),
    "painting": (1, {"stick": 8, "wool": 1}, False),
    "carpet": (3, {"wool": 2}, True),
    "item_frame": (1, {"stick": 8, "leather": 1}, False),
    "leather_boots": (1, {"leather": 4}, False),
    "leather_helmet": (1, {"leather": 5}, False),
    "leather_leggings": (1, {"leather": 7}, False),
    "leather_chestplate": (1, {"leather": 8}, False),
}
"""Minecraft 1.11's recipes for the appendix's crafting tasks and their prerequisites."""


@pytest.mark.parametrize("output", list(RECIPES))
def test_each_recipe_is_minecraft_1_11s(output):
    count, ingredients, small = RECIPES[output]
    recipe = load_recipes().recipe(output)
    assert (recipe.count, dict(recipe.ingredients), not recipe.needs_table) == (
        count, ingredients, small)


@pytest.fixture
def env():
    env = make_env(world="flat", obs_size=(16, 24))
    yield env
    env.close()


def inventory(env) -> dict[str, int]:
    return env.unwrapped.world.inventory.as_dict()


def test_a_craft_takes_the_ingredients_and_gives_the_output(env):
    env.reset(seed=0, options={"give": {"log": 2}})
    _, _, _, _, info = env.step({"craft": "planks"})
    assert info["craft"] == {"item": "planks", "crafted": 4, "reason": None}
    assert info["inventory_changes"] == {"log": -1, "planks": 4}
    index = env.unwrapped.recipe_names.index("stick") + 1
    _, _, _, _, info = env.step({"craft": index})  # the action space's index works alike
    assert info["craft"]["crafted"] == 4 and inventory(env) == {"log": 1, "planks": 2, "stick": 4}


@pytest.mark.parametrize(("give", "item", "reason"), [
    ({"planks": 5}, "oak_stairs", "missing 1 planks"),
    ({"planks": 6}, "oak_stairs", "needs a crafting table within reach"),
    ({}, "crafting_table", "missing 4 planks"),
])
def test_a_craft_that_cannot_happen_changes_nothing_and_says_why(env, give, item, reason):
    env.reset(seed=0, options={"give": give})
    before = inventory(env)
    _, _, _, _, info = env.step({"craft": item})
    assert info["craft"]["crafted"] == 0 and reason in info["craft"]["reason"]
    assert inventory(env) == before and info["inventory_changes"] == {}


def test_an_unknown_craft_lists_the_craftable_items(env):
    env.reset(seed=0)
    with pytest.raises(ValueError, match="unknown recipe 'diamond_sword'; known: planks, stick"):
        env.step({"craft": "diamond_sword"})
    with pytest.raises(ValueError, match="action 'craft' must be 0"):
        env.step({"craft": 99})


def place_table(env, pitch: float = 60.0):
    """Stand at (20.5, 20.5) facing +z, look ``pitch`` degrees down and place the held table."""
    env.unwrapped.apply_commands({"teleport": {"x": 20.5, "z": 20.5, "yaw": 0.0, "pitch": pitch}})
    return env.step({"place": 1})


def test_a_placed_crafting_table_opens_the_3x3_recipes_within_reach(env):
    env.reset(seed=0, options={"give": {"crafting_table": 1, "planks": 12},
                               "equip": "crafting_table"})
    _, _, _, _, info = place_table(env)
    world = env.unwrapped.world
    cell = tuple(int(c) for c in np.argwhere(world.blocks == load_content().block(
        "crafting_table").id)[0])
    assert [e.kind for e in info["events"]] == ["consumed", "placed"]
    assert cell[2] > 20 and "crafting_table" not in inventory(env), "in front, from the hand"
    _, _, _, _, info = env.step({"craft": "oak_stairs"})
    assert info["craft"]["crafted"] == 4 and inventory(env)["planks"] == 6
    env.unwrapped.apply_commands({"teleport": {"x": 20.5, "z": 30.5}})  # 8 blocks away
    _, _, _, _, info = env.step({"craft": "oak_stairs"})
    assert "needs a crafting table within reach" in info["craft"]["reason"]


def test_the_crafting_table_shows_as_planks_to_the_semantic_frame(env):
    content = load_content()
    env.reset(seed=0, options={"give": {"crafting_table": 1}, "equip": "crafting_table"})
    obs, *_ = place_table(env, pitch=30.0)
    assert content.block_semantic[content.block("crafting_table").id] == content.semantic_id(
        "planks")
    assert (obs["semantic"] == content.semantic_id("planks")).any()


def test_a_block_placed_onto_tall_grass_takes_its_cell(env):
    """Minecraft's replaceable blocks: the table replaces the grass it is placed on, where the
    face in front of the grass would often be the player's own cell."""
    env.reset(seed=0, options={"give": {"crafting_table": 1}, "equip": "crafting_table"})
    world = env.unwrapped.world
    content = load_content()
    feet = int(world.player[1])
    grass = [(20, feet, z) for z in range(21, 24)]
    for cell in grass:
        world.blocks[cell] = content.block("tall_grass").id
    _, _, _, _, info = place_table(env, pitch=45.0)
    table = [tuple(int(c) for c in cell) for cell in np.argwhere(
        world.blocks == content.block("crafting_table").id)]
    assert [e.kind for e in info["events"]] == ["consumed", "placed"]
    assert len(table) == 1 and table[0] in grass


@pytest.mark.parametrize(("pitch", "held"), [(90.0, "crafting_table"), (-60.0, "crafting_table"),
                                             (60.0, "sword")])
def test_nothing_is_placed_into_the_player_into_the_air_or_from_a_non_block(env, pitch, held):
    env.reset(seed=0, options={"give": {held: 1}, "equip": held})
    blocks = env.unwrapped.world.blocks.copy()
    _, _, _, _, info = place_table(env, pitch)
    assert info["events"] == () and inventory(env) == {held: 1}
    np.testing.assert_array_equal(env.unwrapped.world.blocks, blocks)


def test_bad_recipes_and_placeable_items_are_refused_naming_the_problem():
    content = load_content()
    with pytest.raises(ValueError, match="the shape's 'Q' is not in its key"):
        parse_recipes({"recipe": [{"output": "stick", "shape": ["Q"], "key": {"P": "planks"}}]},
                      content)
    with pytest.raises(ValueError, match="unknown item 'diamond'"):
        parse_recipes({"recipe": [{"output": "diamond", "ingredients": {"log": 1}}]}, content)
    with pytest.raises(ValueError, match="a shape with a key, or ingredients, not both"):
        parse_recipes({"recipe": [{"output": "stick", "ingredients": {"log": 1},
                                   "shape": ["P"], "key": {"P": "planks"}}]}, content)
    import tomllib
    from importlib import resources

    raw = tomllib.loads(resources.files("mrsteve.world").joinpath(
        "data/content.toml").read_text())
    raw["item"][0]["places"] = "lava"
    with pytest.raises(ValueError, match="places the unknown block 'lava'"):
        parse_content(raw)
