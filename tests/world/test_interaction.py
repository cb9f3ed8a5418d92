"""Hands: breaking blocks into the inventory, hitting and killing mobs, using buckets and shears,
under Minecraft 1.11's rules (drops, tools, 1.9+ combat)."""

from collections import Counter

import numpy as np
import pytest
from handmade import GROUND, block_id, flat_blocks, layout

from mrsteve.world.content import load_content
from mrsteve.world.interaction import InteractionConfig, WorldEvent
from mrsteve.world.world import Controls, Regrowth, World, WorldConfig

ATTACK = Controls(attack=True)
USE = Controls(use=True)
CONTENT = load_content()
HURT_COOLDOWN = InteractionConfig().hurt_cooldown_steps


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


def test_tall_grass_breaks_in_one_step_and_the_hands_collect_its_drops():
    blocks = flat_blocks(size=40)
    blocks[5:35, GROUND, 20] = block_id("tall_grass")
    world = World(layout(blocks, (5.5, GROUND, 18.8), yaw=-90.0), np.random.default_rng(0))
    broken, seeds = 0, 0
    for x in range(5, 35):
        world.teleport(x + 0.5, 18.8, yaw=0.0, pitch=30.0)
        events = world.step(ATTACK)  # grass breaks in one step
        broken += events.count(WorldEvent("broke", "tall_grass"))
        seeds += events.count(WorldEvent("collected", "wheat_seeds", 1))
        run(world, Controls(), 5)  # the break delay
    assert broken == 30
    assert world.inventory.as_dict() == ({"wheat_seeds": seeds} if seeds else {})


def break_many(block: str, held: str | None, n: int, seed: int = 0) -> dict[str, int]:
    """The inventory after breaking ``n`` blocks of ``block`` with ``held`` in hand (the drop rules
    alone: the block is put back and broken through the hands, without walking or aiming)."""
    world = looking_down_at_floor(seed=seed)
    if held is not None:
        world.inventory.give(held)
        world.equip(held)
    for _ in range(n):
        world.blocks[12, GROUND - 1, 13] = block_id(block)
        world.hands.break_block(world, 12, GROUND - 1, 13, [])
    got = world.inventory.as_dict()
    if held is not None:
        assert got.pop(held) == 1  # tools are kept
    return got


def test_tall_grass_drops_seeds_one_time_in_eight_by_hand():
    n = 4000
    got = break_many("tall_grass", None, n)
    assert set(got) == {"wheat_seeds"}
    # 1/8 of 4000 is 500 (standard deviation 21): seed 0 lands well inside; a chance of 1/2 (the
    # old rule) or 1/16 would be far outside
    assert abs(got["wheat_seeds"] - n / 8) < 60


def test_tall_grass_cut_with_shears_gives_the_plant_and_never_seeds():
    assert break_many("tall_grass", "shears", 300) == {"tall_grass": 300}


def test_leaves_by_hand_never_give_leaves_only_rare_saplings_and_apples():
    n = 4000
    got = break_many("oak_leaves", None, n)
    assert "leaves" not in got
    # saplings 1/20 (200 expected, standard deviation 14), apples 1/200 (20 expected, 4.5)
    assert abs(got["sapling"] - n / 20) < 45
    assert 5 <= got["apple"] <= 40


def test_leaves_cut_with_shears_give_leaves_every_time_and_nothing_else():
    assert break_many("oak_leaves", "shears", 300) == {"leaves": 300}


def test_blocks_drop_themselves_or_dirt():
    assert break_many("grass_block", None, 20) == {"dirt": 20}
    assert break_many("dirt", None, 20) == {"dirt": 20}
    assert break_many("sand", None, 20) == {"sand": 20}
    assert break_many("oak_log", "sword", 5) == {"log": 5}  # a tool without drops of its own
    assert break_many("stone", None, 20) == {}  # no pickaxe


@pytest.mark.parametrize(
    ("block", "held", "seconds"),
    [("dirt", None, 0.75), ("sand", None, 0.75), ("grass_block", None, 0.9),
     ("oak_log", None, 3.0), ("oak_leaves", None, 0.3), ("oak_leaves", "shears", 0.05),
     ("stone", None, 7.5), ("dirt", "shears", 0.75)],
)  # fmt: skip
def test_blocks_break_after_minecrafts_time_for_the_held_item(block, held, seconds):
    world = looking_down_at_floor(block)
    if held is not None:
        world.inventory.give(held)
        world.equip(held)
    steps = round(seconds * 20)
    run(world, ATTACK, steps - 1)
    assert world.blocks[12, GROUND - 1, 13] == block_id(block)
    world.step(ATTACK)
    assert world.blocks[12, GROUND - 1, 13] == 0


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


