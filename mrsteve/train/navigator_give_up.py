"""The learned navigator's give-up head (:mod:`mrsteve.control.learned_navigator`): when a goal is out of
reach (torch, the ``train`` extra).

VPT-Nav has no map and gives no verdict; our explorers give up the goals their navigator finds
out of reach (:meth:`~mrsteve.control.navigation.Navigator.blocked`), and about a third of the
count-based goals around the start lie beyond a walled map's walls. Without a head the learned
navigator finds such a goal out only by its motion (a stall, no progress), after pushing into or
sliding along the wall. The head learns to tell from the view:

1. **Walks.** The trained policy walks chains of goals in the navigator training worlds, goals of
   three kinds (:data:`GOAL_KINDS`): beyond the wall ring, just inside it (so that a wall in view
   is not by itself a verdict) and on open ground. Each step records the policy's features (what
   its action heads read) and the verdict of a depth navigator shadowing the walk with a height
   map of the walk's own frames, replanned as it replans: out of reach or not. A walk ends at the
   goal, at the motion rules' give-up or after ``max_segment_steps``.
2. **Fit.** A logistic regression on those features (class-balanced, the policy frozen, so its
   actions are exactly as before): the head's weights join the policy's.
3. **Calibration.** Its bias is shifted so that the run-time threshold
   (:attr:`~mrsteve.control.navigation.NavigatorConfig.give_up_probability`) flags a set share
   of the within-reach steps toward goals inside the walls (``give_up_false_alarms``): one policy's
   features give the regression other probabilities than another's, and a false-alarm rate on
   the walks means the same for every policy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from mrsteve.control.learned_navigator import NavigatorWeights
from mrsteve.control.navigation import NavigatorConfig
from mrsteve.nn import logit
from mrsteve.protocols import Decision
from mrsteve.tasks.driver import EpisodeCallback, Step
from mrsteve.train.episodes import take, training_worlds

GOAL_KINDS = ("beyond", "inside", "open")
"""Goals the walks are given: 3-12 blocks beyond the wall ring, 0.5-6 blocks in front of it
(along the line to it), and on open ground (:data:`OPEN_MARGIN` blocks from it at least)."""
KIND_SHARES = (0.35, 0.35, 0.3)
WALKS_RECIPE = 2
"""Version of the walks' recipe (goal picking, where a walk ends), part of their cache key
(:func:`walks_key`) with the navigators' settings: bump it when the recipe changes."""
GOALS_PER_WORLD = 8
"""Goals walked one after another in one world."""
DISTANCE = (8.0, 45.0)
"""Blocks between a walk's start and its goal."""
OPEN_MARGIN = 6.0
"""Blocks an open-ground goal keeps from the wall ring."""


@dataclass(frozen=True)
class GiveUpWalks:
    """Steps of the policy's walks: its features and the depth navigator's verdict."""

    features: np.ndarray
    """``float32[N, dim]``: what the policy's heads read at each step."""
    out_of_reach: np.ndarray
    """``bool[N]``: the depth navigator's verdict at each step."""
    kind: np.ndarray
    """``int8[N]``: the index in :data:`GOAL_KINDS` of each step's goal."""

    @staticmethod
    def concatenate(parts: list[GiveUpWalks]) -> GiveUpWalks:
        return GiveUpWalks(*(np.concatenate([getattr(p, name) for p in parts])
                             for name in ("features", "out_of_reach", "kind")))

    def save(self, path: Path) -> None:
        from mrsteve.fileio import atomic_path

        with atomic_path(path) as tmp, open(tmp, "wb") as handle:
            np.savez(handle, features=self.features, out_of_reach=self.out_of_reach,
                     kind=self.kind)

    @staticmethod
    def load(path: Path) -> GiveUpWalks:
        with np.load(path, allow_pickle=False) as saved:
            return GiveUpWalks(saved["features"], saved["out_of_reach"], saved["kind"])


def wall_distance(x: float, z: float, dx: float, dz: float, size: tuple[int, ...]) -> float:
    """Blocks from ``(x, z)`` along the unit direction ``(dx, dz)`` to the wall ring of a world of
    ``size`` blocks (the ring is its outermost columns)."""
    steps = []
    for position, direction, extent in ((x, dx, size[0]), (z, dz, size[-1])):
        if direction > 0:
            steps.append((extent - 1 - position) / direction)
        elif direction < 0:
            steps.append((position - 1) / -direction)
    return min(steps)


