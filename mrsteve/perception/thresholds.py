"""Similarity thresholds an encoder carries, and their data-file format.

Every encoder has its own cosine scale, so it ships its own thresholds (as the authors ship
MineCLIP's): a task threshold per prompt (the paper's task threshold h, 22.74 in MineCLIP units),
an image-goal threshold, and the two event-clustering thresholds of Place Event Memory (the
release's ``thr2`` = 74.0 for merging new DP-Means clusters with each other and ``thr`` / the
paper's c = 73.5 for folding a new cluster into an existing event). All are cosines in [-1, 1].
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import Any

from mrsteve.naming import unknown_name


@dataclass(frozen=True)
class EncoderThresholds:
    """Calibrated cosine thresholds of one encoder."""

    task: Mapping[str, float]
    """Task threshold per text prompt: a frame is task-relevant when its score is at least this."""
    image_goal: float
    """Threshold on frame-to-goal-image similarity for image-goal tasks (same scene and event)."""
    event_merge: float
    """New DP-Means clusters more similar than this merge with each other (``thr2`` = 0.74)."""
    event_fold: float
    """A new cluster more similar than this to an existing event joins it (c = 0.735)."""
    status: str = "estimate"
    """``"estimate"`` (derived without the world) or ``"calibrated"`` (measured on the world)."""

    def __post_init__(self) -> None:
        values = {"image_goal": self.image_goal, "event_merge": self.event_merge,
                  "event_fold": self.event_fold, **{f"task {k!r}": v for k, v in self.task.items()}}
        bad = {name: v for name, v in values.items() if not -1.0 <= v <= 1.0}
        if bad:
            raise ValueError(f"thresholds are cosines in [-1, 1], got {bad}")
        if self.event_merge < self.event_fold:
            raise ValueError(f"event_merge ({self.event_merge}) must be at least event_fold "
                             f"({self.event_fold}), as thr2 = 0.74 >= c = 0.735 in the paper")
        if self.status not in ("estimate", "calibrated"):
            raise ValueError(f"status must be 'estimate' or 'calibrated', got {self.status!r}")

    def task_threshold(self, prompt: str) -> float:
        """Threshold of a text prompt (``"near water"``; the task tells the agent its prompts)."""
        try:
            return self.task[prompt]
        except KeyError:
            raise unknown_name("task prompt", prompt, self.task) from None


def parse_thresholds(raw: Mapping[str, Any]) -> EncoderThresholds:
    """Thresholds from a parsed TOML mapping (the format :func:`format_thresholds` writes)."""
    try:
        return EncoderThresholds(
            task=MappingProxyType({str(k): float(v) for k, v in raw["task"].items()}),
            image_goal=float(raw["image_goal"]),
            event_merge=float(raw["event_merge"]),
            event_fold=float(raw["event_fold"]),
            status=str(raw["status"]),
        )
    except KeyError as missing:
        raise ValueError(f"thresholds file lacks {missing}; it needs status, image_goal, "
                         "event_merge, event_fold and a [task] table") from None


def format_thresholds(thresholds: EncoderThresholds, header: str,
                      weights_sha256: str | None = None) -> str:
    """TOML text of ``thresholds``, with ``header`` as leading comment lines (and the hash of
    the weights they were calibrated for, for a learned encoder)."""
    lines = [f"# {line}".rstrip() for line in header.strip().splitlines()]
    lines += [""]
    if weights_sha256 is not None:
        lines += [f'weights_sha256 = "{weights_sha256}"']
    lines += [
        f'status = "{thresholds.status}"',
        f"image_goal = {thresholds.image_goal:.4f}",
        f"event_merge = {thresholds.event_merge:.4f}",
        f"event_fold = {thresholds.event_fold:.4f}",
        "",
        "[task]",
    ]
    lines += [f'"{prompt}" = {value:.4f}' for prompt, value in thresholds.task.items()]
    return "\n".join(lines) + "\n"
