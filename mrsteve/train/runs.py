"""What the trainings' run folders share: renderings split into seeded streams that do not
depend on how many processes render them, and the recipe a checkpoint resumes by."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import numpy as np

from mrsteve.workers import starmap_in_processes

RENDER_STREAMS = 2
"""Seeded streams every rendering (demonstrations, DAgger rounds, validation walks) is split
into, whatever the number of processes rendering them (``workers``): the data, and so the
weights, are the same on every machine. The shipped weights' data was rendered in two."""

SPEED_SETTINGS = ("threads", "workers")
"""Recipe fields that decide how fast a run goes, not what it trains."""


def render_streams(function: Callable[..., Any], seed: int, total: int,
                   job: Callable[[int, int, int], tuple], workers: int) -> list[Any]:
    """``function(*job(stream_seed, count, first))`` for each of the :data:`RENDER_STREAMS`
    streams of a rendering of ``total`` items seeded by ``seed`` (``first``: the index of the
    stream's first item), at most ``workers`` processes at once; the results in stream order."""
    counts = [total // RENDER_STREAMS + (i < total % RENDER_STREAMS)
              for i in range(RENDER_STREAMS)]
    firsts = np.concatenate([[0], np.cumsum(counts)[:-1]]).tolist()
    seeds = [int(s.generate_state(1)[0])
             for s in np.random.SeedSequence(seed).spawn(RENDER_STREAMS)]
    jobs = [job(s, n, f) for s, n, f in zip(seeds, counts, firsts, strict=True) if n]
    return starmap_in_processes(function, jobs, processes=workers)


def trained_alike(fingerprint: str, other: str, extendable: tuple[str, ...] = ()) -> bool:
    """Whether a run of recipe ``other`` (a checkpoint's, as JSON) goes on from a checkpoint of
    recipe ``fingerprint``: equal but for the speed settings (:data:`SPEED_SETTINGS`), the
    validation settings (``validation_*``) and ``extendable`` counts (rounds of a stage that
    comes last in training) raised, not lowered, so a run resumes under any of them and a
    finished one goes on with more rounds."""
    def training(recipe: dict[str, Any]) -> dict[str, Any]:
        return {name: value for name, value in recipe.items()
                if name not in SPEED_SETTINGS and name not in extendable
                and not name.startswith("validation_")}

    saved, wanted = json.loads(fingerprint), json.loads(other)
    return (training(saved) == training(wanted)
            and all(saved.get(name, 0) <= wanted.get(name, 0) for name in extendable))


__all__ = ["RENDER_STREAMS", "SPEED_SETTINGS", "render_streams", "trained_alike"]
