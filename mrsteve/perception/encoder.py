"""The ``Encoder`` interface: frames and text into one embedding space (MineCLIP's role).

An encoder maps a window of observations (MineCLIP: a 16-frame clip) and a text prompt to
L2-normalised ``float32[dim]`` embeddings whose dot product is the cosine similarity the memory
and the mode selector threshold. It carries its own calibrated thresholds
(:class:`~mrsteve.perception.thresholds.EncoderThresholds`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol, runtime_checkable

import numpy as np

from mrsteve.perception.thresholds import EncoderThresholds
from mrsteve.spaces import Observation  # each encoder documents the keys it reads

__all__ = ["Encoder", "Observation"]


@runtime_checkable
class Encoder(Protocol):
    """Frames and prompts to L2-normalised ``float32[dim]`` embeddings; similarity is the dot product.

    The incremental form (``reset`` / ``observe``) keeps the rolling window of one episode, so the
    agent loop pays for one new frame per step rather than for a whole window.
    """

    reads: tuple[str, ...]
    """The observation keys it reads (``semantic``, ``rgb``)."""

    @property
    def dim(self) -> int:
        """Embedding size."""
        ...

    @property
    def window(self) -> int:
        """Frames per clip (MineCLIP: 16)."""
        ...

    @property
    def thresholds(self) -> EncoderThresholds:
        """This encoder's calibrated thresholds."""
        ...

    def encode_frames(self, frames: Sequence[Observation]) -> np.ndarray:
        """Embedding of a clip: the last ``window`` of ``frames`` (also for goal images)."""
        ...

    def reset(self) -> None:
        """Forget the rolling window (a new episode)."""
        ...

    def observe(self, observation: Observation) -> np.ndarray:
        """Add one frame to the rolling window; the embedding of the window ending with it."""
        ...

    def encode_text(self, prompt: str) -> np.ndarray:
        """Embedding of a text prompt; an unknown prompt raises ``ValueError`` listing known ones."""
        ...

    def task_threshold(self, prompt: str) -> float:
        """Task threshold of a prompt (its text, as the task gives it)."""
        ...
