"""The first-person renderer: conventions, semantics, depth, and agreement with the reference DDA."""

import math

import numpy as np
import pytest

from mrsteve.world.content import load_content
from mrsteve.world.raycast import ColumnHeights, cast_ray, look_direction
from mrsteve.world.render import LOOKS, SKY_CLASS, Renderer, camera_rays

CONTENT = load_content()
AIR, DIRT, STONE, WATER = (CONTENT.block(n).id for n in ("air", "dirt", "stone", "water"))
GRASS = CONTENT.block("tall_grass").id
SEM = CONTENT.semantic_id
FLOOR = 4  # floor blocks fill y in [0, FLOOR); standing on it, the feet are at y = FLOOR
EYE = 1.62


def floor_world(size=40, height=24, block=DIRT):
    blocks = np.zeros((size, height, size), dtype=np.uint8)
    blocks[:, :FLOOR, :] = block
    return blocks


def mob(name, x, z, y=FLOOR, burning=False):
    kind = CONTENT.mob(name)
    cls = SEM("burning_zombie" if burning else name)
    return np.array([[x, y, z, kind.width, kind.height, cls]], dtype=np.float32)


def test_looking_up_shows_only_sky():
    frame = Renderer(33, 33).render(floor_world(), (20.5, FLOOR + EYE, 20.5), 0.0, -90.0)
    assert (frame.semantic == SKY_CLASS).all()
    assert np.isinf(frame.depth).all()


@pytest.mark.parametrize("pitch", [90.0, 60.0, 30.0])
def test_looking_down_sees_dirt_at_eye_height_over_cos(pitch):
    frame = Renderer(33, 33).render(floor_world(), (20.5, FLOOR + EYE, 20.5), 37.0, pitch)
    assert frame.semantic[16, 16] == SEM("dirt")
    # The angle from the vertical is 90 - pitch: distance = height / cos(90 - pitch).
    expected = EYE / math.cos(math.radians(90.0 - pitch))
    assert frame.depth[16, 16] == pytest.approx(expected, rel=1e-4)


def test_cow_in_front_fills_the_centre_at_its_distance():
    eye = (20.5, FLOOR + 1.0, 20.5)
    frame = Renderer(33, 33).render(floor_world(), eye, 0.0, 0.0, mob("cow", 20.5, 25.5))
    assert frame.semantic[16, 16] == SEM("cow")
    # Yaw 0 faces +z; the cow's near face is half its width before its centre.
    assert frame.depth[16, 16] == pytest.approx(5.0 - CONTENT.mob("cow").width / 2, rel=1e-4)
    assert (frame.semantic == SEM("cow")).sum() > 20
    assert (frame.semantic == SEM("cow")).sum() < 33 * 33 / 2


def world_rays(height, width, yaw, pitch):
    """``[H * W, 3]`` world-space ray of every pixel (the renderer's camera, in float64)."""
    forward = np.array(look_direction(yaw, pitch))
    right = np.array([-math.cos(math.radians(yaw)), 0.0, -math.sin(math.radians(yaw))])
    up = np.cross(right, forward)
    return camera_rays(height, width, 70.0).astype(np.float64) @ np.stack([right, up, forward])


def box_distances(eye, rays, box):
    """Entry distance of each ray into an axis-aligned mob box (inf: miss), by the slab test."""
    x, y, z, width, height = box[:5]
    low = np.array([x - width / 2, y, z - width / 2])
    high = np.array([x + width / 2, y + height, z + width / 2])
    with np.errstate(divide="ignore", invalid="ignore"):
        t1 = (low - np.asarray(eye)) / rays
        t2 = (high - np.asarray(eye)) / rays
    near = np.nanmax(np.minimum(t1, t2), axis=1)
    far = np.nanmin(np.maximum(t1, t2), axis=1)
    return np.where((near <= far) & (near > 0), near, np.inf)


@pytest.mark.parametrize(("yaw", "pitch"), [(0, 15), (70, 15), (180, 15), (-100, 15), (0, 30)])
def test_mob_pixels_match_a_per_pixel_box_test(yaw, pitch):
    """Every pixel, also of boxes beside or behind the eye, agrees with a full-image slab test."""
    eye = (20.5, FLOOR + EYE, 20.5)
    boxes = np.concatenate([
        mob("cow", 20.5, 24.0),  # ahead at yaw 0
        mob("spider", 21.3, 20.3),  # under the eye's side, reaching behind the image plane
        mob("spider", 17.0, 16.0),  # behind at yaw 0
        mob("zombie", 23.0, 22.0, burning=True),
        mob("cow", 16.0, 22.5),
    ])
    renderer = Renderer(36, 56)
    no_mobs = renderer.render(floor_world(), eye, yaw, pitch).depth.copy()
    frame = renderer.render(floor_world(), eye, yaw, pitch, boxes)
    rays = world_rays(36, 56, yaw, pitch)
    distances = np.stack([box_distances(eye, rays, box) for box in boxes])
    nearest = distances.min(axis=0)
    expected = np.where(nearest < no_mobs.ravel(), boxes[distances.argmin(axis=0), 5], 0)
    got = np.where(frame.semantic.ravel() >= SEM("cow"), frame.semantic.ravel(), 0)
    assert (expected > 0).sum() > 20
    assert (got != expected).sum() <= 2  # silhouette pixels may round either way


