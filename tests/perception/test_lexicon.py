"""The text lexicon: every prompt's classes are checked at load, unknown prompts are refused."""

from __future__ import annotations

import pytest

from mrsteve.perception import load_lexicon
from mrsteve.perception.lexicon import parse_lexicon
from mrsteve.world.content import load_content

CLASSES = load_content().semantic_classes
ENTRY = {"text": "near cow", "classes": {"cow": 1.0}, "visible_fraction": 0.01}


def test_lexicon_is_checked_at_load():
    assert parse_lexicon({"prompt": [ENTRY]}, CLASSES).meaning("near cow").classes == {"cow": 1.0}
    with pytest.raises(ValueError, match="unknown class 'pig'; known: sky, .*cow"):
        parse_lexicon({"prompt": [{**ENTRY, "classes": {"pig": 1.0}}]}, CLASSES)
    with pytest.raises(ValueError, match="non-empty"):
        parse_lexicon({"prompt": [{**ENTRY, "classes": {}}]}, CLASSES)
    with pytest.raises(ValueError, match="positive"):
        parse_lexicon({"prompt": [{**ENTRY, "classes": {"cow": 0.0}}]}, CLASSES)
    with pytest.raises(ValueError, match="visible_fraction"):
        parse_lexicon({"prompt": [{**ENTRY, "visible_fraction": 2.0}]}, CLASSES)
    with pytest.raises(ValueError, match="duplicate"):
        parse_lexicon({"prompt": [ENTRY, ENTRY]}, CLASSES)


def test_unknown_prompt_is_refused_listing_the_known_ones():
    with pytest.raises(ValueError, match="unknown prompt 'near pig'; known: near cow"):
        parse_lexicon({"prompt": [ENTRY]}, CLASSES).meaning("near pig")
    lexicon = load_lexicon()
    with pytest.raises(ValueError, match="known: .*near water"):
        lexicon.meaning("near lava")
