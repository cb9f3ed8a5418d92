"""The paper's query-time experiment (Appendix "Computational Complexity of Query Operation"): every
memory variant built from the same synthetic trajectory, then timed on reads for top-k in
{1, 2, 4, 10, 30} with queries drawn from the stored embeddings.

The trajectory stands in for the paper's 100K-step MineDojo episode (see
:func:`synthetic_trajectory`); its structure is tuned so that the memories form clusters of the
sizes the paper reports (Place about 2,300 places of 43 frames, Place Event about 3,000 events of
30, Event about 580 events of 172), which is what read times depend on.

Also here: peers on the same frames and queries (:func:`measure_peers`: a numpy full scan and
faiss's flat, IVF and HNSW indexes, faiss imported only there), and a long run of a capacity-limited
Place Event Memory (:func:`run_long_run`).
"""

from __future__ import annotations

import math
import os
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from functools import partial
from typing import Any

import numpy as np
from tqdm import tqdm

from mrsteve.bench.machine import describe_machine, machine_info
from mrsteve.memory import MEMORY_VARIANTS, Memory, MemoryVariant
from mrsteve.protocols import QUERY_CANDIDATES_KEPT
from mrsteve.workers import blas_threads


@dataclass(frozen=True)
class BenchedMemory:
    """A memory the benchmark measures: a variant of :data:`~mrsteve.memory.MEMORY_VARIANTS`,
    unlimited, with the paper's hyperparameters but for ``hyperparameters``."""

    variant: MemoryVariant
    title: str
    hyperparameters: tuple[tuple[str, Any], ...] = ()

    def build(self) -> Memory:
        """A new, empty memory of unlimited capacity."""
        return self.variant.build(config=self.variant.config(**dict(self.hyperparameters)))


def _benched_memories() -> dict[str, BenchedMemory]:
    """Every memory variant, then Place Event Memory with its frames in float16 (not in the
    paper: reads move half the bytes) and with int8 codes beside its frames (not in the paper:
    reads decide most frames from a quarter of the bytes)."""
    memories = {name: BenchedMemory(variant, variant.title)
                for name, variant in MEMORY_VARIANTS.items()}
    place_event = MEMORY_VARIANTS["place-event"]
    memories["place-event-fp16"] = BenchedMemory(
        place_event, f"{place_event.title} (float16 frames)", (("frame_precision", "float16"),))
    memories["place-event-codes"] = BenchedMemory(
        place_event, f"{place_event.title} (frame codes)", (("frame_codes", True),))
    return memories


MEMORIES = _benched_memories()
"""Memories benchmarked, by command-line name: the memory variants under their own names,
``place-event-fp16`` and ``place-event-codes``."""


@dataclass(frozen=True)
class PeerRead:
    """A memory's read in the peer table: the :data:`MEMORIES` name of the memory, and whether
    it is read as the mode selector reads (nearest first to where the agent stands,
    ``scores="best"``, ``limit=QUERY_CANDIDATES_KEPT``: every frame above the threshold
    decided and counted, the nearest ones returned in the plain read's order, the exact best
    score; the other frames' scores left uncomputed; faiss computes and returns every score).
    Its recall is that of the same read without the limit, which decides the same frames."""

    memory: str
    label: str
    as_selector: bool = False


PEER_READS = {
    "place-event": PeerRead("place-event", "Place Event Memory"),
    "place-event-fp16": PeerRead("place-event-fp16", "Place Event Memory, float16"),
    "place-event-selector": PeerRead("place-event", "Place Event Memory, as the selector reads",
                                     True),
    "place-event-codes-selector": PeerRead(
        "place-event-codes", "Place Event Memory, frame codes, as the selector reads", True),
}
"""The memory reads the peer table compares with faiss, by row name. Each reads a memory of its
own, so that no read finds the rows another read of the same query just cached."""
PEER_MEMORIES = tuple(dict.fromkeys(read.memory for read in PEER_READS.values()))
TOP_KS = (1, 2, 4, 10, 30)
TASK_THRESHOLD = 0.2274
"""The paper's default task threshold h = 22.74 (MineCLIP units), as a cosine."""

PAPER_MS_PER_QUERY: dict[str, dict[int | None, tuple[float, float]]] = {
    "place-event": {
        1: (6.24, 0.01),
        2: (6.47, 0.02),
        4: (6.89, 0.02),
        10: (7.92, 0.03),
        30: (11.24, 0.07),
    },
    "event": {
        1: (11.28, 0.35),
        2: (18.95, 0.56),
        4: (42.41, 1.20),
        10: (53.82, 1.11),
        30: (117.16, 2.02),
    },
    "place": {
        1: (3.86, 0.05),
        2: (4.21, 0.08),
        4: (4.72, 0.08),
        10: (5.98, 0.09),
        30: (9.85, 0.12),
    },
    "fifo": {None: (438.46, 0.10)},
}
"""Paper, Table "Querying Time": mean ms per query and standard error, 100K frames, GPU server."""
PAPER_CLUSTERS = {"place-event": (3000, 30), "place": (2300, 43), "event": (582, 172)}
"""Paper, same appendix: about this many clusters of about this many frames."""

@dataclass(frozen=True)
class Target:
    """A speed or size bar of the package and the set-up it is meant for: ``bars`` by trajectory
    length in frames (``None``: any length), at ``dim``-dimensional embeddings (``None``: any).
    A run at another set-up reports its figure without a verdict."""

    bars: dict[int | None, float]
    at_most: bool
    dim: int | None = 512

    def judge(self, value: float, frames: int, dim: int) -> dict[str, Any]:
        """``value`` against the bar for a run of ``frames`` frames of ``dim`` dims: ``met`` is
        ``None`` (no verdict) when the bar is not meant for that set-up."""
        bar = self.bars.get(frames, self.bars.get(None))
        judged = bar is not None and self.dim in (None, dim)
        if bar is None:
            bar = next(iter(self.bars.values()))
        met = (value <= bar if self.at_most else value >= bar) if judged else None
        return {"value": value, "bar": bar, "rule": "<=" if self.at_most else ">=",
                "meant_for": self.set_up(), "met": met}

    def set_up(self) -> str:
        """The set-up the bars are meant for, in words."""
        lengths = [f"{frames:,}" for frames in self.bars if frames is not None]
        where = f"{' or '.join(lengths)} frames" if lengths else "any length"
        if None in self.bars and lengths:
            where += " (another bar at other lengths)"
        return where if self.dim is None else f"{where} of {self.dim} dims"


