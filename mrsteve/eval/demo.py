"""``mrsteve demo``: one MrSteve episode, watched and recorded.

Runs an ABA-Sparse task, or a crafting task under the ground-truth planner, with live progress
(mode, task or subgoal, step), then writes to an output folder a top-down plot of the trajectory
coloured by the agent's mode with the remembered targets marked, a GIF of the agent's
first-person view with a caption, the results as JSON, and the episode's trace with its page
(:mod:`mrsteve.eval.trace`, :mod:`mrsteve.eval.view`: what the memory held and read). The files are written into a new
folder that takes the output folder's place when complete: an earlier demo there is replaced
whole, and an interrupted demo leaves the folder as it was.
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
from tqdm import tqdm

from mrsteve.agent.factory import build_agent, make_agent
from mrsteve.agent.parts import AgentParts
from mrsteve.agent.planners import PlannerConfig
from mrsteve.digests import plain
from mrsteve.env import make_env
from mrsteve.eval.plots import save_figure
from mrsteve.eval.spec import check_seed
from mrsteve.eval.trace import EpisodeTrace, write_trace
from mrsteve.eval.view import render_page
from mrsteve.fileio import atomic_path, write_json
from mrsteve.jitcache import CompileWatch
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
    (its last task done), the bar ends at the steps it took. The time numba spends compiling
    kernels (a first run's) is left out of its rate (:class:`~mrsteve.jitcache.CompileWatch`)."""

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
              "results": "results.json", "trace": "trace.json.gz", "view": "view.html"}
"""What the demo writes into its folder."""


DEMO_SUITES_BY_NAME = ("", "aba-sparse", "crafting")
"""The suites whose tasks ``mrsteve demo --task`` takes by name alone (the rest: SUITE/TASK)."""

PART_FLAGS = {"encoder": "encoder", "navigator": "navigator",
              "instruction_policy": "instruction-policy"}
"""The agent's parts a demo names in its default folder when not the ones ``--parts`` names, by
option."""


def demo_folder(task_key: str, agent_name: str, seed: int,
                options: AgentParts | None = None) -> Path:
    """The demo's default output folder: ``runs/demo-<task>-<agent>[-<parts>]-seed<seed>``, the
    task named by its suite too unless it is an ABA-Sparse or crafting task (the names
    ``--task`` takes alone: ``aba-random-wool-log-wool``, ``wool-log-wool``), the parts being ``parts-<value>`` when ``options`` choose other parts than the default
    (``parts-stand-in``), then those of its parts that are not the ones its ``--parts`` names, as
    ``<option>-<value>`` (``encoder-pixels``), and a navigator weights file as
    ``navigator-weights-<name>-<digest of its path>``: demos of other agents never share a
    folder."""
    suite, _, name = task_key.rpartition("/")
    parts = [name if suite in DEMO_SUITES_BY_NAME else f"{suite}-{name}", agent_name]
    if options is not None:
        if options.parts != type(options)().parts:
            parts.append(f"parts-{options.parts}")
        named = type(options)(parts=options.parts)
        parts += [f"{flag}-{getattr(options, name)}" for name, flag in PART_FLAGS.items()
                  if getattr(options, name) != getattr(named, name)]
        for what in ("navigator", "instruction"):
            path = getattr(options, f"{what}_weights")
            if path is not None:
                where = os.path.realpath(path).encode()
                parts.append(f"{what}-weights-{Path(path).stem}-"
                             f"{hashlib.sha256(where).hexdigest()[:8]}")
    return Path("runs") / f"demo-{'-'.join(parts)}-seed{seed}"


def check_demo_outputs(out: Path) -> None:
    """Raise ``ValueError`` naming the problem, before the episode, if the demo cannot write into
    ``out``: a file, a folder that holds anything but an earlier demo's files (the demo replaces
    those, and nothing else), a folder it cannot replace or create."""
    where = f"cannot write the demo into {out}"
    if out.exists() and not out.is_dir():
        raise ValueError(f"{where}: it is a file, not a folder")
    if Path.cwd().resolve().is_relative_to(out.resolve()):
        raise ValueError(f"{where}: it holds the current folder; give a folder of the demo's own "
                         "with --out")
    if out.is_dir():
        others = sorted(entry.name + "/" * entry.is_dir() for entry in os.scandir(out)
                        if entry.name not in DEMO_FILES.values()
                        or not entry.is_file(follow_symlinks=False))
        if others:
            shown = ", ".join(others[:3]) + (f" and {len(others) - 3} more" if others[3:] else "")
            raise ValueError(f"{where}: it holds {shown}, not a demo's files (the demo replaces "
                             "an earlier demo's folder only); give a new folder with --out")
        if not os.access(out, os.W_OK | os.X_OK):
            raise ValueError(f"{where}: the earlier demo there cannot be replaced (the folder is "
                             "not writable)")
    parent = Path(os.path.realpath(out)).parent
    while not parent.exists():
        parent = parent.parent
    if not parent.is_dir():
        raise ValueError(f"{where}: {parent} is not a folder")
    if not os.access(parent, os.W_OK | os.X_OK):
        raise ValueError(f"{where}: folder {parent} is not writable")


