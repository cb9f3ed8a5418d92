"""Instruction policies: every execute prompt obtains its item from the inventory's point of view
(the paper's success check), wandering with no target in view, robustness, rules as data."""

from __future__ import annotations

import math

import numpy as np
import pytest

from mrsteve.control.skill_book import load_skills
from mrsteve.control.skills import InstructionPolicy, ScriptedSkills, SkillConfig
from mrsteve.env import make_env
from mrsteve.env.voxel_env import BUTTONS
from mrsteve.tasks import load_catalog
from mrsteve.world.camera import Camera
from mrsteve.world.content import load_content
from mrsteve.world.layout import WorldLayout

CONTENT = load_content()
FLOOR = 8
"""Feet height of a player standing on the arena floor."""

POLICIES = [pytest.param(ScriptedSkills, id="scripted-skills")]
"""Every :class:`InstructionPolicy` implementation of the embedded world."""


def arena(rng: np.random.Generator | None = None) -> WorldLayout:
    """A 40 x 40 walled grass field (dirt below) with one resource in each quarter: a tree
    (x 8, z 8), a pond one block below the floor (x 28-33, z 6-11) fringed with tall grass on its
    south shore (z 12), a sand patch (x 28-33, z 28-33) and a tall-grass meadow (x 5-11,
    z 28-34); the middle is bare grass."""
    ids = {b.name: b.id for b in CONTENT.blocks}
    blocks = np.zeros((40, 24, 40), dtype=np.uint8)
    blocks[:, : FLOOR - 1, :] = ids["dirt"]
    blocks[:, FLOOR - 1, :] = ids["grass_block"]
    blocks[28:34, FLOOR - 2 : FLOOR, 6:12] = ids["water"]
    blocks[28:34, FLOOR - 1, 6:12] = ids["water"]
    blocks[28:34, FLOOR - 2, 6:12] = ids["sand"]
    blocks[28:34, FLOOR - 1, 28:34] = ids["sand"]
    blocks[27:35, FLOOR, 12] = ids["tall_grass"]
    blocks[5:12, FLOOR, 28:35] = ids["tall_grass"]
    blocks[6:11, FLOOR + 2 : FLOOR + 4, 6:11] = ids["oak_leaves"]
    blocks[7:10, FLOOR + 4 : FLOOR + 6, 7:10] = ids["oak_leaves"]
    blocks[8, FLOOR : FLOOR + 5, 8] = ids["oak_log"]
    wall = ids["wall"]
    blocks[[0, -1], :, :] = wall
    blocks[:, :, [0, -1]] = wall
    return WorldLayout("skill_arena", blocks, (20.5, float(FLOOR), 20.5), 0.0)


def facing(x: float, z: float, tx: float, tz: float) -> float:
    """Yaw from ``(x, z)`` toward ``(tx, tz)`` (0 faces +z, 90 faces -x)."""
    return math.degrees(math.atan2(-(tx - x), tz - z))


CAMERA = Camera(40, 64)
"""The camera of :func:`arena_env`'s observations."""


def arena_env():
    return make_env(world=arena, obs_size=CAMERA.shape)


def start(env, seed: int, at: tuple[float, float], toward: tuple[float, float], **options):
    yaw = facing(*at, *toward) + 25.0  # not quite facing it
    options["teleport"] = {"x": at[0], "z": at[1], "yaw": yaw}
    obs, _ = env.reset(seed=seed, options=options)
    return obs


def run(env, policy: InstructionPolicy, obs, prompt: str, item: str, steps: int):
    """Act until ``item`` arrives in the inventory; returns the steps taken (``None``: never) and
    every event of the run."""
    slot = env.unwrapped.item_names.index(item)
    events = []
    for t in range(steps):
        obs, _, _, _, info = env.step(policy.act(obs, prompt))
        events.extend(info["events"])
        if obs["inventory"][slot] > 0:
            return t + 1, events
    return None, events


MOB_AT = (20.5, 20.5)
"""Where the scenarios' cow or sheep stands (it roams within 3 blocks)."""


def one(kind: str) -> list[dict]:
    return [{"kind": kind, "x": MOB_AT[0], "z": MOB_AT[1], "roam": 3.0}]


