"""Prompt table, lexicon and thresholds data files: loaded into frozen dataclasses and checked."""

from __future__ import annotations

import dataclasses
from types import MappingProxyType

import pytest

from mrsteve.perception import TaskPrompts, load_lexicon, load_task_prompts, task_prompts
from mrsteve.perception.lexicon import parse_lexicon
from mrsteve.perception.prompts import parse_task_prompts
from mrsteve.perception.thresholds import EncoderThresholds, format_thresholds, parse_thresholds
from mrsteve.world.content import load_content

REFERENCE_PROMPTS = (
    "near tree",
    "near cow",
    "near water",
    "near sand",
    "near dirt",
    "near grass",
    "near sheep",
    "near pasture",
    "near desert",
)


def test_task_prompts_follow_the_release_table():
    assert task_prompts("water_bucket") == TaskPrompts(
        "water_bucket", "near water", "get water bucket", "near pasture", pytest.approx(0.2214)
    )
    assert task_prompts("log").place == "near pasture"
    assert task_prompts("sand").place == "near desert"
    assert task_prompts("wheat_seeds").explore == "near grass"
    assert task_prompts("wool").mineclip_threshold == pytest.approx(0.2342)
    assert set(load_task_prompts().items) == {
        "log",
        "leaves",
        "water_bucket",
        "beef",
        "milk_bucket",
        "wool",
        "sand",
        "wheat_seeds",
        "dirt",
        "leather",
    }
    with pytest.raises(dataclasses.FrozenInstanceError):
        task_prompts("beef").explore = "near pig"


def test_unknown_item_lists_the_known_ones():
    with pytest.raises(KeyError, match="water_bucket"):
        task_prompts("diamond")


def test_every_prompt_of_the_table_and_the_reference_is_in_the_lexicon():
    texts = set(load_lexicon().texts)
    assert set(REFERENCE_PROMPTS) <= texts
    for task in load_task_prompts().tasks:
        assert {task.explore, task.execute, task.place} <= texts


def test_task_table_is_checked_at_load():
    items = load_content().item_names
    entry = {
        "item": "beef",
        "explore": "near cow",
        "execute": "kill cow",
        "mineclip_threshold": 23.55,
    }
    with pytest.raises(ValueError, match="not an item"):
        parse_task_prompts({"task": [{**entry, "item": "pork"}]}, items)
    with pytest.raises(ValueError, match="MineCLIP units"):
        parse_task_prompts({"task": [{**entry, "mineclip_threshold": 0.2355}]}, items)
    with pytest.raises(ValueError, match="duplicate"):
        parse_task_prompts({"task": [entry, entry]}, items)


def test_lexicon_is_checked_at_load():
    classes = load_content().semantic_classes
    entry = {"text": "near cow", "classes": {"cow": 1.0}, "visible_fraction": 0.01}
    assert parse_lexicon({"prompt": [entry]}, classes).meaning("near cow").classes == {"cow": 1.0}
    with pytest.raises(ValueError, match="unknown \\['pig'\\]"):
        parse_lexicon({"prompt": [{**entry, "classes": {"pig": 1.0}}]}, classes)
    with pytest.raises(ValueError, match="positive"):
        parse_lexicon({"prompt": [{**entry, "classes": {"cow": 0.0}}]}, classes)
    with pytest.raises(ValueError, match="visible_fraction"):
        parse_lexicon({"prompt": [{**entry, "visible_fraction": 2.0}]}, classes)
    with pytest.raises(ValueError, match="duplicate"):
        parse_lexicon({"prompt": [entry, entry]}, classes)
    with pytest.raises(KeyError, match="near cow"):
        parse_lexicon({"prompt": [entry]}, classes).meaning("near pig")


def test_thresholds_round_trip_through_their_file_format():
    import tomllib

    thresholds = EncoderThresholds(
        MappingProxyType({"near water": 0.25, "near cow": 0.2}),
        image_goal=0.8,
        event_merge=0.855,
        event_fold=0.85,
    )
    text = format_thresholds(thresholds, "a header\nover two lines")
    assert text.startswith("# a header\n# over two lines\n")
    assert parse_thresholds(tomllib.loads(text)) == thresholds


def test_thresholds_are_checked():
    task = MappingProxyType({"near water": 0.25})
    with pytest.raises(ValueError, match="event_merge"):
        EncoderThresholds(task, 0.8, event_merge=0.8, event_fold=0.85)
    with pytest.raises(ValueError, match="cosines"):
        EncoderThresholds(MappingProxyType({"near water": 25.0}), 0.8, 0.855, 0.85)
    with pytest.raises(ValueError, match="status"):
        EncoderThresholds(task, 0.8, 0.855, 0.85, status="guessed")
    with pytest.raises(ValueError, match="lacks 'event_fold'"):
        parse_thresholds({"status": "estimate", "image_goal": 0.8, "event_merge": 0.9, "task": {}})
