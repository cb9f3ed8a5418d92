"""World: determinism, set-up methods and their errors, layout checks."""

import numpy as np
import pytest
from handmade import GROUND, block_id, flat_blocks, layout

from mrsteve.world.layout import MobSpawn, ScheduledEvent, WorldLayout
from mrsteve.world.world import Controls, World, wrap_yaw


def herd() -> WorldLayout:
    mobs = tuple(MobSpawn(kind, 6.5 + 3 * n, 16.5) for n, kind in enumerate(["cow", "sheep"] * 3))
    return layout(
        mobs=mobs, events=(ScheduledEvent(40, "spawn_mob", 12, 12, mob="spider", count=2),)
    )


def random_controls(seed: int, steps: int) -> list[Controls]:
    rng = np.random.default_rng(seed)
    return [
        Controls(*rng.integers(0, 2, 9).astype(bool), *rng.uniform(-20, 20, 2), -1)
        for _ in range(steps)
    ]


def play(seed: int, controls: list[Controls]) -> World:
    world = World(herd(), np.random.default_rng(seed))
    for c in controls:
        world.step(c)
    return world


def test_the_same_seed_and_controls_give_the_same_world():
    controls = random_controls(0, 300)
    first, second, other = play(1, controls), play(1, controls), play(2, controls)
    assert first.pose == second.pose
    np.testing.assert_array_equal(first.blocks, second.blocks)
    np.testing.assert_array_equal(first.mobs.records, second.mobs.records)
    np.testing.assert_array_equal(first.inventory.counts, second.inventory.counts)
    assert len(first.mobs) == 8
    assert not np.array_equal(first.mobs.records["x"], other.mobs.records["x"])


def test_the_world_does_not_change_its_layout():
    blocks = flat_blocks()
    world = World(layout(blocks), np.random.default_rng(0))
    world.blocks[:] = 0
    assert blocks.any()


def test_teleport_stands_on_the_ground_under_a_roof():
    blocks = flat_blocks()
    blocks[3:8, GROUND + 4, 3:8] = block_id("planks")
    world = World(layout(blocks), np.random.default_rng(0))
    world.teleport(5.5, 5.5, yaw=370.0, pitch=-30.0)
    assert world.pose == (5.5, GROUND, 5.5, 10.0, -30.0) and world.on_ground
    world.teleport(5.5, 5.5, GROUND + 5.0)
    assert world.position[1] == GROUND + 5 and world.on_ground  # on the roof
    assert world.velocity == (0.0, 0.0, 0.0)


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda w: w.teleport(-1.0, 5.0), "outside the world"),
        (lambda w: w.teleport(5.0, float("nan")), "outside the world"),
        (lambda w: w.teleport(5.5, 5.5, 1.0), "inside a solid block"),
        (lambda w: w.teleport(5.5, 5.5, pitch=91.0), r"\[-90, 90\]"),
        (lambda w: w.spawn_mob("cow", 5.0, 99.0), "outside the world"),
        (lambda w: w.spawn_mob("cow", 5.0, 5.0, roam=-1.0), "roam"),
        (lambda w: w.schedule(ScheduledEvent(5, "spawn_mob", 5, 5)), "needs a mob kind"),
        (
            lambda w: w.schedule(ScheduledEvent(5, "spawn_mob", 5, 5, mob="cow", count=0)),
            "at least 1",
        ),
        (lambda w: w.schedule(ScheduledEvent(5, "rain", 5, 5)), "known: spawn_mob, explode"),
        (lambda w: w.schedule(ScheduledEvent(1.5, "explode", 5, 5)), "non-negative integer"),
        (lambda w: w.schedule(ScheduledEvent(5, "explode", 5, 5, radius=-1)), "radius"),
        (lambda w: w.inventory.give("dirt", -2), "non-negative"),
        (lambda w: w.inventory.take("dirt"), "cannot take 1 dirt"),
    ],
)
def test_bad_commands_raise_value_errors_naming_the_problem(call, message):
    world = World(layout(), np.random.default_rng(0))
    with pytest.raises(ValueError, match=message):
        call(world)


def test_unknown_names_raise_errors_listing_the_known_ones():
    world = World(layout(), np.random.default_rng(0))
    with pytest.raises(ValueError, match="unknown item 'pickaxe'; known: bucket, water_bucket"):
        world.equip("pickaxe")
    with pytest.raises(ValueError, match="unknown mob 'pig'; known: cow, sheep, zombie, spider"):
        world.spawn_mob("pig", 5.0, 5.0)
    with pytest.raises(ValueError, match="unknown block 'tnt'; known: air"):
        world.schedule(ScheduledEvent(5, "explode", 5, 5, block="tnt"))


@pytest.mark.parametrize(
    ("blocks", "spawn", "message"),
    [
        (np.zeros((4, 4, 4), dtype=np.int32), (1.0, 1.0, 1.0), "uint8"),
        (np.full((4, 4, 4), 200, dtype=np.uint8), (1.0, 1.0, 1.0), "block id 200"),
        (np.zeros((4, 4, 4), dtype=np.uint8), (9.0, 1.0, 1.0), "spawn"),
    ],
)
def test_bad_layouts_are_rejected(blocks, spawn, message):
    with pytest.raises(ValueError, match=message):
        World(WorldLayout("bad", blocks, spawn), np.random.default_rng(0))


def test_an_event_scheduled_in_the_past_runs_at_the_next_step_and_step_counts_up():
    world = World(layout(), np.random.default_rng(0))
    for _ in range(5):
        world.step(Controls())
    assert world.t == 5
    world.schedule(ScheduledEvent(2, "spawn_mob", 12, 12, mob="cow"))
    assert [e.kind for e in world.step(Controls())] == ["spawned"]


def test_equip_control_selects_the_held_item():
    world = World(layout(), np.random.default_rng(0))
    world.inventory.give("shears")
    world.step(Controls(equip=world.inventory.index("shears")))
    assert world.inventory.held_item == "shears"
    world.equip(None)
    assert world.inventory.held_item is None


def test_wrap_yaw():
    assert [wrap_yaw(y) for y in (0.0, 180.0, -180.0, 190.0, 720.0 + 45)] == [
        0,
        -180,
        -180,
        -170,
        45,
    ]