TARGETS = {
    "place_event_top30_median_ms": Target({100_000: 0.5, 1_000_000: 1.5}, at_most=True),
    "fifo_over_place_event_top30": Target({100_000: 30.0}, at_most=False),
    "place_event_write_us_per_frame": Target(
        {100_000: 15.0, 1_000_000: 15.0, None: 30.0}, at_most=True, dim=None
    ),
    "bytes_per_frame_at_512_dims": Target({100_000: 2200.0}, at_most=True),
}
"""The package's speed and size targets for Place Event Memory on one core, each judged only at
the set-up it is meant for (the paper's 100K frames of 512 dims; the read also at 1M frames; the
write at 100K and 1M frames 15 us a frame, reclustering included, and 30 us at any other size)."""


@dataclass(frozen=True)
class TrajectoryConfig:
    """The synthetic episode: where the agent goes and what it sees."""

    area: float = 200.0
    """Side of the square the agent wanders, its start at the centre (blocks)."""
    walk_speed: float = 0.2
    """Blocks per step while walking (Minecraft walks 4.3 blocks/s at 20 steps/s)."""
    hop: tuple[float, float] = (10.0, 60.0)
    """Distance range to the next waypoint (blocks)."""
    dwell_probability: float = 0.5
    """Chance of stopping to work and look around after each walk."""
    dwell_steps: tuple[int, int] = (60, 400)
    """Length range of a stop (steps)."""
    turn_rate: float = 1.0
    """Head turning speed while stopped (degrees per step, direction flips now and then)."""
    look_distance: float = 5.0
    """The view shows the scenery this far ahead (blocks)."""
    scene_spacing: float = 10.0
    """Lattice spacing of the scenery: random unit vectors blended bilinearly (blocks)."""
    biomes: int = 8
    """Random regions with a shared look (so that far apart places can look alike)."""
    biome_weight: float = 0.6
    happenings: int = 300
    """Transient events (mobs, fire, ...), each near where the agent is when it starts."""
    happening_steps: tuple[int, int] = (300, 3000)
    happening_radius: float = 12.0
    noise: float = 1.2
    """Per-frame noise, relative to the unit scenery vector, before clip averaging."""
    clip: int = 16
    """Each embedding is the mean of the last ``clip`` views, like MineCLIP's 16-frame clips."""


@dataclass(frozen=True, eq=False)
class Trajectory:
    embeddings: np.ndarray
    """L2-normalised float32, shape ``(frames, dim)``."""
    poses: np.ndarray
    """``(x, y, z, yaw, pitch)`` relative to the start, float64, shape ``(frames, 5)``."""


def synthetic_trajectory(
    frames: int, dim: int, rng: np.random.Generator, config: TrajectoryConfig = TrajectoryConfig()
) -> Trajectory:
    """An agent wandering ``config.area`` around its start: walks to random waypoints, half of
    them followed by a stop where it turns its head; what it sees is the scenery ahead blended
    with its biome, the happenings near it and noise, averaged over a 16-frame clip."""
    poses = _wander(frames, rng, config)
    return Trajectory(_views(poses, dim, rng, config), poses)


def _wander(frames: int, rng: np.random.Generator, config: TrajectoryConfig) -> np.ndarray:
    poses = np.zeros((frames, 5))
    x = z = yaw = 0.0
    half = config.area / 2
    step = 0
    while step < frames:
        if rng.random() < config.dwell_probability:
            count = min(int(rng.integers(*config.dwell_steps)), frames - step)
            turning = rng.choice((-1.0, 1.0)) * config.turn_rate * rng.uniform(0.5, 1.5)
            direction = np.where(np.cumsum(rng.random(count) < 0.01) % 2 == 0, 1.0, -1.0)
            yaws = yaw + np.cumsum(turning * direction + rng.normal(0.0, 1.0, count))
            block = poses[step : step + count]
            block[:, 0] = x + rng.normal(0.0, 0.2, count)
            block[:, 2] = z + rng.normal(0.0, 0.2, count)
            block[:, 3] = yaws
            block[:, 4] = rng.normal(0.0, 10.0, count)
            yaw = float(yaws[-1])
        else:
            angle, distance = rng.uniform(0.0, 2 * math.pi), rng.uniform(*config.hop)
            target_x = float(np.clip(x + distance * math.cos(angle), -half, half))
            target_z = float(np.clip(z + distance * math.sin(angle), -half, half))
            length = max(1, int(math.hypot(target_x - x, target_z - z) / config.walk_speed))
            count = min(length, frames - step)
            fraction = np.arange(1, count + 1) / length
            yaw = math.degrees(math.atan2(-(target_x - x), target_z - z))  # yaw 0 faces +z
            block = poses[step : step + count]
            block[:, 0] = x + (target_x - x) * fraction
            block[:, 2] = z + (target_z - z) * fraction
            block[:, 3] = yaw + rng.normal(0.0, 5.0, count)
            block[:, 4] = rng.normal(0.0, 5.0, count)
        x, z = float(block[-1, 0]), float(block[-1, 2])
        step += count
    poses[:, 3] = (poses[:, 3] + 180.0) % 360.0 - 180.0
    return poses


def _unit(vectors: np.ndarray) -> np.ndarray:
    return vectors / np.linalg.norm(vectors, axis=-1, keepdims=True)


