"""MrSteve over MineStudio's simulator interface: the observation conversion, the item tasks as
a callback, the requirements line, and one ABA episode on the facade identical to the package's
own episode code."""

from __future__ import annotations

import dataclasses

import numpy as np
import pytest

from mrsteve.agent.factory import build_agent
from mrsteve.env import make_env
from mrsteve.eval.sequential import (
    ModeSteps,
    SequentialConfig,
    SequentialRun,
    sequential_episode,
)
from mrsteve.eval.spec import RunSpec
from mrsteve.minecraft import sim as S
from mrsteve.minecraft.facade import VoxelMinecraftSim
from mrsteve.tasks.driver import EpisodeCallback
from mrsteve.tasks.episode import run_tasks
from mrsteve.tasks.sequential import env_kwargs, find_tasks, sequential_record
from mrsteve.world.camera import Camera

SEED = 3
"""A seed whose water-log-water episode finishes all three tasks in 821 steps."""


class StepLog(EpisodeCallback):
    """Every step's world pose, inventory, mode and action."""

    def __init__(self) -> None:
        self.rows: list[tuple] = []

    def on_step(self, step) -> None:
        action = {k: np.asarray(v).tolist() for k, v in step.decision.items()}
        self.rows.append((step.t, tuple(step.obs["pose"]), tuple(step.obs["inventory"]),
                          step.decision.mode, sorted(action.items())))


@pytest.fixture(scope="module")
def water_log_water():
    task = dataclasses.replace(find_tasks("aba-sparse", "water-log-water")[0], max_steps=1200)
    tree = SequentialConfig(task=task.name, agent="mrsteve", parts="stand-in").agent_tree(
        "mrsteve", task.world, None)
    return task, RunSpec("aba-sparse", "water-log-water.mrsteve", task.key, SequentialRun.of(task),
                         tree, seed=SEED)


def test_the_facade_runs_an_aba_episode_exactly_as_the_package_does(water_log_water):
    task, spec = water_log_water
    direct = sequential_episode(spec)
    direct_log = StepLog()
    with make_env(**env_kwargs(task)) as env:
        run_tasks(env, build_agent(spec.agent), task.items, seed=SEED, max_steps=task.max_steps,
                  callbacks=[direct_log])

    modes, log = ModeSteps(), StepLog()
    sim = VoxelMinecraftSim(seed=SEED, num_empty_frames=0, command_ticks=False,
                            **env_kwargs(task))
    result = S.run_item_tasks(sim, build_agent(spec.agent), S.catalog_subtasks(task.items),
                              seed=SEED, max_steps=task.max_steps, callbacks=[modes, log])
    facade = {**sequential_record(task, result), **modes.record(task.labels)}

    assert direct["success_rate"] == 100.0 and direct["steps"] < task.max_steps  # all three
    assert facade == direct
    assert len(log.rows) == len(direct_log.rows) == direct["steps"]
    assert log.rows == direct_log.rows  # pose, inventory, mode and action of every step
    assert sim.callbacks == []  # the tasks' callback is removed after the episode


