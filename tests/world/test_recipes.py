"""World recipes: every map builds, is seeded, walled and walkable, and looks as the paper says."""

from __future__ import annotations

import itertools
import math
from functools import cache

import numpy as np
import pytest

from mrsteve.world.content import load_content
from mrsteve.world.layout import WorldLayout
from mrsteve.world.raycast import cast_ray, look_direction
from mrsteve.world.recipes import WORLD_RECIPES, build_layout, parse_world_recipes
from mrsteve.world.terrain import MAX_STEP, WORLD_HEIGHT, House, cap_slope, value_noise

CONTENT = load_content()
EYE_HEIGHT = 1.62
NAMES = sorted(WORLD_RECIPES)
BOUNDED = [name for name in NAMES if WORLD_RECIPES[name].size is not None]
"""The walled maps (the unbounded worlds are tests/world/test_unbounded.py's)."""
GROUND_BLOCKS = ("grass_block", "dirt", "stone", "sand", "water")


def ids(*names: str) -> list[int]:
    return [CONTENT.block(name).id for name in names]


def id_of(name: str) -> int:
    return CONTENT.block(name).id


@cache
def built(name: str, seed: int = 0) -> WorldLayout:
    return build_layout(name, np.random.default_rng(seed))


def ground_level(blocks: np.ndarray) -> np.ndarray:
    """``int[x, z]``: y of the first air above the ground (trees, houses and plants ignored)."""
    ground = np.isin(blocks, ids(*GROUND_BLOCKS))
    return blocks.shape[1] - np.argmax(ground[:, ::-1, :], axis=1)


def columns_with(blocks: np.ndarray, name: str) -> np.ndarray:
    """``int[n, 2]``: the (x, z) columns holding at least one ``name`` block."""
    return np.argwhere((blocks == id_of(name)).any(axis=1))


def top_blocks(blocks: np.ndarray) -> np.ndarray:
    """``uint8[x, z]``: the ground's top block of every column."""
    level = ground_level(blocks)
    x, z = np.indices(level.shape)
    return blocks[x, level - 1, z]


def seen_blocks(layout: WorldLayout, eye, yaws, pitches, max_dist: float = 150.0) -> set[int]:
    """Block ids that rays from ``eye`` stop at; see-through blocks (plants, leaves, glass) do
    not stop them, so this over-estimates what is visible."""
    occluder = np.array([b.shape == "cube" for b in CONTENT.blocks])
    occluder[ids("oak_leaves", "glass")] = False
    occluder[id_of("water")] = True
    seen = set()
    for yaw in yaws:
        for pitch in pitches:
            dx, dy, dz = look_direction(float(yaw), float(pitch))
            _, i, j, k, face = cast_ray(layout.blocks, occluder, *eye, dx, dy, dz, max_dist)
            if face >= 0:
                seen.add(int(layout.blocks[i, j, k]))
    return seen


def eye_at(layout: WorldLayout, x: float, z: float) -> tuple[float, float, float]:
    return x, float(ground_level(layout.blocks)[int(x), int(z)]) + EYE_HEIGHT, z


# -- every world ----------------------------------------------------------------------------------
@pytest.mark.parametrize("name", BOUNDED)
def test_every_world_is_walled_with_a_free_spawn_and_its_things_inside(name):
    recipe, layout = WORLD_RECIPES[name], built(name)
    blocks = layout.blocks
    assert blocks.dtype == np.uint8
    assert blocks.shape == (recipe.size[0], WORLD_HEIGHT, recipe.size[1])
    assert layout.size == recipe.size and layout.name == name

    wall = id_of("wall")
    inside = blocks[1:-1, :, 1:-1]
    assert not (inside == wall).any()
    highest = np.nonzero(inside.any(axis=(0, 2)))[0].max()
    for ring in (blocks[0], blocks[-1], blocks[:, :, 0].T, blocks[:, :, -1].T):  # [y, along]
        # the ring is wall from the bottom to 2+ blocks over everything inside: unjumpable
        assert (ring[: highest + 3] == wall).all()
        assert np.isin(ring, ids("air", "wall")).all()

    x, y, z = layout.spawn
    i, j, k = int(x), int(y), int(z)
    assert 1 <= i < blocks.shape[0] - 1 and 1 <= k < blocks.shape[2] - 1
    assert y == j and x == i + 0.5 and z == k + 0.5
    assert CONTENT.block_solid[blocks[i, j - 1, k]]
    assert (blocks[i, j : j + 2, k] == 0).all()

    level = ground_level(blocks)
    for mob in layout.mobs:
        mi, mk = int(mob.x), int(mob.z)
        assert 1 <= mi < blocks.shape[0] - 1 and 1 <= mk < blocks.shape[2] - 1
        assert blocks[mi, level[mi, mk] - 1, mk] != id_of("water"), f"{mob.kind} in water"
        assert blocks[mi, level[mi, mk], mk] in ids("air", "tall_grass")
    for where in [*layout.landmarks.values(), *((e.x, e.z) for e in layout.events)]:
        assert all(1 <= p < s - 1 for p, s in zip(where, recipe.size, strict=True))


