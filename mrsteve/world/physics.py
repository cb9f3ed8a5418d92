"""Player movement at 20 ticks per second with Minecraft's constants (compiled with numba).

One call of :func:`step_player` is one game tick, ported from Minecraft 1.11's
``EntityLivingBase.moveEntityWithHeading``: inputs accelerate the player (``moveFlying``), the
0.6 x 1.8 box is moved axis by axis (y, then x, then z) and clipped against solid blocks, then
gravity and drag act. Terminal speeds follow from the constants: walking 4.317 blocks/s,
sprinting 5.612, sneaking 1.295, swimming 1.96; a jump rises 1.2522 blocks, so a one-block step
needs a jump and a two-block wall cannot be climbed. Water slows the player, weakens gravity and
makes a held jump rise; at a bank the player is lifted out as in Minecraft.

Outside the grid, columns count as solid (the map cannot be left) and the space under ``y = 0``
is solid; above the build limit is air. Mobs do not push the player. The player state is a
``float64[PLAYER_STATE_SIZE]`` array indexed by the constants below (positions of the feet).
"""

from __future__ import annotations

import math

import numba as nb
import numpy as np

from mrsteve.world.camera import EYE_HEIGHT  # noqa: F401  (the body holds the camera)

PLAYER_WIDTH = 0.6
"""Width of the player's collision box in blocks (x and z)."""
PLAYER_HEIGHT = 1.8
"""Height of the player's collision box in blocks."""
TICKS_PER_SECOND = 20

# Minecraft's movement constants (per tick).
WALK_ACCELERATION = 0.1  # player movementSpeed attribute
SPRINT_MULTIPLIER = 1.3
SNEAK_MULTIPLIER = 0.3
INPUT_DAMPING = 0.98  # moveForward/moveStrafing *= 0.98 every tick
AIR_ACCELERATION = 0.02  # jumpMovementFactor
SPRINT_AIR_ACCELERATION = 0.026
GROUND_FRICTION = 0.6 * 0.91  # block slipperiness x air drag
AIR_FRICTION = 0.91
GRAVITY = 0.08
VERTICAL_DRAG = 0.98
JUMP_VELOCITY = 0.42
SPRINT_JUMP_BOOST = 0.2
WATER_ACCELERATION = 0.02
WATER_DRAG = 0.8
WATER_GRAVITY = 0.02
WATER_JUMP_ACCELERATION = 0.04
WATER_EXIT_VELOCITY = 0.3
WATER_EXIT_STEP = 0.6
MIN_VELOCITY = 0.005  # smaller velocity components snap to zero

# Indices into the player state array.
X, Y, Z, VX, VY, VZ, ON_GROUND, IN_WATER = range(8)
PLAYER_STATE_SIZE = 8

_HALF_WIDTH = PLAYER_WIDTH / 2
_EPS = 1e-7


def new_player_state(x: float, y: float, z: float) -> np.ndarray:
    """A player standing still with its feet at ``(x, y, z)``."""
    state = np.zeros(PLAYER_STATE_SIZE, dtype=np.float64)
    state[X], state[Y], state[Z] = x, y, z
    return state


@nb.njit(cache=True, inline="always")
def _is_solid(blocks, solid, i, j, k):
    sx, sy, sz = blocks.shape
    if i < 0 or k < 0 or i >= sx or k >= sz or j < 0:
        return True
    if j >= sy:
        return False
    return solid[blocks[i, j, k]]


@nb.njit(cache=True)
def box_collides(blocks, solid, x0, y0, z0, x1, y1, z1):
    """Whether any cell overlapping the box ``[x0, x1] x [y0, y1] x [z0, z1]`` is solid."""
    for i in range(math.floor(x0 + _EPS), math.ceil(x1 - _EPS)):
        for j in range(math.floor(y0 + _EPS), math.ceil(y1 - _EPS)):
            for k in range(math.floor(z0 + _EPS), math.ceil(z1 - _EPS)):
                if _is_solid(blocks, solid, i, j, k):
                    return True
    return False


