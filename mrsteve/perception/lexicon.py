"""The semantic encoder's text lexicon: each prompt and the semantic classes it means.

Loaded from ``data/lexicon.toml`` into frozen dataclasses and checked against the world's semantic
classes at load time.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from types import MappingProxyType
from typing import Any

from mrsteve.naming import unknown_name
from mrsteve.perception._data import read_data_toml
from mrsteve.world.content import load_content


@dataclass(frozen=True)
class PromptMeaning:
    """What a text prompt means to the semantic encoder."""

    text: str
    """The prompt, e.g. ``"near water"``."""
    classes: Mapping[str, float]
    """Semantic classes whose presence the prompt describes, with relative weights (> 0)."""
    visible_fraction: float
    """Smallest share of the view the classes must fill near the eye (within the calibration's
    near distance, 8 blocks) for the prompt to be true."""


@dataclass(frozen=True)
class Lexicon:
    """Every prompt the semantic encoder can embed."""

    prompts: tuple[PromptMeaning, ...]

    @property
    def texts(self) -> tuple[str, ...]:
        return tuple(p.text for p in self.prompts)

    def meaning(self, text: str) -> PromptMeaning:
        """The meaning of ``text``; an unknown prompt raises ``ValueError`` listing the known."""
        for prompt in self.prompts:
            if prompt.text == text:
                return prompt
        raise unknown_name("prompt", text, self.texts)


def parse_lexicon(raw: Mapping[str, Any], semantic_classes: tuple[str, ...]) -> Lexicon:
    """Build and validate a :class:`Lexicon` from the parsed TOML mapping."""
    prompts = []
    for entry in raw["prompt"]:
        text = entry["text"]
        where = f"lexicon: prompt {text!r}"
        classes = dict(entry["classes"])
        if not classes:
            raise ValueError(f"{where}: classes must be a non-empty table of semantic classes")
        for name in classes:
            if name not in semantic_classes:
                raise ValueError(f"{where}: {unknown_name('class', name, semantic_classes)}")
        if not all(isinstance(w, (int, float)) and w > 0 for w in classes.values()):
            raise ValueError(f"{where}: class weights must be positive numbers, got {classes}")
        fraction = float(entry["visible_fraction"])
        if not 0.0 < fraction <= 1.0:
            raise ValueError(f"{where}: visible_fraction must be in (0, 1], got {fraction}")
        prompts.append(PromptMeaning(text, MappingProxyType(classes), fraction))
    texts = [p.text for p in prompts]
    if len(set(texts)) != len(texts):
        raise ValueError("lexicon: duplicate prompts")
    return Lexicon(tuple(prompts))


@cache
def load_lexicon() -> Lexicon:
    """The shipped lexicon, parsed once per process."""
    return parse_lexicon(read_data_toml("lexicon.toml"), load_content().semantic_classes)
