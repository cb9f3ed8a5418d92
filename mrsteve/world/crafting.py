"""Crafting: Minecraft 1.11's recipes as data (``data/crafting.toml``), and what the functional
``craft`` action does with them.

A :class:`Recipe` gives ``count`` of its output for its ingredients; one whose shape is wider or
taller than two cells needs the 3x3 grid of a crafting table placed within the player's reach
(:attr:`Recipe.needs_table`). :meth:`RecipeBook.craft` takes the ingredients from an inventory and
gives the output, or changes nothing and says why (an unknown item, a missing ingredient, no table
in reach), as MineDojo's functional action does.
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from types import MappingProxyType

from mrsteve.naming import unknown_name
from mrsteve.world.content import Content, load_content

GRID = 2
"""The inventory's crafting grid is 2 x 2; a larger shape needs a crafting table (3 x 3)."""
TABLE = "crafting_table"
"""The block whose 3 x 3 grid the larger recipes need within reach."""


@dataclass(frozen=True)
class Recipe:
    """One recipe: ``count`` of ``output`` for ``ingredients`` (item -> count); ``shape`` holds
    the rows of a shaped recipe (``None``: shapeless)."""

    output: str
    count: int
    ingredients: Mapping[str, int]
    shape: tuple[str, ...] | None = None

    @property
    def needs_table(self) -> bool:
        """Whether the recipe needs a crafting table's 3 x 3 grid."""
        if self.shape is None:
            return sum(self.ingredients.values()) > GRID * GRID
        return len(self.shape) > GRID or max(len(row) for row in self.shape) > GRID


@dataclass(frozen=True)
class CraftResult:
    """What one ``craft`` did: ``crafted`` items of ``item`` (0 when nothing happened, and then
    ``reason`` says why)."""

    item: str
    crafted: int
    reason: str | None = None

    @property
    def ok(self) -> bool:
        return self.crafted > 0


class RecipeBook:
    """Every recipe by output item; :attr:`names` is their order in the ``craft`` action."""

    def __init__(self, recipes: tuple[Recipe, ...]):
        self.recipes = MappingProxyType({recipe.output: recipe for recipe in recipes})
        self.names = tuple(recipe.output for recipe in recipes)

    def recipe(self, item: str) -> Recipe:
        """The recipe making ``item`` (an unknown item lists the craftable ones)."""
        recipe = self.recipes.get(item)
        if recipe is None:
            raise unknown_name("recipe", item, self.names)
        return recipe

    def missing(self, item: str, counts: Mapping[str, int]) -> dict[str, int]:
        """What ``counts`` (item -> held) lacks to craft ``item`` once."""
        need = self.recipe(item).ingredients
        return {name: n - counts.get(name, 0) for name, n in need.items()
                if counts.get(name, 0) < n}

    def check(self, item: str, counts: Mapping[str, int], table_in_reach: bool) -> str | None:
        """Why ``item`` cannot be crafted now, or ``None`` when it can."""
        if item not in self.recipes:
            return f"no recipe makes {item!r}; craftable: {', '.join(self.names)}"
        missing = self.missing(item, counts)
        if missing:
            return "missing " + ", ".join(f"{n} {name}" for name, n in missing.items())
        if self.recipes[item].needs_table and not table_in_reach:
            return f"{item} needs a crafting table within reach (its 3x3 grid)"
        return None


def parse_recipes(raw: Mapping, content: Content) -> RecipeBook:
    """Build and check the recipe book from the parsed TOML mapping."""
    items = set(content.item_names)
    recipes = []
    for entry in raw["recipe"]:
        output = entry.get("output")
        where = f"crafting: recipe {output!r}"
        if output not in items:
            raise ValueError(f"{where}: {unknown_name('item', output, sorted(items))}")
        count = entry.get("count", 1)
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise ValueError(f"{where}: count must be an int >= 1, got {count!r}")
        if ("shape" in entry) == ("ingredients" in entry):
            raise ValueError(f"{where}: give a shape with a key, or ingredients, not both")
        if "shape" in entry:
            shape = tuple(entry["shape"])
            key = entry.get("key", {})
            if not shape or len(shape) > 3 or any(not 0 < len(row) <= 3 for row in shape):
                raise ValueError(f"{where}: a shape is 1-3 rows of 1-3 cells, got {shape}")
            ingredients: dict[str, int] = {}
            for symbol in "".join(shape).replace(" ", ""):
                if symbol not in key:
                    raise ValueError(f"{where}: the shape's {symbol!r} is not in its key")
                ingredients[key[symbol]] = ingredients.get(key[symbol], 0) + 1
        else:
            shape = None
            ingredients = {name: int(n) for name, n in entry["ingredients"].items()}
        for name, n in ingredients.items():
            if name not in items or n < 1:
                raise ValueError(f"{where}: ingredient {name!r} x {n} needs a known item and a "
                                 "count >= 1")
        recipes.append(Recipe(output, count, MappingProxyType(ingredients), shape))
    if len({recipe.output for recipe in recipes}) != len(recipes):
        raise ValueError("crafting: one recipe per output item")
    return RecipeBook(tuple(recipes))


@cache
def load_recipes() -> RecipeBook:
    """The embedded world's recipes, parsed once per process."""
    text = resources.files("mrsteve.world").joinpath("data/crafting.toml").read_text("utf-8")
    return parse_recipes(tomllib.loads(text), load_content())