def _views(
    poses: np.ndarray, dim: int, rng: np.random.Generator, config: TrajectoryConfig
) -> np.ndarray:
    frames = poses.shape[0]
    reach = config.area / 2 + config.look_distance
    side = int(2 * reach / config.scene_spacing) + 3
    lattice = _unit(rng.normal(size=(side, side, dim)))
    biome_centres = rng.uniform(-config.area / 2, config.area / 2, (config.biomes, 2))
    biome_looks = _unit(rng.normal(size=(config.biomes, dim)))
    starts = rng.integers(0, frames, config.happenings)
    ends = starts + rng.integers(*config.happening_steps, config.happenings)
    spots = poses[starts][:, [0, 2]] + rng.uniform(-8.0, 8.0, (config.happenings, 2))
    looks = _unit(rng.normal(size=(config.happenings, dim)))

    yaw = np.radians(poses[:, 3])
    grid_x = (poses[:, 0] - config.look_distance * np.sin(yaw) + reach) / config.scene_spacing + 1
    grid_z = (poses[:, 2] + config.look_distance * np.cos(yaw) + reach) / config.scene_spacing + 1
    cell_x = np.clip(np.floor(grid_x).astype(int), 0, side - 2)
    cell_z = np.clip(np.floor(grid_z).astype(int), 0, side - 2)
    weight_x, weight_z = grid_x - cell_x, grid_z - cell_z

    embeddings = np.empty((frames, dim), np.float32)
    chunk = 8192
    for begin in range(0, frames, chunk):
        end = min(frames, begin + chunk)
        rows = np.arange(max(0, begin - config.clip + 1), end)  # with the clip's history
        cx, cz, wx, wz = cell_x[rows], cell_z[rows], weight_x[rows, None], weight_z[rows, None]
        scenery = (
            lattice[cx, cz] * (1 - wx) * (1 - wz)
            + lattice[cx + 1, cz] * wx * (1 - wz)
            + lattice[cx, cz + 1] * (1 - wx) * wz
            + lattice[cx + 1, cz + 1] * wx * wz
        )
        ground = poses[rows][:, [0, 2]]
        biome = ((ground[:, None, :] - biome_centres[None]) ** 2).sum(axis=2).argmin(axis=1)
        near = ((ground[:, None, :] - spots[None]) ** 2).sum(axis=2) < config.happening_radius**2
        active = near & (rows[:, None] >= starts[None]) & (rows[:, None] < ends[None])
        views = _unit(scenery) + config.biome_weight * biome_looks[biome] + active @ looks
        views += config.noise / math.sqrt(dim) * rng.normal(size=views.shape)
        summed = np.concatenate([np.zeros((1, dim)), np.cumsum(views, axis=0)])
        last = np.arange(begin, end) - rows[0] + 1
        clips = summed[last] - summed[np.maximum(last - config.clip, 0)]
        embeddings[begin:end] = _unit(clips)
    return embeddings


@dataclass(frozen=True)
class MemoryBenchConfig:
    """What ``mrsteve bench memory`` runs."""

    frames: int = 100_000
    """Trajectory length; every memory stores every frame (unlimited capacity)."""
    queries: int = 1000
    """Reads per memory and top-k, with embeddings drawn from the stored frames."""
    dim: int = 512
    """Embedding size (MineCLIP: 512)."""
    seed: int = 0
    memories: tuple[str, ...] = tuple(MEMORIES)
    top_ks: tuple[int, ...] = TOP_KS
    peers: tuple[str, ...] = ()
    """Peer libraries measured on the same frames and queries (``faiss``)."""
    peer_top_k: int = 30
    """Top-k of Place Event Memory's read and nprobe of faiss IVF in the peer table."""
    recall_queries: int = 100
    """Queries (the first ones) on which peer recalls are computed."""
    cold_caches_mib: int = 0
    """MiB read before each timed read of the peer table, so that each starts from main memory
    rather than cache (0: none, the set-up the peer bars are judged at; ``--cold-caches``: twice
    the last-level cache, :func:`cold_caches_mib`)."""


def run_memory_benchmark(config: MemoryBenchConfig, progress: bool = True) -> dict[str, Any]:
    """Build every memory from one trajectory, time writes and reads; a JSON-able report."""
    if config.peers:
        import_faiss()  # fail before the long part when it is missing
    rng = np.random.default_rng(config.seed)
    started = time.perf_counter()
    trajectory = synthetic_trajectory(config.frames, config.dim, rng)
    generation_s = time.perf_counter() - started
    queries = trajectory.embeddings[rng.integers(0, config.frames, config.queries)]
    rows = []
    for_peers: dict[str, Any] = {}
    for name in config.memories:
        benched = MEMORIES[name]
        memory = benched.build()
        write_s = _write_all(memory, trajectory, benched.title, progress)
        memory.build_s = write_s
        stats = memory.stats()
        for top_k in config.top_ks if benched.variant.ranks_clusters else (None,):
            timings, scored, found, touched = _read_all(
                memory, queries, top_k, f"{benched.title} top-{top_k or 'all'}", progress
            )
            paper = PAPER_MS_PER_QUERY.get(name, {}).get(top_k)
            rows.append(
                {
                    "memory": name,
                    "label": benched.title,
                    "top_k": top_k,
                    "ms_median": float(np.median(timings)),
                    "ms_p10": float(np.percentile(timings, 10)),
                    "ms_p90": float(np.percentile(timings, 90)),
                    "ms_mean": float(np.mean(timings)),
                    "ms_standard_error": float(np.std(timings, ddof=1) / math.sqrt(len(timings)))
                    if len(timings) > 1
                    else 0.0,
                    "frames_scored": float(np.mean(scored)),
                    "frames_returned": float(np.mean(found)),
                    "bytes_per_read": float(np.mean(touched)),
                    "clusters": stats.clusters,
                    "frames_per_cluster": stats.frames_per_cluster_mean,
                    "places": stats.places,
                    "events": stats.events,
                    "write_us_per_frame": write_s / config.frames * 1e6,
                    "bytes_per_frame": stats.bytes / max(stats.frames, 1),
                    "paper_ms_mean": None if paper is None else paper[0],
                    "paper_ms_standard_error": None if paper is None else paper[1],
                    "paper_clusters": PAPER_CLUSTERS.get(name, (None, None))[0],
                    "paper_frames_per_cluster": PAPER_CLUSTERS.get(name, (None, None))[1],
                }
            )
        if name in PEER_READS and config.peers:
            for_peers[name] = memory
        del memory
    peers: list[dict[str, Any]] = []
    if config.peers:
        for name, read in PEER_READS.items():
            if name not in for_peers:
                benched = MEMORIES[read.memory]
                memory = for_peers[name] = benched.build()
                memory.build_s = _write_all(memory, trajectory, benched.title, progress)
        peers = measure_peers(
            trajectory, queries, for_peers, config.peer_top_k, config.recall_queries, progress,
            config.cold_caches_mib,
        )
        for_peers.clear()
    return {
        "benchmark": "memory",
        "config": asdict(config),
        "trajectory": asdict(TrajectoryConfig()),
        "threshold": TASK_THRESHOLD,
        "machine": {
            **machine_info(),
            "blas_threads": blas_threads(),
            "load_average_1_5_15_min": list(os.getloadavg()) if hasattr(os, "getloadavg") else None,
        },
        "trajectory_seconds": generation_s,
        "rows": rows,
        "peers": peers,
        "targets": _targets(rows, config, peers),
    }


