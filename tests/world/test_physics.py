"""Player physics: Minecraft's speeds, jumps, steps, walls, gravity and swimming."""

import numpy as np
import pytest
from handmade import GROUND, block_id, flat_blocks, layout

from mrsteve.world.physics import EYE_HEIGHT, PLAYER_WIDTH
from mrsteve.world.world import Controls, World

FORWARD = Controls(forward=True)


def make_world(blocks=None, spawn=None, yaw=0.0) -> World:
    return World(layout(blocks, spawn, yaw), np.random.default_rng(0))


def run(world: World, controls: Controls, steps: int) -> None:
    for _ in range(steps):
        world.step(controls)


def speed_along_z(world: World, controls: Controls) -> float:
    """Blocks per second along +z once the speed has settled."""
    run(world, controls, 20)
    z0 = world.position[2]
    run(world, controls, 20)
    return world.position[2] - z0


def long_corridor():
    return flat_blocks(size=40)


def test_walking_sprinting_and_sneaking_speeds_are_minecrafts():
    spawn = (20.5, GROUND, 2.5)
    assert speed_along_z(make_world(long_corridor(), spawn), FORWARD) == pytest.approx(
        4.317, abs=0.01
    )
    sprint = Controls(forward=True, sprint=True)
    assert speed_along_z(make_world(long_corridor(), spawn), sprint) == pytest.approx(
        5.612, abs=0.01
    )
    sneak = Controls(forward=True, sneak=True)
    assert speed_along_z(make_world(long_corridor(), spawn), sneak) == pytest.approx(
        1.295, abs=0.01
    )


def test_strafing_and_yaw_follow_minecraft_conventions():
    world = make_world(yaw=90.0)  # facing -x
    x0 = world.position[0]
    run(world, FORWARD, 10)
    assert world.position[0] < x0 - 1
    world = make_world(yaw=0.0)  # facing +z: left is +x
    run(world, Controls(left=True), 10)
    assert world.position[0] > 12.5 + 1


def test_jump_rises_about_one_and_a_quarter_blocks_and_lands():
    world = make_world()
    heights = []
    world.step(Controls(jump=True))
    for _ in range(30):
        heights.append(world.position[1])
        world.step(Controls())
    assert max(heights) - GROUND == pytest.approx(1.25, abs=0.01)
    assert world.position[1] == GROUND and world.on_ground


def test_gravity_lands_a_falling_player_on_the_ground():
    world = make_world(spawn=(12.5, GROUND + 6.0, 12.5))
    assert not world.on_ground
    run(world, Controls(), 40)
    assert world.position[1] == pytest.approx(GROUND) and world.on_ground


def test_one_block_step_needs_a_jump():
    blocks = flat_blocks()
    blocks[:, GROUND, 15:] = block_id("dirt")  # the floor is one block higher from z = 15 on
    world = make_world(blocks, spawn=(12.5, GROUND, 12.5))
    run(world, FORWARD, 40)
    assert world.position[1] == GROUND
    assert world.position[2] == pytest.approx(15 - PLAYER_WIDTH / 2)
    run(world, Controls(forward=True, jump=True), 12)
    run(world, FORWARD, 10)
    assert world.position[1] == GROUND + 1 and world.position[2] > 15


def test_two_blocks_cannot_be_climbed():
    blocks = flat_blocks()
    blocks[:, GROUND : GROUND + 2, 15:] = block_id("dirt")
    world = make_world(blocks, spawn=(12.5, GROUND, 12.5))
    run(world, Controls(forward=True, jump=True, sprint=True), 100)
    assert world.position[2] <= 15 - PLAYER_WIDTH / 2 + 1e-9
    assert world.position[1] < GROUND + 1.3


def test_map_walls_and_grid_edges_cannot_be_crossed():
    world = make_world()
    run(world, Controls(forward=True, sprint=True, jump=True), 200)
    assert world.position[2] == pytest.approx(23 - PLAYER_WIDTH / 2)  # the wall fills z = 23
    blocks = flat_blocks()
    blocks[:, GROUND:, :] = 0  # no wall: the edge of the grid still stops the player
    world = make_world(blocks)
    run(world, Controls(forward=True, sprint=True, jump=True), 200)
    assert world.position[2] == pytest.approx(24 - PLAYER_WIDTH / 2)


def pool_world() -> World:
    """A pool three blocks deep filling z in [14, 22), player standing in it at z = 18."""
    blocks = flat_blocks()
    blocks[1:23, 1:GROUND, 14:22] = block_id("water")
    return make_world(blocks, spawn=(12.5, 1.0, 18.5))


def test_swimming_a_held_jump_rises_to_the_surface_and_without_it_you_sink():
    world = pool_world()
    assert world.in_water
    run(world, Controls(jump=True), 60)
    assert world.position[1] > GROUND - 1.0  # floating with the head above the surface
    run(world, Controls(), 80)
    assert world.position[1] == pytest.approx(1.0) and world.on_ground


def test_swimming_is_slower_than_walking_and_a_swimmer_climbs_out_at_a_bank():
    world = pool_world()
    world.teleport(12.5, 14.5, 1.0, yaw=0.0)
    run(world, FORWARD, 20)
    z0 = world.position[2]
    run(world, FORWARD, 10)
    assert 0 < world.position[2] - z0 < 4.317 / 2 / 2
    run(world, Controls(forward=True, jump=True), 120)  # swim up and out onto the bank at z = 22
    run(world, FORWARD, 10)
    assert world.position[1] == GROUND and world.position[2] > 22 and not world.in_water


def test_camera_yaw_wraps_and_pitch_is_clamped():
    world = make_world()
    world.step(Controls(camera_yaw=170.0, camera_pitch=60.0))
    world.step(Controls(camera_yaw=170.0, camera_pitch=60.0))
    assert world.yaw == pytest.approx(-20.0)
    assert world.pitch == 90.0
    world.step(Controls(camera_pitch=-180.0))
    assert world.pitch == -90.0
    x, y, z = world.position
    assert world.eye == pytest.approx((x, y + EYE_HEIGHT, z))
