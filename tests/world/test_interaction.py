"""Hands: breaking blocks into the inventory, hitting and killing mobs, using buckets and shears."""

import numpy as np
import pytest
from handmade import GROUND, block_id, flat_blocks, layout

from mrsteve.world.content import load_content
from mrsteve.world.interaction import InteractionConfig, WorldEvent
from mrsteve.world.world import Controls, World, WorldConfig

ATTACK = Controls(attack=True)
USE = Controls(use=True)
SWORD_DAMAGE = InteractionConfig().weapon_damage


def looking_down_at_floor(floor_block: str | None = None, seed: int = 0) -> World:
    """Player at (12.5, 4, 12.5) facing +z, the crosshair on floor cell (12, 3, 13)."""
    blocks = flat_blocks()
    if floor_block is not None:
        blocks[12, GROUND - 1, 13] = block_id(floor_block)
    world = World(layout(blocks, (12.5, GROUND, 12.5)), np.random.default_rng(seed))
    world.teleport(12.5, 12.5, yaw=0.0, pitch=60.0)
    assert world.target(use=True).cell == (12, GROUND - 1, 13)
    return world


def run(world: World, controls: Controls, steps: int) -> list[WorldEvent]:
    events = []
    for _ in range(steps):
        events.extend(world.step(controls))
    return events


def test_dirt_breaks_after_its_hardness_time_and_not_before():
    world = looking_down_at_floor("dirt")
    steps = round(load_content().block("dirt").hardness * 20)  # 0.75 s by hand: 15 steps
    assert run(world, ATTACK, steps - 1) == []
    assert world.inventory.as_dict() == {}
    events = world.step(ATTACK)
    assert WorldEvent("collected", "dirt", 1) in events
    assert world.inventory.as_dict() == {"dirt": 1}
    assert world.blocks[12, GROUND - 1, 13] == 0


def test_breaking_progress_is_lost_when_attack_is_released():
    world = looking_down_at_floor("dirt")
    run(world, ATTACK, 10)
    world.step(Controls())
    run(world, ATTACK, 14)
    assert world.inventory.as_dict() == {}
    world.step(ATTACK)
    assert world.inventory.as_dict() == {"dirt": 1}


@pytest.mark.parametrize("block", ["wall", "stone"])
def test_walls_never_break_and_stone_drops_nothing_by_hand(block):
    world = looking_down_at_floor(block)
    run(world, ATTACK, 149)
    assert world.blocks[12, GROUND - 1, 13] == block_id(block)
    world.step(ATTACK)  # stone breaks after 7.5 s by hand, the wall never
    assert world.inventory.as_dict() == {}
    assert world.blocks[12, GROUND - 1, 13] == (block_id("wall") if block == "wall" else 0)


def test_plants_held_up_by_a_broken_block_go_with_it():
    blocks = flat_blocks()
    blocks[12, GROUND : GROUND + 3, 13] = block_id("sugar_cane")
    world = World(layout(blocks, (12.5, GROUND, 11.8)), np.random.default_rng(0))
    world.teleport(12.5, 11.8, yaw=0.0, pitch=0.0)
    assert world.target().cell == (12, GROUND + 1, 13)
    run(world, ATTACK, 1)  # a cane breaks in one step, the one above it with it
    assert world.inventory.as_dict() == {"sugar_cane": 2}
    world.teleport(12.5, 11.8, yaw=0.0, pitch=45.0)
    assert world.target().cell == (12, GROUND, 13)
    run(world, ATTACK, 6)
    assert world.inventory.as_dict() == {"sugar_cane": 3}
    assert not world.blocks[12, GROUND:, 13].any()


def test_tall_grass_drops_seeds_with_its_drop_chance():
    blocks = flat_blocks(size=40)
    blocks[5:35, GROUND, 20] = block_id("tall_grass")
    world = World(layout(blocks, (5.5, GROUND, 18.8), yaw=-90.0), np.random.default_rng(0))
    broken = 0
    for x in range(5, 35):
        world.teleport(x + 0.5, 18.8, yaw=0.0, pitch=30.0)
        events = run(world, ATTACK, 6)
        broken += sum(e == WorldEvent("broke", "tall_grass") for e in events)
    seeds = world.inventory.as_dict().get("wheat_seeds", 0)
    assert broken == 30
    chance = load_content().block("tall_grass").drop_chance
    assert 0 < seeds < 30 and abs(seeds - chance * 30) < 10


def water_in_front() -> World:
    world = looking_down_at_floor("water")
    assert world.target().cell != (12, GROUND - 1, 13)  # attacks pass through water
    assert world.target(use=True).cell == (12, GROUND - 1, 13)
    return world


