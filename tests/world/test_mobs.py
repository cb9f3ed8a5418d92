"""Mobs: wandering within their range on the ground, fleeing, burning zombies, scheduled events."""

import math

import numpy as np
import pytest
from handmade import GROUND, block_id, flat_blocks, layout

from mrsteve.world.content import load_content
from mrsteve.world.interaction import WorldEvent
from mrsteve.world.layout import MobSpawn, ScheduledEvent
from mrsteve.world.mobs import MAX_DROP, MobConfig, Mobs
from mrsteve.world.world import Controls, World

IDLE = Controls()


def run(world: World, steps: int) -> list[WorldEvent]:
    events = []
    for _ in range(steps):
        events.extend(world.step(IDLE))
    return events


def rough_terrain() -> np.ndarray:
    """A 40 x 40 floor with a pool, pillars two blocks high and one-block steps."""
    blocks = flat_blocks(size=40)
    blocks[5:15, GROUND - 1, 5:15] = block_id("water")
    blocks[20:22, GROUND : GROUND + 2, 5:35] = block_id("stone")
    blocks[25:35, GROUND, 25:35] = block_id("dirt")
    blocks[28:31, GROUND + 1, 28:31] = block_id("dirt")
    return blocks


def test_wandering_mobs_step_only_onto_dry_ground_clear_of_blocks():
    content = load_content()
    water = block_id("water")
    world = World(layout(rough_terrain(), (37.5, GROUND, 37.5)), np.random.default_rng(0))
    rng = np.random.default_rng(1)
    for _ in range(30):
        world.spawn_mob(
            str(rng.choice(["cow", "sheep", "spider"])), *rng.uniform(16, 35, 2), roam=None
        )
    start = world.mobs.records.copy()
    for _ in range(1500):
        before = world.mobs.records.copy()
        world.step(IDLE)
        for mob, previous in zip(world.mobs.records, before):
            if mob["x"] == previous["x"] and mob["z"] == previous["z"]:
                continue
            kind = content.mobs[mob["kind"]]
            half = kind.width / 2 - 1e-6
            i0, i1 = math.floor(mob["x"] - half), math.floor(mob["x"] + half) + 1
            k0, k1 = math.floor(mob["z"] - half), math.floor(mob["z"] + half) + 1
            feet = round(mob["y"])
            assert mob["y"] == feet  # on a block top, one block up or at most three down
            assert -MAX_DROP <= feet - previous["y"] <= 1
            body = world.blocks[i0:i1, feet : math.ceil(mob["y"] + kind.height), k0:k1]
            assert not world.solid[body].any()
            assert not (world.blocks[i0:i1, feet, k0:k1] == water).any()
            assert world.solid[world.blocks[i0:i1, feet - 1, k0:k1]].any()
    records = world.mobs.records
    moved = np.hypot(records["x"] - start["x"], records["z"] - start["z"])
    assert (moved > 1).mean() > 0.8
    assert records["y"].max() >= GROUND + 1  # they climb one-block steps


def test_wandering_stays_within_roam_of_home():
    roam = 3.0
    world = World(
        layout(flat_blocks(size=40), mobs=(MobSpawn("cow", 20.5, 20.5, roam=roam),)),
        np.random.default_rng(0),
    )
    farthest = 0.0
    for _ in range(3000):
        world.step(IDLE)
        mob = world.mobs.records[0]
        farthest = max(farthest, math.hypot(mob["x"] - 20.5, mob["z"] - 20.5))
    assert 1.0 < farthest <= roam + 1e-9


def test_a_hit_mob_flees_from_the_player_for_its_flee_steps():
    world = World(layout(flat_blocks(size=40), (20.5, GROUND, 18.5)), np.random.default_rng(0))
    world.spawn_mob("cow", 20.5, 20.5, roam=0.0)
    mob = world.mobs.records[0]
    mob["flee_steps"] = flee = load_content().mob("cow").flee_steps
    run(world, flee)
    assert mob["flee_steps"] == 0 and mob["z"] > 20.5 + 0.9 * flee * 2 * 1.0 / 20
    z = mob["z"]
    run(world, 1)
    assert mob["z"] <= z  # done fleeing: back towards home


