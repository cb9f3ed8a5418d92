"""The rules of the scripted skills: one entry per execute prompt, read from ``data/skills.toml``.

Each skill names its target classes (all blocks or all mobs), the item whose count rising in the
inventory means success, and the ways to get it (what to hold, attack or use), preferred first.
The file is parsed into frozen dataclasses and checked against the world's semantic classes and
items once per process (:func:`load_skills`).
"""

from __future__ import annotations

import tomllib
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from importlib import resources
from typing import Any

from mrsteve.naming import unknown_name
from mrsteve.world.content import Content, load_content

INTERACTIONS = ("attack", "use")
"""Buttons a skill presses on its target."""


@dataclass(frozen=True)
class SkillMethod:
    """One way to get a skill's item: what to hold and which button to press on the target."""

    interaction: str
    """``attack`` or ``use``."""
    hold: str | None = None
    """Item to hold (equipped when it is in the inventory); ``None``: whatever is in hand."""


@dataclass(frozen=True)
class Skill:
    """The rules of one execute prompt (an entry of ``data/skills.toml``)."""

    prompt: str
    """The instruction."""
    aliases: tuple[str, ...]
    """Other spellings of the instruction."""
    targets: tuple[str, ...]
    """Semantic classes of the targets (all blocks, or all mobs)."""
    success: str
    """The item whose count rising in the inventory means the instruction is done."""
    methods: tuple[SkillMethod, ...]
    """Ways to get the item, preferred first; the last is the fallback."""
    on_mobs: bool
    """Whether the targets are mobs (followed as they move) rather than blocks."""


@dataclass(frozen=True)
class SkillBook:
    """Every skill, looked up by prompt or alias."""

    skills: tuple[Skill, ...]

    @property
    def prompts(self) -> tuple[str, ...]:
        """Every accepted prompt, aliases included."""
        return tuple(p for s in self.skills for p in (s.prompt, *s.aliases))

    def skill(self, prompt: str) -> Skill:
        """The skill of ``prompt``; an unknown prompt raises ``ValueError`` listing the known ones."""
        for skill in self.skills:
            if prompt == skill.prompt or prompt in skill.aliases:
                return skill
        raise unknown_name("prompt", prompt, map(repr, self.prompts))


_SKILL_KEYS = ("prompt", "aliases", "targets", "success", "methods")


def parse_skills(raw: Mapping[str, Any], content: Content) -> SkillBook:
    """Build and check a :class:`SkillBook` from the parsed TOML mapping (names against the world's
    semantic classes and items)."""
    mob_names = {mob.name for mob in content.mobs}
    skills = []
    for entry in raw.get("skill", ()):
        prompt = entry.get("prompt")
        if not isinstance(prompt, str) or not prompt:
            raise ValueError(f"skills: every skill needs a prompt, got {entry!r}")
        unknown = sorted(set(entry) - set(_SKILL_KEYS))
        if unknown:
            raise ValueError(
                f"skills: {prompt!r}: unknown keys {unknown}; accepted: {', '.join(_SKILL_KEYS)}"
            )
        targets = tuple(entry.get("targets", ()))
        if not targets:
            raise ValueError(f"skills: {prompt!r} has no targets")
        for name in targets:
            if name not in content.semantic_classes or name == "sky":
                raise ValueError(
                    f"skills: {prompt!r}: target {name!r} is not a block or mob class; "
                    f"classes: {', '.join(content.semantic_classes[1:])}"
                )
        on_mobs = {name in mob_names for name in targets}
        if len(on_mobs) != 1:
            raise ValueError(f"skills: {prompt!r}: targets must be all blocks or all mobs")
        success = entry.get("success")
        methods = tuple(_parse_method(prompt, m, content) for m in entry.get("methods", ()))
        if not methods:
            raise ValueError(f"skills: {prompt!r} has no methods")
        if success not in content.item_names:
            raise ValueError(
                f"skills: {prompt!r}: success {success!r} is not an item; "
                f"items: {', '.join(content.item_names)}"
            )
        skills.append(Skill(
            prompt=prompt,
            aliases=tuple(entry.get("aliases", ())),
            targets=targets,
            success=success,
            methods=methods,
            on_mobs=on_mobs.pop(),
        ))  # fmt: skip
    book = SkillBook(tuple(skills))
    if len(set(book.prompts)) != len(book.prompts):
        raise ValueError(f"skills: a prompt or alias appears twice: {book.prompts}")
    return book


def _parse_method(prompt: str, raw: Mapping[str, Any], content: Content) -> SkillMethod:
    unknown = sorted(set(raw) - {"interaction", "hold"})
    if unknown:
        raise ValueError(
            f"skills: {prompt!r}: unknown method keys {unknown}; accepted: interaction, hold"
        )
    interaction, hold = raw.get("interaction"), raw.get("hold")
    if interaction not in INTERACTIONS:
        raise ValueError(
            f"skills: {prompt!r}: interaction must be one of {', '.join(INTERACTIONS)}, "
            f"got {interaction!r}"
        )
    if hold is not None and hold not in content.item_names:
        raise ValueError(
            f"skills: {prompt!r}: hold {hold!r} is not an item; items: {', '.join(content.item_names)}"
        )
    return SkillMethod(interaction, hold)


@cache
def load_skills() -> SkillBook:
    """The shipped skills (``data/skills.toml``), parsed and checked once per process."""
    text = resources.files("mrsteve.control").joinpath("data/skills.toml").read_text("utf-8")
    return parse_skills(tomllib.loads(text), load_content())
