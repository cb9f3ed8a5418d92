"""The demo writes what it promises: a plot, a video and the results of the episode."""

import json

import pytest

from mrsteve.eval.demo import MP4_MISSING, mp4_available, run_demo


def test_demo_writes_plot_video_and_results(tmp_path):
    demo = run_demo("aba-sparse/wool-seeds-wool", "mrsteve", seed=1, out=tmp_path, progress=False)
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
