"""First-person renderer of the embedded world: RGB, depth and per-pixel semantics by ray casting.

Every pixel casts one ray from the eye through the voxel grid (Amanatides & Woo DDA) in a single
numba kernel compiled with ``cache=True``, so a new process renders its first frame without
recompiling. Ray directions are precomputed once per image size in camera space and rotated per
frame; outputs are preallocated. Mobs are axis-aligned boxes drawn in a second pass that only visits
the pixels of each box's screen rectangle.

Conventions: ``blocks[x, y, z]`` with y up, block ``(i, j, k)`` fills ``[i, i+1) x [j, j+1) x
[k, k+1)``; yaw 0 faces +z, 90 faces -x; positive pitch looks down. The field of view is vertical
(Minecraft's and MineDojo's 70 degrees by default). The camera's geometry (rays, basis, eye height)
is :mod:`mrsteve.world.camera`'s.

What is drawn: cubes with a top / side / bottom colour from ``content.toml``, directional shading
per face, a 4 x 4 texel brightness pattern and darkened edges up close; thin plants (``cross``) as
two crossed quads of tapering blades (a stack of the same plant, like sugar cane, as full stalks);
water as an opaque surface tinted by the sky (seen from below the surface, the view is tinted blue
instead); mobs as boxes in their kind's colour, a burning zombie covered in rising orange and yellow
flames; a sky gradient, and distance fog towards the horizon colour up to the view distance. The
light is a :class:`Look` of :data:`LOOKS` (the sky's colours and the tint of lit surfaces): ``day``
by default, ``dusk`` and ``overcast`` for held-out evaluation.
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numba as nb
import numpy as np

from mrsteve.naming import check_name
from mrsteve.world.camera import (
    DEFAULT_FOV_DEG,
    Camera,
    camera_basis,
    camera_rays,  # noqa: F401  (re-exported for old imports)
)
from mrsteve.world.content import SHAPES, Content, load_content
from mrsteve.world.raycast import ColumnHeights, dda_axis

SKY_CLASS = 0
"""Semantic id of the sky (and of anything beyond the view distance)."""

MAX_IMAGE_SIDE = 4096
"""Largest accepted image height or width."""

_NONE = SHAPES.index("none")
_CUBE = SHAPES.index("cube")
_CROSS = SHAPES.index("cross")
_LIQUID = SHAPES.index("liquid")

_MISS = -2
"""Face code of a ray that hit nothing within the view distance."""
_FACE_INSIDE = -1
"""Face code of a hit in the eye's own cell (the ray starts inside a block)."""
_FACE_CROSS = 6
"""Face code of a hit on a plant's crossed quads."""

_NEAR = 1e-3
"""Distance of the near plane that clips mob boxes before projecting them to the screen."""

_FAST = {"nsz", "arcp", "contract", "afn", "reassoc"}
"""fastmath flags without ``nnan`` / ``ninf``: depth is ``inf`` for the sky."""

_FIRE_ORANGE = (242.0, 118.0, 24.0)
_FIRE_YELLOW = (255.0, 214.0, 64.0)


class Look(NamedTuple):
    """The light a world is seen in: the sky's colours, the tint of sunlit surfaces and of the
    view under water (RGB, 0-255; the tint multiplies each channel)."""

    horizon: tuple[float, float, float]
    """The sky at the horizon, and the colour distance fog fades to."""
    zenith: tuple[float, float, float]
    """The sky straight up."""
    light: tuple[float, float, float]
    """Each channel's share of the daylight that falls on surfaces and mobs."""
    water_tint: tuple[float, float, float]
    """The colour the view is tinted by under water."""

    def palette(self) -> tuple[float, ...]:
        """The horizon, zenith and water tint as nine floats, the kernel's form (passed by value:
        the light's tint is applied to the colour tables instead, once)."""
        return tuple(float(v) for v in (*self.horizon, *self.zenith, *self.water_tint))