def test_a_bucket_used_on_water_becomes_a_water_bucket():
    world = water_in_front()
    world.step(USE)  # empty hand: nothing
    world.inventory.give("bucket")
    world.equip("bucket")
    events = world.step(USE)
    assert world.inventory.as_dict() == {"water_bucket": 1}
    assert events == (WorldEvent("consumed", "bucket"), WorldEvent("collected", "water_bucket"))
    assert world.inventory.held_item == "water_bucket"
    assert world.blocks[12, GROUND - 1, 13] == block_id("water")  # the pond stays


def mob_in_pit(kind: str, config: WorldConfig | None = None) -> World:
    """A mob in a pit two blocks deep at (12, 14); the player on its edge looking down at it."""
    blocks = flat_blocks()
    blocks[12, GROUND - 2 : GROUND, 14] = 0
    world = World(
        layout(blocks, (12.5, GROUND, 13.7)), np.random.default_rng(0), config or WorldConfig()
    )
    world.spawn_mob(kind, 12.5, 14.5)
    world.teleport(12.5, 13.7, yaw=0.0, pitch=70.0)
    assert world.target().kind == "mob"
    return world


def test_a_bucket_used_on_a_cow_gives_milk():
    world = mob_in_pit("cow")
    world.inventory.give("bucket", 2)
    world.equip("bucket")
    world.step(USE)
    assert world.inventory.as_dict() == {"bucket": 1, "milk_bucket": 1}
    run(world, USE, 3)  # within the use cooldown
    assert world.inventory.as_dict() == {"bucket": 1, "milk_bucket": 1}
    world.step(USE)  # cows can be milked again and again
    assert world.inventory.as_dict() == {"milk_bucket": 2}


def test_killing_a_cow_by_hand_gives_beef_after_ten_hits_with_a_cooldown():
    world = mob_in_pit("cow")
    health = load_content().mob("cow").health
    cooldown = InteractionConfig().hurt_cooldown_steps
    run(world, ATTACK, int(health - 2) * cooldown + 1)  # health - 1 hits
    assert len(world.mobs) == 1 and world.mobs.records["health"][0] == 1
    assert world.mobs.records["flee_steps"][0] > 0  # hit mobs flee
    events = run(world, ATTACK, cooldown)
    assert len(world.mobs) == 0 and WorldEvent("killed", "cow") in events
    assert world.inventory.as_dict()["beef"] >= 1


def test_a_sword_kills_faster():
    world = mob_in_pit("cow")
    world.inventory.give("sword")
    world.equip("sword")
    hits = int(np.ceil(load_content().mob("cow").health / SWORD_DAMAGE))
    run(world, ATTACK, (hits - 1) * InteractionConfig().hurt_cooldown_steps + 1)
    assert len(world.mobs) == 0 and world.inventory.as_dict()["beef"] >= 1


def test_shears_give_wool_once_until_the_sheep_regrows():
    regrow = 50
    config = WorldConfig(interaction=InteractionConfig(regrow_steps=regrow))
    world = mob_in_pit("sheep", config)
    world.inventory.give("shears")
    world.equip("shears")
    run(world, USE, 1)
    assert world.inventory.as_dict() == {"shears": 1, "wool": 1}
    run(world, USE, regrow - 2)
    assert world.inventory.as_dict() == {"shears": 1, "wool": 1}
    run(world, USE, 2)
    assert world.inventory.as_dict() == {"shears": 1, "wool": 2}


@pytest.mark.parametrize("sheared", [False, True])
def test_killing_a_sheep_gives_wool_unless_it_was_sheared(sheared):
    world = mob_in_pit("sheep")
    world.inventory.give("sword")
    if sheared:
        world.inventory.give("shears")
        world.equip("shears")
        world.step(USE)
        world.inventory.clear(["wool"])
    world.equip("sword")
    run(world, ATTACK, 30)
    assert len(world.mobs) == 0
    assert world.inventory.as_dict().get("wool", 0) == (0 if sheared else 1)


def test_nothing_happens_out_of_reach():
    world = looking_down_at_floor("dirt")
    world.teleport(12.5, 12.5, yaw=0.0, pitch=5.0)  # the floor ahead is beyond 4.5 blocks
    assert world.target().kind == "none"
    run(world, ATTACK, 50)
    assert world.inventory.as_dict() == {}


@pytest.mark.parametrize(
    ("config", "error", "message"),
    [
        (InteractionConfig(weapon="laser"), ValueError, "unknown item 'laser'"),
        (InteractionConfig(block_use={"lava": {"bucket": "lava_bucket"}}), ValueError,
         "unknown block 'lava'; known: air"),
        (
            InteractionConfig(block_use={"water": {"bucket": "soup"}}),
            ValueError,
            "unknown item 'soup'",
        ),
    ],
)
def test_interaction_rules_must_name_known_items_and_blocks(config, error, message):
    with pytest.raises(error, match=message):
        World(layout(), np.random.default_rng(0), WorldConfig(interaction=config))
    with pytest.raises(ValueError, match="reach"):
        InteractionConfig(reach=0.0)
