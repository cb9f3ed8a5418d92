"""``mrsteve demo``: one MrSteve episode, watched and recorded.

Runs an ABA-Sparse task, or a crafting task under the ground-truth planner, with live progress
(mode, task or subgoal, step), then writes to an output folder a top-down plot of the trajectory
coloured by the agent's mode with the remembered targets marked, a GIF of the agent's
first-person view with a caption, and the results as JSON.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import gymnasium as gym
import numpy as np
from tqdm import tqdm

import mrsteve.env  # noqa: F401  (registers mrsteve/Voxel-v0)
from mrsteve.agent.factory import build_agent, make_agent
from mrsteve.agent.planners import PlannerConfig
from mrsteve.digests import plain
from mrsteve.eval.plots import save_figure
from mrsteve.eval.spec import check_seed
from mrsteve.eval.sweep import check_outputs
from mrsteve.fileio import atomic_path, write_json
from mrsteve.jitcache import kernels_cached
from mrsteve.spaces import AgentFrame
from mrsteve.tasks.catalog import exploration_patch_size, load_catalog
from mrsteve.tasks.crafting import crafting_env_kwargs, run_crafting
from mrsteve.tasks.driver import EpisodeCallback, Step
from mrsteve.tasks.episode import EpisodeResult, TaskOutcome, run_tasks
from mrsteve.tasks.sequential import env_kwargs, task_by_key
from mrsteve.world.render import Renderer
from mrsteve.world.topdown import top_down_image

MODE_COLORS = {
    "explore": "#4c9be8",
    "navigate": "#f5b041",
    "cam_adjust": "#af7ac5",
    "execute": "#e74c3c",
    None: "#bbbbbb",
}
"""Colour of each mode in the trajectory plot."""


class ProgressBar(EpisodeCallback):
    """A live progress bar: step, current task, mode and tasks done; when the episode ends early
    (its last task done), the bar ends at the steps it took."""

    def __init__(self, total: int, every: int = 20):
        self.bar = tqdm(total=total, unit="step", dynamic_ncols=True, mininterval=0.5)
        self.every = every
        self.task = "-"
        self.done = 0

    def on_task_start(self, task: TaskOutcome) -> None:
        self.task = task.item

    def on_task_end(self, task: TaskOutcome) -> None:
        self.done += task.success

    def on_step(self, step: Step) -> None:
        if step.t % self.every == 0:
            mode = step.decision.mode
            task = self.task if step.decision.subgoal is None else step.decision.subgoal
            self.bar.set_postfix(task=task, mode=mode.value if mode else "-", done=self.done)
            self.bar.update(step.t - self.bar.n)

    def close(self, steps: int | None = None) -> None:
        """End the bar at ``steps`` (the episode's length), full."""
        if steps is not None:
            self.bar.total = max(steps, 1)
            self.bar.update(steps - self.bar.n)
        self.bar.close()


@dataclass
class EpisodeRecording(EpisodeCallback):
    """Trajectory, mode and target of every step (from the agent's decisions), and every
    ``frame_every``-th view rendered at ``frame_size`` (a second camera on the same world, so the
    agent's own frames stay small)."""

    frame_size: tuple[int, int] = (120, 192)
    frame_every: int = 4
    max_frames: int = 900
    xz: list[tuple[float, float]] = field(default_factory=list)
    modes: list[str | None] = field(default_factory=list)
    targets: list[tuple[float, float]] = field(default_factory=list)
    frames: list[np.ndarray] = field(default_factory=list)
    captions: list[str] = field(default_factory=list)

    def on_reset(self, env, obs, frame: AgentFrame) -> None:
        self.world = env.unwrapped.world
        self.frame = frame  # the agent's targets are in its episode frame
        self.renderer = Renderer(*self.frame_size)
        self.task = "-"

    def on_task_start(self, task: TaskOutcome) -> None:
        self.task = task.item

    def on_step(self, step: Step) -> None:
        mode = step.decision.mode
        self.xz.append((float(step.obs["pose"][0]), float(step.obs["pose"][2])))
        self.modes.append(mode.value if mode else None)
        target = step.decision.target
        if target is not None:
            target = self.frame.to_world(target[0], target[2])
            if not self.targets or self.targets[-1] != target:
                self.targets.append(target)
        if step.t % self.frame_every == 0 and len(self.frames) < self.max_frames:
            world = self.world
            frame = self.renderer.render(world.blocks, world.eye, world.yaw, world.pitch,
                                         world.mob_boxes(), time=world.t, heights=world.heights,
                                         origin=world.origin)
            self.frames.append(frame.rgb.copy())
            task = self.task if step.decision.subgoal is None else step.decision.subgoal
            self.captions.append(f"t={step.t}  task: {task}  mode: {self.modes[-1] or '-'}")


def save_mode_plot(path: Path, blocks: np.ndarray, recording: EpisodeRecording, title: str,
                   corner: tuple[float, float] = (0.0, 0.0)) -> Path:
    """The trajectory over the top-down map, each segment in the colour of the mode it was walked
    in; remembered targets as stars, the start as a white circle. ``corner`` is where
    ``blocks[0, :, 0]`` lies in the frame of the recording (an unbounded world's region)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.collections import LineCollection
    from matplotlib.figure import Figure
    from matplotlib.lines import Line2D

    xz = np.asarray(recording.xz) - corner
    size_x, size_z = blocks.shape[0], blocks.shape[2]
    figure = Figure(figsize=(6.5, 6.5 * size_z / size_x + 0.6))
    FigureCanvasAgg(figure)
    axes = figure.add_subplot()
    axes.imshow(top_down_image(blocks), extent=(0, size_x, size_z, 0), interpolation="nearest")
    if len(xz) > 1:
        segments = np.stack([xz[:-1], xz[1:]], axis=1)
        colors = [MODE_COLORS[mode] for mode in recording.modes[1:]]
        axes.add_collection(LineCollection(segments, colors=colors, linewidths=1.8))
    if recording.targets:
        targets = np.asarray(recording.targets) - corner
        axes.scatter(targets[:, 0], targets[:, 1], marker="*", s=160, c="yellow",
                     edgecolors="black", zorder=4, label="remembered target")
    axes.scatter(*xz[0], marker="o", s=60, c="white", edgecolors="black", zorder=4)
    handles = [Line2D([], [], color=c, lw=2, label=m) for m, c in MODE_COLORS.items() if m]
    handles.append(Line2D([], [], marker="*", color="yellow", markeredgecolor="black", lw=0,
                          markersize=12, label="remembered target"))
    axes.legend(handles=handles, loc="lower left", fontsize=7, framealpha=0.8)
    axes.set_xlim(0, size_x)
    axes.set_ylim(size_z, 0)
    axes.set_xlabel("x")
    axes.set_ylabel("z")
    axes.set_title(title, fontsize=9)
    figure.tight_layout()
    return save_figure(figure, path)


def captioned_frames(frames: list[np.ndarray], captions: list[str]) -> list[np.ndarray]:
    """Each frame with its caption in a strip underneath (RGB, even height and width)."""
    from PIL import Image, ImageDraw

    images = []
    for frame, caption in zip(frames, captions):
        height, width = frame.shape[:2]
        canvas = Image.new("RGB", (width + width % 2, height + 14 + height % 2), (20, 20, 20))
        canvas.paste(Image.fromarray(frame), (0, 0))
        ImageDraw.Draw(canvas).text((3, height + 2), caption, fill=(235, 235, 235))
        images.append(np.asarray(canvas))
    return images


def save_video(path: Path, frames: list[np.ndarray], captions: list[str], fps: int = 20) -> Path:
    """A GIF of ``frames`` with a caption strip under each."""
    from PIL import Image

    images = [Image.fromarray(image).quantize(colors=128, method=Image.Quantize.MEDIANCUT)
              for image in captioned_frames(frames, captions)]
    with atomic_path(path) as temporary:
        images[0].save(temporary, format="GIF", save_all=True, append_images=images[1:],
                       duration=int(1000 / fps), loop=0, optimize=False)
    return path


MP4_MISSING = "no MP4: pip install 'mrsteve[video]' for imageio-ffmpeg (the GIF is written)"
"""What the demo says when it cannot write MP4."""


def mp4_available() -> bool:
    """Whether MP4 can be written (``imageio-ffmpeg``, the ``video`` extra, brings ffmpeg)."""
    try:
        import imageio_ffmpeg

        imageio_ffmpeg.get_ffmpeg_exe()
    except (ImportError, RuntimeError):
        return False
    return True


def save_mp4(path: Path, frames: list[np.ndarray], captions: list[str], fps: int = 20) -> Path:
    """An H.264 MP4 of ``frames`` with a caption strip under each (needs ``imageio-ffmpeg``)."""
    import imageio_ffmpeg

    images = captioned_frames(frames, captions)
    height, width = images[0].shape[:2]
    with atomic_path(path) as temporary:
        writer = imageio_ffmpeg.write_frames(
            str(temporary), (width, height), fps=fps, codec="libx264", pix_fmt_out="yuv420p",
            macro_block_size=2, output_params=["-f", "mp4"], ffmpeg_log_level="error",
        )  # fmt: skip
        writer.send(None)
        for image in images:
            writer.send(np.ascontiguousarray(image))
        writer.close()
    return path


@dataclass(frozen=True)
class DemoResult:
    out: Path
    result: EpisodeResult
    files: dict[str, Path]
    notes: list[str] = field(default_factory=list)
    """What the demo could not write, and why."""


DEMO_FILES = {"plot": "trajectory.png", "video": "agent_view.gif", "mp4": "agent_view.mp4",
              "results": "results.json"}
"""What the demo writes into its folder."""


def demo_folder(task_key: str, agent_name: str, seed: int) -> Path:
    """The demo's default output folder: ``runs/demo-<task>-<agent>-seed<seed>``."""
    return Path("runs") / f"demo-{task_key.rpartition('/')[2]}-{agent_name}-seed{seed}"


def check_demo_outputs(out: Path) -> None:
    """Raise ``ValueError`` naming the problem, before the episode, if the demo cannot write its
    files into ``out`` (a file, a read-only folder, one of its files a folder)."""
    if out.exists() and not out.is_dir():
        raise ValueError(f"cannot write the demo into {out}: it is a file, not a folder")
    check_outputs([out / name for name in DEMO_FILES.values()], None)


def run_demo(
    task_key: str = "aba-sparse/water-log-water",
    agent_name: str = "mrsteve",
    seed: int = 0,
    out: Path | None = None,
    video: bool = True,
    progress: bool = True,
    encoder: str = "semantic",
    say: Any = None,
    navigator: str = "depth",
    instruction_policy: str = "scripted",
    navigator_weights: str | None = None,
) -> DemoResult:
    """Run one episode of ``task_key`` and write the plot, the video (GIF, and MP4 when
    ``imageio-ffmpeg`` is installed) and the results to ``out``; every output is checked before
    the episode starts. ``say`` gets status lines (the first run's compiling notice);
    ``navigator_weights`` is a file the learned navigator runs with in place of the shipped one."""
    from mrsteve.eval.experiment import AgentOptions

    check_seed(seed)
    options = AgentOptions(encoder=encoder, navigator=navigator,
                           navigator_weights=navigator_weights,
                           instruction_policy=instruction_policy)
    crafting = task_key.startswith("crafting/")
    if crafting:
        from mrsteve.eval.llm_planner import crafting_tree

        task = load_catalog().find_crafting(task_key.partition("/")[2])[0]
        tree = crafting_tree(agent_name, task, PlannerConfig("gt"), options)
        agent = build_agent(tree)
        agent.config_tree = tree
    else:
        task = task_by_key(task_key)
        agent = make_agent(agent_name, patch_size=exploration_patch_size(task.world),
                           encoder=options.encoder, navigator=options.navigator,
                           navigator_weights=options.navigator_weights,
                           instruction_policy=options.instruction_policy)
    out = Path(out) if out is not None else demo_folder(task_key, agent_name, seed)
    check_demo_outputs(out)
    if say is not None and not kernels_cached():
        say("first run: compiling the world's and the memory's kernels (once, 1-2 minutes)...")
    out.mkdir(parents=True, exist_ok=True)
    env = gym.make("mrsteve/Voxel-v0", **(crafting_env_kwargs(task) if crafting
                                          else env_kwargs(task)))
    recording = EpisodeRecording(frame_every=4 if video else 10**9)
    callbacks: list[Any] = [recording]
    bar = ProgressBar(task.max_steps) if progress else None
    if bar is not None:
        callbacks.append(bar)
    result = None
    try:
        if crafting:
            crafted = run_crafting(env, agent, task, seed=seed, callbacks=callbacks)
            result = EpisodeResult([TaskOutcome(task.item, 0, crafted.steps, crafted.success)],
                                   crafted.steps)
        else:
            result = run_tasks(env, agent, task.items, seed=seed, max_steps=task.max_steps,
                               callbacks=callbacks)
    finally:
        if bar is not None:
            bar.close(None if result is None else result.steps)
    world = env.unwrapped.world
    blocks, corner = world.blocks, (0.0, 0.0)
    if world.window is not None:  # an unbounded world: the terrain under the whole path
        points = np.concatenate([np.asarray(recording.xz).reshape(-1, 2),
                                 np.asarray(recording.targets).reshape(-1, 2)])
        blocks, corner = world.window.region(points.min(axis=0), points.max(axis=0))
    files = {
        "plot": save_mode_plot(out / DEMO_FILES["plot"], blocks, recording,
                               f"{agent_name} on {task.name} ({task.world}, seed {seed})",
                               corner=corner),
    }
    notes = []
    if video and recording.frames:
        files["video"] = save_video(out / DEMO_FILES["video"], recording.frames,
                                    recording.captions)
        if mp4_available():
            files["mp4"] = save_mp4(out / DEMO_FILES["mp4"], recording.frames, recording.captions)
        else:
            notes.append(MP4_MISSING)
    files["results"] = out / DEMO_FILES["results"]
    tree = agent.config_tree
    memory = getattr(getattr(agent, "controller", agent), "memory", None)
    write_json(files["results"], {
        "task": task_key, "agent": agent_name, "seed": seed, "world": task.world,
        "steps": result.steps, "tasks": [asdict(t) | {"duration": t.duration} for t in result.tasks],
        "memory": asdict(memory.stats()) if memory is not None else None,
        "plans": agent.report.plans if crafting else None,
        "config": plain(tree),
    })  # fmt: skip
    env.close()
    return DemoResult(out, result, files, notes)