WARM_UP_FRAMES = 300
"""Frames a memory is written in one place, then cleared, before it is timed (:func:`_warm_up`):
three times the provisional event's 100, so that events are clustered."""


def _warm_up(memory: Any, trajectory: Trajectory) -> None:
    """Run ``memory``'s compiled kernels once (numba compiles or loads each at its first call,
    seconds in all), then clear it: write the trajectory's first :data:`WARM_UP_FRAMES` frames
    at its first pose, so that the write, the clustering of events and the read all run."""
    embeddings, pose = trajectory.embeddings, trajectory.poses[0]
    for step in range(min(WARM_UP_FRAMES, len(embeddings))):
        memory.write(embeddings[step], pose, step)
    memory.read(embeddings[0], TASK_THRESHOLD)
    memory.clear()


def _write_all(memory: Any, trajectory: Trajectory, label: str, progress: bool) -> float:
    """Seconds this thread spent on the processor in ``write`` (the progress bar is updated
    outside the timed spans). Processor time, not wall time: writing is one thread's work, and
    on a shared machine wall time also counts the time other processes held the core. The
    kernels are warmed first, untimed (:func:`_warm_up`), so no compilation is counted."""
    embeddings, poses = trajectory.embeddings, trajectory.poses
    _warm_up(memory, trajectory)
    total = 0.0
    batch = 1000
    with tqdm(
        total=len(embeddings),
        desc=f"write {label}",
        unit="frame",
        disable=not progress,
        leave=False,
    ) as bar:
        for begin in range(0, len(embeddings), batch):
            end = min(begin + batch, len(embeddings))
            started = time.thread_time()
            for step in range(begin, end):
                memory.write(embeddings[step], poses[step], step)
            total += time.thread_time() - started
            bar.update(end - begin)
    return total


def _read_all(memory: Any, queries: np.ndarray, top_k: int | None, label: str, progress: bool):
    memory.read(queries[0], TASK_THRESHOLD, top_k=top_k)  # untimed: loads the compiled kernels
    timings, scored, found, touched = [], [], [], []
    for query in tqdm(
        queries, desc=f"read {label}", unit="query", disable=not progress, leave=False
    ):
        started = time.perf_counter()
        result = memory.read(query, TASK_THRESHOLD, top_k=top_k)
        timings.append((time.perf_counter() - started) * 1e3)
        scored.append(result.frames_scored)
        found.append(len(result))
        touched.append(result.bytes_read)
    return np.asarray(timings), np.asarray(scored), np.asarray(found), np.asarray(touched)


def _targets(
    rows: list[dict[str, Any]], config: MemoryBenchConfig, peers: list[dict[str, Any]]
) -> dict[str, dict[str, Any]]:
    """The bars of :data:`TARGETS` and :data:`PEER_TARGETS` this run measured (:meth:`Target.judge`:
    a verdict only at the set-up each is meant for): for Place Event Memory, and under names with
    ``_fp16`` for the one with float16 frames."""

    def row(name: str, top_k: int | None) -> dict[str, Any] | None:
        return next((r for r in rows if r["memory"] == name and r["top_k"] == top_k), None)

    def judge(name: str, target: Target, value: float) -> None:
        targets[name] = target.judge(value, config.frames, config.dim)

    targets: dict[str, dict[str, Any]] = {}
    fifo = row("fifo", None)
    prefixes = {"place-event": "place_event", "place-event-fp16": "place_event_fp16"}
    for memory, prefix in prefixes.items():
        pem = row(memory, 30)
        if pem is None:
            continue
        judge(f"{prefix}_top30_median_ms", TARGETS["place_event_top30_median_ms"],
              pem["ms_median"])
        if fifo is not None:
            judge(f"fifo_over_{prefix}_top30", TARGETS["fifo_over_place_event_top30"],
                  fifo["ms_median"] / pem["ms_median"])
        judge(f"{prefix}_write_us_per_frame", TARGETS["place_event_write_us_per_frame"],
              pem["write_us_per_frame"])
        suffix = "_fp16" if memory == "place-event-fp16" else ""
        judge(f"bytes_per_frame_at_512_dims{suffix}", TARGETS["bytes_per_frame_at_512_dims"],
              pem["bytes_per_frame"])
    for name, (memory, peer) in PEER_RATIOS.items():
        ratio = _peer_ratio(peers, memory, peer)
        if ratio is not None and not config.cold_caches_mib:  # the bars are meant for warm caches
            judge(name, PEER_TARGETS[name], ratio)
    return targets


def _peer_ratio(peers: list[dict[str, Any]], memory: str, peer: str) -> float | None:
    """Median ms of ``memory``'s read over ``peer``'s, from the peer table (None: not in it)."""
    by_name = {row["peer"]: row for row in peers}
    if memory not in by_name or peer not in by_name:
        return None
    return by_name[memory]["ms_median"] / by_name[peer]["ms_median"]


def format_target(name: str, target: dict[str, Any], frames: int, dim: int) -> str:
    """One line: the figure, its bar and the verdict, or why there is none."""
    bar = f"bar {target['rule']} {target['bar']:g}"
    if target["met"] is None:
        return (f"  {name}: {target['value']:.3f} (no verdict: the {bar} is meant for "
                f"{target['meant_for']}; this run has {frames:,} frames of {dim} dims)")
    return f"  {name}: {target['value']:.3f} ({bar}) {'met' if target['met'] else 'MISSED'}"