# prompt, item, start, target, reset options, step budget
SCENARIOS = [
    pytest.param("cut a tree", "log", (14.5, 11.5), (8.5, 8.5), {}, 300, id="cut a tree"),
    # leaves give leaves only to shears (Minecraft), which the leaves task hands over
    pytest.param("break leaves", "leaves", (14.5, 13.5), (8.5, 8.5), {"give": {"shears": 1}}, 200,
                 id="break leaves"),
    pytest.param("break a leaves", "leaves", (14.5, 13.5), (8.5, 8.5), {"give": {"shears": 1}},
                 200, id="release alias"),
    # across the tall grass fringe: the use ray stops at plants, so the skill clears them
    pytest.param("get water bucket", "water_bucket", (30.5, 15.5), (30.5, 8.5),
                 {"give": {"bucket": 1}}, 60, id="get water bucket"),
    pytest.param("kill cow", "beef", (20.5, 14.5), MOB_AT,
                 {"give": {"sword": 1}, "spawn_mobs": one("cow")}, 300, id="kill cow-sword"),
    pytest.param("kill cow", "beef", (20.5, 14.5), MOB_AT,  # 10 hits, the cow flees after each
                 {"spawn_mobs": one("cow")}, 800, id="kill cow-hand"),
    pytest.param("get milk bucket", "milk_bucket", (20.5, 14.5), MOB_AT,
                 {"give": {"bucket": 1}, "spawn_mobs": one("cow")}, 300, id="get milk bucket"),
    pytest.param("kill sheep", "wool", (20.5, 14.5), MOB_AT,
                 {"give": {"sword": 1}, "spawn_mobs": one("sheep")}, 300, id="kill sheep-sword"),
    pytest.param("kill sheep", "wool", (20.5, 14.5), MOB_AT,
                 {"give": {"shears": 1}, "spawn_mobs": one("sheep")}, 300, id="kill sheep-shears"),
    pytest.param("get sand", "sand", (24.5, 24.5), (30.5, 30.5), {}, 200, id="get sand"),
    # seeds come from 1 grass in 8: about 8 plants, 5 steps each (one to break, the break delay)
    pytest.param("collect seeds", "wheat_seeds", (15.5, 25.5), (8.5, 31.5), {}, 300,
                 id="collect seeds"),
    pytest.param("get dirt", "dirt", (20.5, 20.5), (20.5, 24.5), {}, 200, id="get dirt"),
]  # fmt: skip


@pytest.mark.parametrize("make_policy", POLICIES)
@pytest.mark.parametrize(("prompt", "item", "at", "target", "options", "steps"), SCENARIOS)
def test_each_prompt_obtains_its_item(make_policy, prompt, item, at, target, options, steps):
    env = arena_env()
    for seed in range(2):
        obs = start(env, seed, at, target, **options)
        policy = make_policy()
        policy.reset(np.random.default_rng(seed), CAMERA)
        taken, _ = run(env, policy, obs, prompt, item, steps)
        assert taken is not None, f"{prompt!r} did not get {item} in {steps} steps (seed {seed})"


@pytest.mark.parametrize("make_policy", POLICIES)
def test_every_execute_prompt_of_the_task_table_has_a_skill(make_policy):
    executes = {task.prompts.execute for task in load_catalog().items.values()}
    assert executes <= set(load_skills().prompts)
    policy = make_policy()
    policy.reset(np.random.default_rng(0), CAMERA)
    obs, _ = arena_env().reset(seed=0)
    for prompt in sorted(executes):
        assert set(policy.act(obs, prompt)) <= {*BUTTONS, "camera", "equip"}


@pytest.mark.parametrize("make_policy", POLICIES)
def test_an_unknown_prompt_raises_listing_the_known_ones(make_policy):
    policy = make_policy()
    policy.reset(np.random.default_rng(0), CAMERA)
    obs, _ = arena_env().reset(seed=0)
    with pytest.raises(ValueError, match="unknown prompt 'build a house'; known:.*'cut a tree'.*'get dirt'"):
        policy.act(obs, "build a house")


@pytest.mark.parametrize("make_policy", POLICIES)
def test_with_no_target_in_view_it_wanders_and_never_attacks(make_policy):
    env = arena_env()
    obs = start(env, 0, (20.5, 20.5), (20.5, 30.5))  # no cow anywhere
    policy = make_policy()
    policy.reset(np.random.default_rng(0), CAMERA)
    cells = set()
    for _ in range(400):
        action = policy.act(obs, "kill cow")
        assert not action.get("attack") and not action.get("use")
        obs, *_ = env.step(action)
        cells.add((math.floor(obs["pose"][0] / 4), math.floor(obs["pose"][2] / 4)))
    assert len(cells) >= 5  # it went places (4 x 4-block cells visited)