def pick_give_up_goal(rng: np.random.Generator, x: float, z: float,
                      size: tuple[int, ...]) -> tuple[int, float, float] | None:
    """``(kind, goal x, goal z)`` in world coordinates for a walk from ``(x, z)``, or ``None``
    where no goal of the drawn kind lies :data:`DISTANCE` away (the agent hugs a corner)."""
    kind = int(rng.choice(len(GOAL_KINDS), p=KIND_SHARES))
    for _ in range(100):
        angle = rng.uniform(0.0, 2.0 * math.pi)
        dx, dz = math.cos(angle), math.sin(angle)
        wall = wall_distance(x, z, dx, dz, size)
        if GOAL_KINDS[kind] == "beyond":
            distance = wall + rng.uniform(3.0, 12.0)
        elif GOAL_KINDS[kind] == "inside":
            distance = wall - rng.uniform(0.5, 6.0)
        else:
            distance = rng.uniform(DISTANCE[0], 25.0)
        gx, gz = x + dx * distance, z + dz * distance
        if GOAL_KINDS[kind] == "open" and min(gx - 1, gz - 1, size[0] - 1 - gx,
                                             size[-1] - 1 - gz) < OPEN_MARGIN:
            continue
        if DISTANCE[0] <= distance <= DISTANCE[1]:
            return kind, gx, gz
    return None


def walks_key(data_key: str, goals: int, weights: NavigatorWeights,
              rules: NavigatorConfig | None = None) -> str:
    """The cache key of the walks of ``goals`` goals by the policy of ``weights`` on the
    demonstrations of ``data_key``: also the recipe and the navigators' settings ``rules``
    (default: the defaults the walks run with: the walker's motion rules, the depth navigator's
    verdicts)."""
    from mrsteve.digests import digest

    return (f"{data_key}-{goals}-{weights.sha256[:16]}-r{WALKS_RECIPE}-"
            f"{digest(rules or NavigatorConfig())}")


class WalkRecorder(EpisodeCallback):
    """What a give-up walk keeps of each step (a callback of the walker's driver): the policy's
    features, the depth navigator's verdict and the goal's kind, as the walker noted them."""

    def __init__(self) -> None:
        self.features, self.verdicts, self.kinds = [], [], []

    def on_step(self, step: Step) -> None:
        notes = step.decision.notes
        self.features.append(notes["features"])
        self.verdicts.append(notes["verdict"])
        self.kinds.append(notes["kind"])


def walk_give_up(weights: NavigatorWeights, seed: int, goals: int, worlds: tuple[str, ...],
                 max_steps: int, shares: tuple[float, ...] | None = None) -> GiveUpWalks:
    """``goals`` walks of the policy of ``weights`` in ``worlds`` (module docstring, step 1;
    :func:`~mrsteve.train.episodes.training_worlds`, drawn with ``shares``), kept by a
    :class:`WalkRecorder`."""
    from mrsteve.control.learned_navigator import LearnedNavigator
    from mrsteve.control.navigation import DepthNavigator

    rng = np.random.default_rng(seed)
    recorder, walked = WalkRecorder(), 0
    for driver, info in take(lambda: walked, goals,
                             training_worlds(worlds, rng, callbacks=[recorder],
                                             shares=shares)):
        size = driver.env.unwrapped.world.blocks.shape
        navigator = LearnedNavigator(weights=weights)
        navigator.reset(rng, info["camera"])
        for _ in range(GOALS_PER_WORLD):
            picked = pick_give_up_goal(rng, *driver.position, size)
            if walked >= goals or picked is None:
                break
            kind, gx, gz = picked
            goal = driver.frame.from_world(gx, gz)
            expert = DepthNavigator()  # draws nothing
            expert.reset(rng, info["camera"])
            first = driver.t

            def shadowed(view, t, goal=goal, kind=kind, expert=expert, first=first):
                verdict = expert.blocked(view, goal)
                if t > first and (t - first) % expert.config.replan_interval == 0:
                    verdict = expert.replan(view)
                if navigator.reached(view, goal) or navigator.blocked(view, goal):
                    return None
                action = navigator.act(view, goal)
                return Decision(action, goal=goal, notes={
                    "features": navigator.policy.features, "verdict": verdict, "kind": kind})

            driver.run(shadowed, steps=max_steps)
            walked += 1
    dim = weights.architecture.dim
    return GiveUpWalks(np.asarray(recorder.features, np.float32).reshape(-1, dim),
                       np.asarray(recorder.verdicts, bool), np.asarray(recorder.kinds, np.int8))