@pytest.mark.parametrize("name", NAMES)
def test_the_same_seed_builds_the_same_world(name):
    first, second = built(name, 7), build_layout(name, np.random.default_rng(7))
    assert first is not second
    np.testing.assert_array_equal(first.blocks, second.blocks)
    assert first.spawn == second.spawn and first.spawn_yaw == second.spawn_yaw
    assert first.mobs == second.mobs and first.events == second.events
    assert dict(first.landmarks) == dict(second.landmarks)


@pytest.mark.parametrize("name", [n for n in NAMES
                                  if n not in ("mountain", "nav_crags", "heldout_highlands")])
def test_the_ground_climbs_in_one_block_steps(name):
    """Everywhere but the cliffs and stone outcrops of the mountain terrain, of the navigator's
    crags training world and of the held-out highlands, neighbouring columns (water surfaces included) differ by at most one block: a jump
    climbs every step."""
    level = ground_level(built(name).blocks)[1:-1, 1:-1]
    steps = np.maximum(np.abs(np.diff(level, axis=0)).max(), np.abs(np.diff(level, axis=1)).max())
    assert steps <= 1


def test_plains_differ_from_seed_to_seed_and_always_have_the_aba_random_resources():
    worlds = [built("plains", seed) for seed in range(4)]
    for a, b in itertools.pairwise(worlds):
        assert not np.array_equal(a.blocks, b.blocks)
        assert dict(a.landmarks) != dict(b.landmarks)
    for world in worlds:  # water, beef, wool and log must all exist (paper: ABA-Random)
        assert len(columns_with(world.blocks, "water")) > 0
        assert len(columns_with(world.blocks, "oak_log")) >= 20
        kinds = [mob.kind for mob in world.mobs]
        assert kinds.count("cow") >= 5 and kinds.count("sheep") >= 5


def test_an_unknown_world_name_lists_the_known_ones():
    with pytest.raises(ValueError, match=r"unknown world .*; known: .*map1.*long_navigation"):
        build_layout("map9", np.random.default_rng(0))
    with pytest.raises(TypeError, match="numpy.random.Generator"):
        build_layout("map1", 0)


# -- Terrain pieces -------------------------------------------------------------------------------
@pytest.mark.parametrize("seed", range(3))
def test_cap_slope_cuts_only_what_is_too_steep(seed):
    rng = np.random.default_rng(seed)
    relief = 30 * rng.random((40, 50))
    capped = cap_slope(relief)
    assert (capped <= relief).all()
    for axis in (0, 1):
        assert np.abs(np.diff(capped, axis=axis)).max() <= MAX_STEP + 1e-9
    gentle = 3 * (value_noise(rng, (40, 50), scale=30.0) + 1)
    np.testing.assert_array_equal(cap_slope(gentle), gentle)
    assert (capped == relief).any()  # the lowest points are kept, the rest becomes cones


# -- ABA-Sparse maps ------------------------------------------------------------------------------
def test_map1_has_its_one_pond_in_the_upper_right_corner_hidden_from_the_spawn():
    layout = built("map1")
    water = columns_with(layout.blocks, "water")
    assert len(water) > 0
    # upper-right: large x, small z (north up on the top-down map)
    assert water[:, 0].min() >= 60 and water[:, 1].max() < 40
    wx, wz = layout.landmarks["water"]
    assert np.hypot(water[:, 0] + 0.5 - wx, water[:, 1] + 0.5 - wz).max() < 8

    yaws, pitches = np.arange(0, 360, 0.5), np.arange(-10, 45, 1.0)
    spawn_eye = (layout.spawn[0], layout.spawn[1] + EYE_HEIGHT, layout.spawn[2])
    assert id_of("water") not in seen_blocks(layout, spawn_eye, yaws, pitches)
    # ... but seen from the hollow's rim, 10 blocks away
    rim_eye = eye_at(layout, wx - 10, wz + 3)
    assert id_of("water") in seen_blocks(layout, rim_eye, yaws, pitches)


