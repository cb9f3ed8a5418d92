"""The prompts type, lexicon and thresholds data files: loaded into frozen dataclasses and checked."""

from __future__ import annotations

import dataclasses
from types import MappingProxyType

import pytest

from mrsteve.perception import TaskPrompts, load_lexicon
from mrsteve.perception.thresholds import EncoderThresholds, format_thresholds, parse_thresholds

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


def test_task_prompts_are_a_frozen_dataclass_with_the_default_place_prompt():
    prompts = TaskPrompts("log", "near tree", "cut a tree")
    assert prompts.place == "near pasture" and prompts.mineclip_threshold is None
    with pytest.raises(dataclasses.FrozenInstanceError):
        prompts.explore = "near pig"


def test_every_reference_prompt_is_in_the_lexicon():
    assert set(REFERENCE_PROMPTS) <= set(load_lexicon().texts)


def test_a_task_threshold_is_looked_up_by_prompt_text():
    thresholds = EncoderThresholds(MappingProxyType({"near water": 0.25}), 0.8, 0.855, 0.85)
    assert thresholds.task_threshold("near water") == 0.25
    with pytest.raises(ValueError, match="unknown task prompt 'water_bucket'; known: near water"):
        thresholds.task_threshold("water_bucket")


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