def test_mob_behind_a_wall_is_hidden():
    blocks = floor_world()
    blocks[:, FLOOR : FLOOR + 4, 23] = STONE
    frame = Renderer(33, 33).render(blocks, (20.5, FLOOR + 1.0, 20.5), 0.0, 0.0, mob("cow", 20.5, 26))
    assert not (frame.semantic == SEM("cow")).any()
    assert frame.semantic[16, 16] == SEM("stone")


@pytest.mark.parametrize(("block_z", "side"), [(24, "left"), (16, "right")])
def test_yaw_90_faces_minus_x(block_z, side):
    """Facing -x (yaw 90), +z is on the left and -z on the right."""
    blocks = floor_world()
    blocks[12, FLOOR : FLOOR + 3, block_z] = STONE  # 8 blocks ahead, 4 to one side
    frame = Renderer(32, 32).render(blocks, (20.5, FLOOR + EYE, 20.5), 90.0, 0.0)
    stone = frame.semantic == SEM("stone")
    left, right = stone[:, :16].sum(), stone[:, 16:].sum()
    assert (left > 0 and right == 0) if side == "left" else (right > 0 and left == 0)


def test_burning_zombie_is_its_own_class_and_shows_fire():
    eye = (20.5, FLOOR + 1.0, 20.5)
    renderer = Renderer(48, 48)
    plain = renderer.render(floor_world(), eye, 0.0, 0.0, mob("zombie", 20.5, 23.0))
    plain_rgb = plain.rgb[plain.semantic == SEM("zombie")].copy()
    burning = renderer.render(floor_world(), eye, 0.0, 0.0, mob("zombie", 20.5, 23.0, burning=True))
    burning_rgb = burning.rgb[burning.semantic == SEM("burning_zombie")]
    assert len(plain_rgb) > 50 and len(burning_rgb) == len(plain_rgb)
    assert not (burning.semantic == SEM("zombie")).any()

    def fiery(rgb):
        red, green, blue = (rgb[:, c].astype(int) for c in range(3))
        return (red > 200) & (green > 90) & (blue < 90)

    assert fiery(burning_rgb).mean() > 0.25
    assert not fiery(plain_rgb).any()


def test_fire_flickers_with_time():
    renderer = Renderer(48, 48)
    args = (floor_world(), (20.5, FLOOR + 1.0, 20.5), 0.0, 0.0, mob("zombie", 20.5, 23.0, burning=True))
    first = renderer.render(*args, time=0).rgb.copy()
    assert not np.array_equal(first, renderer.render(*args, time=3).rgb)
    assert np.array_equal(first, renderer.render(*args, time=0).rgb)


def test_water_is_blue_and_see_through_from_below():
    blocks = floor_world()
    blocks[10:30, FLOOR - 2 : FLOOR, 10:30] = WATER
    renderer = Renderer(33, 33)
    above = renderer.render(blocks, (20.5, FLOOR + EYE, 20.5), 0.0, 90.0)
    assert above.semantic[16, 16] == SEM("water")
    red, green, blue = above.rgb[16, 16].astype(int)
    assert blue > red + 40 and blue > green + 40
    assert above.depth[16, 16] == pytest.approx(EYE, rel=1e-4)
    below = renderer.render(blocks, (20.5, FLOOR - 0.5, 20.5), 0.0, 90.0)
    assert below.semantic[16, 16] == SEM("dirt")  # the pond's bottom, through the water
    assert below.depth[16, 16] == pytest.approx(1.5, rel=1e-4)


def test_tall_grass_is_drawn_and_partly_see_through():
    blocks = floor_world()
    blocks[18:23, FLOOR, 22:27] = GRASS
    frame = Renderer(48, 48).render(blocks, (20.5, FLOOR + EYE, 20.5), 0.0, 30.0)
    grass = frame.semantic == SEM("tall_grass")
    assert grass.sum() > 30
    # Between the blades the dirt behind shows through, inside the patch's screen area.
    rows, cols = np.nonzero(grass)
    patch = frame.semantic[rows.min() : rows.max() + 1, cols.min() : cols.max() + 1]
    assert (patch == SEM("dirt")).any()


