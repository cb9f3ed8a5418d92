"""The demo writes what it promises: a plot, a video and the results of the episode."""

import json

import pytest

from mrsteve.eval.demo import MP4_MISSING, mp4_available, run_demo


def test_demo_writes_plot_video_and_results(tmp_path):
    demo = run_demo("aba-sparse/wool-seeds-wool", "mrsteve", seed=1, out=tmp_path, progress=False,
                    parts="stand-in")
    if mp4_available():
        assert demo.files["mp4"].read_bytes()[4:8] == b"ftyp"  # an MP4 container
        assert demo.notes == []
    else:
        assert "mp4" not in demo.files and demo.notes == [MP4_MISSING]
    assert {"plot", "video", "results"} <= set(demo.files)
    for path in demo.files.values():
        assert path.exists() and path.stat().st_size > 0
        assert path.stat().st_mode & 0o044, "results are readable by others, like any file"
    results = json.loads(demo.files["results"].read_text())
    assert results["steps"] == demo.result.steps
    assert [t["item"] for t in results["tasks"]] == [t.item for t in demo.result.tasks]
    assert demo.files["plot"].read_bytes()[:4] == b"\x89PNG"
    assert demo.files["video"].read_bytes()[:3] == b"GIF"
    assert results["config"]["name"] == results["agent"]  # the agent's configuration tree


def test_without_the_video_extra_there_is_no_mp4(monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "imageio_ffmpeg", None)  # as without the video extra
    assert not mp4_available()


def test_an_mp4_holds_the_captioned_frames(tmp_path):
    pytest.importorskip("imageio_ffmpeg")
    import imageio.v2 as imageio
    import numpy as np

    from mrsteve.eval.demo import save_mp4

    frames = [np.full((20, 30, 3), 40 * i, np.uint8) for i in range(5)]
    path = save_mp4(tmp_path / "v.mp4", frames, [f"t={i}" for i in range(5)])
    read = imageio.mimread(path, format="FFMPEG")
    assert len(read) == 5 and read[0].shape == (34, 30, 3)


def test_the_demo_rejects_a_negative_seed(tmp_path):
    with pytest.raises(ValueError, match="non-negative"):
        run_demo("aba-sparse/wool-seeds-wool", seed=-5, out=tmp_path, progress=False)


@pytest.mark.parametrize("part", [{"navigator": "vpt"}, {"instruction_policy": "steve"}])
def test_the_demo_rejects_an_unknown_part_naming_the_accepted_ones(tmp_path, part):
    out = tmp_path / "demo"
    with pytest.raises(ValueError, match="learned") as error:
        run_demo("aba-sparse/wool-seeds-wool", out=out, progress=False, **part)
    assert next(iter(part.values())) in str(error.value)
    assert not out.exists()


@pytest.mark.parametrize("where", ["out-is-a-file", "plot-is-a-folder", "below-a-file"])
def test_outputs_the_demo_cannot_write_fail_before_the_episode(tmp_path, where, monkeypatch):
    from typer.testing import CliRunner

    from mrsteve.cli import app

    def must_not_run(*args, **kwargs):
        raise AssertionError("the episode ran")

    monkeypatch.setattr("mrsteve.eval.demo.run_tasks", must_not_run)
    (tmp_path / "file").write_text("x")
    (tmp_path / "demo" / "trajectory.png").mkdir(parents=True)
    out = {"out-is-a-file": tmp_path / "file", "plot-is-a-folder": tmp_path / "demo",
           "below-a-file": tmp_path / "file" / "demo"}[where]
    result = CliRunner().invoke(app, ["demo", "--out", str(out)])
    assert result.exit_code == 2 and "error: cannot write" in result.output
    assert "Traceback" not in result.output
    assert (tmp_path / "file").read_text() == "x", "nothing was replaced"


def test_the_progress_bar_ends_full_at_the_steps_the_episode_took(capsys):
    """An episode that ends early (its last task done at step 1,794 of 12,000) leaves a full
    bar, not one stopped at 15 %."""
    from mrsteve.eval.demo import ProgressBar

    bar = ProgressBar(12000, every=20)
    bar.bar.update(1780)
    bar.close(1794)
    final = capsys.readouterr().err.split("\r")[-1]
    assert "100%" in final and "1794/1794" in final


def test_a_crafting_demo_shows_the_plan_and_its_subgoals(tmp_path):
    demo = run_demo("crafting/oak-stairs", "steve1", seed=0, out=tmp_path, progress=False,
                    parts="stand-in")
    results = json.loads(demo.files["results"].read_text())
    assert results["tasks"][0]["item"] == "oak_stairs" and results["tasks"][0]["success"]
    assert results["plans"][0][-1] == "craft oak_stairs x4"
    assert results["config"]["controller"]["name"] == "steve1"
    assert results["memory"] is None  # STEVE-1 remembers nothing