LOOKS = {
    "day": Look((186.0, 214.0, 246.0), (98.0, 148.0, 232.0), (1.0, 1.0, 1.0),
                (40.0, 70.0, 170.0)),
    "dusk": Look((232.0, 146.0, 98.0), (62.0, 74.0, 140.0), (0.86, 0.64, 0.52),
                 (30.0, 44.0, 112.0)),
    "overcast": Look((172.0, 176.0, 182.0), (132.0, 138.0, 148.0), (0.7, 0.72, 0.76),
                     (46.0, 62.0, 108.0)),
}
"""The looks the renderer draws: ``day`` (every map, calibration and training world is seen in
it), and ``dusk`` and ``overcast``, looks no learned part is trained on, for held-out
evaluation."""


class RenderedFrame(NamedTuple):
    """One rendered view. The arrays are the renderer's own buffers, overwritten by its next
    ``render`` call: callers copy what they keep."""

    rgb: np.ndarray
    """``uint8[H, W, 3]`` colour image."""
    depth: np.ndarray
    """``float32[H, W]`` distance from the eye along each pixel's ray; ``inf`` for the sky."""
    semantic: np.ndarray
    """``uint8[H, W]`` class ids of :attr:`Content.semantic_classes` (0: sky)."""


class Renderer:
    """First-person renderer for one image size.

    ``height`` x ``width`` pixels, ``fov_deg`` the vertical field of view, ``max_distance`` the view
    distance in blocks (nothing farther is drawn: it is sky, depth ``inf``), ``fog`` fades the last
    40 % of the view distance into the horizon colour, ``look`` names the light of
    :data:`LOOKS`.
    """

    def __init__(
        self,
        height: int,
        width: int,
        fov_deg: float = DEFAULT_FOV_DEG,
        content: Content | None = None,
        *,
        max_distance: float = 64.0,
        fog: bool = True,
        look: str = "day",
    ) -> None:
        check_name(look, LOOKS, "look")
        for name, value in (("height", height), ("width", width)):
            is_int = isinstance(value, (int, np.integer)) and not isinstance(value, bool)
            if not is_int or not 1 <= value <= MAX_IMAGE_SIDE:
                raise ValueError(f"image {name} must be an integer in 1..{MAX_IMAGE_SIDE}, got {value!r}")
        if not 0.0 < fov_deg < 180.0:
            raise ValueError(f"fov_deg must be in (0, 180) degrees, got {fov_deg}")
        if not max_distance > 0.0:
            raise ValueError(f"max_distance must be positive, got {max_distance}")
        self.height = int(height)
        self.width = int(width)
        self.fov_deg = float(fov_deg)
        self.max_distance = float(max_distance)
        self.fog_start = 0.6 * self.max_distance if fog else self.max_distance
        self.content = content if content is not None else load_content()
        self.look = look
        self._palette = LOOKS[look].palette()
        light = np.array(LOOKS[look].light, np.float32)

        self._tan_half = math.tan(math.radians(self.fov_deg) / 2.0)
        self.camera = Camera(self.height, self.width, self.fov_deg)
        """The camera the frames are rendered with."""
        self._rays = self.camera.rays
        self._shape_of, colors, self._semantic_of = _block_tables(self.content)
        self._colors = colors * light  # lit surfaces in the look's light
        self._mob_colors = _mob_colors(self.content) * light
        self._mob_classes = np.array(
            [self.content.semantic_id(m.name) for m in self.content.mobs]
            + [self.content.semantic_id("burning_zombie")], dtype=np.float32,
        )
        self._burning_class = self.content.semantic_id("burning_zombie")
        self._no_mobs = np.zeros((0, 6), dtype=np.float32)
        self._heights: ColumnHeights | None = None
        self._frame = RenderedFrame(
            rgb=np.zeros((self.height, self.width, 3), dtype=np.uint8),
            depth=np.zeros((self.height, self.width), dtype=np.float32),
            semantic=np.zeros((self.height, self.width), dtype=np.uint8),
        )

    def render(
        self,
        blocks: np.ndarray,
        eye_xyz: tuple[float, float, float],
        yaw: float,
        pitch: float,
        mob_boxes: np.ndarray | None = None,
        *,
        time: int = 0,
        heights: ColumnHeights | None = None,
        origin: tuple[int, int] = (0, 0),
    ) -> RenderedFrame:
        """Render the view from ``eye_xyz`` at ``yaw`` / ``pitch`` degrees.

        ``blocks`` is the ``uint8[X, Y, Z]`` voxel grid; ``mob_boxes`` is ``float32[M, 6]`` with rows
        ``(x, y_feet, z, width, height, semantic_id)``; ``time`` (the environment step) animates the
        fire of burning zombies. ``heights`` is the grid's :class:`ColumnHeights`, kept up to date
        by the caller; without it the renderer recomputes them from ``blocks`` (about 0.2 ms for a
        200 x 200 world). ``origin`` is where ``blocks[0, :, 0]`` lies in the world (an unbounded
        world's loaded window): the blocks' textures are the world cells', so they do not change
        when the window moves. The returned buffers are reused by the next call.
        """
        if not isinstance(blocks, np.ndarray) or blocks.dtype != np.uint8 or blocks.ndim != 3:
            raise ValueError(
                "blocks must be a uint8[X, Y, Z] numpy array, got "
                f"{type(blocks).__name__} {getattr(blocks, 'dtype', '')}{getattr(blocks, 'shape', '')}"
            )
        boxes = self._no_mobs if mob_boxes is None else self._check_boxes(mob_boxes)
        x, y, z = eye_xyz
        if not all(math.isfinite(v) for v in (x, y, z, yaw, pitch, time)):
            raise ValueError(f"eye, yaw, pitch and time must be finite, got {eye_xyz}, {yaw}, "
                             f"{pitch}, {time}")
        blocks = np.ascontiguousarray(blocks)
        if heights is None:
            heights = self._heights_of(blocks)
        elif heights.columns.shape != (blocks.shape[0], blocks.shape[2]):
            raise ValueError(
                f"heights cover {heights.columns.shape} columns, blocks {blocks.shape[0::2]}"
            )
        _render_frame(
            blocks, heights.tiles, heights.tile_shift, float(x), float(y), float(z), float(yaw),
            float(pitch), self._rays, self._tan_half, self.max_distance, self.fog_start, float(time),
            self._shape_of, self._colors, self._semantic_of, boxes, self._mob_colors,
            self._burning_class, self._frame.rgb, self._frame.depth, self._frame.semantic,
            int(origin[0]), int(origin[1]), self._palette,
        )  # fmt: skip
        return self._frame

    def _heights_of(self, blocks: np.ndarray) -> ColumnHeights:
        """Fresh column heights of ``blocks``, in a buffer kept for the next call."""
        if self._heights is None or self._heights.columns.shape != blocks.shape[0::2]:
            self._heights = ColumnHeights(blocks)
        else:
            self._heights.refresh(blocks)
        return self._heights

    def _check_boxes(self, mob_boxes) -> np.ndarray:
        boxes = np.ascontiguousarray(mob_boxes, dtype=np.float32)
        if boxes.ndim != 2 or boxes.shape[1] != 6:
            raise ValueError(
                "mob_boxes must be float32[M, 6] rows (x, y_feet, z, width, height, semantic_id), "
                f"got shape {boxes.shape}"
            )
        problem = _boxes_problem(boxes, self._mob_classes)  # one compiled pass: renders often
        if problem == _BAD_CLASS:
            names = ", ".join(f"{i:.0f} {self.content.semantic_classes[int(i)]}" for i in self._mob_classes)
            raise ValueError(f"mob_boxes semantic ids must be mob classes ({names}), got "
                             f"{np.unique(boxes[:, 5])}")
        if problem == _BAD_BOX:
            raise ValueError("mob_boxes must be finite with positive widths and heights")
        return boxes


