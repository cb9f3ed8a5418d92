"""The content file: Minecraft 1.11's drops, tools and combat as data, checked when it is loaded."""

import copy
import tomllib
from importlib import resources

import pytest

from mrsteve.world.content import Attack, BlockDrop, load_content, parse_content

RAW = tomllib.loads(
    resources.files("mrsteve.world").joinpath("data/content.toml").read_text("utf-8")
)


def test_the_shipped_rules_are_minecrafts():
    content = load_content()
    assert content.block("tall_grass").drops_with(None) == (BlockDrop("wheat_seeds", 0.125),)
    assert content.block("tall_grass").drops_with("shears") == (
        BlockDrop("tall_grass", 1.0, "shears"),
    )
    assert content.block("oak_leaves").drops_with(None) == (
        BlockDrop("sapling", 0.05),
        BlockDrop("apple", 0.005),
    )
    assert content.block("oak_leaves").drops_with("sword") == content.block(
        "oak_leaves"
    ).drops_with(None)
    assert content.block("stone").drops == ()
    cow, sheep, zombie = (content.mob(name) for name in ("cow", "sheep", "zombie"))
    assert (cow.health, sheep.health, zombie.health) == (10, 8, 20)
    assert cow.drops == (("beef", 1, 3), ("leather", 0, 2))
    assert dict(cow.use_with) == {"bucket": ("milk_bucket", 1, 1)}
    assert sheep.drops == (("wool", 1, 1),) and dict(sheep.use_with) == {"shears": ("wool", 1, 3)}
    assert content.hand == Attack(1.0, 0.25) and content.attack("sword") == Attack(6.0, 0.625)


def edited(edit) -> dict:
    raw = copy.deepcopy(RAW)
    edit(raw)
    return raw


def block(raw, name):
    return next(b for b in raw["block"] if b["name"] == name)


def item(raw, name):
    return next(i for i in raw["item"] if i["name"] == name)


@pytest.mark.parametrize(
    ("edit", "message"),
    [
        (lambda r: block(r, "dirt").update(drops=[{"item": "diamond"}]), "unknown item 'diamond'"),
        (lambda r: block(r, "dirt").update(drops=[{"item": "dirt", "chance": 0.0}]),
         r"chance in \(0, 1\]"),
        (lambda r: block(r, "dirt").update(drops=[{"item": "dirt", "tool": "pickaxe"}]),
         "unknown item 'pickaxe'"),
        (lambda r: block(r, "dirt").update(drops=[{"item": "dirt", "count": 2}]),
         "unknown drop keys"),
        (lambda r: block(r, "dirt").update(drop="dirt"), "not drop / drop_chance"),
        (lambda r: block(r, "oak_leaves").update(tool_speed={"shears": 0}), "positive speed"),
        (lambda r: item(r, "sword").pop("attack_cooldown"), "damage and attack_cooldown go together"),
        (lambda r: item(r, "sword").update(damage=-1.0), "damage must be positive"),
        (lambda r: r["mob"][1].update(use_with={"shears": "wool"}), r"expected \[item, min, max\]"),
        (lambda r: r["mob"][1].update(use_with={"shears": ["wool", 3, 1]}), "0 <= min <= max"),
        (lambda r: r["mob"][1].update(use_with={"laser": ["wool", 1, 1]}), "unknown item 'laser'"),
    ],
)  # fmt: skip
def test_bad_rules_are_rejected_naming_the_problem(edit, message):
    with pytest.raises(ValueError, match=message):
        parse_content(edited(edit))