@nb.njit(cache=True)
def box_touches(blocks, mask, x0, y0, z0, x1, y1, z1):
    """Whether any in-grid cell overlapping the box has its block id set in ``mask``."""
    sx, sy, sz = blocks.shape
    for i in range(max(0, math.floor(x0)), min(sx, math.ceil(x1))):
        for j in range(max(0, math.floor(y0)), min(sy, math.ceil(y1))):
            for k in range(max(0, math.floor(z0)), min(sz, math.ceil(z1))):
                if mask[blocks[i, j, k]]:
                    return True
    return False


@nb.njit(cache=True)
def _clip_move(blocks, solid, lo, hi, axis, d):
    """How far the box ``[lo, hi]`` can move by ``d`` along ``axis`` before touching a solid cell."""
    if d == 0.0:
        return 0.0
    a1 = (axis + 1) % 3
    a2 = (axis + 2) % 3
    r1 = range(math.floor(lo[a1] + _EPS), math.ceil(hi[a1] - _EPS))
    r2 = range(math.floor(lo[a2] + _EPS), math.ceil(hi[a2] - _EPS))
    cell = np.empty(3, dtype=np.int64)
    if d > 0:
        start = math.ceil(hi[axis] - _EPS)
        stop = math.ceil(hi[axis] + d)  # cells c with hi <= c < hi + d
        step = 1
    else:
        start = math.floor(lo[axis] + _EPS) - 1
        stop = math.floor(lo[axis] + d) - 1  # cells c with lo + d < c + 1 <= lo
        step = -1
    for c in range(start, stop, step):
        cell[axis] = c
        for u in r1:
            cell[a1] = u
            for w in r2:
                cell[a2] = w
                if _is_solid(blocks, solid, cell[0], cell[1], cell[2]):
                    allowed = (c - hi[axis]) if d > 0 else (c + 1 - lo[axis])
                    return max(allowed, 0.0) if d > 0 else min(allowed, 0.0)
    return d


@nb.njit(cache=True)
def _move(blocks, solid, state, dx, dy, dz):
    """Move the player's box by ``(dx, dy, dz)`` (y, then x, then z), stopping at solid cells.

    Zeroes the velocity along blocked axes; returns whether a horizontal move was blocked.
    """
    lo = np.empty(3)
    hi = np.empty(3)
    lo[0], lo[1], lo[2] = state[X] - _HALF_WIDTH, state[Y], state[Z] - _HALF_WIDTH
    hi[0], hi[1], hi[2] = state[X] + _HALF_WIDTH, state[Y] + PLAYER_HEIGHT, state[Z] + _HALF_WIDTH
    wanted = (dy, dx, dz)
    axes = (1, 0, 2)
    velocity = (VY, VX, VZ)
    blocked_horizontally = False
    state[ON_GROUND] = 0.0
    for n in range(3):
        axis = axes[n]
        moved = _clip_move(blocks, solid, lo, hi, axis, wanted[n])
        lo[axis] += moved
        hi[axis] += moved
        if moved != wanted[n]:
            state[velocity[n]] = 0.0
            if axis == 1:
                if wanted[n] < 0:
                    state[ON_GROUND] = 1.0
            else:
                blocked_horizontally = True
    state[X] = lo[0] + _HALF_WIDTH
    state[Y] = lo[1]
    state[Z] = lo[2] + _HALF_WIDTH
    return blocked_horizontally


@nb.njit(cache=True)
def _accelerate(state, forward, strafe, yaw_deg, acceleration):
    """Minecraft's ``moveFlying``: add ``acceleration`` along the input direction."""
    length = forward * forward + strafe * strafe
    if length < 1e-4:
        return
    scale = acceleration / max(math.sqrt(length), 1.0)
    forward *= scale
    strafe *= scale
    yaw = math.radians(yaw_deg)
    sin, cos = math.sin(yaw), math.cos(yaw)
    state[VX] += strafe * cos - forward * sin
    state[VZ] += forward * cos + strafe * sin