def test_mobs_never_leave_their_pasture_wandering_or_fleeing():
    pasture = (10.0, 12.0, 18.0, 20.0)
    spots = [("cow", 11.5, 13.5), ("sheep", 16.5, 18.5), ("cow", 14.5, 15.5)]
    mobs = tuple(MobSpawn(kind, x, z, roam=None, pasture=pasture) for kind, x, z in spots)
    world = World(layout(flat_blocks(size=40), (30.5, GROUND, 30.5), mobs=mobs),
                  np.random.default_rng(0))
    half = np.array([load_content().mobs[k].width / 2 for k in world.mobs.records["kind"]])
    start = world.mobs.records.copy()
    closest = math.inf
    for t in range(6000):
        if t % 500 == 0:  # hit: they flee from the player, into the fence's near corner
            world.mobs.records["flee_steps"] = load_content().mob("cow").flee_steps
        world.step(IDLE)
        records = world.mobs.records
        for axis, low, high in (("x", pasture[0], pasture[2]), ("z", pasture[1], pasture[3])):
            assert (records[axis] - half >= low).all() and (records[axis] + half <= high).all()
        closest = min(closest, (records["x"] - half).min() - pasture[0])
    moved = np.hypot(records["x"] - start["x"], records["z"] - start["z"])
    assert (moved > 1).all()
    assert closest < 0.01  # pressed against the fence, not kept in by wandering's aims alone


def test_a_mob_must_fit_its_pasture():
    mobs = Mobs(load_content())
    with pytest.raises(ValueError, match="does not fit its pasture"):
        mobs.add("cow", 9.9, 4.0, 15.0, pasture=(10.0, 12.0, 18.0, 20.0))


def test_zombies_burn_in_daylight_and_die_after_their_burn_time():
    burn_steps = load_content().mob("zombie").daylight_burn_steps
    world = World(layout(mobs=(MobSpawn("zombie", 15.5, 15.5),)), np.random.default_rng(0))
    burning_class = load_content().semantic_id("burning_zombie")
    assert world.mob_boxes()[0, 5] == load_content().semantic_id("zombie")
    assert run(world, burn_steps - 1) == []
    assert world.mobs.records["burning"][0] and world.mob_boxes()[0, 5] == burning_class
    assert world.step(IDLE) == (WorldEvent("died", "zombie"),)
    assert len(world.mobs) == 0


def test_zombies_under_a_roof_do_not_burn_unless_set_alight():
    blocks = flat_blocks()
    blocks[3:8, GROUND + 3, 3:8] = block_id("planks")
    world = World(
        layout(
            blocks, mobs=(MobSpawn("zombie", 5.5, 5.5), MobSpawn("zombie", 6.5, 6.5, burning=True))
        ),
        np.random.default_rng(0),
    )
    run(world, 600)
    assert len(world.mobs) == 1 and not world.mobs.records["burning"][0]


def test_a_scheduled_spider_spawn_happens_at_its_step():
    event = ScheduledEvent(step=30, kind="spawn_mob", x=12.0, z=12.0, mob="spider", count=3)
    world = World(layout(events=(event,)), np.random.default_rng(0))
    run(world, 29)
    assert len(world.mobs) == 0
    assert world.step(IDLE) == (WorldEvent("spawned", "spider", 3),)
    assert len(world.mobs) == 3 and world.pending_events == ()
    records = world.mobs.records
    assert np.all(np.hypot(records["x"] - 12.0, records["z"] - 12.0) <= event.radius)
    assert np.all(records["y"] == GROUND)


def test_a_scheduled_explosion_blows_up_the_sugar_cane_around_it():
    blocks = flat_blocks()
    cane = block_id("sugar_cane")
    blocks[10:13, GROUND : GROUND + 3, 10] = cane  # three stalks three high near (11, 10)
    blocks[20, GROUND : GROUND + 3, 20] = cane  # one far away
    event = ScheduledEvent(step=10, kind="explode", x=11.5, z=10.5, radius=3.0, block="sugar_cane")
    world = World(layout(blocks, events=(event,)), np.random.default_rng(0))
    run(world, 9)
    assert (world.blocks == cane).sum() == 12
    assert world.step(IDLE) == (WorldEvent("exploded", "sugar_cane", 9),)
    assert (world.blocks == cane).sum() == 3 and world.blocks[20, GROUND, 20] == cane
    assert world.blocks[11, GROUND - 1, 10] == block_id("grass_block")  # the ground stays


def test_an_explosion_without_a_block_kind_makes_a_crater_but_spares_walls():
    event = ScheduledEvent(step=1, kind="explode", x=1.5, z=12.5, radius=2.0)
    world = World(layout(), np.random.default_rng(0))
    world.schedule(event)
    (exploded,) = world.step(IDLE)
    assert exploded.kind == "exploded" and exploded.count > 0
    assert world.blocks[1, GROUND - 1, 12] == 0
    assert (world.blocks[0] == block_id("wall")).all()


def test_mob_kinds_and_config_are_checked():
    mobs = Mobs(load_content())
    with pytest.raises(ValueError, match="unknown mob 'creeper'; known: cow, sheep"):
        mobs.add("creeper", 1.0, 1.0, 1.0)
    with pytest.raises(ValueError, match="wander_chance"):
        MobConfig(wander_chance=2.0)
