"""The demo writes what it promises: a plot, a video and the results of the episode."""

import json

from mrsteve.eval.demo import run_demo


def test_demo_writes_plot_video_and_results(tmp_path):
    demo = run_demo("aba-sparse/wool-seeds-wool", "mrsteve", seed=1, out=tmp_path, progress=False)
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