def format_report(report: dict[str, Any]) -> str:
    """The report as a text table, the paper's numbers beside ours."""
    config = report["config"]
    machine = report["machine"]
    title = (
        f"Memory query benchmark: {config['frames']:,} frames, {config['queries']:,} queries, "
        f"{config['dim']} dims, threshold {report['threshold']}, on {describe_machine(machine)}, "
        "BLAS threads "
        f"{machine['blas_threads']}, seed {config['seed']}, load average (1, 5, 15 min) "
        f"{machine['load_average_1_5_15_min']} at the end"
    )
    width = max(26, *(len(r["label"]) + 2 for r in report["rows"]))
    header = (
        f"{'memory':<{width}}{'top-k':>6}{'median':>9}{'p10-p90':>16}{'mean +- se':>17}{'paper':>17}"
        f"{'scored':>9}{'KB/read':>9}{'clusters':>10}{'frames/cl':>10}{'paper cl':>12}"
        f"{'write us':>10}{'B/frame':>9}"
    )
    lines = [
        title,
        ("ms per query: median [p10-p90], mean +- s.e.; paper: mean +- s.e., GPU server, 100K; "
         "KB/read: bytes of vectors (float rows, int8 codes) and slot lists a read touches; "
         "write us: processor time per frame written"),
        "",
        header,
    ]
    for r in report["rows"]:
        spread = f"{r['ms_p10']:.3f}-{r['ms_p90']:.3f}"
        mean = f"{r['ms_mean']:.3f} +- {r['ms_standard_error']:.3f}"
        paper = ""
        if r["paper_ms_mean"] is not None:
            paper = f"{r['paper_ms_mean']:.2f} +- {r['paper_ms_standard_error']:.2f}"
        paper_clusters = ""
        if r["paper_clusters"] is not None:
            paper_clusters = f"{r['paper_clusters']:,} x {r['paper_frames_per_cluster']}"
        lines.append(
            f"{r['label']:<{width}}{r['top_k'] or 'all':>6}{r['ms_median']:>9.3f}{spread:>16}{mean:>17}"
            f"{paper:>17}{r['frames_scored']:>9.0f}{r['bytes_per_read'] / 1024:>9,.0f}"
            f"{r['clusters']:>10,}"
            f"{r['frames_per_cluster']:>10.1f}{paper_clusters:>12}"
            f"{r['write_us_per_frame']:>10.1f}{r['bytes_per_frame']:>9.0f}"
        )
    if report.get("peers"):
        lines.append(format_peers(report["peers"], config["frames"],
                                  config.get("cold_caches_mib", 0)))
    if report["targets"]:
        lines += ["", "targets (one core):"]
        for name, target in report["targets"].items():
            lines.append(format_target(name, target, config["frames"], config["dim"]))
    return "\n".join(lines)


# --- peers: the same frames in faiss, and a numpy full scan ---------------------------------------

PEERS = ("faiss",)
"""Peer libraries ``--peers`` accepts."""
FAISS_INSTALL_HINT = (
    "faiss is not installed; install the benchmark extras with pip install 'mrsteve[bench]' "
    "(or just pip install faiss-cpu)"
)
PEER_TARGETS = {
    "place_event_over_faiss_ivf": Target({100_000: 0.6}, at_most=True),
    "place_event_fp16_over_faiss_ivf": Target({100_000: 0.6}, at_most=True),
    "place_event_codes_selector_over_faiss_ivf": Target({100_000: 0.6}, at_most=True),
    "place_event_over_faiss_hnsw": Target({100_000: 1.0}, at_most=True),
    "place_event_fp16_over_faiss_hnsw": Target({100_000: 1.0}, at_most=True),
    "place_event_codes_selector_over_faiss_hnsw": Target({100_000: 1.0}, at_most=True),
}
"""The package's targets against faiss on the paper's 100K frames: Place Event Memory's top-k
read at most 0.6 x faiss IVF's range search (nprobe = top-k) and at most HNSW's (efSearch chosen
for a recall at least the read's); checked for float32 frames (the default), float16 frames,
and frame codes read as the mode selector reads (:data:`PEER_READS`)."""
PEER_RATIOS = {
    "place_event_over_faiss_ivf": ("place-event", "faiss-ivf"),
    "place_event_fp16_over_faiss_ivf": ("place-event-fp16", "faiss-ivf"),
    "place_event_codes_selector_over_faiss_ivf": ("place-event-codes-selector", "faiss-ivf"),
    "place_event_over_faiss_hnsw": ("place-event", "faiss-hnsw"),
    "place_event_fp16_over_faiss_hnsw": ("place-event-fp16", "faiss-hnsw"),
    "place_event_codes_selector_over_faiss_hnsw": ("place-event-codes-selector", "faiss-hnsw"),
}
"""Each peer target's ``(numerator, denominator)`` rows of the peer table."""
HNSW_M = 32
"""Neighbours per node of faiss's HNSW graph."""
HNSW_EF_SEARCH = (16, 16_384)
"""Range of HNSW's efSearch tried: the smallest (within an eighth) whose recall against a full
scan reaches the Place Event reads' is used."""
BATCH = 100
"""Queries per batch in the batched timings."""


class MissingPeer(ImportError):
    """A peer library asked for is not installed (the message says how to install it)."""


def import_faiss() -> Any:
    """The ``faiss`` module, pinned to one thread; :class:`MissingPeer` when it is absent."""
    try:
        import faiss
    except ImportError:
        raise MissingPeer(FAISS_INSTALL_HINT) from None
    faiss.omp_set_num_threads(1)
    return faiss