@contextmanager
def replacing_folder(out: Path) -> Iterator[Path]:
    """A new folder beside ``out`` to write into; when the block ends, it takes ``out``'s place
    (an earlier folder there is removed whole, so none of its files stays beside the new ones);
    when the block fails or is interrupted, it is removed with the folders made for it, and
    ``out`` is left as it was."""
    target = Path(os.path.realpath(out))
    made = [folder for folder in (target.parent, *target.parent.parents) if not folder.exists()]
    target.parent.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{target.name}.", suffix=".partial",
                                    dir=target.parent))
    umask = os.umask(0)
    os.umask(umask)
    os.chmod(staging, 0o777 & ~umask)  # mkdtemp makes 0700 folders: give the usual permissions
    try:
        yield staging
        if target.exists():
            earlier = staging.with_suffix(".earlier")
            os.rename(target, earlier)
            os.rename(staging, target)
            shutil.rmtree(earlier)
        else:
            os.rename(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        for folder in made:  # the deepest first
            try:
                folder.rmdir()
            except OSError:
                break
        raise


class DemoInterrupted(KeyboardInterrupt):
    """An interrupted demo: what it kept, in one line."""

    def __init__(self, out: Path) -> None:
        kept = f"; {out} keeps the earlier demo" if out.exists() else ""
        super().__init__(f"interrupted: no demo was written{kept}")


def run_demo(
    task_key: str = "aba-sparse/water-log-water",
    agent_name: str = "mrsteve",
    seed: int = 0,
    out: Path | None = None,
    video: bool = True,
    progress: bool = True,
    say: Any = None,
    **parts: Any,
) -> DemoResult:
    """Run one episode of ``task_key`` and write the plot, the video (GIF, and MP4 when
    ``imageio-ffmpeg`` is installed) and the results to ``out`` (default: :func:`demo_folder`),
    replacing an earlier demo there whole; every output is checked before the episode starts, and
    an interrupt (:class:`DemoInterrupted`) leaves ``out`` as it was. The agent runs the parts
    ``parts`` choose (the options of :class:`~mrsteve.agent.parts.AgentParts`: ``parts``,
    ``encoder``, ``navigator``, ``navigator_weights``, ``instruction_policy`` and the released
    weights files; by default the learned parts). ``say`` gets status lines (the notice that
    numba compiles kernels)."""
    check_seed(seed)
    options = AgentParts(**parts)
    crafting = task_key.startswith("crafting/")
    if crafting:
        from mrsteve.eval.experiment import AgentOptions
        from mrsteve.eval.llm_planner import crafting_tree

        task = load_catalog().find_crafting(task_key.partition("/")[2])[0]
        tree = crafting_tree(agent_name, task, PlannerConfig("gt"),
                             AgentOptions(**dataclasses.asdict(options)))
        agent = build_agent(tree)
        agent.config_tree = tree
    else:
        task = task_by_key(task_key)
        agent = make_agent(agent_name, patch_size=exploration_patch_size(task.world),
                           navigator_weights=options.navigator_weights,
                           instruction_weights=options.instruction_weights,
                           weights_files=options.weights_files, **options.chosen)
    out = Path(out) if out is not None else demo_folder(task_key, agent_name, seed, options)
    check_demo_outputs(out)
    try:
        with CompileWatch(say if say is not None else lambda line: None), \
                replacing_folder(out) as folder:
            result, files, notes = _record_demo(task_key, task, crafting, agent, agent_name, seed,
                                                folder, video, progress)
    except KeyboardInterrupt:
        raise DemoInterrupted(out) from None
    return DemoResult(out, result, {name: out / path.name for name, path in files.items()},
                      notes)


def _record_demo(task_key: str, task: Any, crafting: bool, agent: Any, agent_name: str,
                 seed: int, out: Path, video: bool,
                 progress: bool) -> tuple[EpisodeResult, dict[str, Path], list[str]]:
    """Run the demo's episode and write its files into the folder ``out``."""
    kwargs = crafting_env_kwargs(task) if crafting else env_kwargs(task)
    with make_env(**kwargs) as env:
        recording = EpisodeRecording(frame_every=4 if video else 10**9)
        trace = EpisodeTrace()
        callbacks: list[Any] = [recording, trace]
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
    controller = getattr(agent, "controller", agent)
    memory = getattr(controller, "memory", None)
    trace.finish(memory, blocks, corner, getattr(controller, "episode_pose", None))
    traced = trace.data({"task": task_key, "agent": agent_name, "seed": seed,
                         "world": task.world})
    files["trace"] = write_trace(out / DEMO_FILES["trace"], traced)
    files["view"] = out / DEMO_FILES["view"]
    files["view"].write_text(render_page(traced), encoding="utf-8")
    write_json(files["results"], {
        "task": task_key, "agent": agent_name, "seed": seed, "world": task.world,
        "steps": result.steps, "tasks": [asdict(t) | {"duration": t.duration} for t in result.tasks],
        "memory": asdict(memory.stats()) if memory is not None else None,
        "plans": agent.report.plans if crafting else None,
        "config": plain(tree),
    })  # fmt: skip
    return result, files, notes
