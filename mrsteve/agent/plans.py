"""Plans for crafting tasks (paper appendix "LLM-Augmented Agent with MrSteve"): subgoals, and the
ground-truth plan from the recipe graph.

A plan is a list of :class:`Subgoal`: ``mine`` (obtain an item the world gives, such as logs, wool
or leather: the low-level controller's instruction, as in the ABA tasks) or ``craft`` (make an
item with the functional ``craft`` action, placing a crafting table first when the recipe needs
one). :func:`ground_truth_plan` is the shortest plan from the recipes (the paper's second table):
what the target needs, counted through the recipe graph, the crafting table once when a recipe
needs it, the raw items mined first.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from mrsteve.world.crafting import TABLE, RecipeBook

SUBGOAL_KINDS = ("mine", "craft")


@dataclass(frozen=True)
class Subgoal:
    """One step of a plan: ``mine`` until ``count`` of ``item`` are in the inventory, or
    ``craft`` until ``count`` of ``item`` have been made."""

    kind: str
    item: str
    count: int = 1

    def __post_init__(self) -> None:
        if self.kind not in SUBGOAL_KINDS:
            raise ValueError(f"a subgoal is one of {', '.join(SUBGOAL_KINDS)}, got {self.kind!r}")
        if isinstance(self.count, bool) or not isinstance(self.count, int) or self.count < 1:
            raise ValueError(f"a subgoal's count is an int >= 1, got {self.count!r}")

    def __str__(self) -> str:
        return f"{self.kind} {self.item} x{self.count}"


def requirements(target: str, recipes: RecipeBook, have: dict[str, int] | None = None
                 ) -> tuple[dict[str, int], dict[str, int]]:
    """What one ``target`` needs, through the recipe graph: ``(crafts, raw)``, the number of
    times each item must be crafted (ingredients before what they make) and the count of each raw
    item to obtain, after what ``have`` already holds. A recipe larger than 2 x 2 adds one
    crafting table (unless one is had)."""
    have = dict(have or {})
    crafts: dict[str, int] = {}
    raw: dict[str, int] = {}

    def need(item: str, count: int) -> None:
        spare = min(have.get(item, 0), count)
        have[item] = have.get(item, 0) - spare
        count -= spare
        if count <= 0:
            return
        if item not in recipes.recipes:
            raw[item] = raw.get(item, 0) + count
            return
        recipe = recipes.recipe(item)
        times = math.ceil(count / recipe.count)
        have[item] = have.get(item, 0) + times * recipe.count - count  # the surplus made
        crafts[item] = crafts.get(item, 0) + times
        if recipe.needs_table and TABLE not in crafts and have.get(TABLE, 0) == 0:
            need(TABLE, 1)
            have[TABLE] = have.get(TABLE, 0) + 1  # placed, it serves every later craft
        for ingredient, per_craft in recipe.ingredients.items():
            need(ingredient, per_craft * times)

    need(target, 1)
    book = list(recipes.names)
    ordered = sorted(crafts, key=lambda item: (depth(item, recipes), book.index(item)))
    return {item: crafts[item] for item in ordered}, raw


def depth(item: str, recipes: RecipeBook) -> int:
    """How many crafts deep ``item`` lies above the raw items (0 for a raw one); a recipe that
    needs a crafting table lies above the table."""
    if item not in recipes.recipes:
        return 0
    recipe = recipes.recipe(item)
    below = [depth(name, recipes) for name in recipe.ingredients]
    if recipe.needs_table:
        below.append(depth(TABLE, recipes))
    return 1 + max(below)


def ground_truth_plan(target: str, recipes: RecipeBook,
                      have: dict[str, int] | None = None) -> list[Subgoal]:
    """The shortest plan for one ``target`` from ``have``: mine each raw item, then craft each
    item in dependency order (its count the items that many crafts make)."""
    crafts, raw = requirements(target, recipes, have)
    plan = [Subgoal("mine", item, count + (have or {}).get(item, 0))
            for item, count in raw.items()]
    plan += [Subgoal("craft", item, times * recipes.recipe(item).count)
             for item, times in crafts.items()]
    return plan