def measure_peers(
    trajectory: Trajectory,
    queries: np.ndarray,
    memories: dict[str, Any],
    top_k: int,
    recall_queries: int,
    progress: bool,
    cold_caches_mib: int = 0,
) -> list[dict[str, Any]]:
    """On the frames of ``memories`` (Place Event Memories by :data:`MEMORIES` name, each holding
    the whole trajectory, frame i written at step i; by :data:`PEER_READS` name): a numpy full
    scan, faiss ``IndexFlatIP``,
    ``IndexIVFFlat`` and ``IndexIVFScalarQuantizer`` with float16 vectors (nlist = the memory's
    event count, nprobe = ``top_k``, trained on the stored frames) and ``IndexHNSWFlat`` (M
    :data:`HNSW_M`, efSearch chosen for a recall against a full scan at least the memories',
    :func:`_choose_ef_search`) range searches at the task threshold, and each memory's own read
    at ``top_k``. Each row: ms per query one at a time and in batches of :data:`BATCH` (for the
    IVF indexes, the memories and HNSW), build seconds, dot products per query, and recall (returned / should be returned) against the exact answer
    over the frames that method searches and against a full scan (scores of the float32 frames as
    written), on the first ``recall_queries`` queries."""
    faiss = import_faiss()
    embeddings = trajectory.embeddings
    frames, dim = embeddings.shape
    threshold = TASK_THRESHOLD
    recall_set = queries[:recall_queries]
    full = [set(np.flatnonzero(embeddings @ q >= threshold).tolist()) for q in recall_set]
    rows = []

    row_bytes = dim * 4

    def row(name, label, timings, build_s, scanned, bytes_read, searched_truth, answers
            ) -> dict[str, Any]:
        return {
            "peer": name,
            "label": label,
            "ms_median": float(np.median(timings)),
            "ms_p10": float(np.percentile(timings, 10)),
            "ms_p90": float(np.percentile(timings, 90)),
            "build_s": build_s,
            "scanned": float(scanned),
            "bytes_per_read": float(bytes_read),
            "recall_searched": _recall(answers, searched_truth),
            "recall_full_scan": _recall(answers, full),
        }

    timings = _time_queries(
        lambda q: np.flatnonzero(embeddings @ q >= threshold), queries, "numpy scan", progress
    )
    rows.append(row("numpy", "numpy full scan", timings, 0.0, frames, frames * row_bytes, full,
                    full))

    started = time.perf_counter()
    flat = faiss.IndexFlatIP(dim)
    flat.add(embeddings)
    build_s = time.perf_counter() - started
    timings = _time_queries(
        lambda q: flat.range_search(q[None], threshold), queries, "faiss flat", progress
    )
    answers = [set(flat.range_search(q[None], threshold)[2].tolist()) for q in recall_set]
    rows.append(row("faiss-flat", "faiss IndexFlatIP", timings, build_s, frames,
                    frames * row_bytes, full, answers))

    nlist = next(iter(memories.values())).stats().clusters
    started = time.perf_counter()
    quantizer = faiss.IndexFlatIP(dim)
    ivf = faiss.IndexIVFFlat(quantizer, dim, nlist, faiss.METRIC_INNER_PRODUCT)
    ivf.train(embeddings)
    ivf.add(embeddings)
    build_s = time.perf_counter() - started
    started = time.perf_counter()
    ivf_fp16 = faiss.IndexIVFScalarQuantizer(
        quantizer, dim, nlist, faiss.ScalarQuantizer.QT_fp16, faiss.METRIC_INNER_PRODUCT
    )
    ivf_fp16.train(embeddings)  # the coarse quantizer is trained already: only the lists fill
    ivf_fp16.add(embeddings)
    build_fp16_s = build_s + time.perf_counter() - started
    ivf.nprobe = ivf_fp16.nprobe = top_k
    started = time.perf_counter()
    hnsw = faiss.IndexHNSWFlat(dim, HNSW_M, faiss.METRIC_INNER_PRODUCT)
    hnsw.add(embeddings)
    build_hnsw_s = time.perf_counter() - started
    agent_at = tuple(trajectory.poses[-1, [0, 2]].tolist())  # where the agent stands at the end
    reads, whole_reads = {}, {}
    for name, memory in memories.items():
        if PEER_READS[name].as_selector:
            whole_reads[name] = partial(memory.read, threshold=threshold, top_k=top_k,
                                        near=agent_at, scores="best")
            reads[name] = partial(whole_reads[name], limit=QUERY_CANDIDATES_KEPT)
        else:
            reads[name] = whole_reads[name] = partial(memory.read, threshold=threshold,
                                                      top_k=top_k)
    read_answers = {}
    for name, read in whole_reads.items():
        wholes = [read(q) for q in recall_set]
        read_answers[name] = [set(whole.t.tolist()) for whole in wholes]
        for whole, first in zip(wholes, map(reads[name], recall_set)):
            if first.matched != len(whole) or not np.array_equal(first.t, whole.t[:len(first)]):
                raise RuntimeError(f"{name}: a limited read disagrees with the whole read")
    aim = max(_recall(answers, full) for answers in read_answers.values())
    hnsw.hnsw.efSearch = _choose_ef_search(hnsw, recall_set, threshold, full, aim)

    # The indexes and the memories answer each query in turn (the first rotating), so that a
    # change of machine load during the run weighs on all alike and their ratios stay meaningful.
    names = ["faiss-ivf", "faiss-ivf-fp16", "faiss-hnsw", *reads]
    indexes = {"faiss-ivf": ivf, "faiss-ivf-fp16": ivf_fp16, "faiss-hnsw": hnsw}
    one: dict[str, Callable[[np.ndarray], Any]] = {
        name: partial(_range_search_one, index, threshold=threshold)
        for name, index in indexes.items()
    }
    one.update(reads)
    # faiss 1.15's HNSW range search of several queries at once can abort the process
    # (RangeSearchResult::do_allocation), so HNSW, like a memory, answers a batch in turn.
    many = {name: partial(_in_turn, read) for name, read in one.items()}
    for name in ("faiss-ivf", "faiss-ivf-fp16"):
        many[name] = partial(indexes[name].range_search, thresh=threshold)
    label = f"faiss IVF nprobe {top_k}, HNSW and Place Event top-{top_k}"
    sweep = _cache_sweep(cold_caches_mib)
    timings = dict(zip(names, _time_queries_interleaved(
        tuple(one[name] for name in names), queries, label, progress, sweep)))
    batches = [queries[begin : begin + BATCH] for begin in range(0, len(queries), BATCH)]
    sizes = np.asarray([len(batch) for batch in batches])
    batch_timings = dict(zip(names, (times / sizes for times in _time_queries_interleaved(
        tuple(many[name] for name in names), batches, f"{label}, batches", progress, sweep))))
    lists = quantizer.search(embeddings, 1)[1][:, 0]
    list_sizes = np.bincount(lists, minlength=nlist)
    probed = quantizer.search(recall_set, top_k)[1]
    truth = []
    for q, probe in zip(recall_set, probed):
        searched = np.isin(lists, probe)
        truth.append(set(np.flatnonzero(searched & (embeddings @ q >= threshold)).tolist()))
    listed = float(np.mean([list_sizes[p].sum() for p in probed]))
    scanned = nlist + listed
    for name, index, label, build, vector_bytes in (
        ("faiss-ivf", ivf, "faiss IndexIVFFlat", build_s, row_bytes),
        ("faiss-ivf-fp16", ivf_fp16, "faiss IVF, float16", build_fp16_s, dim * 2),
    ):
        answers = [set(index.range_search(q[None], threshold)[2].tolist()) for q in recall_set]
        label = f"{label} (nlist {nlist:,}, nprobe {top_k})"
        # the coarse centroids (float32), then each listed vector and its 8-byte id
        bytes_read = nlist * row_bytes + listed * (vector_bytes + 8)
        rows.append(row(name, label, timings[name], build, scanned, bytes_read, truth, answers))
    faiss.cvar.hnsw_stats.reset()
    answers = [set(hnsw.range_search(q[None], threshold)[2].tolist()) for q in recall_set]
    stats = faiss.cvar.hnsw_stats
    scanned = stats.ndis / len(recall_set)
    # each vector scored, and the level-0 neighbour list (2 M int32 ids) of each node expanded
    bytes_read = (stats.ndis * row_bytes + stats.nhops * 2 * HNSW_M * 4) / len(recall_set)
    label = f"faiss IndexHNSWFlat (M {HNSW_M}, efSearch {hnsw.hnsw.efSearch:,})"
    rows.append(row("faiss-hnsw", label, timings["faiss-hnsw"], build_hnsw_s, scanned,
                    bytes_read, full, answers))

    for name, peer_read in PEER_READS.items():
        if name not in memories:
            continue
        memory = memories[name]
        truth = [
            _place_event_searched_answer(memory, q, top_k, threshold, embeddings)
            for q in recall_set
        ]
        label = f"{peer_read.label} (top-{top_k})"
        results = [reads[name](q) for q in queries]
        scanned = float(np.mean([result.frames_scored for result in results]))
        bytes_read = float(np.mean([result.bytes_read for result in results]))
        rows.append(row(name, label, timings[name], memory.build_s, scanned, bytes_read, truth,
                        read_answers[name]))
    for peer in rows:
        batch = batch_timings.get(peer["peer"])
        peer["batch_ms_per_query"] = None if batch is None else float(np.median(batch))
    return rows