def test_map1_is_mostly_dirt_with_grass_everywhere_trees_on_the_left_and_a_mountain():
    blocks = built("map1").blocks
    top = top_blocks(blocks)[1:-1, 1:-1]
    assert (top == id_of("dirt")).mean() > 0.45
    half = top.shape[0] // 2
    for quarter in (top[:half, :half], top[half:, :half], top[:half, half:], top[half:, half:]):
        assert (quarter == id_of("grass_block")).mean() > 0.1
    grass_plants = columns_with(blocks, "tall_grass")
    assert (grass_plants[:, 0] > 50).any() and (grass_plants[:, 0] < 50).any()
    logs = columns_with(blocks, "oak_log")
    assert len(logs) >= 20 and logs[:, 0].max() < 40
    stone_top = top == id_of("stone")
    assert stone_top.sum() > 300
    assert ground_level(blocks)[1:-1, 1:-1][stone_top].max() - 16 >= 8


def ridge_columns(blocks: np.ndarray) -> np.ndarray:
    return np.argwhere(top_blocks(blocks) == id_of("sand"))


@pytest.mark.parametrize("name", ["map2", "map3"])
def test_map2_and_map3_split_trees_and_animals_with_a_crossable_sand_ridge(name):
    layout = built(name)
    blocks = layout.blocks
    ridge = ridge_columns(blocks)
    ridge = ridge[ridge[:, 1] > 30]  # below map3's sand-shored pond
    assert len(ridge) > 0
    west, east = ridge[:, 0].min(), ridge[:, 0].max()
    assert 35 <= west and east <= 65
    level = ground_level(blocks)
    assert level[ridge[:, 0], ridge[:, 1]].max() - 16 >= 6  # a mountain, not a bump

    logs = columns_with(blocks, "oak_log")
    assert len(logs) >= 20 and logs[:, 0].max() < west
    kinds = {mob.kind for mob in layout.mobs}
    assert kinds == {"cow", "sheep"}
    assert sum(mob.kind == "cow" for mob in layout.mobs) >= 5
    assert sum(mob.kind == "sheep" for mob in layout.mobs) >= 5
    for mob in layout.mobs:  # right of the ridge, and wandering stays there
        assert mob.roam is not None and mob.x - mob.roam > east

    top = top_blocks(blocks)[1:-1, 1:-1]
    dirt_x = np.argwhere(top == id_of("dirt"))[:, 0] + 1
    assert len(dirt_x) > 0 and ((dirt_x < 10) | (dirt_x > 89)).all()
    spawn_row = level[1:-1, int(layout.spawn[2])]
    assert np.abs(np.diff(spawn_row)).max() <= 1  # walk across the ridge at the spawn's pass


def test_map3_is_map2_plus_a_pond_at_the_top():
    map2, map3 = built("map2"), built("map3")
    assert len(columns_with(map2.blocks, "water")) == 0
    water = columns_with(map3.blocks, "water")
    assert len(water) > 0 and water[:, 1].max() < 25
    assert 35 <= water[:, 0].min() and water[:, 0].max() <= 65
    assert map2.mobs == map3.mobs
    changed = np.argwhere((map2.blocks != map3.blocks).any(axis=1))
    wx, wz = map3.landmarks["water"]
    assert np.hypot(changed[:, 0] + 0.5 - wx, changed[:, 1] + 0.5 - wz).max() < 22