def fit_give_up_head(walks: GiveUpWalks, seed: int, *, steps: int = 500,
                     learning_rate: float = 0.05,
                     weight_decay: float = 1e-3) -> tuple[np.ndarray, np.ndarray]:
    """``(weight float32[1, dim], bias float32[1])`` of a logistic regression of the verdicts on
    the features, each class weighing half (module docstring, step 2); full-batch Adam."""
    import torch

    if walks.out_of_reach.all() or not walks.out_of_reach.any():
        raise ValueError("the give-up walks need steps both out of reach and within reach, got "
                         f"{walks.out_of_reach.mean():.0%} out of reach of {len(walks.kind)}")
    torch.manual_seed(seed)
    x = torch.from_numpy(walks.features)
    y = torch.from_numpy(walks.out_of_reach.astype(np.float32))
    share = float(y.mean())
    weight = torch.where(y > 0, 0.5 / share, 0.5 / (1.0 - share))
    head = torch.nn.Linear(x.shape[1], 1)
    torch.nn.init.zeros_(head.weight)
    torch.nn.init.zeros_(head.bias)
    optimiser = torch.optim.AdamW(head.parameters(), lr=learning_rate, weight_decay=weight_decay)
    for _ in range(steps):
        loss = torch.nn.functional.binary_cross_entropy_with_logits(
            head(x)[:, 0], y, weight=weight)
        optimiser.zero_grad()
        loss.backward()
        optimiser.step()
    return (head.weight.detach().numpy().astype(np.float32).copy(),
            head.bias.detach().numpy().astype(np.float32).copy())


def calibrate_give_up_head(walks: GiveUpWalks, weight: np.ndarray, bias: np.ndarray,
                           probability: float, false_alarms: float) -> np.ndarray:
    """The bias that makes the head put ``probability`` or more on a share ``false_alarms`` of
    the within-reach steps toward goals inside the walls (module docstring, step 3): the
    regression's probabilities differ from one policy's features to another's, so the run-time
    threshold is tied to a false-alarm rate on the walks instead."""
    if not 0 < false_alarms < 1:
        raise ValueError(f"false_alarms must lie in (0, 1), got {false_alarms}")
    within = ~walks.out_of_reach & (walks.kind != GOAL_KINDS.index("beyond"))
    if not within.any():
        raise ValueError("the give-up walks hold no within-reach step toward a goal inside the "
                         "walls to calibrate on")
    logits = walks.features[within] @ np.asarray(weight, np.float64).reshape(-1) + float(bias[0])
    threshold = float(np.quantile(logits, 1.0 - false_alarms))
    shift = logit(probability) - threshold
    return (np.asarray(bias, np.float64) + shift).astype(np.float32)


def give_up_scores(walks: GiveUpWalks, weights: NavigatorWeights,
                   probability: float) -> dict[str, float]:
    """Per step, the share of out-of-reach steps the head of ``weights`` flags at
    ``probability`` or more (``recall``) and of the others (``false_alarms``), overall and per
    goal kind."""
    logits = walks.features @ weights.parameters["head.give_up.weight"][0] \
        + weights.parameters["head.give_up.bias"][0]
    flagged = logits >= logit(probability)
    scores = {}
    for name, steps in (("all", np.ones(len(flagged), bool)),
                        *((kind, walks.kind == i) for i, kind in enumerate(GOAL_KINDS))):
        out, within = steps & walks.out_of_reach, steps & ~walks.out_of_reach
        scores[f"recall_{name}"] = float(flagged[out].mean()) if out.any() else math.nan
        scores[f"false_alarms_{name}"] = float(flagged[within].mean()) if within.any() \
            else math.nan
    return scores


def with_give_up_head(weights: NavigatorWeights, weight: np.ndarray, bias: np.ndarray,
                      info: dict) -> NavigatorWeights:
    """``weights`` with a give-up head of ``weight`` and ``bias`` (its actions unchanged)."""
    from dataclasses import replace

    parameters = {name: value for name, value in weights.parameters.items()
                  if not name.startswith("head.give_up.")}
    parameters["head.give_up.weight"] = np.asarray(weight, np.float32).reshape(1, -1)
    parameters["head.give_up.bias"] = np.asarray(bias, np.float32).reshape(1)
    return NavigatorWeights(replace(weights.architecture, give_up=True), parameters, info)


__all__ = [
    "GOAL_KINDS",
    "GiveUpWalks",
    "calibrate_give_up_head",
    "fit_give_up_head",
    "give_up_scores",
    "pick_give_up_goal",
    "walk_give_up",
    "walks_key",
    "with_give_up_head",
]
