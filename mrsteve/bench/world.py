"""``mrsteve bench world``: speed, reset time, start-up time and memory of the embedded world.

Everything runs on one core: the numba kernels are single-threaded, and the command line starts
numba, OpenMP and BLAS with one thread (inherited by the subprocesses).
Measured, for each world recipe:

- environment steps per second at each observation size, under a random policy (random buttons and
  hotbar choices, camera turns of up to 10 degrees per axis, VPT's per-step bound, with the pitch
  drawn back towards the horizon so the view stays on the world as an agent's does); every step
  renders RGB, depth and semantics;
- renderer frames per second alone, from the spawn point, turning through all headings with the
  pitch between -15 and 35 degrees, with the grid's column heights kept by the caller;
- reset time (world generation, set-up and the first observation), median and maximum over seeds;
- memory per environment, in a new process after a warm-up environment: the Python and numpy
  allocations that building and resetting environments leave alive, traced with ``tracemalloc``
  (numpy reports its buffers to it), and the growth of the resident set size (RSS) beside it;

and, once per run: the time a new process takes to render its first frame (the renderer alone, and
an environment's first observation, world generation included), and the ``crafter`` package
stepped under a random policy in the same run as a peer; each is set against the package's
speed targets, :data:`TARGETS`.
"""

from __future__ import annotations

import itertools
import json
import math
import os
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import NamedTuple

import gymnasium as gym
import numpy as np

from mrsteve.bench.machine import describe_machine, machine_info
from mrsteve.env import make_env
from mrsteve.env.voxel_env import DEFAULT_OBS_SIZE
from mrsteve.naming import check_name, choose
from mrsteve.world.raycast import ColumnHeights
from mrsteve.world.recipes import WORLD_RECIPES
from mrsteve.world.render import Renderer

TARGETS = {
    "steps_per_s_64x64": 1000.0,
    "steps_per_s_160x256": 120.0,
    "render_fps_64x64": 1300.0,
    "render_fps_160x256": 130.0,
    "reset_s_200x200": 1.0,
    "memory_mb": 200.0,
    "first_frame_s": 1.0,
    "crafter_ratio_64x64": 1.0,
    "chunk_ms": 5.0,
    "unbounded_walk_ratio": 0.8,
}
"""The package's speed targets for the world on one core (the renderer's are the reference level
of a numba ray caster)."""

CAMERA_STEP_DEGREES = 10.0
"""Largest random camera turn per step and axis (VPT's camera bound)."""