def test_the_facade_presents_minestudios_keys_and_hooks(water_log_water):
    task, _ = water_log_water
    calls = []

    class Spy(S.SimCallback):
        def before_reset(self, sim, reset_flag):
            calls.append("before_reset")
            return reset_flag

        def after_reset(self, sim, obs, info):
            calls.append("after_reset")
            return obs, info

        def before_step(self, sim, action):
            calls.append("before_step")
            return action

        def after_step(self, sim, obs, reward, terminated, truncated, info):
            calls.append("after_step")
            info["mark"] = len(calls)
            return obs, reward, terminated, truncated, info

    sim = VoxelMinecraftSim(seed=SEED, callbacks=[Spy()], **env_kwargs(task, (24, 32)))
    obs, info = sim.reset()
    assert set(obs) == {"image"} and obs["image"].shape == (24, 32, 3)
    assert set(info["player_pos"]) == {"x", "y", "z", "pitch", "yaw"}
    assert len(info["inventory"]) == 36 and info["inventory"][0] == {"type": "none", "quantity": 0}
    sim.env.execute_cmd("/give @p minecraft:oak_log 3")
    sim.env.execute_cmd("/give @p minecraft:bucket 1")
    action = sim.noop_action() | {"hotbar.2": 1, "forward": 1}
    obs, _, _, _, info = sim.step(action)
    assert calls == ["before_reset", "after_reset", "before_step", "after_step"]
    assert info["inventory"][0] == {"type": "oak_log", "quantity": 3}
    assert info["inventory"][1] == {"type": "bucket", "quantity": 1}
    assert info["equipped_items"]["mainhand"]["type"] == "bucket"  # hotbar.2 holds slot 1
    assert info["mark"] == 4
    sim.env.execute_cmd("/clear @p minecraft:oak_log")
    _, _, _, _, info = sim.step(sim.noop_action() | {"hotbar.1": 1})  # now an empty slot
    assert info["inventory"][0]["type"] == "none"
    assert info["equipped_items"]["mainhand"]["type"] == "air"
    assert info["mark"] == 6  # MineStudio keeps info keys from step to step until replaced
    with pytest.raises(ValueError, match="commands are /give"):
        sim.env.execute_cmd("/kill @e")
    with pytest.raises(ValueError, match="unknown action key 'equip'"):
        sim.step({"equip": 1})
    sim.close()


def test_player_pos_becomes_the_pose_with_the_yaw_wrapped():
    pose = S.player_pose({"x": 1.5, "y": 64.0, "z": -3.25, "pitch": 30.0, "yaw": 450.0})
    assert pose.tolist() == [1.5, 64.0, -3.25, 90.0, 30.0]
    assert S.player_pose({"x": 0, "y": 0, "z": 0, "pitch": 0, "yaw": -180.0})[3] == -180.0
    assert S.player_pose({"x": 0, "y": 0, "z": 0, "pitch": 0, "yaw": 180.0})[3] == -180.0
    odd = -179.99999999999997
    assert S.player_pose({"x": 0, "y": 0, "z": 0, "pitch": 0, "yaw": odd})[3] == odd  # kept


def test_minecraft_item_types_count_as_the_packages_items():
    names = S.item_names()
    inventory = {0: {"type": "birch_log", "quantity": 5}, 1: {"type": "oak_log", "quantity": 2},
                 2: {"type": "water_bucket", "quantity": 1}, 3: {"type": "none", "quantity": 0},
                 4: {"type": "diamond_pickaxe", "quantity": 1},
                 5: {"type": "black_wool", "quantity": 4}}
    counts = S.inventory_counts(inventory, names)
    assert counts[names.items.index("log")] == 7
    assert counts[names.items.index("water_bucket")] == 1
    assert counts[names.items.index("wool")] == 4
    assert counts.sum() == 12  # the pickaxe is no item of the package
    assert S.hotbar_items(inventory, names)[:5] == [names.items.index("log")] * 2 + [
        names.items.index("water_bucket"), None, None]
    assert names.to_minecraft("sword") == "diamond_sword" and names.to_minecraft("dirt") == "dirt"


def test_the_release_aba_tasks_are_data():
    tasks = S.aba_tasks()
    assert set(tasks) == {"water-log-water", "beef-log-beef", "wool-log-wool"}
    water = tasks["water-log-water"]
    assert (water.biome, water.max_steps, water.items) == ("plains", 12000,
                                                           ("water_bucket", "log", "water_bucket"))
    assert S.aba_subtasks(water) == [S.SubTask("water_bucket", "bucket"), S.SubTask("log", None),
                                     S.SubTask("water_bucket", "bucket")]
    commands = tasks["beef-log-beef"].summon_commands(np.random.default_rng(0))
    assert len(commands) == 10 and all(c.startswith("/summon minecraft:cow ~") for c in commands)
    offsets = np.array([[float(w[1:]) for w in c.split()[2:]] for c in commands])
    assert np.all(offsets >= [-20, 5, -20]) and np.all(offsets <= [20, 10, 20])


