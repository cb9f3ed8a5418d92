"""Motion primitives every controller shares: angles, the stall rule and the progress rule.

The navigators, the wanderer and the scripted skills all ask the same two questions of their own
trajectory, and answer them with the same rule here:

- *Is the agent stalled?* (:class:`StallTracker`) A step counts as stalled when forward was
  pressed on the previous step and the agent moved less than ``stall_speed`` blocks on the ground
  plane since then; any other step (forward not pressed, the first step, a step that moved)
  resets the count to 0. Controllers jump after a few stalled steps and turn away or replan after
  many. The same tracker counts the steps in a row the agent stood still (moved less than
  ``stall_speed``, whatever it pressed): a policy that neither walks nor turns away.
- *Is it getting anywhere?* (:class:`ProgressTracker`) A step makes progress when the distance to
  the target is at least ``min_gain`` below the best distance so far (which it then becomes, and
  the count restarts); every other counted step adds one. After ``patience`` counted steps without
  progress the tracker is :attr:`~ProgressTracker.stuck`, until the controller restarts it (with a
  detour) from the current distance.
"""

from __future__ import annotations

import math

from mrsteve.spaces import Action, Observation, noop_action

__all__ = [
    "Action",
    "Observation",
    "ProgressTracker",
    "StallTracker",
    "clamp",
    "heading_to",
    "noop_action",
    "wrap_degrees",
]


def clamp(value: float, limit: float) -> float:
    """``value`` limited to ``[-limit, limit]`` (a camera turn per step; ``np.clip`` on one number
    takes about 14x as long: 4.8 against 0.34 us, and controllers call this every step)."""
    return min(max(value, -limit), limit)


def wrap_degrees(angle: float) -> float:
    """``angle`` wrapped into [-180, 180)."""
    return (angle + 180.0) % 360.0 - 180.0


def heading_to(x: float, z: float, gx: float, gz: float) -> float:
    """Minecraft yaw (degrees) that faces from ``(x, z)`` toward ``(gx, gz)``: 0 faces +z, 90 -x."""
    return math.degrees(math.atan2(-(gx - x), gz - z))


class StallTracker:
    """Counts stalled steps in a row by the one stall rule (module docstring).

    Each step the controller calls :meth:`update` with the new position, then :meth:`pressed` with
    whether the action it returns presses forward."""

    def __init__(self, stall_speed: float) -> None:
        if not stall_speed > 0:
            raise ValueError(f"stall_speed must be positive, got {stall_speed}")
        self.stall_speed = float(stall_speed)
        self.reset()

    def reset(self) -> None:
        """Forget the trajectory (a new episode or task)."""
        self._last: tuple[float, float] | None = None
        self._forward = False
        self.stalled = 0
        """Stalled steps in a row, this one included."""
        self.still = 0
        """Steps in a row that moved less than ``stall_speed``, whatever was pressed."""

    def update(self, x: float, z: float) -> int:
        """Record the position at this step; the stalled count."""
        last, self._last = self._last, (x, z)
        if last is not None and math.hypot(x - last[0], z - last[1]) < self.stall_speed:
            self.still += 1
            self.stalled = self.stalled + 1 if self._forward else 0
        else:
            self.still = self.stalled = 0
        self._forward = False
        return self.stalled

    def pressed(self, forward: bool) -> None:
        """Record whether this step's action presses forward."""
        self._forward = bool(forward)

    def clear(self) -> None:
        """Start counting afresh (the controller acted on a stall: turned away, replanned)."""
        self.stalled = self.still = 0


class ProgressTracker:
    """Steps without getting ``min_gain`` closer to a target, by the one progress rule (module
    docstring)."""

    def __init__(self, min_gain: float, patience: int) -> None:
        if not min_gain > 0 or patience < 1:
            raise ValueError(f"need min_gain > 0 and patience >= 1, got {min_gain}, {patience}")
        self.min_gain = float(min_gain)
        self.patience = int(patience)
        self.reset()

    def reset(self) -> None:
        """A new target: no best distance yet."""
        self.best = math.inf
        self.since = 0
        """Counted steps since the last progress."""

    def update(self, distance: float, count: bool = True) -> bool:
        """Record the distance at this step (a step with ``count`` false neither progresses nor
        counts: e.g. while already within reach); whether the tracker is :attr:`stuck`."""
        if distance < self.best - self.min_gain:
            self.best = distance
            self.since = 0
        elif count:
            self.since += 1
        return self.stuck

    @property
    def stuck(self) -> bool:
        """Whether ``patience`` counted steps passed without progress."""
        return self.since >= self.patience

    def restart(self, distance: float) -> None:
        """Count afresh from ``distance`` (the controller started a detour)."""
        self.best = distance
        self.since = 0