@pytest.mark.parametrize("make_policy", POLICIES)
def test_a_target_behind_it_is_found_by_looking_around(make_policy):
    env = arena_env()
    obs, _ = env.reset(seed=0, options={"teleport": {"x": 20.5, "z": 20.5, "yaw": 0.0}})
    policy = make_policy()
    policy.reset(np.random.default_rng(1), CAMERA)
    taken, _ = run(env, policy, obs, "cut a tree", "log", 300)  # the tree is behind, to the left
    assert taken is not None


@pytest.mark.parametrize("make_policy", POLICIES)
def test_grass_that_drops_no_seeds_is_left_for_the_next(make_policy):
    env = arena_env()
    broken = []
    for seed in range(4):
        obs = start(env, seed, (15.5, 25.5), (8.5, 31.5))
        policy = make_policy()
        policy.reset(np.random.default_rng(seed), CAMERA)
        taken, events = run(env, policy, obs, "collect seeds", "wheat_seeds", 300)
        assert taken is not None
        broken.append(sum(e.kind == "broke" and e.name == "tall_grass" for e in events))
    assert max(broken) >= 5  # seeds drop with probability 1/8: some run needed many plants


@pytest.mark.parametrize("make_policy", POLICIES)
def test_leaves_broken_by_hand_give_no_leaves(make_policy):
    env = arena_env()
    obs = start(env, 0, (14.5, 13.5), (8.5, 8.5))  # no shears
    policy = make_policy()
    policy.reset(np.random.default_rng(0), CAMERA)
    taken, events = run(env, policy, obs, "break leaves", "leaves", 200)
    assert taken is None
    assert sum(e.kind == "broke" and e.name == "oak_leaves" for e in events) >= 5  # it tried


@pytest.mark.parametrize("make_policy", POLICIES)
def test_a_sheared_sheep_is_skipped_for_another(make_policy):
    env = arena_env()
    sheep = [{"kind": "sheep", "x": 20.5, "z": 19.5, "roam": 2.0},
             {"kind": "sheep", "x": 26.5, "z": 25.5, "roam": 2.0}]  # fmt: skip
    obs = start(env, 0, (20.5, 15.5), (20.5, 19.5), give={"shears": 1}, spawn_mobs=sheep)
    policy = make_policy()
    policy.reset(np.random.default_rng(0), CAMERA)
    events = []  # shears give 1-3 wool a sheep: count the harvests, not the wool
    for _ in range(600):
        obs, _, _, _, info = env.step(policy.act(obs, "kill sheep"))
        events.extend(info["events"])
        if sum(e.kind == "collected" and e.name == "wool" for e in events) >= 2:
            break
    # the first sheep regrows only after 1200 steps: the second was found and shorn, none killed
    assert sum(e.kind == "collected" and e.name == "wool" for e in events) == 2
    assert not any(e.kind == "killed" for e in events)


@pytest.mark.parametrize("make_policy", POLICIES)
def test_the_same_rng_gives_the_same_actions(make_policy):
    def actions(seed: int) -> list[str]:
        env = arena_env()
        obs = start(
            env, 0, (20.5, 14.5), (20.5, 20.5), spawn_mobs=[{"kind": "cow", "x": 20.5, "z": 20.5}]
        )
        policy = make_policy()
        policy.reset(np.random.default_rng(seed), CAMERA)
        out = []
        for _ in range(300):
            action = policy.act(obs, "kill cow")
            out.append(repr(sorted((k, np.asarray(v).tolist()) for k, v in action.items())))
            obs, *_ = env.step(action)
        return out

    assert actions(3) == actions(3)


@pytest.mark.parametrize("make_policy", POLICIES)
def test_implements_the_instruction_policy_interface(make_policy):
    assert isinstance(make_policy(), InstructionPolicy)


def test_act_before_reset_is_an_error():
    obs, _ = arena_env().reset(seed=0)
    with pytest.raises(RuntimeError, match="reset"):
        ScriptedSkills().act(obs, "cut a tree")


def test_config_rejects_bad_values():
    with pytest.raises(ValueError, match="max_turn must be positive"):
        SkillConfig(max_turn=0.0)
    with pytest.raises(ValueError, match="give_up_steps must be at least 1"):
        SkillConfig(give_up_steps=0)