@nb.njit(cache=True)
def _update_in_water(blocks, water, state):
    x, y, z = state[X], state[Y], state[Z]
    inside = box_touches(
        blocks,
        water,
        x - _HALF_WIDTH + 0.001,
        y + 0.4,
        z - _HALF_WIDTH + 0.001,
        x + _HALF_WIDTH - 0.001,
        y + PLAYER_HEIGHT - 0.4,
        z + _HALF_WIDTH - 0.001,
    )
    state[IN_WATER] = 1.0 if inside else 0.0


@nb.njit(cache=True)
def step_player(blocks, solid, water, state, forward, strafe, jump, sneak, sprint, yaw_deg):
    """Advance the player one tick.

    ``forward`` and ``strafe`` are in {-1, 0, 1} (strafe +1 is left); ``jump``, ``sneak`` and
    ``sprint`` are booleans (sprinting needs forward input and no sneaking); ``yaw_deg`` is the
    heading. ``solid`` and ``water`` are ``bool[n_blocks]`` masks of block ids.
    """
    for axis in (VX, VY, VZ):
        if abs(state[axis]) < MIN_VELOCITY:
            state[axis] = 0.0
    sprinting = sprint and forward > 0 and not sneak
    in_water = state[IN_WATER] > 0.0
    if jump:
        if in_water:
            state[VY] += WATER_JUMP_ACCELERATION
        elif state[ON_GROUND] > 0.0:
            state[VY] = JUMP_VELOCITY
            if sprinting:
                yaw = math.radians(yaw_deg)
                state[VX] -= math.sin(yaw) * SPRINT_JUMP_BOOST
                state[VZ] += math.cos(yaw) * SPRINT_JUMP_BOOST
    forward_input = float(forward) * INPUT_DAMPING
    strafe_input = float(strafe) * INPUT_DAMPING
    if sneak:
        forward_input *= SNEAK_MULTIPLIER
        strafe_input *= SNEAK_MULTIPLIER

    if in_water:
        y_before = state[Y]
        _accelerate(state, forward_input, strafe_input, yaw_deg, WATER_ACCELERATION)
        blocked = _move(blocks, solid, state, state[VX], state[VY], state[VZ])
        state[VX] *= WATER_DRAG
        state[VY] = state[VY] * WATER_DRAG - WATER_GRAVITY
        state[VZ] *= WATER_DRAG
        if blocked:
            # Minecraft lifts a swimmer out at a bank when the box, raised, would be free and dry.
            ox, oz = state[VX], state[VZ]
            oy = state[VY] + WATER_EXIT_STEP - (state[Y] - y_before)
            x0, y0, z0 = state[X] - _HALF_WIDTH + ox, state[Y] + oy, state[Z] - _HALF_WIDTH + oz
            x1, y1, z1 = x0 + PLAYER_WIDTH, y0 + PLAYER_HEIGHT, z0 + PLAYER_WIDTH
            if not box_collides(blocks, solid, x0, y0, z0, x1, y1, z1) and not box_touches(
                blocks, water, x0, y0, z0, x1, y1, z1
            ):
                state[VY] = WATER_EXIT_VELOCITY
    else:
        on_ground = state[ON_GROUND] > 0.0
        friction = GROUND_FRICTION if on_ground else AIR_FRICTION
        if on_ground:
            speed = WALK_ACCELERATION * (SPRINT_MULTIPLIER if sprinting else 1.0)
            acceleration = speed * (0.16277136 / (friction * friction * friction))
        else:
            acceleration = SPRINT_AIR_ACCELERATION if sprinting else AIR_ACCELERATION
        _accelerate(state, forward_input, strafe_input, yaw_deg, acceleration)
        _move(blocks, solid, state, state[VX], state[VY], state[VZ])
        state[VY] = (state[VY] - GRAVITY) * VERTICAL_DRAG
        state[VX] *= friction
        state[VZ] *= friction
    _update_in_water(blocks, water, state)


@nb.njit(cache=True)
def settle_player(blocks, solid, water, state):
    """Refresh the ground and water flags after a teleport, without moving the player."""
    _move(blocks, solid, state, 0.0, -1e-6, 0.0)
    state[VY] = 0.0
    _update_in_water(blocks, water, state)