# -- Long-horizon maps ----------------------------------------------------------------------------
def test_long_instruction_places_its_resources_in_the_papers_quadrants():
    layout = built("long_instruction")
    blocks = layout.blocks
    logs = columns_with(blocks, "oak_log")
    assert len(logs) >= 30
    assert (logs[:, 1] >= 110).all() and (logs[:, 0] < 125).all()  # lower-left, middle-bottom
    assert (logs[:, 0] < 80).sum() >= 20 and ((logs[:, 0] >= 80) & (logs[:, 0] < 125)).sum() >= 10
    for mob in layout.mobs:
        if mob.kind == "sheep":  # upper-left
            assert mob.x + mob.roam < 100 and mob.z + mob.roam < 100
        else:  # lower-right
            assert mob.kind == "cow" and mob.x - mob.roam > 100 and mob.z - mob.roam > 100
    assert sum(m.kind == "sheep" for m in layout.mobs) >= 8
    assert sum(m.kind == "cow" for m in layout.mobs) >= 8
    water = columns_with(blocks, "water")
    assert len(water) > 0 and (water[:, 0] > 120).all() and (water[:, 1] < 80).all()
    top = top_blocks(blocks)
    for name in ("grass_block", "dirt"):
        assert (top == id_of(name)).mean() > 0.1
    assert len(columns_with(blocks, "tall_grass")) > 1000
    assert set(layout.landmarks) == {"water", "trees_lower_left", "trees_bottom", "sheep", "cows"}


def test_long_navigation_has_six_scenes_far_apart_with_their_events():
    layout = built("long_navigation")
    blocks = layout.blocks
    marks = layout.landmarks
    order = ["zombies", "water", "sugar_cane", "spiders", "trees", "house"]
    assert set(marks) == set(order)
    for a in order:
        for b in order:
            if a < b:
                assert math.dist(marks[a], marks[b]) > 40, (a, b)

    def near(cells, mark, radius):
        return np.hypot(cells[:, 0] + 0.5 - mark[0], cells[:, 1] + 0.5 - mark[1]) < radius

    zombies = [m for m in layout.mobs if m.kind == "zombie"]
    assert len(zombies) >= 2 and len(zombies) == len(layout.mobs)
    assert all(z.burning and math.dist((z.x, z.z), marks["zombies"]) < 5 for z in zombies)
    assert near(columns_with(blocks, "water"), marks["water"], 10).all()
    cane = columns_with(blocks, "sugar_cane")
    assert len(cane) >= 10 and near(cane, marks["sugar_cane"], 8).all()
    assert near(columns_with(blocks, "oak_log"), marks["trees"], 15).all()
    house = np.argwhere(np.isin(blocks, ids("planks", "glass")).any(axis=1))
    assert len(house) > 0 and near(house, marks["house"], 6).all()

    explode, spiders = sorted(layout.events, key=lambda e: e.step)
    assert (explode.kind, explode.block) == ("explode", "sugar_cane")
    assert math.dist((explode.x, explode.z), marks["sugar_cane"]) < 2
    assert near(cane, (explode.x, explode.z), explode.radius).all()  # it takes every cane
    assert (spiders.kind, spiders.mob) == ("spawn_mob", "spider") and spiders.count >= 1
    assert math.dist((spiders.x, spiders.z), marks["spiders"]) < 2
    assert 0 < explode.step < spiders.step  # scene 3 before scene 4, as the paper orders them


# -- Memory-task worlds ---------------------------------------------------------------------------
def test_find_water_has_its_only_pond_in_view_in_front_of_the_spawn():
    layout = built("find_water")
    wx, wz = layout.landmarks["water"]
    assert math.dist((layout.spawn[0], layout.spawn[2]), (wx, wz)) < 10
    water = columns_with(layout.blocks, "water")
    assert np.hypot(water[:, 0] + 0.5 - wx, water[:, 1] + 0.5 - wz).max() < 6
    eye = (layout.spawn[0], layout.spawn[1] + EYE_HEIGHT, layout.spawn[2])
    yaws = layout.spawn_yaw + np.arange(-30, 31, 5.0)  # within the 70 degree field of view
    assert id_of("water") in seen_blocks(layout, eye, yaws, np.arange(0, 35, 5.0))


def test_zombie_spot_has_burning_zombies_in_front_of_the_spawn():
    layout = built("zombie_spot")
    assert len(layout.mobs) >= 3
    sx, sz = layout.spawn[0], layout.spawn[2]
    fx, _, fz = look_direction(layout.spawn_yaw, 0.0)
    for mob in layout.mobs:
        assert mob.kind == "zombie" and mob.burning
        assert math.dist((sx, sz), (mob.x, mob.z)) < 12
        assert (mob.x - sx) * fx + (mob.z - sz) * fz > 0  # ahead, not behind
    assert math.dist(layout.landmarks["zombies"], (sx, sz)) < 10