@dataclass(frozen=True)
class WorldBenchConfig:
    """What ``mrsteve bench world`` measures."""

    worlds: tuple[str, ...] = tuple(WORLD_RECIPES)
    """World recipes to measure (default: all of :data:`~mrsteve.world.recipes.WORLD_RECIPES`)."""
    sizes: tuple[tuple[int, int], ...] = ((64, 64), DEFAULT_OBS_SIZE, (160, 256))
    """Observation sizes ``(height, width)``: 64 x 64, the environment's default, MineDojo's."""
    steps: int = 500
    """Timed environment steps, and timed renderer frames, per world and size."""
    warmup_steps: int = 10
    """Untimed steps before each timing."""
    reset_repeats: int = 3
    """Resets timed per world (seeds ``seed``, ``seed + 1``, ...)."""
    memory_envs: int = 2
    """Environments built and reset together to measure memory per environment."""
    renderer_only: bool = False
    """Measure the renderer alone: no environment steps, resets, memory or peer."""
    peer: bool = True
    """Also step the ``crafter`` package (if installed) at 64 x 64 as a peer."""
    first_frame: bool = True
    """Time a new process up to its first frame (two short subprocesses)."""
    seed: int = 0
    """Seed of the worlds and of the random policy."""
    walk_steps: int = 3000
    """Timed steps of the walker (:class:`Walker`) on each unbounded world and on the 200 x 200
    map beside it, in the same run (0: skip)."""
    memory_walk_steps: int = 0
    """Steps of the long walk that samples the resident memory on each unbounded world
    (the world alone, no rendering; 0: skip)."""

    def __post_init__(self) -> None:
        if not self.worlds:
            raise ValueError(f"give at least one world of {', '.join(WORLD_RECIPES)}")
        for name in self.worlds:
            check_name(name, WORLD_RECIPES, "world")
        if not self.sizes:
            raise ValueError("give at least one observation size: HxW (like 64x64) or "
                             "'default'")
        for height, width in self.sizes:
            if not (1 <= height <= 4096 and 1 <= width <= 4096):
                raise ValueError(f"observation size must be within 1..4096 on each side, got "
                                 f"{height} x {width}")
        for name in ("steps", "reset_repeats", "memory_envs"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        for name in ("warmup_steps", "walk_steps", "memory_walk_steps"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be non-negative, got {getattr(self, name)}")

    @property
    def unbounded(self) -> list[str]:
        """The unbounded worlds measured."""
        return [name for name in self.worlds if WORLD_RECIPES[name].size is None]


def size_key(size: tuple[int, int]) -> str:
    """``"HxW"``, the key of a size in the results."""
    return f"{size[0]}x{size[1]}"


def run_world_bench(
    config: WorldBenchConfig, on_job: Callable[[str], None] | None = None
) -> dict:
    """Run every measurement of ``config``; returns a JSON-ready dict (see :func:`format_report`).

    ``on_job(description)`` is called after each measurement (progress bars hook in here).
    """
    done = on_job or (lambda _: None)
    load_before = _load_average()
    worlds = []
    for name in config.worlds:
        size = WORLD_RECIPES[name].size
        row: dict = {"world": name, "size": None if size is None else list(size)}
        row["render_fps"], row["render_fps_cpu"] = {}, {}
        for size in config.sizes:
            rates = renderer_fps(name, size, config)
            row["render_fps"][size_key(size)], row["render_fps_cpu"][size_key(size)] = rates
            done(f"{name} renderer {size_key(size)}")
        if not config.renderer_only:
            row["steps_per_s"], row["steps_per_cpu_s"] = {}, {}
            for size in config.sizes:
                rates = env_steps_per_s(name, size, config)
                row["steps_per_s"][size_key(size)], row["steps_per_cpu_s"][size_key(size)] = rates
                done(f"{name} steps {size_key(size)}")
            resets = reset_seconds(name, config)
            row["reset_s"] = statistics.median(resets)
            row["reset_max_s"] = max(resets)
            done(f"{name} reset")
            row.update(memory_per_env(name, config))
            done(f"{name} memory")
        worlds.append(row)

    report: dict = {
        "machine": machine_info(),
        "config": asdict(config),
        "targets": TARGETS,
        "worlds": worlds,
    }
    if not config.renderer_only:
        report["unbounded"] = [unbounded_world(name, config, done) for name in config.unbounded]
    if config.first_frame:
        report["first_frame_s"] = first_frame_seconds(config.worlds[0])
        done("first frame in a new process")
    if config.peer and not config.renderer_only:
        report["crafter"] = crafter_peer(config)
        done("crafter peer")
    report["machine"]["load_average"] = {"before": load_before, "after": _load_average()}
    report["summary"] = summarise(report, config)
    return report


def _load_average() -> float | None:
    """One-minute load average (``None`` where the platform has none)."""
    try:
        return os.getloadavg()[0]
    except OSError:
        return None


def count_jobs(config: WorldBenchConfig) -> int:
    """How many times :func:`run_world_bench` calls ``on_job``."""
    per_world = len(config.sizes) * (1 if config.renderer_only else 2)
    per_world += 0 if config.renderer_only else 2
    per_unbounded = 1 + 2 * bool(config.walk_steps) + bool(config.memory_walk_steps)
    return (len(config.worlds) * per_world + int(config.first_frame)
            + int(config.peer and not config.renderer_only)
            + (0 if config.renderer_only else per_unbounded * len(config.unbounded)))


BOUNDED_PEER = "long_instruction"
"""The 200 x 200 map the unbounded worlds' walking speed is compared with."""


class Walker:
    """Forward, sprinting and jumping along a circle of radius 80 blocks (it fits the 200 x 200
    map), turning a quarter turn when it has not moved for 20 steps: a policy that covers ground,
    so an unbounded world keeps loading chunks."""

    RADIUS = 80.0

    def __init__(self) -> None:
        self._last = None
        self._turn = 0.0

    def action(self, n: int, position: tuple[float, float, float]) -> dict:
        if n % 20 == 0:
            moved = self._last is not None and math.dist(self._last, position) >= 1.0
            self._turn = 0.0 if moved or self._last is None else 90.0
            self._last = position
        yaw = self._turn + math.degrees(0.35 / self.RADIUS)
        self._turn = 0.0
        return {"forward": 1, "sprint": 1, "jump": 1,
                "camera": np.array([0.0, yaw], dtype=np.float32)}


def walk_steps_per_s(world: str, config: WorldBenchConfig) -> dict:
    """Environment steps per second of the :class:`Walker` at the default size, and the blocks
    it covered."""
    env = make_env(world=world, obs_size=DEFAULT_OBS_SIZE)
    env.reset(seed=config.seed)
    state, walker = env.unwrapped, Walker()
    start = np.array(state.world.frame_pose[:3])
    travelled = [0.0]
    last = [start]

    def step(n: int) -> None:
        obs, *_ = env.step(walker.action(n, state.world.position))
        here = obs["pose"][:3]
        travelled[0] += float(np.hypot(*(here - last[0])[[0, 2]]))
        last[0] = here

    for n in range(config.warmup_steps):
        step(n)
    rates = median_rate(step, config.warmup_steps, config.walk_steps)
    env.close()
    return {"steps_per_s": rates.wall, "steps_per_cpu_s": rates.cpu,
            "blocks_walked": travelled[0]}


def chunk_milliseconds(world: str, config: WorldBenchConfig, chunks: int = 100) -> dict:
    """Milliseconds to generate a chunk: ``chunks`` chunks of a new world, row by row as a
    loaded window fills (neighbours' decorations are shared), after one warm-up chunk."""
    layout = WORLD_RECIPES[world].build(np.random.default_rng(config.seed))
    generator = type(layout.terrain.generator)(layout.terrain.generator.seed + 1)
    generator.chunk(-100, -100)
    side = max(1, int(math.sqrt(chunks)))
    times = []
    for a in range(side):
        for b in range(side):
            start = time.perf_counter()
            generator.chunk(a, b)
            times.append((time.perf_counter() - start) * 1e3)
    return {"chunk_ms": statistics.median(times), "chunk_ms_p95": float(np.percentile(times, 95)),
            "chunk_ms_max": max(times)}


def memory_walk(world: str, config: WorldBenchConfig, every: int = 10_000) -> dict:
    """The resident memory over a long walk in ``world`` (the world stepped alone, no rendering):
    the walker's controls, the RSS every ``every`` steps, the distance covered and the chunks the
    world keeps aside."""
    from mrsteve.world.recipes import build_layout
    from mrsteve.world.world import Controls, World

    rng = np.random.default_rng(config.seed)
    state, walker = World(build_layout(world, rng), rng), Walker()
    samples, travelled = [], 0.0
    last = np.array(state.frame_pose[:3])
    for n in range(config.memory_walk_steps):
        action = walker.action(n, state.position)
        state.step(Controls(forward=True, sprint=True, jump=True,
                            camera_yaw=float(action["camera"][1])))
        here = np.array(state.frame_pose[:3])
        travelled += float(np.hypot(*(here - last)[[0, 2]]))
        last = here
        if n % every == 0 or n == config.memory_walk_steps - 1:
            samples.append([n + 1, resident_mb()])
    store = state.window.store
    return {"steps": config.memory_walk_steps, "blocks_walked": travelled, "rss_mb": samples,
            "chunks_visited": len(store.visited), "chunks_kept": len(store.blocks),
            "mobs_kept": sum(len(m) for m in store.mobs.values())}


def unbounded_world(world: str, config: WorldBenchConfig, done: Callable[[str], None]) -> dict:
    """Chunk generation time, the walker's speed against the 200 x 200 map's in this run, and
    (when asked) the resident memory over a long walk."""
    row: dict = {"world": world, **chunk_milliseconds(world, config)}
    done(f"{world} chunks")
    if config.walk_steps:
        row["walk"] = walk_steps_per_s(world, config)
        done(f"{world} walk")
        row["walk_bounded"] = {"world": BOUNDED_PEER, **walk_steps_per_s(BOUNDED_PEER, config)}
        done(f"{BOUNDED_PEER} walk")
        row["walk_ratio"] = row["walk"]["steps_per_s"] / row["walk_bounded"]["steps_per_s"]
        row["walk_ratio_cpu"] = (row["walk"]["steps_per_cpu_s"]
                                 / row["walk_bounded"]["steps_per_cpu_s"])
    if config.memory_walk_steps:
        row["memory_walk"] = memory_walk(world, config)
        done(f"{world} memory walk")
    return row



def env_steps_per_s(world: str, size: tuple[int, int], config: WorldBenchConfig) -> Rates:
    """Environment steps per second under the random policy (module docstring); the actions are
    drawn before the clock starts."""
    env = make_env(world=world, obs_size=size)
    env.reset(seed=config.seed)
    state = env.unwrapped
    policy = RandomPolicy(env.action_space, np.random.default_rng(config.seed),
                          config.warmup_steps + config.steps)

    def step(n: int) -> None:
        env.step(policy.action(n, state.world.pitch))

    for n in range(config.warmup_steps):
        step(n)
    rate = median_rate(step, config.warmup_steps, config.steps)
    env.close()
    return rate


class Rates(NamedTuple):
    """Calls per second by the wall clock and per second of this process's CPU time (the same on
    an idle machine; on a shared one the CPU rate is the single core's speed)."""

    wall: float
    cpu: float


def median_rate(run: Callable[[int], None], first: int, count: int, chunks: int = 5) -> Rates:
    """Calls per second of ``run(n)`` for ``n`` in ``first .. first + count - 1``, timed in
    ``chunks`` consecutive chunks: the median chunk's rates, robust to bursts of load from other
    processes on a shared machine."""
    bounds = np.linspace(first, first + count, min(chunks, count) + 1).round().astype(int)
    wall, cpu = [], []
    for low, high in itertools.pairwise(bounds.tolist()):
        start_wall, start_cpu = time.perf_counter(), time.process_time()
        for n in range(low, high):
            run(n)
        wall.append((high - low) / (time.perf_counter() - start_wall))
        cpu.append((high - low) / max(time.process_time() - start_cpu, 1e-9))
    return Rates(float(np.median(wall)), float(np.median(cpu)))


class RandomPolicy:
    """``steps`` random actions: buttons and hotbar choice uniform, camera turns uniform up to
    :data:`CAMERA_STEP_DEGREES` per axis, the pitch pulled back towards the horizon (a random
    walk would end up staring at the sky or the ground)."""

    def __init__(self, action_space: gym.spaces.Dict, rng: np.random.Generator, steps: int) -> None:
        names = [name for name in action_space.spaces if name not in ("camera", "equip")]
        pressed = rng.integers(0, 2, size=(steps, len(names)))
        equip = rng.integers(0, action_space["equip"].n, size=steps)
        self._buttons = [
            {**{name: int(p) for name, p in zip(names, row)}, "equip": int(e)}
            for row, e in zip(pressed, equip)
        ]
        self._turns = rng.uniform(-CAMERA_STEP_DEGREES, CAMERA_STEP_DEGREES, size=(steps, 2))

    def action(self, n: int, pitch: float) -> dict:
        """Action ``n`` for a player looking at ``pitch`` degrees."""
        pitch_turn, yaw_turn = self._turns[n]
        pitch_turn = min(max(pitch_turn - 0.1 * (pitch - 10.0), -CAMERA_STEP_DEGREES),
                         CAMERA_STEP_DEGREES)
        return {**self._buttons[n], "camera": np.array([pitch_turn, yaw_turn], dtype=np.float32)}


def renderer_fps(world: str, size: tuple[int, int], config: WorldBenchConfig) -> Rates:
    """Frames per second of the renderer alone over the world as reset (module docstring)."""
    env = make_env(world=world, obs_size=DEFAULT_OBS_SIZE)
    env.reset(seed=config.seed)
    state = env.unwrapped.world
    blocks, eye, boxes = state.blocks, state.eye, state.mob_boxes().copy()
    env.close()
    heights = ColumnHeights(blocks)
    renderer = Renderer(*size)
    frames = config.steps
    yaws = np.linspace(0.0, 360.0, frames, endpoint=False)
    pitches = 10.0 + 25.0 * np.sin(np.linspace(0.0, 6.0 * math.pi, frames))

    def render(f: int) -> None:
        renderer.render(blocks, eye, yaws[f], pitches[f], boxes, time=f, heights=heights)

    for f in range(min(config.warmup_steps, frames)):
        render(f)
    return median_rate(render, 0, frames)


def reset_seconds(world: str, config: WorldBenchConfig) -> list[float]:
    """Seconds per ``reset`` (generation, set-up, first observation) at the default size."""
    env = make_env(world=world, obs_size=DEFAULT_OBS_SIZE)
    times = []
    for repeat in range(config.reset_repeats):
        start = time.perf_counter()
        env.reset(seed=config.seed + repeat)
        times.append(time.perf_counter() - start)
    env.close()
    return times


def memory_per_env(world: str, config: WorldBenchConfig) -> dict[str, float | None]:
    """Memory per environment at the default size, measured in a new process after one warm-up
    environment (imports, compiled kernels, content): ``memory_mb``, what ``tracemalloc`` sees left
    alive by building and resetting ``memory_envs`` environments (Python objects and numpy
    buffers); ``memory_rss_mb``, the growth of the resident set for as many more (``None`` off
    Linux). Both divided by ``memory_envs``."""
    script = _MEMORY_SCRIPT.format(world=world, n=config.memory_envs, seed=config.seed)
    return json.loads(_run_python(script, f"memory of {world}"))


_MEMORY_SCRIPT = """
import gc, json, tracemalloc
from mrsteve.bench.world import resident_mb
from mrsteve.env import make_env
from mrsteve.env.voxel_env import DEFAULT_OBS_SIZE

def build(count):
    envs = [make_env(world={world!r}, obs_size=DEFAULT_OBS_SIZE) for _ in range(count)]
    for i, env in enumerate(envs):
        env.reset(seed={seed} + i)
    gc.collect()
    return envs

warm = build(1)
before = resident_mb()
kept = build({n})
rss = None if before is None else (resident_mb() - before) / {n}
tracemalloc.start()
traced = build({n})
memory = tracemalloc.get_traced_memory()[0] / {n}
print(json.dumps({{"memory_mb": memory / 2**20, "memory_rss_mb": rss}}))
"""


def resident_mb() -> float | None:
    """Resident set size of this process in MiB (Linux ``/proc``; ``None`` elsewhere)."""
    try:
        with open("/proc/self/statm") as statm:
            pages = int(statm.read().split()[1])
    except OSError:
        return None
    return pages * os.sysconf("SC_PAGE_SIZE") / 2**20


_RENDERER_FIRST_FRAME = """
import time
start = time.perf_counter()
import numpy as np
from mrsteve.world.render import Renderer
blocks = np.zeros((64, 32, 64), dtype=np.uint8)
blocks[:, :4, :] = 2
Renderer(64, 64).render(blocks, (32.0, 5.6, 32.0), 0.0, 10.0)
print(time.perf_counter() - start)
"""

_ENV_FIRST_FRAME = """
import time
start = time.perf_counter()
from mrsteve.env import make_env
env = make_env(world={world!r}, obs_size=(64, 64))
env.reset(seed=0)
print(time.perf_counter() - start)
"""


def first_frame_seconds(world: str) -> dict[str, float]:
    """A new Python process's time to its first frame, with the compiled kernels already cached:
    ``renderer`` (import and one 64 x 64 frame), ``environment`` (import, make, generate ``world``
    and reset); ``*_process`` adds the interpreter's own start-up (the wall time of the process)."""
    result = {}
    for name, script in (("renderer", _RENDERER_FIRST_FRAME),
                         ("environment", _ENV_FIRST_FRAME.format(world=world))):
        start = time.perf_counter()
        result[name] = float(_run_python(script, f"first frame ({name})"))
        result[f"{name}_process"] = time.perf_counter() - start
    return result


def _run_python(script: str, what: str) -> str:
    """The last line ``script`` prints, run by this Python in a new process."""
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{what}: the subprocess failed:\n{done.stderr}")
    return done.stdout.strip().splitlines()[-1]


def crafter_peer(config: WorldBenchConfig) -> dict:
    """Steps per second (wall clock and CPU time) of ``crafter.Env()`` (64 x 64 RGB, its default)
    under uniformly random actions, resets excluded; ``{"error": ...}`` when crafter is missing."""
    try:
        import crafter
    except ImportError:
        return {"error": "crafter is not installed (pip install crafter)"}
    env = crafter.Env(size=(64, 64), seed=config.seed)
    env.reset()
    rng = np.random.default_rng(config.seed)
    actions = rng.integers(0, env.action_space.n, size=config.steps + config.warmup_steps)
    wall = cpu = 0.0
    for n, action in enumerate(actions):
        start_wall, start_cpu = time.perf_counter(), time.process_time()
        _, _, done, _ = env.step(int(action))
        if n >= config.warmup_steps:
            wall += time.perf_counter() - start_wall
            cpu += time.process_time() - start_cpu
        if done:
            env.reset()
    return {
        "steps_per_s_64x64": config.steps / wall,
        "steps_per_cpu_s_64x64": config.steps / max(cpu, 1e-9),
        "version": getattr(crafter, "__version__", None),
    }


def summarise(report: dict, config: WorldBenchConfig) -> dict:
    """The slowest world per measurement and whether each target is met (``None``: not measured),
    by the wall clock (``targets_met``) and per CPU second (``targets_met_cpu``: the single core's
    speed, which is what the wall clock shows on an idle machine)."""
    worlds = report["worlds"]
    keys = [size_key(size) for size in config.sizes]

    def slowest(metric: str) -> dict[str, float | None]:
        values = {key: [row[metric][key] for row in worlds if key in row.get(metric, {})]
                  for key in keys}
        return {key: min(v) if v else None for key, v in values.items()}

    def at_least(value: float | None, target: str) -> bool | None:
        return None if value is None else value >= TARGETS[target]

    summary: dict = {"min_render_fps": slowest("render_fps"),
                     "min_render_fps_cpu": slowest("render_fps_cpu")}
    if not config.renderer_only:
        summary["min_steps_per_s"] = slowest("steps_per_s")
        summary["min_steps_per_cpu_s"] = slowest("steps_per_cpu_s")
        big = [row["reset_max_s"] for row in worlds
               if row["size"] is not None and row["size"][0] * row["size"][1] >= 200 * 200]
        summary["max_reset_s_200x200"] = max(big) if big else None
        summary["max_memory_mb"] = max(  # the larger of the traced and the resident growth
            max(row["memory_mb"], row["memory_rss_mb"] or 0.0) for row in worlds
        )
    crafter = report.get("crafter", {})
    for suffix, steps_key, peer_key in (
        ("", "min_steps_per_s", "steps_per_s_64x64"),
        ("_cpu", "min_steps_per_cpu_s", "steps_per_cpu_s_64x64"),
    ):
        met: dict = {}
        for key in ("64x64", "160x256"):
            met[f"render_fps_{key}"] = at_least(
                summary[f"min_render_fps{suffix}"].get(key), f"render_fps_{key}")
        if not config.renderer_only:
            steps = summary[steps_key]
            for key in ("64x64", "160x256"):
                met[f"steps_per_s_{key}"] = at_least(steps.get(key), f"steps_per_s_{key}")
            peer, ours = crafter.get(peer_key), steps.get("64x64")
            ratio = None if peer is None or ours is None else ours / peer
            summary[f"crafter_ratio_64x64{suffix}"] = ratio
            met["crafter_ratio_64x64"] = at_least(ratio, "crafter_ratio_64x64")
            reset = summary["max_reset_s_200x200"]
            met["reset_s_200x200"] = None if reset is None else reset <= TARGETS["reset_s_200x200"]
            met["memory_mb"] = summary["max_memory_mb"] <= TARGETS["memory_mb"]
            unbounded = report.get("unbounded", [])
            if unbounded:
                met["chunk_ms"] = max(r["chunk_ms"] for r in unbounded) < TARGETS["chunk_ms"]
                ratios = [r[f"walk_ratio{suffix}"] for r in unbounded if "walk" in r]
                if ratios:
                    met["unbounded_walk_ratio"] = min(ratios) >= TARGETS["unbounded_walk_ratio"]
        if "first_frame_s" in report:
            met["first_frame_s"] = report["first_frame_s"]["renderer"] <= TARGETS["first_frame_s"]
        summary[f"targets_met{suffix}"] = met
    return summary


def format_report(report: dict) -> str:
    """The results as plain-text tables, each target beside its numbers."""
    config = report["config"]
    keys = [size_key(tuple(size)) for size in config["sizes"]]
    renderer_only = config["renderer_only"]
    machine = report["machine"]
    header = (f"mrsteve bench world: one core of {describe_machine(machine)} (python "
              f"{machine['python']}, numba {machine['numba']}), {config['steps']} timed steps per "
              "world and size")
    lines = [header, ""]
    columns = ["world", "size"] + [f"fps {key}" for key in keys]
    if not renderer_only:
        columns += [f"steps/s {key}" for key in keys] + ["reset s", "memory MB", "(RSS MB)"]
    rows = []
    for row in report["worlds"]:
        cells = [row["world"], "unbounded" if row["size"] is None else "x".join(map(str, row["size"]))]
        cells += [f"{row['render_fps'][key]:.0f}" for key in keys]
        if not renderer_only:
            cells += [f"{row['steps_per_s'][key]:.0f}" for key in keys]
            rss = row["memory_rss_mb"]
            cells += [f"{row['reset_s']:.2f}", f"{row['memory_mb']:.1f}",
                      "-" if rss is None else f"{rss:.1f}"]
        rows.append(cells)
    target = ["target", ""] + [_target(f"render_fps_{key}", ">=") for key in keys]
    if not renderer_only:
        target += [_target(f"steps_per_s_{key}", ">=") for key in keys]
        target += [_target("reset_s_200x200", "<=") + " (200x200)", _target("memory_mb", "<="), ""]
    rows.append(target)
    widths = [max(len(str(r[c])) for r in [columns, *rows]) for c in range(len(columns))]

    def line(cells: list[str]) -> str:
        return "  ".join(f"{cell:<{w}}" if c < 2 else f"{cell:>{w}}"
                         for c, (cell, w) in enumerate(zip(cells, widths)))

    lines.append(line(columns))
    lines += [line(cells) for cells in rows]
    lines.append("")
    lines.append("fps: renderer alone (RGB, depth, semantics); steps/s: environment with a random "
                 "policy; memory: tracemalloc (Python + numpy) per environment, RSS growth beside it")
    load = machine.get("load_average", {})
    if load.get("before") is not None:
        lines.append(f"load average {load['before']:.2f} before, {load['after']:.2f} after, on "
                     f"{machine['cpus']} CPUs (wall-clock rates; the JSON adds per-CPU-second rates)")
    for row in report.get("unbounded", []):
        lines.append(f"{row['world']}: a chunk in {row['chunk_ms']:.2f} ms (median; p95 "
                     f"{row['chunk_ms_p95']:.2f}, max {row['chunk_ms_max']:.2f})  [target < "
                     f"{TARGETS['chunk_ms']:g} ms]")
        if "walk" in row:
            walk, peer = row["walk"], row["walk_bounded"]
            lines.append(
                f"  walking (sprint-jumping on a circle): {walk['steps_per_s']:.0f} steps/s over "
                f"{walk['blocks_walked']:.0f} blocks; {peer['world']} {peer['steps_per_s']:.0f} "
                f"steps/s over {peer['blocks_walked']:.0f} blocks; ratio {row['walk_ratio']:.2f} "
                f"({row['walk_ratio_cpu']:.2f} per CPU second)  [target >= "
                f"{TARGETS['unbounded_walk_ratio']:g}]")
        if "memory_walk" in row:
            mem = row["memory_walk"]
            rss = [mb for _, mb in mem["rss_mb"] if mb is not None]
            span = f"RSS {rss[0]:.0f} -> {rss[-1]:.0f} MB (max {max(rss):.0f})" if rss else "RSS -"
            lines.append(f"  long walk: {mem['steps']} steps, {mem['blocks_walked']:.0f} blocks, "
                         f"{mem['chunks_visited']} chunks visited, {mem['chunks_kept']} kept, "
                         f"{mem['mobs_kept']} mobs kept aside; {span}")
    if "first_frame_s" in report:
        first = report["first_frame_s"]
        lines.append(
            f"first frame in a new process: renderer {first['renderer']:.2f} s "
            f"({first['renderer_process']:.2f} s with interpreter start-up), environment "
            f"{first['environment']:.2f} s ({first['environment_process']:.2f} s)  "
            f"[target renderer < {TARGETS['first_frame_s']:g} s]"
        )
    if "crafter" in report:
        peer = report["crafter"]
        if "error" in peer:
            lines.append(f"crafter peer: {peer['error']}")
        else:
            ratios = [report["summary"].get(f"crafter_ratio_64x64{s}") for s in ("", "_cpu")]
            wall, cpu = ("-" if r is None else f"{r:.2f}" for r in ratios)
            lines.append(
                f"crafter peer (64x64, same run): {peer['steps_per_s_64x64']:.0f} steps/s; "
                f"slowest world / crafter = {wall} ({cpu} per CPU second)  [target >= 1]"
            )
    for key, clock in (("targets_met", "wall clock"), ("targets_met_cpu", "per CPU second")):
        met = report["summary"][key]
        lines.append(f"targets met ({clock}): " + ", ".join(
            f"{name} {'yes' if ok else 'NO'}" for name, ok in met.items() if ok is not None
        ))
    return "\n".join(lines)


def _target(name: str, relation: str) -> str:
    """``">= 1000"`` for a metric with a target, ``""`` for one without."""
    return f"{relation} {TARGETS[name]:g}" if name in TARGETS else ""


def parse_sizes(text: str) -> tuple[tuple[int, int], ...]:
    """``"64x64,default,160x256"`` -> ``((64, 64), DEFAULT_OBS_SIZE, (160, 256))``."""
    sizes = []
    for part in (p.strip() for p in text.split(",") if p.strip()):
        if part == "default":
            sizes.append(tuple(DEFAULT_OBS_SIZE))
            continue
        try:
            height, width = (int(n) for n in part.lower().split("x"))
        except ValueError:
            raise ValueError(f"size {part!r} is not HxW (like 64x64) or 'default'") from None
        sizes.append((height, width))
    return tuple(dict.fromkeys(sizes))


def parse_worlds(text: str) -> tuple[str, ...]:
    """``"all"`` or comma-separated recipe names."""
    return tuple(choose(text, tuple(WORLD_RECIPES), "world"))
