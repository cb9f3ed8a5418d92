"""Minecraft 1.11's passive spawn cycle (mrsteve.world.spawning)."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from mrsteve.env import make_env
from mrsteve.world.recipes import build_layout
from mrsteve.world.spawning import SpawnRules
from mrsteve.world.world import Controls, World, WorldConfig


def hunted_world(seed: int = 0, world: str = "long_instruction", keep: int = 0,
                 pastures: bool = False) -> World:
    """A world with the spawn cycle whose animals were all killed but ``keep``; its herds'
    pastures taken away unless ``pastures`` (the wild cycle of a 200 x 200 map)."""
    rng = np.random.default_rng(seed)
    layout = build_layout(world, rng)
    if not pastures:
        layout = dataclasses.replace(layout, pastures=(), mobs=tuple(
            dataclasses.replace(mob, pasture=None) for mob in layout.mobs))
    built = World(layout, rng, WorldConfig(spawn_cycle=SpawnRules()))
    built.mobs.remove(np.arange(keep, len(built.mobs)))
    return built


def in_pasture(world: World, kind: str, x: float, z: float) -> bool:
    (x0, z0, x1, z1), = (p.area for p in world.layout.pastures if p.mob == kind)
    return x0 <= x < x1 and z0 <= z < z1


def cycles(world: World, n: int) -> list[tuple[str, float, float, float]]:
    """Run ``n`` cycles; every animal spawned as ``(kind, x, y, z)``."""
    spawned = []
    for _ in range(n):
        before = len(world.mobs)
        world.spawning.cycle()
        spawned += [(world.mobs.kind_name(i), *(float(world.mobs.records[i][c])
                                                for c in ("x", "y", "z")))
                    for i in range(before, len(world.mobs))]
    return spawned


def test_the_cap_is_ten_per_289_eligible_chunks_of_the_17_by_17_around_the_player():
    world = hunted_world()
    chunks = world.spawning.eligible_chunks()
    assert len(chunks) == 13 * 13  # the 200 x 200 map is 13 x 13 chunks, all within 8 of the centre
    assert world.spawning.cap(len(chunks)) == 10 * 169 // 289 == 5
    unbounded = hunted_world(world="plains_unbounded")
    assert len(unbounded.spawning.eligible_chunks()) == 10 * 10  # the loaded window


def test_nothing_spawns_while_more_animals_than_the_cap_are_loaded():
    world = hunted_world(keep=6)  # cap 5
    assert cycles(world, 50) == []
    world.mobs.remove(np.arange(1, len(world.mobs)))
    assert len(cycles(world, 50)) > 0


def test_spawned_animals_stand_on_lit_grass_far_from_the_player_and_the_spawn_point():
    world = hunted_world(seed=1)
    spawned = []
    while len(spawned) < 20:
        spawned += cycles(world, 20)
        world.mobs.remove(np.arange(len(world.mobs)))  # hunted again: below the cap
    grass = world.content.block("grass_block").id
    px, py, pz = world.position
    sx, sy, sz = world.layout.spawn
    for kind, x, y, z in spawned:
        assert kind in ("cow", "sheep")
        i, j, k = int(x), round(y), int(z)
        assert world.blocks[i, j - 1, k] == grass
        assert not world.spawning._opaque[world.blocks[i, j:, k]].any()
        assert np.hypot(np.hypot(x - px, z - pz), y - py) >= 24
        assert np.hypot(np.hypot(x - sx, z - sz), y - sy) >= 24


def test_a_cell_under_a_roof_on_sand_or_in_water_takes_no_animal():
    world = hunted_world()
    x, z = 150, 150  # open grass of the cows' corner
    column = world.blocks[x, :, z]
    y = int(np.flatnonzero(world.solid[column]).max()) + 1
    world.blocks[x, y:, z] = 0
    assert world.spawning._can_spawn("cow", x, y, z)
    world.blocks[x, y + 5, z] = world.content.block("stone").id  # a roof: no light
    assert not world.spawning._can_spawn("cow", x, y, z)
    world.blocks[x, y + 5, z] = world.content.block("oak_leaves").id  # leaves let light through
    assert world.spawning._can_spawn("cow", x, y, z)
    world.blocks[x, y - 1, z] = world.content.block("sand").id
    assert not world.spawning._can_spawn("cow", x, y, z)


def test_cycles_run_every_400_ticks_and_the_same_seed_spawns_the_same():
    def episode(seed):
        env = make_env(world="long_instruction", obs_size=(4, 4),
                       spawn_cycle=True)
        env.reset(seed=seed)
        world = env.unwrapped.world
        world.mobs.remove(np.arange(len(world.mobs)))
        steps = []
        for t in range(1, 4001):
            _, _, _, _, info = env.step({})
            steps += [(t, e.name, e.count) for e in info["events"] if e.kind == "spawned"]
        env.close()
        return steps, world.mobs.records[["x", "z"]].tolist()

    first = episode(4)
    assert first[0], "no animal came back in ten cycles"
    assert all(t % 400 == 0 for t, _, _ in first[0])
    assert episode(4) == first


def test_without_the_cycle_killed_animals_never_come_back():
    rng = np.random.default_rng(0)
    world = World(build_layout("long_instruction", rng), rng)
    world.mobs.remove(np.arange(len(world.mobs)))
    for _ in range(2000):
        world.step(Controls())
    assert len(world.mobs) == 0 and world.spawning is None


@pytest.mark.parametrize("field,value", [("interval", 0), ("cap", -1), ("spread", 0)])
def test_bad_spawn_rules_are_refused_with_the_field_named(field, value):
    with pytest.raises(ValueError, match=field):
        SpawnRules(**{field: value})


def test_long_instruction_herds_keep_to_their_pastures_sheep_upper_left_cows_lower_right():
    layout = build_layout("long_instruction", np.random.default_rng(0))
    areas = {pasture.mob: pasture.area for pasture in layout.pastures}
    assert areas["sheep"][2] <= 100 and areas["sheep"][3] <= 100  # the upper-left quarter
    assert areas["cow"][0] >= 100 and areas["cow"][1] >= 100  # the lower-right quarter
    assert {mob.pasture for mob in layout.mobs} == {tuple(map(float, a)) for a in areas.values()}
    for world in ("map2", "plains", "long_navigation"):  # no pastures elsewhere
        other = build_layout(world, np.random.default_rng(0))
        assert other.pastures == () and all(mob.pasture is None for mob in other.mobs)


def test_animals_stay_in_their_pastures_over_a_long_hunted_run():
    env = make_env(world="long_instruction", obs_size=(4, 4), spawn_cycle=True)
    env.reset(seed=2)
    world = env.unwrapped.world
    world.teleport(48.5, 48.5)  # among the sheep: they flee from the player when hit
    rng = np.random.default_rng(0)
    for t in range(1, 20_001):
        if t % 50 == 0:  # a hit, and every 500 steps a kill, in turn in each herd
            world.mobs.records["flee_steps"] = 60
        if t % 500 == 0:
            world.mobs.remove(np.array([rng.integers(len(world.mobs))]))
        world.step(Controls())
        records = world.mobs.records
        for kind in ("cow", "sheep"):
            mine = records[records["kind"] == world.content.mob(kind).id]
            (x0, z0, x1, z1), = (p.area for p in world.layout.pastures if p.mob == kind)
            assert ((mine["x"] >= x0) & (mine["x"] < x1) & (mine["z"] >= z0)
                    & (mine["z"] < z1)).all(), f"a {kind} left its pasture at step {t}"
    env.close()


def test_killed_animals_come_back_inside_their_pasture_far_from_the_player():
    world = hunted_world(seed=1, pastures=True)
    world.teleport(48.5, 48.5)  # in the sheep's pasture
    grass = world.content.block("grass_block").id
    px, py, pz = world.position
    spawned = cycles(world, 1)
    assert sorted(kind for kind, *_ in spawned) == ["cow"] * 4 + ["sheep"] * 4  # 4 a cycle
    spawned += cycles(world, 5)
    assert [world.spawning.herd_size(p) for p in world.layout.pastures] == [12, 12]
    assert len(spawned) == 24
    for kind, x, y, z in spawned:
        assert in_pasture(world, kind, x, z)
        assert world.blocks[int(x), round(y) - 1, int(z)] == grass
        assert np.hypot(np.hypot(x - px, z - pz), y - py) >= 24
    assert cycles(world, 20) == [], "a whole herd gets no more animals"


def test_the_herds_never_run_out_over_many_kills():
    world = hunted_world(seed=3, pastures=True, keep=24)
    pastures = world.layout.pastures
    lowest = {p.mob: p.count for p in pastures}
    for _cycle in range(150):  # 4 kills of each species per cycle: 600 of each in all
        for pasture in pastures:
            for _kill in range(4):
                lowest[pasture.mob] = min(lowest[pasture.mob], world.spawning.herd_size(pasture))
                herd = np.flatnonzero(world.mobs.records["kind"]
                                      == world.content.mob(pasture.mob).id)
                world.mobs.remove(herd[:1])
        world.spawning.cycle()
    assert lowest == {"sheep": 12 - 3, "cow": 12 - 3}


def test_pastured_species_never_spawn_outside_their_pasture():
    world = hunted_world(seed=4, pastures=True)
    for _ in range(10):
        for kind, x, _, z in cycles(world, 10):
            assert in_pasture(world, kind, x, z)
        world.mobs.remove(np.arange(len(world.mobs)))


def test_only_the_cycles_animals_spawn_in_a_pasture():
    layout = build_layout("long_instruction", np.random.default_rng(0))
    zombies = dataclasses.replace(layout.pastures[0], mob="zombie")
    layout = dataclasses.replace(layout, pastures=(zombies,))
    with pytest.raises(ValueError, match="only cow and sheep spawn in a pasture, got .* zombies"):
        World(layout, np.random.default_rng(0), WorldConfig(spawn_cycle=SpawnRules()))


def static_herds_world(seed: int = 5) -> World:
    """The Long-Instruction map with the spawn cycle and static herds."""
    rng = np.random.default_rng(seed)
    return World(build_layout("long_instruction", rng), rng,
                 WorldConfig(spawn_cycle=SpawnRules(), herds="static"))


def homes(world: World) -> list[tuple[float, float]]:
    return sorted(world.mobs.records[["home_x", "home_z"]].tolist())


def test_static_herds_stand_where_they_first_stood_and_walk_back_after_fleeing():
    world = static_herds_world()
    first = world.mobs.records[["x", "z"]].copy()
    for _ in range(3000):
        world.step(Controls())
    assert np.array_equal(world.mobs.records[["x", "z"]], first), "a static animal wandered"
    world.mobs.records["flee_steps"] = 40  # every animal hit at once: they run from the player
    for _ in range(40):
        world.step(Controls())
    records = world.mobs.records
    assert np.hypot(records["x"] - first["x"], records["z"] - first["z"]).min() > 1.0
    for _ in range(3000):
        world.step(Controls())
    records = world.mobs.records
    back = np.hypot(records["x"] - first["x"], records["z"] - first["z"]) < 1e-6
    assert back.mean() > 0.9, f"only {back.sum()} of {len(back)} animals walked back home"


def test_wandering_herds_do_not_stand_still():
    rng = np.random.default_rng(5)
    world = World(build_layout("long_instruction", rng), rng, WorldConfig(spawn_cycle=SpawnRules()))
    first = world.mobs.records[["x", "z"]].copy()
    for _ in range(3000):
        world.step(Controls())
    moved = np.hypot(world.mobs.records["x"] - first["x"], world.mobs.records["z"] - first["z"])
    assert (moved > 2.0).mean() > 0.5


def test_static_herds_killed_animals_come_back_at_their_spots_once_the_player_is_away():
    world = static_herds_world()
    start = homes(world)
    cow = world.content.mob("cow").id
    cows = np.flatnonzero(world.mobs.records["kind"] == cow)
    killed = sorted(world.mobs.records[cows[:6]][["home_x", "home_z"]].tolist())
    world.mobs.remove(cows[:6])
    world.teleport(48.5, 48.5)  # among the sheep, far from every cow's spot
    spawned = cycles(world, 1)
    assert len(spawned) == 4 and {(x, z) for _, x, _, z in spawned} < set(killed)  # 4 a cycle
    spawned += cycles(world, 1)
    assert sorted((x, z) for _, x, _, z in spawned) == killed and homes(world) == start
    assert cycles(world, 5) == [], "a whole herd gets no more animals"

    pasture, = (p for p in world.layout.pastures if p.mob == "cow")
    world.spawn_mob("cow", 150.5, 150.5, roam=0.0, pasture=pasture.fence)
    assert cycles(world, 1) == [], "an extra animal neither fills a spot nor breaks the cycle"
    world.mobs.remove(np.array([len(world.mobs) - 1]))
    x, z = killed[0]
    here = np.flatnonzero((world.mobs.records["home_x"] == x) & (world.mobs.records["home_z"] == z))
    world.mobs.remove(here)
    world.teleport(x, z)  # on the killed cow's spot: it waits until the player is 24 blocks away
    assert cycles(world, 3) == []
    world.teleport(48.5, 48.5)
    assert [(kind, x_, z_) for kind, x_, _, z_ in cycles(world, 1)] == [("cow", x, z)]
    assert homes(world) == start


def test_herds_must_be_wander_or_static():
    with pytest.raises(ValueError, match="herds.*wander, static"):
        WorldConfig(herds="still")
    with pytest.raises(ValueError, match="herds.*wander, static"):
        make_env(world="long_instruction", herds="still")