def test_the_demo_runs_the_learned_navigator_with_the_weights_file_it_is_given(tmp_path):
    import shutil
    from pathlib import Path

    import mrsteve.control

    weights = tmp_path / "navigator.npz"
    shutil.copy(Path(mrsteve.control.__file__).parent / "data" / "navigator.npz", weights)
    demo = run_demo("aba-sparse/wool-seeds-wool", "mrsteve", seed=1, out=tmp_path / "demo",
                    video=False, progress=False, parts="stand-in", navigator="learned",
                    navigator_weights=str(weights))
    tree = json.loads(demo.files["results"].read_text())["config"]
    assert tree["navigator_kind"] == "learned"
    assert tree["navigator_weights"] == str(weights.resolve())
    assert tree["navigator_weights_sha256"] is not None


def test_navigator_weights_without_the_learned_navigator_are_refused_before_anything_is_written(
        tmp_path):
    out = tmp_path / "demo"
    with pytest.raises(ValueError, match="give navigator 'learned', not 'depth'"):
        run_demo("aba-sparse/wool-seeds-wool", out=out, progress=False, parts="stand-in",
                 navigator_weights=str(tmp_path / "navigator.npz"))
    assert not out.exists()


def short_episodes(monkeypatch, steps: int = 30) -> None:
    """Every demo episode stops after ``steps`` steps (the demo's outputs, quickly)."""
    import mrsteve.eval.demo

    real = mrsteve.eval.demo.run_tasks
    monkeypatch.setattr(mrsteve.eval.demo, "run_tasks",
                        lambda *args, **kwargs: real(*args, **{**kwargs, "max_steps": steps}))


def earlier_demo(folder, video: bool = True) -> dict:
    """A folder holding an earlier demo's files; returns their contents by name."""
    folder.mkdir(parents=True)
    files = {"trajectory.png": b"old plot", "results.json": b"{}"}
    if video:
        files["agent_view.gif"] = b"old video"
    for name, data in files.items():
        (folder / name).write_bytes(data)
    return files


def test_the_default_folder_names_the_parts_that_are_not_the_default(tmp_path):
    """The learned parts are the default; ``--parts stand-in`` and each part not the one
    ``--parts`` names are named."""
    import shutil
    from pathlib import Path

    import mrsteve.control
    from mrsteve.eval.demo import demo_folder
    from mrsteve.eval.experiment import AgentOptions

    for where in "ab":  # two weights files of one name
        (tmp_path / where).mkdir()
        shutil.copy(Path(mrsteve.control.__file__).parent / "data" / "navigator.npz",
                    tmp_path / where / "nav.npz")
    key = "aba-sparse/water-log-water"
    plain = demo_folder(key, "mrsteve", 0, AgentOptions())
    assert plain.as_posix() == "runs/demo-water-log-water-mrsteve-seed0"
    assert demo_folder(key, "mrsteve", 0, AgentOptions(encoder="pixels")) == plain
    stand_ins = demo_folder(key, "mrsteve", 0, AgentOptions(parts="stand-in"))
    assert stand_ins.as_posix() == "runs/demo-water-log-water-mrsteve-parts-stand-in-seed0"
    pixels = demo_folder(key, "mrsteve", 0, AgentOptions(parts="stand-in", encoder="pixels"))
    assert pixels.as_posix() == (
        "runs/demo-water-log-water-mrsteve-parts-stand-in-encoder-pixels-seed0")
    semantic = demo_folder(key, "mrsteve", 0, AgentOptions(encoder="semantic"))
    assert semantic.as_posix() == "runs/demo-water-log-water-mrsteve-encoder-semantic-seed0"
    weights = {"parts": "stand-in", "navigator": "learned"}
    learned = [demo_folder(key, "mrsteve", 0, AgentOptions(**options)) for options in (
        weights, {"parts": "stand-in", "instruction_policy": "learned"},
        weights | {"navigator_weights": str(tmp_path / "a" / "nav.npz")},
        {"navigator_weights": str(tmp_path / "b" / "nav.npz")})]
    assert len({plain, stand_ins, pixels, semantic, *learned}) == 8, (
        "demos of other agents never share a folder")


DEMO_NAMES = ["results.json", "trace.json.gz", "trajectory.png", "view.html"]
"""What a demo without video writes: the results, the plot, the episode's trace and its page."""


def test_a_demo_replaces_an_earlier_demo_whole_leaving_none_of_its_files(tmp_path, monkeypatch):
    short_episodes(monkeypatch)
    out = tmp_path / "demo"
    earlier_demo(out)
    demo = run_demo("aba-sparse/wool-seeds-wool", out=out, video=False, progress=False,
                    parts="stand-in")
    assert sorted(p.name for p in out.iterdir()) == DEMO_NAMES
    assert demo.files == {"plot": out / "trajectory.png", "results": out / "results.json",
                          "trace": out / "trace.json.gz", "view": out / "view.html"}
    assert json.loads((out / "results.json").read_text())["steps"] == 30
    assert sorted(p.name for p in tmp_path.iterdir()) == ["demo"], "no folder left beside it"