def test_a_missing_install_is_one_line_naming_what_to_install(monkeypatch, tmp_path):
    monkeypatch.setenv("MINESTUDIO_DIR", str(tmp_path))
    monkeypatch.setattr(S.importlib.util, "find_spec", lambda name: None)
    monkeypatch.setattr(S.shutil, "which", lambda name: None)
    line = S.minecraft_unavailable()
    assert line.startswith("--world minecraft needs MineStudio, Java 8 and the Minecraft engine: "
                           "pip install minestudio")
    assert "\n" not in line and line.endswith("missing here: MineStudio, Java, the engine")
    with pytest.raises(RuntimeError, match="needs MineStudio"):
        S.make_minecraft_sim(S.aba_tasks()["water-log-water"], 42)
    assert list(tmp_path.iterdir()) == []  # nothing made while checking

    jar = tmp_path / S.ENGINE_JAR
    jar.parent.mkdir(parents=True)
    jar.write_bytes(b"")
    monkeypatch.setattr(S.shutil, "which", lambda name: "/usr/bin/java")
    monkeypatch.setattr(S, "java_version", lambda java: "1.8.0_392")
    assert S.missing_requirements() == ["MineStudio"]
    monkeypatch.setattr(S, "java_version", lambda java: "17.0.2")
    assert S.missing_requirements() == ["MineStudio", "Java 8 (/usr/bin/java is Java 17.0.2)"]


def test_the_java_version_is_read_from_what_java_prints(tmp_path):
    java = tmp_path / "java"
    java.write_text('#!/bin/sh\necho \'openjdk version "1.8.0_392"\' >&2\n')
    java.chmod(0o755)
    assert S.java_version(str(java)) == "1.8.0_392"
    assert S.java_version(str(tmp_path / "no-java")) is None


def test_the_minecraft_episode_of_eval_runs_the_release_task_on_the_facade(water_log_water):
    from mrsteve.eval.sequential import MinecraftRun, minecraft_episode

    task, spec = water_log_water
    minecraft = dataclasses.replace(spec, task=MinecraftRun.of_run(spec.task))
    assert minecraft.digest != spec.digest  # a Minecraft record never resumes a voxel one
    made = []

    def make_sim(setup, seed):
        made.append((setup.release, seed))
        return VoxelMinecraftSim(seed=seed, num_empty_frames=0, command_ticks=False,
                                 **env_kwargs(task))

    record = minecraft_episode(minecraft, make_sim)
    assert made == [("log_water_bucket_aba_randinit", SEED)]
    assert record == sequential_episode(spec)  # the release's bucket is the package's tool