def test_nothing_beyond_the_view_distance():
    blocks = floor_world(size=80)
    blocks[40, FLOOR : FLOOR + 10, 70] = STONE  # 30 blocks ahead
    eye = (40.5, FLOOR + 3.0, 40.5)
    near = Renderer(33, 33, max_distance=64.0).render(blocks, eye, 0.0, 0.0)
    assert near.semantic[16, 16] == SEM("stone")
    far = Renderer(33, 33, max_distance=20.0).render(blocks, eye, 0.0, 0.0)
    assert far.semantic[16, 16] == SKY_CLASS
    assert np.isinf(far.depth[16, 16])
    assert np.nanmax(far.depth[np.isfinite(far.depth)]) <= 20.0 + 1e-4


@pytest.mark.parametrize(("height", "width"), [(1, 1), (40, 64), (64, 64), (160, 256)])
def test_frame_sizes_and_types(height, width):
    frame = Renderer(height, width).render(floor_world(), (20.5, FLOOR + EYE, 20.5), 0.0, 10.0)
    assert frame.rgb.shape == (height, width, 3) and frame.rgb.dtype == np.uint8
    assert frame.depth.shape == (height, width) and frame.depth.dtype == np.float32
    assert frame.semantic.shape == (height, width) and frame.semantic.dtype == np.uint8


@pytest.mark.parametrize(
    "kwargs",
    [
        {"height": 0, "width": 64},
        {"height": 64, "width": -1},
        {"height": 64, "width": 5000},
        {"height": 2.5, "width": 64},
        {"height": True, "width": 64},
        {"height": 64, "width": 64, "fov_deg": 0.0},
        {"height": 64, "width": 64, "fov_deg": 180.0},
        {"height": 64, "width": 64, "max_distance": 0.0},
    ],
)
def test_bad_renderer_arguments_raise(kwargs):
    with pytest.raises(ValueError):
        Renderer(**kwargs)


@pytest.mark.parametrize(
    ("blocks", "boxes", "message"),
    [
        (floor_world().astype(np.int32), None, "uint8"),
        (floor_world()[0], None, "uint8"),
        (floor_world(), np.zeros((1, 5), np.float32), "rows"),
        (floor_world(), np.array([[20, 4, 25, 1, 1, 0]], np.float32), "mob classes"),  # the sky
        (floor_world(), np.array([[20, 4, 25, 1, 1, 99]], np.float32), "mob classes"),
        (floor_world(), np.array([[20, 4, 25, 1, 1, SEM("dirt")]], np.float32), "mob classes"),
        (floor_world(), np.array([[20, 4, 25, 1, 1, np.nan]], np.float32), "mob classes"),
        (floor_world(), np.array([[20, 4, 25, 0, 1, SEM("cow")]], np.float32), "positive"),
        (floor_world(), np.array([[20, 4, 25, 1, -2, SEM("cow")]], np.float32), "positive"),
        (floor_world(), np.array([[np.nan, 4, 25, 1, 1, SEM("cow")]], np.float32), "finite"),
        (floor_world(), np.array([[20, 4, 25, 1, 1, SEM("cow")],
                                  [20, np.inf, 25, 1, 1, SEM("cow")]], np.float32), "finite"),
    ],
)
def test_bad_render_input_raises(blocks, boxes, message):
    with pytest.raises(ValueError, match=message):
        Renderer(8, 8).render(blocks, (20.5, 6.0, 20.5), 0.0, 0.0, boxes)


def test_non_finite_pose_raises():
    with pytest.raises(ValueError, match="finite"):
        Renderer(8, 8).render(floor_world(), (20.5, np.nan, 20.5), 0.0, 0.0)


