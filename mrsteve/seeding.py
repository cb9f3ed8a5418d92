"""Where an episode's randomness comes from: one seed, split into named streams.

The environment is reset with the episode seed itself (``env.reset(seed=seed)``: the world's
layout, mobs and noise). Everything else draws from a generator derived here, so the same seed gives
the same episode, and runners never invent their own derivation.
"""

from __future__ import annotations

import numpy as np

_STREAMS = {"agent": 1, "task": 2}
"""The derived streams of an episode: the agent's parts, and the task's own draws (a navigation
goal, a random Long-Instruction item)."""


def episode_rng(seed: int, stream: str = "agent") -> np.random.Generator:
    """The generator of ``stream`` (``agent`` or ``task``) for the episode seeded with ``seed``."""
    if stream not in _STREAMS:
        from mrsteve.naming import unknown_name

        raise unknown_name("random stream", stream, _STREAMS)
    if isinstance(seed, bool) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    return np.random.default_rng([int(seed), _STREAMS[stream]])