def test_world_minecraft_stops_before_any_work_without_minestudio(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from mrsteve.cli import app

    monkeypatch.setattr(S, "minecraft_unavailable", lambda: S.INSTALL + "; missing here: Java")
    out = tmp_path / "run"
    result = CliRunner().invoke(app, ["eval", "aba-sparse", "--task", "water-log-water",
                                      "--world", "minecraft", "--episodes", "1", "--out", str(out)])
    assert result.exit_code == 2
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1 and "--world minecraft needs MineStudio, Java 8 and the Minecraft " \
        "engine: pip install minestudio" in lines[0]
    assert not out.exists()


def test_world_minecraft_refuses_stand_ins_and_tasks_it_cannot_set_up(monkeypatch):
    from mrsteve.eval.sequential import SequentialConfig

    monkeypatch.setattr(S, "minecraft_unavailable", lambda: None)
    with pytest.raises(ValueError, match="renders no depth or semantic frame: replace --encoder "
                                         "semantic, --navigator depth"):
        SequentialConfig(task="water-log-water", world="minecraft", parts="stand-in")
    with pytest.raises(ValueError, match="unknown world 'nether'"):
        SequentialConfig(world="nether")


def test_world_minecraft_names_the_tasks_the_release_sets_up(monkeypatch):
    from mrsteve.eval.sequential import ABA_SPARSE, SequentialConfig

    monkeypatch.setattr(S, "minecraft_unavailable", lambda: None)
    parts = {"encoder": "pixels", "navigator": "learned", "instruction_policy": "learned"}
    with pytest.raises(ValueError, match="unknown Minecraft task 'milk-log-milk'; known: "
                                         "water-log-water, beef-log-beef, wool-log-wool"):
        SequentialConfig(task="milk-log-milk", world="minecraft", **parts)
    config = SequentialConfig(task="all", world="minecraft", **parts)
    groups = ABA_SPARSE.groups(config)
    assert [g.spec.task.name for g in groups] == ["water-log-water", "beef-log-beef",
                                                  "wool-log-wool"]
    assert all(g.spec.task.simulator == "minecraft" for g in groups)
    assert {g.spec.task.world for g in groups} == {"plains_unbounded"}  # random plains


def test_the_simulator_side_needs_neither_torch_nor_minestudio():
    import subprocess
    import sys

    code = ("import sys, mrsteve.minecraft.sim, mrsteve.minecraft.facade, "
            "mrsteve.minecraft.actions; "
            "print(sorted(m for m in ('torch', 'minestudio', 'cv2') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_tools_are_held_and_the_agents_equip_reaches_the_world(water_log_water):
    task, _ = water_log_water
    names = S.item_names()
    sim = VoxelMinecraftSim(seed=SEED, num_empty_frames=0, **env_kwargs(task, (24, 32)))
    tracker = S.ItemTasksCallback(
        [S.SubTask("log", "shears"), S.SubTask("dirt", None), S.SubTask("sand", "shears")], names)
    env = S.MinecraftEnv(sim, tracker)
    obs, info = env.reset(seed=SEED)
    assert info["task"].item == "log" and info["camera"] == Camera(24, 32, 70.0)
    world = sim.voxel.unwrapped.world
    shears, dirt = names.items.index("shears"), names.items.index("dirt")
    assert obs["inventory"][shears] == 0  # the step's observation is the one before the gift
    assert world.inventory.held_item is None
    env.step({})  # the tool is selected before the first step acts
    assert world.inventory.held_item == "shears"
    sim.env.execute_cmd("/give @p minecraft:dirt 2")
    env.step({"equip": dirt + 1})  # the agent's equip: the hotbar key of dirt's slot
    assert world.inventory.held_item == "dirt"
    env.step({"equip": names.items.index("bucket") + 1})  # absent: an empty hand
    assert world.inventory.held_item is None
    sim.env.execute_cmd("/give @p minecraft:birch_log 1")
    _, _, _, _, info = env.step({})  # log succeeds; dirt is a bare-hand task
    assert info["task_end"].success and info["task"].item == "dirt"
    _, _, _, _, info = env.step({})
    assert world.inventory.held_item is None and "task_end" not in info and "task" not in info
    sim.env.execute_cmd("/give @p minecraft:dirt 1")
    _, _, _, _, info = env.step({})  # dirt succeeds; sand starts with shears given
    assert info["task"].item == "sand" and world.inventory.counts[shears] == 2
    env.step({"equip": dirt + 1})  # the agent's own selection wins over the pending one
    assert world.inventory.held_item == "dirt"
    assert [t.item for t in tracker.result.tasks] == ["log", "dirt", "sand"]
    env.close()


def test_a_reset_is_hard_unless_a_callback_says_no_then_runs_minestudios_empty_frames(
        water_log_water):
    task, _ = water_log_water

    class Fast(S.SimCallback):
        hard = True

        def before_reset(self, sim, reset_flag):
            return self.hard

    bare = VoxelMinecraftSim(seed=SEED, num_empty_frames=0, **env_kwargs(task, (24, 32)))
    bare.reset()
    start = bare.voxel.unwrapped.world.t  # the task's own no-op steps
    fast = Fast()
    sim = VoxelMinecraftSim(seed=SEED, callbacks=[fast], command_ticks=False,
                            **env_kwargs(task, (24, 32)))
    assert sim.num_empty_frames == 20  # MineStudio's default
    sim.reset()
    world = sim.voxel.unwrapped.world
    assert world.t == start + 20, "twenty no-op steps after the hard reset"
    sim.env.execute_cmd("/give @p minecraft:oak_log 2")
    fast.hard = False
    sim.reset()
    assert world is sim.voxel.unwrapped.world and world.t == start + 40, (
        "a fast reset: the world goes on")
    assert sim.info["inventory"][0] == {"type": "oak_log", "quantity": 2}
    fast.hard = True
    sim.reset()
    assert sim.voxel.unwrapped.world.t == start + 20
    assert sim.info["inventory"][0]["type"] == "none"


def test_info_has_minerls_statistics_location_and_a_resized_image(water_log_water):
    task, _ = water_log_water
    sim = VoxelMinecraftSim(seed=SEED, num_empty_frames=0, image_size=(64, 36),
                            **env_kwargs(task, (24, 32)))
    obs, info = sim.reset()
    assert obs["image"].shape == (36, 64, 3), "MineStudio's obs_size is (width, height)"
    assert {"mine_block", "craft_item", "pickup", "use_item", "break_item", "damage_dealt",
            "kill_entity", "custom"} <= set(info)
    position = info["player_pos"]
    assert info["location_stats"] == {"xpos": position["x"], "ypos": position["y"],
                                      "zpos": position["z"], "pitch": position["pitch"],
                                      "yaw": position["yaw"]}
    from mrsteve.world.interaction import WorldEvent

    counted = sim._step_info({"events": (WorldEvent("collected", "log", 2),
                                         WorldEvent("killed", "cow"),
                                         WorldEvent("collected", "log", 1))})
    assert counted["pickup"] == {"oak_log": 3} and counted["kill_entity"] == {"cow": 1}
    _, _, _, _, info = sim.step(sim.noop_action())
    assert info["pickup"]["oak_log"] == 3, "counted since the hard reset"
    sim.reset()
    assert sim.info["pickup"] == {}, "a hard reset starts the counts again"


def test_a_command_takes_a_game_tick_as_minerls_chat_action_does(water_log_water):
    task, _ = water_log_water
    for ticks, later in ((True, 1), (False, 0)):
        sim = VoxelMinecraftSim(seed=SEED, num_empty_frames=0, command_ticks=ticks,
                                **env_kwargs(task, (24, 32)))
        sim.reset()
        world = sim.voxel.unwrapped.world
        before = world.t
        obs, _, done, _ = sim.env.execute_cmd("/give @p minecraft:oak_log 3")
        assert world.t == before + later
        assert obs["inventory"][0] == {"type": "oak_log", "quantity": 3} and not done


def test_tp_summon_and_the_commands_the_world_has_nothing_for(water_log_water):
    task, _ = water_log_water
    sim = VoxelMinecraftSim(seed=SEED, num_empty_frames=0, command_ticks=False,
                            **env_kwargs(task, (24, 32)))
    _, info = sim.reset()
    x, z = info["player_pos"]["x"], info["player_pos"]["z"]
    sim.env.execute_cmd("/tp @p ~3 ~ ~-2")
    world = sim.voxel.unwrapped.world
    assert world.frame_pose[0] == pytest.approx(x + 3, abs=1e-4)
    assert world.frame_pose[2] == pytest.approx(z - 2, abs=1e-4)
    sim.env.execute_cmd("/tp @p ~ ~ ~ 90 10")
    assert world.frame_pose[3:] == pytest.approx((90.0, 10.0))
    mobs = len(world.mob_boxes())
    sim.env.execute_cmd("/summon minecraft:sheep ~2 ~ ~")
    assert len(world.mob_boxes()) == mobs + 1
    for ignored in ("/time set day", "/weather clear", "/gamerule doMobSpawning false"):
        sim.env.execute_cmd(ignored)
    for bad, said in (("/summon minecraft:dragon", "dragon"), ("/tp @p 1 2", "/tp takes")):
        with pytest.raises(ValueError, match=said):
            sim.env.execute_cmd(bad)