_BAD_CLASS, _BAD_BOX = 1, 2
"""What :func:`_boxes_problem` found (0: nothing)."""


@nb.njit(cache=True)
def _boxes_problem(boxes, mob_classes):
    """:data:`_BAD_CLASS` when a row's semantic id is not one of ``mob_classes``, else
    :data:`_BAD_BOX` when a row is not finite or has a width or height <= 0, else 0."""
    for m in range(boxes.shape[0]):
        known = False
        for cls in mob_classes:
            known |= boxes[m, 5] == cls
        if not known:
            return _BAD_CLASS
    for m in range(boxes.shape[0]):
        for field in range(6):
            if not math.isfinite(boxes[m, field]):
                return _BAD_BOX
        if not (boxes[m, 3] > 0 and boxes[m, 4] > 0):
            return _BAD_BOX
    return 0


def _block_tables(content: Content) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-block-id shape, ``float32[256, 3, 3]`` top/side/bottom colour and semantic class, padded
    to all 256 ids of the uint8 grid (unknown ids draw as air) so the kernel never reads outside."""
    n = len(content.blocks)
    shape_of = np.zeros(256, dtype=np.uint8)
    shape_of[:n] = content.block_shape
    colors = np.zeros((256, 3, 3), dtype=np.float32)
    colors[:n] = content.block_colors
    semantic_of = np.zeros(256, dtype=np.uint8)
    semantic_of[:n] = content.block_semantic
    return shape_of, colors, semantic_of


def _mob_colors(content: Content) -> np.ndarray:
    """``float32[n_classes, 3]`` body colour of each mob class (a burning zombie is a zombie)."""
    colors = np.zeros((len(content.semantic_classes), 3), dtype=np.float32)
    for mob in content.mobs:
        colors[content.semantic_id(mob.name)] = mob.color
    colors[content.semantic_id("burning_zombie")] = content.mob("zombie").color
    return colors


@nb.njit(cache=True, fastmath=_FAST)
def _hash01(a, b, c, d):
    """Deterministic pseudo-random number in [0, 1) from four integers (texture noise)."""
    h = ((a * 73856093) ^ (b * 19349663) ^ (c * 83492791) ^ (d * 50331653)) & 0xFFFFFFFF
    h = ((h ^ (h >> 16)) * 0x45D9F3B) & 0xFFFFFFFF
    h = ((h ^ (h >> 16)) * 0x45D9F3B) & 0xFFFFFFFF
    return ((h ^ (h >> 16)) & 0xFFFF) / 65536.0


@nb.njit(cache=True, fastmath=_FAST)
def _cross_hit(blocks, b, i, j, k, ox, oy, oz, dx, dy, dz, t_in, t_out, gx, gz):
    """Nearest ray distance in ``[t_in, t_out]`` at which the ray meets a blade of the plant in cell
    ``(i, j, k)`` (two vertical quads along the cell's diagonals), or -1.

    A plant with the same plant above it (a sugar cane stack) is drawn as full-height stalks; the top
    one as blades that taper to points. ``(gx, gz)`` is the grid's corner in the world (the
    blades' shapes follow the world's cells, not the grid's).
    """
    px = ox - i
    pz = oz - k
    stacked = j + 1 < blocks.shape[1] and blocks[i, j + 1, k] == b
    best = -1.0
    for quad in range(2):
        if quad == 0:  # x - z = 0
            denom = dx - dz
            if denom == 0.0:
                continue
            t = (pz - px) / denom
        else:  # x + z = 1
            denom = dx + dz
            if denom == 0.0:
                continue
            t = (1.0 - px - pz) / denom
        if t < t_in or t > t_out or (best >= 0.0 and t >= best):
            continue
        u = px + dx * t
        v = oy + dy * t - j
        if u < 0.0 or u > 1.0:
            continue
        blade = int(u * 5.0)
        w = abs(u * 5.0 - blade - 0.5)
        if stacked:
            visible = w < 0.3
        else:
            tip = 0.55 + 0.4 * _hash01(i + gx, j, k + gz, blade + 8 * quad)
            visible = v < tip and w < 0.4 * (1.0 - v / tip)
        if visible:
            best = t
    return best


@nb.njit(cache=True, fastmath=_FAST)
def _march(blocks, tiles, shift, ceiling, shape_of, ox, oy, oz, dx, dy, dz, max_dist, in_liquid,
           gx, gz):
    """First visible surface along a unit ray: ``(t, block, face, i, j, k)``; ``face`` is ``_MISS``
    with nothing within ``max_dist``. Faces as in :func:`~mrsteve.world.raycast.cast_ray`, plus
    ``_FACE_CROSS`` for plants and ``_FACE_INSIDE`` for the eye's own cell. While ``in_liquid`` (the
    eye is under water) water cells are see-through until the ray leaves the water.

    Two-level DDA: an outer walk over the height-map tiles in x and z skips every tile the ray
    passes above (``tiles`` of ``2 ** shift`` columns, see
    :class:`~mrsteve.world.raycast.ColumnHeights`); inside the others
    a cell walk looks at the blocks. A rising ray above ``ceiling`` (the highest tile) stops.
    """
    sx, sy, sz = blocks.shape
    n_ti, n_tk = tiles.shape
    i = math.floor(ox)
    k = math.floor(oz)
    if i < 0 or i >= sx or k < 0 or k >= sz:
        return 0.0, 0, _MISS, i, 0, k
    tile = 1 << shift
    ti = i >> shift
    tk = k >> shift
    tile_step_i, tile_delta_i, tile_max_i = dda_axis(ox / tile, dx / tile, ti)
    tile_step_k, tile_delta_k, tile_max_k = dda_axis(oz / tile, dz / tile, tk)
    step_i, delta_i, _ = dda_axis(ox, dx, i)
    step_j, delta_j, _ = dda_axis(oy, dy, 0)
    step_k, delta_k, _ = dda_axis(oz, dz, k)
    t_in = 0.0
    tile_face = _FACE_INSIDE
    while t_in <= max_dist:
        top = tiles[ti, tk]
        y_in = oy + dy * t_in
        t = t_in
        face = tile_face
        enter = True
        if y_in >= top:
            if dy >= 0.0:
                if y_in >= ceiling:
                    break
                enter = False
            else:  # the ray comes down into the tile's blocks through the top of a cell, if at all
                t = (top - oy) / dy
                face = 3
                enter = top > 0 and t < min(tile_max_i, tile_max_k)
        if enter:
            lo_i = ti << shift
            hi_i = min(lo_i + tile, sx) - 1
            lo_k = tk << shift
            hi_k = min(lo_k + tile, sz) - 1
            # The cell at distance t, clamped into the tile against rounding on its boundary.
            i = min(max(math.floor(ox + dx * t), lo_i), hi_i)
            k = min(max(math.floor(oz + dz * t), lo_k), hi_k)
            j = top - 1 if face == 3 else math.floor(oy + dy * t)
            t_max_i = (i + (step_i > 0) - ox) / dx if dx != 0 else 1e30
            t_max_j = (j + (step_j > 0) - oy) / dy if dy != 0 else 1e30
            t_max_k = (k + (step_k > 0) - oz) / dz if dz != 0 else 1e30
            while t <= max_dist:
                if 0 <= j < sy:
                    b = blocks[i, j, k]
                    if b != 0:
                        shape = shape_of[b]
                        if shape == _CUBE:
                            return t, b, face, i, j, k
                        if shape == _LIQUID:
                            if not in_liquid:
                                return t, b, face, i, j, k
                        else:
                            in_liquid = False
                            if shape == _CROSS:
                                t_out = min(t_max_i, t_max_j, t_max_k, max_dist)
                                t_hit = _cross_hit(
                                    blocks, b, i, j, k, ox, oy, oz, dx, dy, dz, t, t_out, gx, gz
                                )
                                if t_hit >= 0.0:
                                    return t_hit, b, _FACE_CROSS, i, j, k
                    else:
                        in_liquid = False
                elif (j < 0 and dy <= 0) or (j >= sy and dy >= 0):
                    return t, 0, _MISS, i, j, k
                if t_max_i < t_max_j and t_max_i < t_max_k:
                    t = t_max_i
                    t_max_i += delta_i
                    i += step_i
                    face = 0 if step_i > 0 else 1
                    if i < 0 or i >= sx:
                        return t, 0, _MISS, i, j, k
                    if i < lo_i or i > hi_i:
                        break
                elif t_max_j < t_max_k:
                    t = t_max_j
                    t_max_j += delta_j
                    j += step_j
                    face = 2 if step_j > 0 else 3
                    if j >= top and dy > 0:
                        break  # risen above everything in this tile
                else:
                    t = t_max_k
                    t_max_k += delta_k
                    k += step_k
                    face = 4 if step_k > 0 else 5
                    if k < 0 or k >= sz:
                        return t, 0, _MISS, i, j, k
                    if k < lo_k or k > hi_k:
                        break
        if tile_max_i < tile_max_k:
            t_in = tile_max_i
            tile_max_i += tile_delta_i
            ti += tile_step_i
            tile_face = 0 if tile_step_i > 0 else 1
        else:
            t_in = tile_max_k
            tile_max_k += tile_delta_k
            tk += tile_step_k
            tile_face = 4 if tile_step_k > 0 else 5
        if ti < 0 or ti >= n_ti or tk < 0 or tk >= n_tk:
            break
    return t_in, 0, _MISS, i, 0, k


@nb.njit(cache=True, fastmath=_FAST)
def _block_shade(face, hx, hy, hz, i, j, k, t, gx, gz):
    """Brightness and colour row (0 top, 1 side, 2 bottom) of a block surface point: directional
    light per face, a 4 x 4 texel pattern (drawn for the world's cell: the grid's cell plus
    ``(gx, gz)``) and darkened edges within 24 blocks."""
    if face == 3:
        row, light, u, v = 0, 1.0, hx - i, hz - k
    elif face == 2:
        row, light, u, v = 2, 0.55, hx - i, hz - k
    elif face == 0 or face == 1:
        row, light, u, v = 1, 0.8, hz - k, hy - j
    elif face == 4 or face == 5:
        row, light, u, v = 1, 0.68, hx - i, hy - j
    elif face == _FACE_CROSS:
        return 1, 0.6 + 0.4 * (hy - j)
    else:
        return 1, 0.5
    texel = int(u * 4.0) * 4 + int(v * 4.0)
    light *= 0.9 + 0.2 * _hash01(i + gx, j, k + gz, face * 16 + texel)
    if t < 24.0 and min(u, 1.0 - u, v, 1.0 - v) < 0.04:
        light *= 0.8
    return row, light


@nb.njit(cache=True, fastmath=_FAST)
def _sky(dy, palette):
    a = min(max(dy * 1.6, 0.0), 1.0)
    return (
        palette[0] + (palette[3] - palette[0]) * a,
        palette[1] + (palette[4] - palette[1]) * a,
        palette[2] + (palette[5] - palette[2]) * a,
    )


@nb.njit(cache=True, fastmath=_FAST)
def _store(rgb, r, c, red, green, blue, t, fog_start, max_dist, underwater, palette):
    """Write a surface colour after distance fog and the under-water tint."""
    if t > fog_start:
        a = min((t - fog_start) / (max_dist - fog_start), 1.0)
        red += (palette[0] - red) * a
        green += (palette[1] - green) * a
        blue += (palette[2] - blue) * a
    if underwater:
        red = 0.45 * red + 0.55 * palette[6]
        green = 0.45 * green + 0.55 * palette[7]
        blue = 0.45 * blue + 0.55 * palette[8]
    rgb[r, c, 0] = np.uint8(min(max(red, 0.0), 255.0))
    rgb[r, c, 1] = np.uint8(min(max(green, 0.0), 255.0))
    rgb[r, c, 2] = np.uint8(min(max(blue, 0.0), 255.0))


@nb.njit(cache=True, fastmath=_FAST)
def _box_hit(ox, oy, oz, dx, dy, dz, x0, y0, z0, x1, y1, z1):
    """Entry distance of a ray into a box from outside and the axis it enters through (0 x, 1 y,
    2 z), or ``(-1, -1)`` when it misses or the eye is inside the box (slab test)."""
    t_near = -1e30
    t_far = 1e30
    axis = -1
    for a in range(3):
        if a == 0:
            o, d, lo, hi = ox, dx, x0, x1
        elif a == 1:
            o, d, lo, hi = oy, dy, y0, y1
        else:
            o, d, lo, hi = oz, dz, z0, z1
        if d == 0.0:
            if o < lo or o > hi:
                return -1.0, -1
            continue
        t1 = (lo - o) / d
        t2 = (hi - o) / d
        if t1 > t2:
            t1, t2 = t2, t1
        if t1 > t_near:
            t_near = t1
            axis = a
        t_far = min(t_far, t2)
    if t_near > t_far or t_near <= 0.0:
        return -1.0, -1
    return t_near, axis


@nb.njit(cache=True, fastmath=_FAST)
def _render_frame(
    blocks, tiles, tile_shift, ox, oy, oz, yaw_deg, pitch_deg, rays, tan_half, max_dist, fog_start,
    time, shape_of, colors, semantic_of, mob_boxes, mob_colors, burning_class, rgb, depth, semantic,
    gx, gz, palette,
):  # fmt: skip
    """Fill ``rgb``, ``depth`` and ``semantic`` with the view from ``(ox, oy, oz)``; ``(gx, gz)``
    is the grid's corner in the world (the textures' frame)."""
    height, width = depth.shape
    sx, sy, sz = blocks.shape
    (rx, ry, rz), (ux, uy, uz), (fx, fy, fz) = camera_basis(yaw_deg, pitch_deg)

    ceiling = tiles.max()
    ei, ej, ek = math.floor(ox), math.floor(oy), math.floor(oz)
    underwater = (
        0 <= ei < sx and 0 <= ej < sy and 0 <= ek < sz and shape_of[blocks[ei, ej, ek]] == _LIQUID
    )

    for p in range(height * width):
        r = p // width
        c = p - r * width
        cx, cy, cz = rays[p, 0], rays[p, 1], rays[p, 2]
        dx = rx * cx + ux * cy + fx * cz
        dy = ry * cx + uy * cy + fy * cz
        dz = rz * cx + uz * cy + fz * cz
        t, b, face, i, j, k = _march(
            blocks, tiles, tile_shift, ceiling, shape_of, ox, oy, oz, dx, dy, dz, max_dist,
            underwater, gx, gz,
        )
        if face == _MISS or t > max_dist:
            red, green, blue = _sky(dy, palette)
            _store(rgb, r, c, red, green, blue, 0.0, fog_start, max_dist, underwater, palette)
            depth[r, c] = np.inf
            semantic[r, c] = 0
            continue
        row, light = _block_shade(face, ox + dx * t, oy + dy * t, oz + dz * t, i, j, k, t, gx, gz)
        red = colors[b, row, 0] * light
        green = colors[b, row, 1] * light
        blue = colors[b, row, 2] * light
        if shape_of[b] == _LIQUID and face == 3:  # the water surface mirrors some sky
            mirror = 0.35 * (1.0 - abs(dy))
            sr, sg, sb = _sky(-dy, palette)
            red += (sr - red) * mirror
            green += (sg - green) * mirror
            blue += (sb - blue) * mirror
        _store(rgb, r, c, red, green, blue, t, fog_start, max_dist, underwater, palette)
        depth[r, c] = t
        semantic[r, c] = semantic_of[b]

    corner_x, corner_y, corner_z, along = np.empty(8), np.empty(8), np.empty(8), np.empty(8)
    scale_u = 0.5 * width / (tan_half * width / height)
    scale_v = 0.5 * height / tan_half
    for m in range(mob_boxes.shape[0]):
        half = 0.5 * mob_boxes[m, 3]
        x0, x1 = mob_boxes[m, 0] - half, mob_boxes[m, 0] + half
        y0, y1 = mob_boxes[m, 1], mob_boxes[m, 1] + mob_boxes[m, 4]
        z0, z1 = mob_boxes[m, 2] - half, mob_boxes[m, 2] + half
        cls = int(mob_boxes[m, 5])
        nx = min(max(ox, x0), x1) - ox
        ny = min(max(oy, y0), y1) - oy
        nz = min(max(oz, z0), z1) - oz
        if nx * nx + ny * ny + nz * nz > max_dist * max_dist:
            continue
        # Screen rectangle of the part of the box in front of the eye: the corners in front and
        # the points where the box's edges cross the near plane, projected.
        for corner in range(8):
            corner_x[corner] = (x1 if corner & 1 else x0) - ox
            corner_y[corner] = (y1 if corner & 2 else y0) - oy
            corner_z[corner] = (z1 if corner & 4 else z0) - oz
            along[corner] = corner_x[corner] * fx + corner_y[corner] * fy + corner_z[corner] * fz
        r_lo, r_hi, c_lo, c_hi = height, -1, width, -1
        for corner in range(8):
            for bit in (0, 1, 2, 4):
                other = corner | bit
                if bit == 0:
                    if along[corner] < _NEAR:
                        continue
                    s = 0.0
                elif other == corner or (along[corner] < _NEAR) == (along[other] < _NEAR):
                    continue
                else:
                    s = (_NEAR - along[corner]) / (along[other] - along[corner])
                vx = corner_x[corner] + s * (corner_x[other] - corner_x[corner])
                vy = corner_y[corner] + s * (corner_y[other] - corner_y[corner])
                vz = corner_z[corner] + s * (corner_z[other] - corner_z[corner])
                depth_along = max(vx * fx + vy * fy + vz * fz, _NEAR)
                col = (vx * rx + vy * ry + vz * rz) / depth_along * scale_u + 0.5 * width - 0.5
                row_ = -(vx * ux + vy * uy + vz * uz) / depth_along * scale_v + 0.5 * height - 0.5
                r_lo = min(r_lo, math.floor(row_))
                r_hi = max(r_hi, math.ceil(row_))
                c_lo = min(c_lo, math.floor(col))
                c_hi = max(c_hi, math.ceil(col))
        for r in range(max(r_lo, 0), min(r_hi, height - 1) + 1):
            for c in range(max(c_lo, 0), min(c_hi, width - 1) + 1):
                p = r * width + c
                cx, cy, cz = rays[p, 0], rays[p, 1], rays[p, 2]
                dx = rx * cx + ux * cy + fx * cz
                dy = ry * cx + uy * cy + fy * cz
                dz = rz * cx + uz * cy + fz * cz
                t, axis = _box_hit(ox, oy, oz, dx, dy, dz, x0, y0, z0, x1, y1, z1)
                if axis < 0 or t >= depth[r, c] or t > max_dist:
                    continue
                # Hit point in the box's own frame, so its texture and flames move with it.
                hx, hy, hz = ox + dx * t - x0, oy + dy * t - y0, oz + dz * t - z0
                if axis == 0:
                    light, u = 0.8, hz
                elif axis == 1:
                    light, u = (1.0 if dy < 0 else 0.55), hx
                else:
                    light, u = 0.68, hx
                v = hy / (y1 - y0)
                light *= 0.88 + 0.24 * _hash01(
                    math.floor(hx * 4.0), math.floor(hy * 4.0), math.floor(hz * 4.0), cls
                )
                red = mob_colors[cls, 0] * light
                green = mob_colors[cls, 1] * light
                blue = mob_colors[cls, 2] * light
                if cls == burning_class:
                    # Flames: cells of a noise pattern scrolling upwards, denser at the feet.
                    flame = _hash01(math.floor(u * 6.0), math.floor(v * 7.0 - 0.5 * time), axis, 7)
                    if flame < 0.75 - 0.35 * v:
                        if flame < 0.3:
                            red, green, blue = _FIRE_YELLOW
                        else:
                            red, green, blue = _FIRE_ORANGE
                _store(rgb, r, c, red, green, blue, t, fog_start, max_dist, underwater, palette)
                depth[r, c] = t
                semantic[r, c] = cls