def house_at(blocks: np.ndarray, at: tuple[float, float]) -> np.ndarray:
    """The 7 x 7 x 7 box of the house centred on ``at``, from its floor up."""
    x, z = int(at[0]), int(at[1])
    floor = ground_level(blocks)[x, z]  # the cobblestone floor replaced the ground's top
    return blocks[x - 3 : x + 4, floor : floor + 7, z - 3 : z + 4]


def test_two_houses_look_alike_far_apart_and_the_spawn_is_at_the_first():
    layout = built("two_houses")
    first, second = layout.landmarks["house_1"], layout.landmarks["house_2"]
    assert math.dist(first, second) > 40
    spawn = (layout.spawn[0], layout.spawn[2])
    assert math.dist(spawn, first) < 15 < math.dist(spawn, second)
    one, two = house_at(layout.blocks, first), house_at(layout.blocks, second)
    assert np.isin(one, ids("planks", "cobblestone", "glass")).sum() > 100
    np.testing.assert_array_equal(one, two)  # the same house, block for block
    built_of = np.isin(layout.blocks, ids("planks", "cobblestone", "glass"))
    assert built_of.sum() == 2 * np.isin(one, ids("planks", "cobblestone", "glass")).sum()


# -- Calibration worlds ---------------------------------------------------------------------------
CALIBRATION = [name for name in NAMES if name.startswith("calib_")]


def test_there_are_calibration_worlds_and_they_say_so():
    assert len(CALIBRATION) >= 3
    for name in CALIBRATION:
        assert WORLD_RECIPES[name].description.startswith("Calibration world (not an evaluation")


@pytest.mark.parametrize("name", CALIBRATION)
def test_calibration_worlds_place_everything_from_the_seed(name):
    """No feature is pinned to a column: every seed lays the world out anew."""
    for feature in WORLD_RECIPES[name].features:
        assert getattr(feature, "at", None) is None, feature
    first, second = built(name, 0), built(name, 1)
    assert not np.array_equal(first.blocks, second.blocks)
    for landmark, at in first.landmarks.items():
        assert second.landmarks[landmark] != at, landmark
    assert [(m.x, m.z) for m in first.mobs] != [(m.x, m.z) for m in second.mobs]


@pytest.mark.parametrize("seed", range(3))
def test_randomly_placed_houses_stand_apart_on_dry_ground(seed):
    layout = built("calib_camp", seed)
    first, second = layout.landmarks["house_1"], layout.landmarks["house_2"]
    assert max(abs(first[0] - second[0]), abs(first[1] - second[1])) > 2 * House.PAD
    built_of = ids("planks", "cobblestone", "glass")
    for at in (first, second):
        house = house_at(layout.blocks, at)
        assert np.isin(house, built_of).sum() > 100
        x, z = int(at[0]), int(at[1])
        pad = layout.blocks[x - House.PAD : x + House.PAD + 1, :, z - House.PAD : z + House.PAD + 1]
        assert not (pad == id_of("water")).any()
    assert np.isin(layout.blocks, built_of).sum() == 2 * np.isin(house, built_of).sum()


# -- Navigation test terrains ---------------------------------------------------------------------
def test_flat_is_flat_grass():
    blocks = built("flat").blocks
    assert (ground_level(blocks)[1:-1, 1:-1] == 16).all()
    assert (top_blocks(blocks)[1:-1, 1:-1] == id_of("grass_block")).all()


def test_mountain_terrain_is_steep_stone_with_cliffs():
    blocks = built("mountain").blocks
    level = ground_level(blocks)[1:-1, 1:-1]
    assert level.max() - level.min() >= 8
    assert (top_blocks(blocks)[1:-1, 1:-1] == id_of("stone")).mean() > 0.7
    steps = np.concatenate([np.abs(np.diff(level, axis=a)).ravel() for a in (0, 1)])
    assert (steps == 1).mean() > 0.3  # jumps everywhere
    assert (steps >= 2).sum() > 20  # and cliffs to go around


