"""The height map records what the depth frames show, per column (mrsteve.control.heightmap)."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
from nav_worlds import GROUND, block, floor, world

import mrsteve.env  # noqa: F401
from mrsteve.control.heightmap import BLOCKED, UNKNOWN, HeightMap, walk_levels


def test_height_map_marks_observed_blocks_at_their_columns():
    blocks = floor()
    blocks[20, GROUND : GROUND + 3, 14] = block("stone")  # a pillar 3 high ahead
    blocks[12:15, GROUND - 1, 13:15] = block("water")  # a pool level with the floor
    blocks[18:21, GROUND + 2, 18:21] = block("oak_leaves")  # a crown with head room under it
    blocks[15, GROUND, 13] = block("tall_grass")  # a plant: not ground
    env = gym.make("mrsteve/Voxel-v0", world=world(blocks), obs_size=(40, 64))
    obs, info = env.reset(seed=0)
    observed = HeightMap((16.5, 8.5), camera=info["camera"])
    observed.integrate(obs)
    truth = HeightMap.from_blocks(blocks)

    seen = observed.ground != UNKNOWN
    ox, oz = observed.origin
    assert seen.sum() > 100
    xs, zs = np.nonzero(seen)
    np.testing.assert_array_equal(observed.ground[seen], truth.ground[xs + ox, zs + oz])
    np.testing.assert_array_equal(observed.water[seen], truth.water[xs + ox, zs + oz])
    assert observed.ground[observed.cell(20.5, 14.5)] == GROUND + 3
    assert observed.water[observed.cell(13.5, 13.5)]
    assert observed.ground[observed.cell(15.5, 13.5)] in (UNKNOWN, GROUND)  # never the plant
    crown = observed.leaves[observed.leaves != 0]
    assert len(crown) and (crown == np.uint64(1 << (GROUND + 2))).all()
    assert observed.levels()[observed.cell(19.5, 19.5)] != BLOCKED  # two blocks of head room


def test_walk_levels_block_columns_whose_leaves_hang_into_the_head_room():
    ground = np.full((3, 3), 5, dtype=np.int16)
    ground[1, 1] = UNKNOWN  # hidden under its own leaves
    leaves = np.zeros((3, 3), dtype=np.uint64)
    leaves[0, 0] = 1 << 6  # one block above the ground: no head room
    leaves[2, 2] = 1 << 7  # two blocks above: walk under it
    leaves[1, 1] = 1 << 5  # ground unknown: its neighbours' ground puts the leaves at the feet
    levels = walk_levels(ground, leaves)
    assert levels[0, 0] == BLOCKED and levels[1, 1] == BLOCKED
    assert levels[2, 2] == 5 and levels[0, 1] == 5
