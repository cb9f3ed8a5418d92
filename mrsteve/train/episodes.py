"""The walks every training collects: worlds x goals through the driver.

Each collector (the navigator's demonstrations and DAgger rounds, its give-up walks and PPO's
rollouts, the instruction policy's episodes) draws a world from its training worlds with its
generator, resets it with a seed drawn from the same generator and runs the driver
(:class:`~mrsteve.tasks.driver.Driver`) toward goals in it, one after another
(:func:`training_worlds`). What it keeps of each step is a callback
(:class:`~mrsteve.tasks.driver.EpisodeCallback`) reading the step the driver took: the view the
decision was made on (:attr:`~mrsteve.tasks.driver.Step.view`), the action taken, and what the
controller noted beside it (:attr:`~mrsteve.protocols.Decision.notes`: a teacher's ``label``, a
policy's ``features``); a controller only decides, as the agents do.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import numpy as np

from mrsteve.env import make_env
from mrsteve.tasks.driver import Driver, EpisodeCallback


def draw_world(worlds: Sequence[str], rng: np.random.Generator, *,
               callbacks: Sequence[EpisodeCallback] = (),
               options: Mapping[str, Any] | None = None,
               shares: Sequence[float] | None = None) -> tuple[Driver, dict[str, Any]]:
    """A training world drawn from ``worlds`` with ``rng`` (each as often, or with probability
    ``shares``, which sum to 1) and reset with a seed drawn from it (and ``options``): its
    driver (with ``callbacks``) and the reset's info. The caller closes its environment
    (``driver.env``)."""
    if shares is None:
        name = worlds[int(rng.integers(len(worlds)))]
    else:
        name = worlds[int(rng.choice(len(worlds), p=shares))]
    driver = Driver(make_env(world=name), callbacks)
    info = driver.reset(seed=int(rng.integers(2**31)), options=options)
    return driver, info


def training_worlds(worlds: Sequence[str], rng: np.random.Generator, *,
                    callbacks: Sequence[EpisodeCallback] = (),
                    options: Callable[[], Mapping[str, Any] | None] | None = None,
                    shares: Sequence[float] | None = None,
                    ) -> Iterator[tuple[Driver, dict[str, Any]]]:
    """Endless training worlds, one after another (:func:`draw_world`, with ``shares``;
    ``options()`` read as each is drawn); a world's environment closes when the next one is
    drawn or the generator is closed."""
    while True:
        driver, info = draw_world(worlds, rng, callbacks=callbacks,
                                  options=None if options is None else options(),
                                  shares=shares)
        with driver.env:
            yield driver, info


def take(count: Callable[[], int], total: int, drivers: Iterator[tuple[Driver, dict]]
         ) -> Iterator[tuple[Driver, dict[str, Any]]]:
    """The worlds of ``drivers`` while ``count()`` (what was collected) is under ``total``; the
    generator is closed after (its last world's environment with it)."""
    try:
        while count() < total:
            yield next(drivers)
    finally:
        drivers.close()


__all__ = ["draw_world", "take", "training_worlds"]