def test_river_crosses_the_whole_map_too_wide_to_jump_ahead_of_the_spawn():
    layout = built("river")
    blocks = layout.blocks
    water = (blocks == id_of("water")).any(axis=1)[1:-1, 1:-1]
    assert water.any(axis=1).all()  # every x column meets the river
    assert water.sum(axis=1).min() >= 5  # wider than a jump: it has to be swum
    assert (blocks[..., : int(layout.spawn[2])] != id_of("water")).all()  # spawn side is dry
    fx, _, fz = look_direction(layout.spawn_yaw, 0.0)
    rx, rz = layout.landmarks["river"]
    assert 5 < (rz - layout.spawn[2]) * fz + (rx - layout.spawn[0]) * fx < 15


def test_plains_nav_has_gentle_hills_and_trees():
    blocks = built("plains_nav").blocks
    level = ground_level(blocks)[1:-1, 1:-1]
    assert 2 <= level.max() - level.min() <= 5
    assert len(columns_with(blocks, "oak_log")) >= 10
    assert len(columns_with(blocks, "water")) == 0


@pytest.mark.parametrize(("forest", "sparse"), [("forest_nav", "plains_nav"),
                                               ("nav_forest", "nav_meadow")])
def test_the_forests_are_as_dense_as_minecrafts(forest, sparse):
    """About one oak per 25 blocks of ground (Minecraft's forests), ten times the trees of the
    plains beside them (the navigation terrain's, the navigator's first training world's)."""
    blocks = built(forest).blocks
    trunks = len(columns_with(blocks, "oak_log"))
    assert trunks >= 8 * len(columns_with(built(sparse).blocks, "oak_log"))
    assert blocks.shape[0] * blocks.shape[2] / trunks <= 32


@pytest.mark.parametrize("desert", ["desert_nav", "nav_desert"])
def test_the_deserts_are_sand_over_sand_with_nothing_growing(desert):
    blocks = built(desert).blocks
    tops = top_blocks(blocks)[1:-1, 1:-1]
    assert (tops == id_of("sand")).all()
    for plant in ("oak_log", "tall_grass", "sugar_cane", "water"):
        assert len(columns_with(blocks, plant)) == 0


# -- The recipe file's checks ---------------------------------------------------------------------
def one_world(**changes) -> dict:
    """A small world table for ``parse_world_recipes``, with ``changes`` (``None`` drops a key)."""
    table = {"name": "w", "size": [50, 50], "spawn": [25, 25], "description": "x"} | changes
    return {"world": [{key: value for key, value in table.items() if value is not None}]}


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"name": None}, r"missing keys \['name'\]"),
        ({"spawn": [0, 25]}, "inside the walls"),
        ({"features": [{"kind": "volcano"}]}, "unknown feature kind .volcano.; known: .*hills"),
        (
            {"features": [{"kind": "hills", "height": 2, "scale": 10, "colour": 3}]},
            r"unknown field 'colour'; known: height, scale",
        ),
        ({"features": [{"kind": "hills", "height": 2}]}, r"missing fields \['scale'\]"),
        ({"features": [{"kind": "surface", "block": "lava"}]}, "unknown block 'lava'"),
        ({"features": [{"kind": "herd", "mob": "creeper", "count": 2}]}, "unknown mob 'creeper'"),
        (
            {"features": [{"kind": "herd", "mob": "cow", "count": 2, "burning": True}]},
            "cows do not burn in daylight",
        ),
        ({"features": [{"kind": "pond", "radius": 3, "at": [25]}]}, "expected 2 values"),
        ({"features": [{"kind": "pond", "radius": "big"}]}, "expected float, got 'big'"),
        ({"features": [{"kind": "house", "at": [60, 20]}]}, "not inside the walls"),
    ],
)
def test_bad_recipes_are_refused_with_a_clear_message(changes, message):
    with pytest.raises(ValueError, match=message):
        parse_world_recipes(one_world(**changes))


def test_a_good_recipe_parses_into_features_with_typed_fields():
    (recipe,) = parse_world_recipes(
        one_world(features=[{"kind": "pond", "radius": 3, "at": [20, 20], "landmark": "water"}])
    ).values()
    (pond,) = recipe.features
    assert recipe.size == (50, 50) and pond.radius == 3.0 and pond.at == (20, 20)
    layout = recipe.build(np.random.default_rng(0))
    assert layout.name == "w" and layout.landmarks["water"] == (20.5, 20.5)
