"""False matches on far views: how often an encoder scores a prompt above its threshold where
nothing the prompt names is anywhere near.

The check behind MrSteve's memory reads (Algorithm 2 matches a task's prompt against the frames
it stored): a view that scores "near cow" above the threshold while every cow is 40 blocks
away sends the agent there. In each of ``worlds`` fresh seeds of a world recipe (rendered in a
look of :data:`~mrsteve.world.render.LOOKS`), clips of ``window`` frames are taken from random
standing poses (pitched as the calibration's clips are) at least ``min_distance`` blocks from
every exposed block and live mob of the prompt's classes, and scored with the encoder's
threshold. Poses are drawn from the world's own seeded generator; the evaluator reads the world
to place them, the encoder sees only the frames.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from mrsteve.calibration.clips import ClipConfig, WorldSession, _observations
from mrsteve.env import make_env
from mrsteve.perception.encoder import Encoder

MAX_POSE_TRIES = 400
"""Random poses drawn for one view before the world is judged to have no far place."""


@dataclass(frozen=True)
class FarViews:
    """The far views of one prompt and what the encoder made of them."""

    prompt: str
    threshold: float
    views: int
    """Views taken (fewer than asked where a world had no place far enough)."""
    false_matches: int
    """Views scored at or above the threshold."""
    worlds: int
    """World seeds with at least one far place."""
    highest_margin: float
    """The highest score minus the threshold (negative: every view below it; NaN: no view)."""

    @property
    def per_thousand(self) -> float:
        """False matches per 1,000 views (NaN without views)."""
        return 1000.0 * self.false_matches / self.views if self.views else math.nan


def far_views(encoder: Encoder, prompt: str, world: str, *, look: str = "day",
              worlds: int = 20, views: int = 50, min_distance: float = 40.0, seed: int = 0,
              config: ClipConfig | None = None,
              progress: Callable[[str], None] | None = None) -> FarViews:
    """Score ``views`` far views in each of ``worlds`` seeds of ``world`` for ``prompt``
    (module docstring). ``config`` sets the clips' frames and pitch (default: the encoder's
    window and frame keys, the calibration's pitches); ``seed`` seeds the worlds and poses."""
    if worlds < 1 or views < 1 or not min_distance > 0:
        raise ValueError(f"need worlds >= 1, views >= 1 and min_distance > 0, got {worlds}, "
                         f"{views}, {min_distance}")
    threshold = float(encoder.thresholds.task[encoder.lexicon.meaning(prompt).text])
    text = encoder.encode_text(prompt)
    config = config or ClipConfig(window=encoder.window, frame_keys=encoder.reads)
    config = dataclasses.replace(config, worlds=(world,))
    classes = list(encoder.lexicon.meaning(prompt).classes)
    rng = np.random.default_rng(seed)
    say = progress or (lambda line: None)
    taken = matched = kept_worlds = 0
    highest = -math.inf
    with make_env(world=world, obs_size=config.obs_size, look=look) as env:
        for index in range(worlds):
            session = WorldSession(env, int(rng.integers(2**31)), config, encoder.lexicon)
            targets = _instances(session, classes)
            found = 0
            for _ in range(views):
                pose = _far_pose(session, targets, min_distance, rng)
                if pose is None:
                    break
                frames = session.clip(pose, rng)
                score = float(encoder.encode_frames(
                    _observations(frames, config.frame_keys)) @ text)
                found += 1
                matched += score >= threshold
                highest = max(highest, score - threshold)
            taken += found
            kept_worlds += found > 0
            say(f"{prompt}: world {index + 1}/{worlds}, {taken} views, {matched} above the "
                f"threshold")
    return FarViews(prompt, threshold, taken, int(matched), kept_worlds,
                    highest if taken else math.nan)


def _instances(session: WorldSession, classes: list[str]) -> np.ndarray:
    """``float[K, 2]``: the ``(x, z)`` of every exposed block and live mob of ``classes``."""
    content = session.world.content
    ids = [content.semantic_id(name) for name in classes]
    points = [np.asarray(session._exposed[cls], float) + 0.5 for cls in ids
              if cls in session._exposed]
    mobs = np.isin(session.mob_classes(), ids)
    records = session.world.mobs.records[mobs]
    points.append(np.stack([records["x"], records["z"]], axis=1).astype(float))
    return np.concatenate([p.reshape(-1, 2) for p in points])


def _far_pose(session: WorldSession, targets: np.ndarray, min_distance: float,
              rng: np.random.Generator):
    """A standing pose at least ``min_distance`` blocks from every target, or ``None`` when
    :data:`MAX_POSE_TRIES` draws find none."""
    for _ in range(MAX_POSE_TRIES):
        pose = session.random_pose(rng)
        if pose is None:
            continue
        if not len(targets) or np.hypot(targets[:, 0] - pose.x,
                                         targets[:, 1] - pose.z).min() >= min_distance:
            return pose
    return None


__all__ = ["FarViews", "far_views"]