def mob_in_pit(kind: str, config: WorldConfig | None = None, seed: int = 0) -> World:
    """A mob in a pit two blocks deep at (12, 14); the player on its edge looking down at it."""
    blocks = flat_blocks()
    blocks[12, GROUND - 2 : GROUND, 14] = 0
    world = World(
        layout(blocks, (12.5, GROUND, 13.7)), np.random.default_rng(seed), config or WorldConfig()
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
    health = CONTENT.mob("cow").health
    run(world, ATTACK, int(health - 2) * HURT_COOLDOWN + 1)  # health - 1 hits
    assert len(world.mobs) == 1 and world.mobs.records["health"][0] == 1
    assert world.mobs.records["flee_steps"][0] > 0  # hit mobs flee
    events = run(world, ATTACK, HURT_COOLDOWN)
    assert len(world.mobs) == 0 and WorldEvent("killed", "cow") in events
    assert world.inventory.as_dict()["beef"] >= 1


@pytest.mark.parametrize(
    ("kind", "held", "health", "hits", "interval"),
    [
        ("cow", None, 10, 10, 10),  # hand: 1 damage; it recovers in 5 steps, the cow in 10
        ("cow", "sword", 10, 2, 13),  # iron sword: 6 damage, recovers in 12.5 ticks
        ("sheep", None, 8, 8, 10),
        ("sheep", "sword", 8, 2, 13),
        ("zombie", None, 20, 20, 10),
        ("zombie", "sword", 20, 4, 13),
        ("cow", "shears", 10, 10, 10),  # not a weapon: hits like a hand
    ],
)
def test_hits_to_kill_follow_minecrafts_damage_and_cooldowns(kind, held, health, hits, interval):
    assert CONTENT.mob(kind).health == health
    world = mob_in_pit(kind)
    if held is not None:
        world.inventory.give(held)
        world.equip(held)
    killed_at = None
    for step in range(1, 400):
        if WorldEvent("killed", kind) in world.step(ATTACK):
            killed_at = step
            break
        if step == 1 and kind != "zombie":
            assert world.mobs.records["flee_steps"][0] > 0  # hit animals panic and flee
    assert killed_at == (hits - 1) * interval + 1


def test_the_hand_and_sword_rules_are_minecrafts_1_9_combat():
    assert CONTENT.attack(None) == CONTENT.hand
    assert (CONTENT.hand.damage, CONTENT.hand.cooldown) == (1.0, 0.25)
    sword = CONTENT.attack("sword")
    assert (sword.damage, sword.cooldown) == (6.0, 0.625)  # an iron sword
    assert CONTENT.attack("bucket") == CONTENT.hand


def kill_in_turn(kind: str, n: int, held: str = "sword") -> list[dict[str, int]]:
    """What each of ``n`` mobs of ``kind`` gave when killed with ``held``, one after another in the
    pit (one world, one generator)."""
    world = mob_in_pit(kind)
    world.inventory.give(held)
    world.equip(held)
    drops = []
    for _ in range(n):
        if not len(world.mobs):
            world.spawn_mob(kind, 12.5, 14.5)
        events = []
        for _ in range(100):  # stop at the kill: further attacks would dig into the pit floor
            events.extend(world.step(ATTACK))
            if WorldEvent("killed", kind) in events:
                break
        assert WorldEvent("killed", kind) in events
        got = Counter()
        for event in events:
            if event.kind == "collected":
                got[event.name] += event.count
        drops.append(got)
    return drops


def test_cows_drop_one_to_three_beef_and_up_to_two_leather():
    drops = kill_in_turn("cow", 40)
    beef = Counter(d["beef"] for d in drops)
    leather = Counter(d["leather"] for d in drops)
    assert set(beef) == {1, 2, 3}  # every count comes up in 40 kills, no other
    assert set(leather) == {0, 1, 2}
    assert all(set(d) <= {"beef", "leather"} for d in drops)


def test_shears_give_wool_once_until_the_sheep_regrows():
    regrow = 50
    config = WorldConfig(interaction=InteractionConfig(regrow_steps=regrow))
    world = mob_in_pit("sheep", config)
    world.inventory.give("shears")
    world.equip("shears")
    run(world, USE, 1)
    first = world.inventory.as_dict()["wool"]
    assert 1 <= first <= 3
    run(world, USE, regrow - 2)
    assert world.inventory.as_dict() == {"shears": 1, "wool": first}
    run(world, USE, 2)
    assert world.inventory.as_dict()["wool"] > first


def test_shears_give_one_to_three_wool_per_sheep():
    counts = Counter()
    for seed in range(30):
        world = mob_in_pit("sheep", seed=seed)
        world.inventory.give("shears")
        world.equip("shears")
        world.step(USE)
        counts[world.inventory.as_dict()["wool"]] += 1
    assert set(counts) == {1, 2, 3}


@pytest.mark.parametrize("sheared", [False, True])
def test_killing_a_sheep_gives_one_wool_unless_it_was_sheared(sheared):
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


def test_every_unsheared_sheep_killed_gives_exactly_one_wool():
    assert [d["wool"] for d in kill_in_turn("sheep", 10)] == [1] * 10


def test_nothing_happens_out_of_reach():
    world = looking_down_at_floor("dirt")
    world.teleport(12.5, 12.5, yaw=0.0, pitch=5.0)  # the floor ahead is beyond 4.5 blocks
    assert world.target().kind == "none"
    run(world, ATTACK, 50)
    assert world.inventory.as_dict() == {}


@pytest.mark.parametrize(
    ("config", "error", "message"),
    [
        (InteractionConfig(consumed_on_use=("laser",)), ValueError, "unknown item 'laser'"),
        (
            InteractionConfig(block_use={"lava": {"bucket": "lava_bucket"}}),
            ValueError,
            "unknown block 'lava'; known: air",
        ),
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


def looking_at_log(regrowth_steps: int | None) -> World:
    """:func:`looking_down_at_floor` with an oak log in the crosshair's cell, in a world whose
    logs come back after ``regrowth_steps`` (``None``: never)."""
    blocks = flat_blocks()
    blocks[12, GROUND - 1, 13] = block_id("oak_log")
    config = WorldConfig(regrowth=None if regrowth_steps is None else Regrowth(regrowth_steps))
    world = World(layout(blocks, (12.5, GROUND, 12.5)), np.random.default_rng(0), config)
    world.teleport(12.5, 12.5, yaw=0.0, pitch=60.0)
    return world


def chop(world: World) -> int:
    """Attack until the crosshair's log breaks; the step it broke at."""
    for _ in range(400):
        if any(event.kind == "broke" for event in world.step(ATTACK)):
            return world.t
    raise AssertionError("the log did not break")


def test_a_broken_log_comes_back_after_the_regrowth_steps_and_not_before():
    world = looking_at_log(regrowth_steps=50)
    broke_at = chop(world)
    assert world.inventory.as_dict() == {"log": 1}
    for _ in range(broke_at + 49 - world.t):  # back at step broke_at + 50
        assert world.step(Controls()) == ()
    assert world.blocks[12, GROUND - 1, 13] == 0
    assert world.step(Controls()) == (WorldEvent("regrew", "oak_log"),)
    assert world.blocks[12, GROUND - 1, 13] == block_id("oak_log")
    assert chop(world) > broke_at  # it breaks again, as a log
    assert world.inventory.as_dict() == {"log": 2}


def test_without_regrowth_a_broken_log_stays_gone_and_other_blocks_never_come_back():
    world = looking_at_log(regrowth_steps=None)
    chop(world)
    run(world, Controls(), 300)
    assert world.blocks[12, GROUND - 1, 13] == 0
    dirt = looking_down_at_floor("dirt")
    dirt = World(dirt.layout, np.random.default_rng(0), WorldConfig(regrowth=Regrowth(5)))
    dirt.teleport(12.5, 12.5, yaw=0.0, pitch=60.0)
    run(dirt, ATTACK, 40)
    assert dirt.blocks[12, GROUND - 1, 13] == 0
    assert all(event.kind != "regrew" for event in run(dirt, Controls(), 50))


def test_a_log_waits_while_the_player_stands_in_its_cell_and_never_fills_a_taken_cell():
    world = looking_at_log(regrowth_steps=10)
    broke_at = chop(world)
    world.teleport(12.5, 13.5)  # above the hole the log left: the player drops into it
    run(world, Controls(), 20)
    assert world._occupied((12, GROUND - 1, 13))
    assert all(event.kind != "regrew" for event in run(world, Controls(), 20))
    assert world.t > broke_at + 10 and world.blocks[12, GROUND - 1, 13] == 0
    world.teleport(16.5, 16.5)
    assert world.step(Controls()) == (WorldEvent("regrew", "oak_log"),)
    taken = looking_at_log(regrowth_steps=10)
    chop(taken)
    taken.blocks[12, GROUND - 1, 13] = block_id("dirt")
    assert all(event.kind != "regrew" for event in run(taken, Controls(), 30))
    assert taken.blocks[12, GROUND - 1, 13] == block_id("dirt")


def test_regrowth_refuses_bad_steps_and_unbounded_worlds():
    with pytest.raises(ValueError, match="regrowth steps must be a positive integer"):
        Regrowth(0)
    from mrsteve.env import make_env

    with pytest.raises(ValueError, match="log_regrowth must be a non-negative integer"):
        make_env(world="plains", log_regrowth=-1)
    with pytest.raises(ValueError, match="regrowth needs a bounded world"), \
            make_env(world="plains_unbounded", log_regrowth=100) as env:
        env.reset(seed=0)
