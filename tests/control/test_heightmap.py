"""The height map records what the depth frames show, per column (mrsteve.control.heightmap)."""

from __future__ import annotations

import numpy as np
from nav_worlds import GROUND, block, floor, world

from mrsteve.control.heightmap import BLOCKED, UNKNOWN, HeightMap, walk_levels
from mrsteve.env import make_env


def test_height_map_marks_observed_blocks_at_their_columns():
    blocks = floor()
    blocks[20, GROUND : GROUND + 3, 14] = block("stone")  # a pillar 3 high ahead
    blocks[12:15, GROUND - 1, 13:15] = block("water")  # a pool level with the floor
    blocks[18:21, GROUND + 2, 18:21] = block("oak_leaves")  # a crown with head room under it
    blocks[15, GROUND, 13] = block("tall_grass")  # a plant: not ground
    env = make_env(world=world(blocks), obs_size=(40, 64))
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


def test_recording_a_block_again_right_after_changes_nothing():
    """What lets a frame skip pixels that repeat the previous pixel's block: for every kind and
    every state of the column, recording the same block twice in a row leaves the map as once."""
    from mrsteve.control.heightmap import IGNORED, LEAVES, TERRAIN, WATER, _record

    for kind in (TERRAIN, WATER, LEAVES):
        for ground_before in (UNKNOWN, 0, 3, 5, 9):
            for water_before in (False, True):
                once = (np.full((1, 1), ground_before, np.int16), np.full((1, 1), water_before),
                        np.full((1, 1), 0b100, np.uint64))
                twice = tuple(array.copy() for array in once)
                before = (once[0].copy(), once[2].copy())
                changed = _record(*once, 0, 4, 0, kind)
                _record(*twice, 0, 4, 0, kind)
                assert not _record(*twice, 0, 4, 0, kind)  # nothing changed the second time
                assert all((a == b).all() for a, b in zip(once, twice)), (kind, ground_before)
                # the flag that keeps the walking levels: ground or leaves changed
                assert changed == ((once[0] != before[0]).any() or (once[2] != before[1]).any())
    assert IGNORED not in (TERRAIN, WATER, LEAVES)


def test_integrating_a_walk_matches_recording_every_pixel():
    """The map built by :meth:`HeightMap.integrate` (which skips repeated blocks) is the map of
    recording every pixel's block, and its walking levels those of its ground and leaves."""
    from mrsteve.control.heightmap import _HIT_INSET, MAX_HEIGHT, _record
    from mrsteve.world.camera import EYE_HEIGHT, camera_basis

    env = make_env(world="map1")
    obs, _ = env.reset(seed=3)
    camera = env.unwrapped.camera
    fast = HeightMap((float(obs["pose"][0]), float(obs["pose"][2])), camera=camera)
    slow = HeightMap((float(obs["pose"][0]), float(obs["pose"][2])), camera=camera)
    rng = np.random.default_rng(0)
    for _ in range(40):
        obs, *_ = env.step(env.action_space.sample())
        if rng.random() < 0.3:
            continue
        fast.integrate(obs)
        # the walking levels are kept between integrations that change nothing; never stale
        np.testing.assert_array_equal(fast.levels(), walk_levels(fast.ground, fast.leaves))
        slow.cover(float(obs["pose"][0]), float(obs["pose"][2]))
        x, y, z, yaw, pitch = (float(v) for v in obs["pose"][:5])
        basis = np.array(camera_basis(yaw, pitch))
        directions = camera.rays.astype(np.float64) @ basis
        for p, (t, cls) in enumerate(zip(obs["depth"].ravel(), obs["semantic"].ravel())):
            kind = slow._kinds[cls]
            if not t < slow.config.max_range or kind == 0:
                continue
            hit = np.array([x, y + EYE_HEIGHT, z]) + directions[p] * (float(t) + _HIT_INSET)
            i, j, k = (int(np.floor(v)) for v in hit)
            i, k = i - slow.origin[0], k - slow.origin[1]
            if 0 <= i < slow.ground.shape[0] and 0 <= k < slow.ground.shape[1] and 0 <= j < MAX_HEIGHT:
                _record(slow.ground, slow.water, slow.leaves, i, j, k, kind)
        feet = slow.cell(x, z)
        if abs(y - round(y)) < 1e-3 and slow.ground[feet] == UNKNOWN:  # as integrate does
            slow.ground[feet] = round(y)
    env.close()
    assert fast.origin == slow.origin
    assert (fast.ground != UNKNOWN).sum() > 50
    for a, b in ((fast.ground, slow.ground), (fast.water, slow.water), (fast.leaves, slow.leaves)):
        assert (a == b).all()
