"""Plan4MC's high level as a learned policy: an LSTM over the agent's position picks the next of
four directions (appendix "Exploration Experiments Details").

The paper's Plan4MC baseline explores with a hierarchical policy whose high level, "based on an
LSTM model, takes the agent's (x, y) coordinates along its trajectory and outputs the next
direction to move (north, south, east, or west)"; the map is "discretized into an 11 x 11 grid"
and the policy "is trained using PPO to maximize the number of unique grid cells visited". As in
Plan4MC's release, the model reads the position relative to the start (here in grid cells, so
one set of weights serves any cell size), an LSTM carries the trajectory, a hidden layer and a
policy layer (with ReLU) give four logits, and a direction is sampled from them at every
decision. :mod:`mrsteve.train.direction` trains it (``mrsteve train direction-policy``); the
weights ship in ``data/direction.npz``. Inference is numpy and matches the torch model within
1e-5.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

import numpy as np

from mrsteve.digests import PACKAGE_ROOT
from mrsteve.nn import Weights, mlp, sample_category

SHIPPED_DIRECTION_POLICY = "control/data/direction.npz"
"""The shipped weights, below ``mrsteve/`` (``mrsteve train direction-policy``)."""

DIRECTIONS = ((0, -1), (0, 1), (1, 0), (-1, 0))
"""North (-z), south (+z), east (+x), west (-x) in grid steps: the policy's four actions."""


@dataclass(frozen=True)
class DirectionArchitecture:
    """The LSTM direction policy's sizes and the grid it was trained on."""

    recurrent: int = 64
    """The LSTM's hidden state size."""
    hidden: int = 64
    """The width of the hidden and policy layers."""
    grid: int = 11
    """Cells per side of the square grid it was trained on (Plan4MC: 11), centred on the start."""

    def __post_init__(self) -> None:
        if min(self.recurrent, self.hidden) < 1 or self.grid < 3 or self.grid % 2 == 0:
            raise ValueError(f"need recurrent, hidden >= 1 and an odd grid >= 3, got {self}")

    def parameter_shapes(self) -> dict[str, tuple[int, ...]]:
        """Each parameter's shape (torch layouts: an ``nn.LSTM``'s gates in i, f, g, o order)."""
        r, h = self.recurrent, self.hidden
        return {"lstm.weight_ih": (4 * r, 2), "lstm.weight_hh": (4 * r, r),
                "lstm.bias": (4 * r,), "hidden.weight": (h, r), "hidden.bias": (h,),
                "policy_hidden.weight": (h, h), "policy_hidden.bias": (h,),
                "policy.weight": (len(DIRECTIONS), h), "policy.bias": (len(DIRECTIONS),)}


class DirectionWeights(Weights):
    """The direction policy's parameters (float32, torch layouts) and architecture."""

    FORMAT: ClassVar[str] = "mrsteve-direction-policy"
    VERSION: ClassVar[int] = 1
    WHAT: ClassVar[str] = "direction policy"
    ARCHITECTURE: ClassVar[type] = DirectionArchitecture

    architecture: DirectionArchitecture


def load_shipped_direction_policy() -> DirectionWeights:
    """The shipped weights (read once per process)."""
    return DirectionWeights.read(PACKAGE_ROOT / SHIPPED_DIRECTION_POLICY)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 0.5 * (np.tanh(0.5 * x) + 1.0)


class DirectionPolicy:
    """The numpy twin of the trained model: :meth:`logits` advances the LSTM by one decision for a
    batch of positions; :meth:`choose` samples a direction for one agent."""

    def __init__(self, weights: DirectionWeights, batch: int = 1) -> None:
        self.weights = weights
        p = weights.parameters
        self._input, self._recurrent = p["lstm.weight_ih"].T.copy(), p["lstm.weight_hh"].T.copy()
        self._bias = p["lstm.bias"]
        self._layers = [(p[f"{name}.weight"].T.copy(), p[f"{name}.bias"])
                        for name in ("hidden", "policy_hidden", "policy")]
        self.reset(batch)

    def reset(self, batch: int = 1) -> None:
        """Forget the trajectory (a new episode) for ``batch`` agents."""
        size = self.weights.architecture.recurrent
        self._h = np.zeros((batch, size), np.float32)
        self._c = np.zeros((batch, size), np.float32)

    def logits(self, positions: np.ndarray) -> np.ndarray:
        """``float32[batch, 4]`` logits of :data:`DIRECTIONS` after reading ``positions``
        (``[batch, 2]``: ``(x, z)`` relative to the start, in grid cells)."""
        gates = (np.asarray(positions, np.float32) @ self._input + self._h @ self._recurrent
                 + self._bias)
        i, f, g, o = np.split(gates, 4, axis=1)
        self._c = _sigmoid(f) * self._c + _sigmoid(i) * np.tanh(g)
        self._h = (_sigmoid(o) * np.tanh(self._c)).astype(np.float32)
        return mlp(self._layers, self._h).astype(np.float32)

    def choose(self, position: tuple[float, float], rng: np.random.Generator) -> int:
        """The index in :data:`DIRECTIONS` sampled for one agent at ``position`` (cells)."""
        return sample_category(self.logits(np.array([position], np.float32))[0],
                               float(rng.random()))


__all__ = ["DIRECTIONS", "SHIPPED_DIRECTION_POLICY", "DirectionArchitecture", "DirectionPolicy",
           "DirectionWeights", "load_shipped_direction_policy"]