def test_a_folder_holding_other_files_is_refused_and_left_as_it_was(tmp_path, monkeypatch):
    monkeypatch.setattr("mrsteve.eval.demo.run_tasks", must_not_run)
    out = tmp_path / "results"
    files = earlier_demo(out)
    (out / "notes.txt").write_text("mine")
    with pytest.raises(ValueError, match="holds notes.txt, not a demo's files"):
        run_demo("aba-sparse/wool-seeds-wool", out=out, progress=False)
    assert {p.name: p.read_bytes() for p in out.iterdir()} == {**files, "notes.txt": b"mine"}


def test_the_current_folder_is_never_replaced(tmp_path, monkeypatch):
    monkeypatch.setattr("mrsteve.eval.demo.run_tasks", must_not_run)
    monkeypatch.chdir(tmp_path)
    for out in (".", ""):
        with pytest.raises(ValueError, match="holds the current folder"):
            run_demo("aba-sparse/wool-seeds-wool", out=out, progress=False)
    assert list(tmp_path.iterdir()) == []


def must_not_run(*args, **kwargs):
    raise AssertionError("the episode ran")


def interrupt(*args, **kwargs):
    raise KeyboardInterrupt


def test_an_interrupted_demo_says_so_and_leaves_no_folder_it_made(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from mrsteve.cli import app

    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("mrsteve.eval.demo.run_tasks", interrupt)
    result = CliRunner().invoke(app, ["demo", "--task", "wool-seeds-wool", "--no-progress"])
    assert result.exit_code == 130 and "Traceback" not in result.output
    assert result.output.strip() == "interrupted: no demo was written"
    assert list(tmp_path.iterdir()) == [], "runs/ and the demo's folder are removed"


def test_an_interrupted_demo_keeps_the_earlier_demo_and_says_so(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from mrsteve.cli import app

    out = tmp_path / "demo"
    files = earlier_demo(out)
    monkeypatch.setattr("mrsteve.eval.demo.run_tasks", interrupt)
    result = CliRunner().invoke(app, ["demo", "--task", "wool-seeds-wool", "--out", str(out)])
    assert result.exit_code == 130
    assert result.output.strip().splitlines()[-1] == (
        f"interrupted: no demo was written; {out} keeps the earlier demo")
    assert {p.name: p.read_bytes() for p in out.iterdir()} == files
    assert [p.name for p in tmp_path.iterdir()] == ["demo"]


def test_the_demo_command_runs_without_a_progress_bar_into_its_default_folder(tmp_path,
                                                                             monkeypatch):
    from typer.testing import CliRunner

    from mrsteve.cli import app

    short_episodes(monkeypatch)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["demo", "--task", "wool-seeds-wool", "--no-progress",
                                      "--no-video", "--seed", "2"])
    assert result.exit_code == 0, result.output
    assert "step/s" not in result.output and "it/s" not in result.output
    out = tmp_path / "runs" / "demo-wool-seeds-wool-mrsteve-seed2"
    assert sorted(p.name for p in out.iterdir()) == DEMO_NAMES
    tree = json.loads((out / "results.json").read_text())["config"]
    assert (tree["encoder"]["kind"], tree["navigator_kind"], tree["instruction_policy"]) == (
        "pixels", "learned", "learned"), "the paper's agent: the learned parts by default"


def test_the_demo_command_runs_the_stand_ins_with_parts_stand_in(tmp_path, monkeypatch):
    from typer.testing import CliRunner

    from mrsteve.cli import app

    short_episodes(monkeypatch)
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(app, ["demo", "--task", "wool-seeds-wool", "--no-progress",
                                      "--no-video", "--parts", "stand-in", "--navigator",
                                      "learned"])
    assert result.exit_code == 0, result.output
    out = tmp_path / "runs" / "demo-wool-seeds-wool-mrsteve-parts-stand-in-navigator-learned-seed0"
    tree = json.loads((out / "results.json").read_text())["config"]
    assert (tree["encoder"]["kind"], tree["navigator_kind"], tree["instruction_policy"]) == (
        "semantic", "learned", "scripted")


def test_the_demo_says_when_numba_compiles(tmp_path, monkeypatch):
    import numba

    import mrsteve.eval.demo

    real = mrsteve.eval.demo.run_tasks

    def compiling_first(*args, **kwargs):
        numba.njit(lambda x: x + 1)(1)  # a kernel numba has not cached, as on a first run
        return real(*args, **{**kwargs, "max_steps": 10})

    monkeypatch.setattr(mrsteve.eval.demo, "run_tasks", compiling_first)
    lines = []
    run_demo("aba-sparse/wool-seeds-wool", out=tmp_path / "demo", video=False, progress=False,
             parts="stand-in", say=lines.append)
    assert len(lines) == 1 and "compiling" in lines[0]


def test_demos_of_tasks_of_one_name_in_two_suites_never_share_a_folder():
    from mrsteve.eval.demo import demo_folder

    sparse = demo_folder("aba-sparse/wool-log-wool", "mrsteve", 0)
    random = demo_folder("aba-random/wool-log-wool", "mrsteve", 0)
    assert sparse.name == "demo-wool-log-wool-mrsteve-seed0"
    assert random.name == "demo-aba-random-wool-log-wool-mrsteve-seed0"
    assert demo_folder("crafting/bed", "mrsteve", 0).name == "demo-bed-mrsteve-seed0"