@pytest.mark.parametrize("policy_class", POLICIES)
@pytest.mark.parametrize(("distance", "pursued"), [(5.0, True), (30.0, False)])
def test_targets_are_pursued_only_within_the_visibility_rule(policy_class, distance, pursued):
    """The shared visibility rule (:mod:`mrsteve.visibility`): a cow 5 blocks ahead is made out and
    pursued from the first step; one 30 blocks ahead (a speck of a few pixels, in plain view) is
    not: the skill looks around on the spot instead of walking to it. (At 80 x 128 a cow 30 blocks
    away still shows; at 40 x 64 it is below a pixel.)"""
    env = make_env(world="flat", obs_size=(80, 128))
    obs, info = env.reset(seed=0, options={
        "teleport": {"x": 20.5, "z": 10.5, "yaw": 0.0, "pitch": 0.0},
        "give": {"sword": 1}, "equip": "sword",
        "spawn_mobs": [{"kind": "cow", "x": 20.5, "z": 10.5 + distance, "count": 1, "roam": 0.0}],
    })
    cow = CONTENT.semantic_id("cow")
    assert (obs["semantic"] == cow).any()  # in plain view either way
    policy = policy_class()
    policy.reset(np.random.default_rng(0), info["camera"])
    start_z = float(obs["pose"][2])
    moves = []
    for _ in range(20):
        action = policy.act(obs, "kill cow")
        moves.append(int(action.get("forward", 0)))
        obs, *_ = env.step(action)
    walked = float(obs["pose"][2]) - start_z
    if pursued:
        assert moves[0] == 1 and walked > 2.0
    else:
        assert not any(moves) and abs(walked) < 0.1


# -- the skills as DAgger's teacher (labelling another policy's steps) ----------------------------

TEACHER = SkillConfig(labelling=True)


def looking_at(x: float, z: float, target: tuple[float, float, float]) -> dict[str, float]:
    """Teleport options for standing at ``(x, z)`` with the crosshair on the point ``target``."""
    eye = np.array([x, FLOOR + 1.62, z])
    delta = np.asarray(target) - eye
    pitch = -math.degrees(math.atan2(delta[1], math.hypot(delta[0], delta[2])))
    return {"x": x, "z": z, "yaw": facing(x, z, target[0], target[2]), "pitch": pitch}


@pytest.mark.parametrize(("config", "keeps_aim"), [(SkillConfig(), False), (TEACHER, True)])
def test_a_teacher_keeps_the_aim_on_the_block_under_the_crosshair(config, keeps_aim):
    """Another policy breaking the log at its feet, below the one at eye level: the teacher
    labels holding attack on it (a turn off the block would undo the breaking); the skills'
    own rule turns to the nearest log, the one at eye level."""
    env = arena_env()
    lower = (8, FLOOR, 8)
    obs, _ = env.reset(seed=0, options={"teleport": looking_at(8.5, 11.0, (8.5, FLOOR + 0.5, 9.0))})
    world = env.unwrapped.world
    assert world.target().cell == lower
    teacher = ScriptedSkills(config)
    teacher.reset(np.random.default_rng(0), CAMERA)
    label = teacher.act(obs, "cut a tree")
    assert label["attack"] == 1
    env.step({"camera": label["camera"]})
    assert (world.target().cell == lower) == keeps_aim


def test_a_teacher_counts_a_look_around_by_the_turns_the_view_made():
    """With no cow anywhere the skills look around (a full turn) and then wander. A teacher
    whose labels are not followed keeps labelling the turn; once the view has turned all the
    way round, it labels wandering."""
    env = arena_env()
    obs = start(env, 0, (20.5, 20.5), (20.5, 30.5))
    teacher = ScriptedSkills(TEACHER)
    teacher.reset(np.random.default_rng(0), CAMERA)
    for _ in range(60):  # the policy stands still
        label = teacher.act(obs, "kill cow")
        assert abs(label["camera"][1]) == teacher.config.max_turn and not label.get("forward")
        obs, *_ = env.step({})
    for _ in range(60):  # the policy follows the labels
        label = teacher.act(obs, "kill cow")
        obs, *_ = env.step(label)
        if label.get("forward"):
            break
    assert label.get("forward")


@pytest.mark.parametrize(("config", "skips"), [(SkillConfig(), True), (TEACHER, False)])
def test_a_teacher_never_gives_up_a_target_the_policy_does_not_walk_to(config, skips):
    """The policy stands still 6 blocks from the sand patch: the skills' own rules call that
    stuck (detours, then the target skipped); the teacher keeps labelling the way to it."""
    env = arena_env()
    obs = start(env, 0, (24.5, 24.5), (30.5, 30.5))
    teacher = ScriptedSkills(config)
    teacher.reset(np.random.default_rng(0), CAMERA)
    labels = []
    for _ in range(250):
        labels.append(teacher.act(obs, "get sand"))
        obs, *_ = env.step({"camera": labels[-1]["camera"]})  # turns as told, never walks
    detoured = any(label.get("left") or label.get("right") for label in labels)
    assert detoured == skips
    if not skips:
        assert all(label.get("forward") for label in labels[50:])