def random_world(rng, size=48, height=32):
    """Hills of stone with dirt, stray floating blocks, a pond, and full-height walls."""
    blocks = np.zeros((size, height, size), dtype=np.uint8)
    tops = rng.integers(2, 14, size=(size // 6 + 1, size // 6 + 1)).repeat(6, 0).repeat(6, 1)
    for x in range(size):
        for z in range(size):
            blocks[x, : tops[x, z], z] = STONE
            blocks[x, tops[x, z] - 1, z] = DIRT
    floating = rng.integers(0, [size, height, size], size=(200, 3))
    blocks[floating[:, 0], floating[:, 1], floating[:, 2]] = STONE
    blocks[5:12, 1:3, 30:40] = WATER
    blocks[[0, -1], :, :] = STONE
    blocks[:, :, [0, -1]] = STONE
    return blocks


def test_depth_agrees_with_the_reference_ray_cast():
    """The two-level march (tiles of column heights, then cells) finds exactly the surface that the
    plain DDA of ``cast_ray`` finds, for every pixel of random views of random worlds."""
    rng = np.random.default_rng(7)
    renderer = Renderer(24, 40, max_distance=40.0)
    mask = np.zeros(256, dtype=np.bool_)
    mask[[DIRT, STONE, WATER]] = True
    for _ in range(20):
        blocks = random_world(rng)
        x, z = rng.uniform(2, 46, size=2)
        y = rng.uniform(14, 30)
        blocks[int(x), int(y), int(z)] = AIR
        yaw, pitch = rng.uniform(-180, 180), rng.uniform(-60, 80)
        frame = renderer.render(blocks, (x, y, z), yaw, pitch)
        for p, (dx, dy, dz) in enumerate(world_rays(24, 40, yaw, pitch)):
            dist, i, j, k, face = cast_ray(blocks, mask, x, y, z, dx, dy, dz, 40.0)
            got = frame.depth.flat[p]
            if face < 0 or dist > 40.0:
                assert np.isinf(got) or got > 40.0 - 1e-3
            else:
                assert got == pytest.approx(dist, abs=1e-3)
                assert frame.semantic.flat[p] == CONTENT.block_semantic[blocks[i, j, k]]


def test_given_heights_render_the_same_and_refresh_shows_new_blocks():
    blocks = random_world(np.random.default_rng(3))
    heights = ColumnHeights(blocks)
    renderer = Renderer(32, 48)
    view = ((24.5, 20.0, 24.5), 30.0, 20.0)
    computed = renderer.render(blocks, *view).rgb.copy()
    assert np.array_equal(renderer.render(blocks, *view, heights=heights).rgb, computed)

    blocks = floor_world()
    heights = ColumnHeights(blocks)
    view = ((20.5, FLOOR + EYE, 20.5), 0.0, 0.0)
    blocks[19:22, FLOOR + 1 : FLOOR + 3, 26] = STONE  # above the old heights, right in view
    stale = renderer.render(blocks, *view, heights=heights).semantic.copy()
    assert not (stale == SEM("stone")).any()  # heights too low hide blocks: refresh them
    heights.refresh(blocks, 19, 26, 22, 27)
    fresh = renderer.render(blocks, *view, heights=heights).semantic
    assert (fresh == SEM("stone")).sum() > 20
    assert np.array_equal(fresh, renderer.render(blocks, *view).semantic)


def test_column_heights_match_the_highest_block():
    blocks = random_world(np.random.default_rng(5))
    heights = ColumnHeights(blocks)
    filled = blocks != AIR
    highest = blocks.shape[1] - np.argmax(filled[:, ::-1, :], axis=1)
    assert np.array_equal(heights.columns, np.where(filled.any(axis=1), highest, 0))
    tiles = heights.columns.reshape(6, 8, 6, 8).max(axis=(1, 3))
    assert np.array_equal(heights.tiles, tiles)


def test_looks_change_the_light_not_what_is_seen():
    """Dusk and overcast (the held-out looks) recolour the sky and tint lit surfaces and mobs;
    depth and semantics are the day's, and a surface keeps its shading pattern (each channel a
    fixed multiple of the day's)."""
    blocks, eye, boxes = floor_world(), (20.5, FLOOR + EYE, 20.5), mob("cow", 20.5, 25.0)
    frames = {}
    for look in LOOKS:
        frame = Renderer(48, 64, look=look).render(blocks, eye, 0.0, 10.0, boxes)
        frames[look] = tuple(np.array(part, copy=True) for part in frame)
    day_rgb, day_depth, day_semantic = frames["day"]
    sky = day_semantic == SKY_CLASS
    near_dirt = (day_semantic == SEM("dirt")) & (day_depth < 10)  # before the fog
    assert sky.any() and near_dirt.any()
    for look in ("dusk", "overcast"):
        rgb, depth, semantic = frames[look]
        np.testing.assert_array_equal(depth, day_depth)
        np.testing.assert_array_equal(semantic, day_semantic)
        assert np.abs(rgb[sky].astype(int) - day_rgb[sky]).mean() > 20
        light = np.array(LOOKS[look].light)
        expected = day_rgb[near_dirt] * light
        assert np.abs(rgb[near_dirt] - expected).max() <= 1.5  # uint8 rounding
    assert Renderer(8, 8).look == "day"


def test_an_unknown_look_names_the_known_ones():
    with pytest.raises(ValueError, match="look 'noon'.*day, dusk, overcast"):
        Renderer(8, 8, look="noon")
