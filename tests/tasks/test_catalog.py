"""The task data file: per item the tool handed over and the prompts, and the suites; checked at
load."""

from __future__ import annotations

import dataclasses

import pytest

from mrsteve.perception import TaskPrompts, load_lexicon
from mrsteve.tasks.catalog import load_catalog, parse_catalog, task_prompts
from mrsteve.world.content import load_content
from mrsteve.world.recipes import WORLD_RECIPES


def test_task_prompts_follow_the_release_table():
    assert task_prompts("water_bucket") == TaskPrompts(
        "water_bucket", "near water", "get water bucket", "near pasture", pytest.approx(0.2214)
    )
    assert task_prompts("log").place == "near pasture"
    assert task_prompts("sand").place == "near desert"
    assert task_prompts("wheat_seeds").explore == "near grass"
    assert task_prompts("wool").mineclip_threshold == pytest.approx(0.2342)
    assert set(load_catalog().items) == {"log", "leaves", "water_bucket", "beef", "milk_bucket",
                                         "wool", "sand", "wheat_seeds", "dirt", "leather"}
    with pytest.raises(dataclasses.FrozenInstanceError):
        task_prompts("beef").explore = "near pig"


def test_tools_are_handed_over_for_the_items_that_need_them():
    catalog = load_catalog()
    tools = {item: task.tool for item, task in catalog.items.items() if task.tool is not None}
    assert tools == {"water_bucket": "bucket", "milk_bucket": "bucket", "beef": "sword",
                     "leather": "sword", "wool": "sword", "leaves": "shears"}


def test_unknown_item_lists_the_known_ones():
    with pytest.raises(ValueError, match="unknown task item 'diamond'; known: log"):
        task_prompts("diamond")


def test_every_prompt_of_the_table_is_in_the_lexicon():
    texts = set(load_lexicon().texts)
    for task in load_catalog().items.values():
        assert {task.prompts.explore, task.prompts.execute, task.prompts.place} <= texts


def raw(**item):
    entry = {"item": "beef", "explore": "near cow", "execute": "kill cow",
             "mineclip_threshold": 23.55, **item}
    return {"item": [entry], "short": {"beef": "beef"},
            "suite": {"s": {"labels": ["A"], "max_steps": 10, "world": "map2",
                            "tasks": [{"name": "beef"}]}}}


def test_task_table_is_checked_at_load():
    items, worlds = load_content().item_names, tuple(WORLD_RECIPES)
    catalog = parse_catalog(raw(), items, worlds)
    assert catalog.by_key("s/beef").items == ("beef",) and catalog.item("beef").tool is None
    with pytest.raises(ValueError, match="unknown item \\(tasks.toml\\) 'pork'"):
        parse_catalog(raw(item="pork"), items, worlds)
    with pytest.raises(ValueError, match="unknown item \\(tasks.toml\\) 'axe'"):
        parse_catalog(raw(tool="axe"), items, worlds)
    with pytest.raises(ValueError, match="MineCLIP units"):
        parse_catalog(raw(mineclip_threshold=0.2355), items, worlds)
    twice = raw()
    twice["item"] *= 2
    with pytest.raises(ValueError, match="duplicate"):
        parse_catalog(twice, items, worlds)
    bad_world = raw()
    bad_world["suite"]["s"]["world"] = "mars"
    with pytest.raises(ValueError, match="unknown world"):
        parse_catalog(bad_world, items, worlds)
