"""How far the running episode is: its steps, told to whoever watches (a sweep's progress bar).

The driver of an episode (:class:`mrsteve.tasks.driver.Driver`) calls :func:`tick` after each
step; nothing is done unless a watcher was installed with :func:`watching`, and then at most once
per :data:`REPORT_EVERY_S` seconds (a clock read every :data:`CHECK_EVERY` steps), so a step pays a
global lookup when nobody watches.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager

Watcher = Callable[[int, int | None], None]
"""Called with the steps taken in the running episode and the step its current run ends at
(``None`` when unknown)."""

REPORT_EVERY_S = 1.0
"""Seconds between two reports at most."""

CHECK_EVERY = 256
"""Steps between two reads of the clock."""

_watcher: Watcher | None = None
_next_report = 0.0
_end: int | None = None


def tick(steps: int) -> None:
    """The running episode has taken ``steps`` steps (told to the watcher now and then)."""
    global _next_report
    if _watcher is None or steps % CHECK_EVERY:
        return
    now = time.monotonic()
    if now >= _next_report:
        _next_report = now + REPORT_EVERY_S
        _watcher(steps, _end)


def planned(end: int | None) -> None:
    """The episode's current run stops at step ``end`` at the latest (``None``: unknown)."""
    global _end
    _end = end


@contextmanager
def watching(watcher: Watcher) -> Iterator[None]:
    """Within the block, the running episode's steps are told to ``watcher`` (at most once per
    :data:`REPORT_EVERY_S` seconds)."""
    global _watcher, _next_report, _end
    previous = _watcher
    _watcher, _next_report, _end = watcher, 0.0, None
    try:
        yield
    finally:
        _watcher = previous
