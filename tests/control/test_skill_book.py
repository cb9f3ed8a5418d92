"""The skill rules as data: ``data/skills.toml`` parsed and checked (mrsteve.control.skill_book)."""

from __future__ import annotations

import pytest

from mrsteve.control.skill_book import load_skills, parse_skills
from mrsteve.world.content import load_content

CONTENT = load_content()


def test_every_prompt_of_the_shipped_rules_has_a_target_class_and_item():
    book = load_skills()
    assert "break a leaves" in book.prompts  # the release's spelling
    for skill in book.skills:
        assert skill.success in CONTENT.item_names
        assert all(name in CONTENT.semantic_classes for name in skill.targets)
    assert book.skill("get water bucket").methods[0].hold == "bucket"
    assert book.skill("kill cow").on_mobs and not book.skill("get dirt").on_mobs


GOOD = {"prompt": "get sand", "targets": ["sand"], "success": "sand",
        "methods": [{"interaction": "attack"}]}  # fmt: skip


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"targets": ["lava"]}, "target 'lava' is not a block or mob class; classes: grass_block"),
        ({"targets": ["sand", "cow"]}, "all blocks or all mobs"),
        ({"success": "diamond"}, "success 'diamond' is not an item; items: bucket"),
        ({"methods": [{"interaction": "kick"}]}, "interaction must be one of attack, use"),
        ({"methods": [{"interaction": "use", "hold": "pickaxe"}]}, "hold 'pickaxe' is not an item"),
        ({"methods": [{"interaction": "use", "tool": "shears"}]}, "unknown method keys"),
        ({"methods": []}, "has no methods"),
        ({"alias": ["sand please"]}, "unknown keys \\['alias'\\]; accepted: prompt, aliases"),
    ],
)
def test_bad_rules_are_rejected_naming_what_is_accepted(change, message):
    with pytest.raises(ValueError, match=message):
        parse_skills({"skill": [{**GOOD, **change}]}, CONTENT)


def test_a_prompt_given_twice_is_rejected():
    with pytest.raises(ValueError, match="appears twice"):
        parse_skills({"skill": [GOOD, {**GOOD, "aliases": ["x"]}]}, CONTENT)