def _range_search_one(index: Any, query: np.ndarray, threshold: float) -> Any:
    """A faiss index's range search of one query."""
    return index.range_search(query[None], threshold)


def _in_turn(read: Callable[[np.ndarray], Any], queries: np.ndarray) -> None:
    """``read`` of each query of a batch in turn."""
    for query in queries:
        read(query)


def _choose_ef_search(
    index: Any, queries: np.ndarray, threshold: float, full: list[set[int]], aim: float
) -> int:
    """The smallest HNSW efSearch in :data:`HNSW_EF_SEARCH` (doubling, then halving the gap down
    to an eighth) whose range search at ``threshold`` has a recall against a full scan
    (``full``) of at least ``aim``; the largest when none has."""

    def reaches(ef_search: int) -> bool:
        index.hnsw.efSearch = ef_search
        answers = [set(index.range_search(q[None], threshold)[2].tolist()) for q in queries]
        return _recall(answers, full) >= aim

    passed, high = HNSW_EF_SEARCH
    failed = passed  # below the range: never tried
    while passed < high and not reaches(passed):
        failed, passed = passed, min(2 * passed, high)
    while passed - failed > max(1, passed // 8):
        middle = (failed + passed) // 2
        if reaches(middle):
            passed = middle
        else:
            failed = middle
    return passed


def _place_event_searched_answer(
    memory: Any, query: np.ndarray, top_k: int, threshold: float, embeddings: np.ndarray
) -> set[int]:
    """Brute force over the frames of the ``top_k`` events whose centres score best (by the
    memory's stored centres, as its read ranks them): the steps whose frames as written
    (``embeddings[t]``, float32) score at least ``threshold`` (float64 scores)."""
    views = memory.clusters()
    centres = np.asarray([v.embedding[v.centre_index].astype(np.float64) @ query for v in views])
    best = np.argsort(-centres, kind="stable")[:top_k]
    found: set[int] = set()
    for index in best.tolist():
        steps = views[index].t
        scores = embeddings[steps].astype(np.float64) @ query
        found.update(steps[scores >= threshold].tolist())
    return found


def _recall(answers: list[set[int]], truths: list[set[int]]) -> float:
    values = [len(a & t) / len(t) if t else 1.0 for a, t in zip(answers, truths, strict=True)]
    return float(np.mean(values)) if values else 1.0


def _time_queries_interleaved(
    reads: tuple[Callable[[np.ndarray], Any], ...], queries, label: str, progress: bool,
    sweep: Callable[[], Any] | None = None,
) -> list[np.ndarray]:
    """ms per query of each of ``reads``, every query answered by all of them in turn, the
    order rotating from query to query; ``sweep`` (untimed) before each read."""
    for read in reads:
        read(queries[0])  # untimed warm-up
    timings: list[list[float]] = [[] for _ in reads]
    for number, query in enumerate(
        tqdm(queries, desc=f"read {label}", unit="query", disable=not progress, leave=False)
    ):
        for turn in range(len(reads)):
            which = (number + turn) % len(reads)
            if sweep is not None:
                sweep()
            started = time.perf_counter()
            reads[which](query)
            timings[which].append((time.perf_counter() - started) * 1e3)
    return [np.asarray(values) for values in timings]


def _time_queries(read: Callable[[np.ndarray], Any], queries, label: str, progress: bool):
    read(queries[0])  # untimed warm-up
    timings = []
    for query in tqdm(
        queries, desc=f"read {label}", unit="query", disable=not progress, leave=False
    ):
        started = time.perf_counter()
        read(query)
        timings.append((time.perf_counter() - started) * 1e3)
    return np.asarray(timings)


def cold_caches_mib(caches: dict[str, int]) -> int:
    """MiB to read before a timed read so that it starts from main memory: twice the largest of
    ``caches`` (:func:`~mrsteve.bench.machine.cpu_caches`), 1 GiB where they are not known."""
    return 2 * max(caches.values()) // 2**20 if caches else 1024


def _cache_sweep(mib: int) -> Callable[[], Any] | None:
    """A call reading ``mib`` MiB (``None`` for 0), which leaves little else in the caches."""
    if not mib:
        return None
    return np.ones(mib * 2**20 // 4, np.float32).sum


def format_peers(rows: list[dict[str, Any]], frames: int, cold_caches_mib: int = 0) -> str:
    """The peer table, then each memory's median time over each faiss index's, one query at a
    time and in batches (verdicts: the targets section)."""
    width = max(48, *(len(r["label"]) + 2 for r in rows))
    lines = [
        "",
        (f"Peers on the same {frames:,} frames and queries, threshold {TASK_THRESHOLD} (range "
         "search); recall = returned / should be returned, vs the exact answer over the frames "
         "each method searches and vs a full scan; batch: ms per query answering "
         f"{BATCH} at a time (faiss IVF in one call; a memory, and faiss HNSW, whose batched "
         "range search can abort in faiss 1.15, answer them in turn)"),
        *([(f"Cold caches: {cold_caches_mib:,} MiB read before each timed read, so every read "
            "starts from main memory, its code's own misses included; the peer bars are judged "
            "only with warm caches")] if cold_caches_mib else []),
        ("KB/read: bytes of vectors (float rows, int8 codes), ids and slot lists a read "
         "touches; 'as the selector reads': nearest first to where the agent stands, every "
         f"frame above the threshold decided and counted, the {QUERY_CANDIDATES_KEPT} nearest "
         "returned with the exact best score, other frames' scores not computed (every other "
         "row computes and returns every score; recall: the same read without the limit)"),
        (f"{'method':<{width}}{'median ms':>10}{'p10-p90':>16}{'batch ms':>10}{'build s':>9}"
         f"{'scanned':>10}{'KB/read':>9}{'recall (searched)':>19}{'recall (full)':>15}"),
    ]
    for r in rows:
        spread = f"{r['ms_p10']:.3f}-{r['ms_p90']:.3f}"
        batch = r.get("batch_ms_per_query")
        batch = "" if batch is None else f"{batch:.3f}"
        lines.append(
            f"{r['label']:<{width}}{r['ms_median']:>10.3f}{spread:>16}{batch:>10}{r['build_s']:>9.1f}"
            f"{r['scanned']:>10,.0f}{r['bytes_per_read'] / 1024:>9,.0f}"
            f"{r['recall_searched']:>19.4f}{r['recall_full_scan']:>15.4f}"
        )
    by_name = {r["peer"]: r for r in rows}
    for read, peer_read in PEER_READS.items():
        for peer in ("faiss-ivf", "faiss-ivf-fp16", "faiss-hnsw"):
            if read in by_name and peer in by_name:
                ours, theirs = by_name[read], by_name[peer]
                lines.append(
                    f"  {peer_read.label} / {theirs['label'].split(' (')[0]}: "
                    f"{ours['ms_median'] / theirs['ms_median']:.3f} one query at a time, "
                    f"{ours['batch_ms_per_query'] / theirs['batch_ms_per_query']:.3f} in batches"
                )
    return "\n".join(lines)


# --- long runs at a capacity ---------------------------------------------------------------------


@dataclass(frozen=True)
class LongRunConfig:
    """``mrsteve bench memory --long-run``: a Place Event Memory with a capacity written for a long
    episode by an agent wandering a large area (so it keeps opening places), with read time and
    cluster count sampled along the way."""

    frames: int = 1_000_000
    capacity: int = 20_000
    dim: int = 512
    area: float = 1000.0
    """Side of the wandered square (blocks): large, so new places keep appearing."""
    checkpoints: int = 20
    """Samples along the run."""
    queries: int = 200
    """Reads per sample, embeddings drawn from the frames written since the last sample."""
    chunk: int = 50_000
    """Frames generated at a time (the trajectory is not held whole)."""
    seed: int = 0


def run_long_run(config: LongRunConfig, progress: bool = True) -> dict[str, Any]:
    """Write ``config.frames`` frames into ``PlaceEventMemory(capacity=config.capacity)``; at each
    checkpoint: frames held, clusters (events holding frames), rows of the centre matrix, write us
    per frame since the last checkpoint, and the median top-30 read time. The trajectory comes
    in chunks of ``config.chunk`` frames, each a fresh stretch of country ``config.area`` blocks
    further along x, so the agent keeps opening places."""
    rng = np.random.default_rng(config.seed)
    query_rng = np.random.default_rng(config.seed + 1)
    trajectory_config = TrajectoryConfig(area=config.area)
    memory = MEMORY_VARIANTS["place-event"].build(config.capacity)
    every = max(1, config.frames // config.checkpoints)
    samples: list[dict[str, Any]] = []
    written, total_s, window_s, window_start = 0, 0.0, 0.0, 0
    with tqdm(total=config.frames, desc="long run", unit="frame", disable=not progress) as bar:
        for chunk_index in range(math.ceil(config.frames / config.chunk)):
            count = min(config.chunk, config.frames - written)
            chunk = synthetic_trajectory(count, config.dim, rng, trajectory_config)
            poses = chunk.poses.copy()
            poses[:, 0] += chunk_index * config.area
            index = 0
            while index < count:
                end = min(count, index + every - written % every)
                started = time.thread_time()  # processor time, as in _write_all
                for i in range(index, end):
                    memory.write(chunk.embeddings[i], poses[i], written + i - index)
                elapsed = time.thread_time() - started
                total_s += elapsed
                window_s += elapsed
                recent = chunk.embeddings[index:end]
                written += end - index
                bar.update(end - index)
                index = end
                if written % every == 0 or written == config.frames:
                    queries = recent[query_rng.integers(0, recent.shape[0], config.queries)]
                    timings = _time_queries(
                        lambda q: memory.read(q, TASK_THRESHOLD, top_k=30), queries, "", False
                    )
                    stats = memory.stats()
                    samples.append(
                        {
                            "written": written,
                            "frames": stats.frames,
                            "clusters": stats.clusters,
                            "centre_rows": memory.centre_rows(),
                            "places": stats.places,
                            "events": stats.events,
                            "write_us_per_frame": window_s / (written - window_start) * 1e6,
                            "read_ms_median": float(np.median(timings)),
                            "read_ms_p90": float(np.percentile(timings, 90)),
                            "bytes_per_frame": stats.bytes / max(stats.frames, 1),
                        }
                    )
                    window_s, window_start = 0.0, written
    return {
        "benchmark": "memory-long-run",
        "config": asdict(config),
        "threshold": TASK_THRESHOLD,
        "write_us_per_frame": total_s / config.frames * 1e6,
        "samples": samples,
    }


def format_long_run(report: dict[str, Any]) -> str:
    config = report["config"]
    lines = [
        (f"Long run: Place Event Memory, capacity {config['capacity']:,}, {config['frames']:,} "
         f"writes, {config['dim']} dims, area {config['area']:.0f} blocks per chunk of "
         f"{config['chunk']:,}; top-30 reads at threshold {report['threshold']}"),
        (f"{'written':>10}{'frames':>9}{'clusters':>10}{'centre rows':>13}{'places':>8}"
         f"{'write us':>10}{'read ms':>9}{'read p90':>10}{'B/frame':>9}"),
    ]
    for s in report["samples"]:
        lines.append(
            f"{s['written']:>10,}{s['frames']:>9,}{s['clusters']:>10,}{s['centre_rows']:>13,}"
            f"{s['places']:>8,}{s['write_us_per_frame']:>10.1f}{s['read_ms_median']:>9.3f}"
            f"{s['read_ms_p90']:>10.3f}{s['bytes_per_frame']:>9.0f}"
        )
    lines.append(f"write us per frame over the run: {report['write_us_per_frame']:.1f}")
    return "\n".join(lines)
