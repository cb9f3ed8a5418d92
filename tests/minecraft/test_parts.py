"""The released models as the agent's parts behind the eval options: ``--encoder mineclip``,
``--navigator vpt-nav`` and ``--instruction-policy steve1`` run ABA-Sparse on the package's world
from tiny checkpoints that ``mrsteve weights synth --tiny`` writes, the tree naming each file by
path and SHA-256; bad files and missing options stop before any work; each file is read once per
process."""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

pytest.importorskip("torch")

from mrsteve.agent.factory import agent_config, build_agent
from mrsteve.cli import app
from mrsteve.digests import plain
from mrsteve.eval.registry import EXPERIMENTS
from mrsteve.minecraft import parts

STEPS = 150
"""Each sub-task's step budget in these runs (the release's is 12,000): enough for every part to
act, short enough for the suite; the numbers are meaningless with random weights anyway."""

FILES = {"mineclip": "attn.pth", "vpt-nav": "vpt_nav.weights", "steve1": "steve1.weights",
         "steve1-prior": "steve1_prior.pt"}


@pytest.fixture(scope="module")
def weights(tmp_path_factory) -> dict[str, Path]:
    """The four released files in their formats, tiny, written by ``mrsteve weights synth``."""
    folder = tmp_path_factory.mktemp("weights")
    for kind, name in FILES.items():
        result = CliRunner().invoke(app, ["weights", "synth", "--kind", kind,
                                          "--out", str(folder / name), "--tiny"])
        assert result.exit_code == 0, result.output
    return {kind: folder / name for kind, name in FILES.items()}


@pytest.fixture
def short_tasks(monkeypatch):
    """ABA-Sparse with :data:`STEPS` steps per sub-task."""
    experiment = EXPERIMENTS["aba-sparse"]
    tasks = type(experiment).tasks
    monkeypatch.setattr(type(experiment), "tasks", lambda self, config: [
        dataclasses.replace(task, max_steps=STEPS) for task in tasks(self, config)])


def sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def run_eval(out: Path, *options: str):
    return CliRunner().invoke(app, ["eval", "aba-sparse", "--task", "water-log-water",
                                    "--episodes", "1", "--no-progress", "--out", str(out),
                                    "--parts", "stand-in", *options])


def recorded_files(out: Path) -> list[list[dict]]:
    """Each group's record of its released weights files."""
    manifest = json.loads((out / "manifest.json").read_text())
    return [tree["agent"]["weights_files"] for tree in manifest["groups"].values()]


@pytest.mark.parametrize("options, kinds", [
    # the encoder and the explorer's navigator act from the first step; STEVE-1 alone too
    (("--encoder", "mineclip", "--mineclip-weights", "{mineclip}"), ["mineclip"]),
    (("--navigator", "vpt-nav", "--vpt-nav-weights", "{vpt-nav}"), ["vpt-nav"]),
    (("--instruction-policy", "steve1", "--steve1-weights", "{steve1}", "--steve1-prior",
      "{steve1-prior}", "--mineclip-weights", "{mineclip}", "--agent", "mrsteve,steve1"),
     ["mineclip", "steve1", "steve1-prior"]),
], ids=["mineclip", "vpt-nav", "steve1"])
def test_each_part_runs_aba_sparse_and_the_tree_names_its_files(weights, short_tasks, tmp_path,
                                                                 options, kinds):
    out = tmp_path / "run"
    result = run_eval(out, *(option.format_map(weights) for option in options))
    assert result.exit_code == 0, result.output
    records = [json.loads(line) for path in sorted(out.glob("summary*.episodes.jsonl"))
               for line in path.read_text().splitlines()]
    assert all(0 < record["steps"] <= 3 * STEPS for record in records)
    expected = [{"kind": kind, "path": str(weights[kind].resolve()),
                 "sha256": sha256(weights[kind])} for kind in kinds]
    assert recorded_files(out) == [expected] * len(records)


def test_a_tree_without_released_files_is_what_it_was():
    """The new field is left out of the plain tree while empty: every existing tree, and so
    every record key, keeps its digest."""
    assert "weights_files" not in plain(agent_config("mrsteve", parts="stand-in"))
    assert "weights_files" not in plain(agent_config("steve1", parts="stand-in",
                                                     instruction_policy="learned"))


def one_line_refusal(result, out: Path, *words: str) -> None:
    assert result.exit_code == 2, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert len(lines) == 1, result.output
    for word in words:
        assert word in lines[0], lines[0]
    assert not out.exists()


@pytest.mark.parametrize("options, words", [
    (("--encoder", "mineclip"), ("--mineclip-weights FILE",)),
    (("--instruction-policy", "steve1", "--steve1-weights", "{steve1}", "--steve1-prior",
      "{steve1-prior}"), ("steve1", "--mineclip-weights FILE")),
    (("--encoder", "mineclip", "--mineclip-weights", "{vpt-nav}"), ("vpt_nav.weights",)),
    (("--encoder", "mineclip", "--mineclip-weights", "missing.pth"), ("missing.pth",)),
    (("--mineclip-weights", "{mineclip}"), ("--encoder mineclip", "--instruction-policy steve1")),
    (("--navigator", "vpt-nav", "--vpt-nav-weights", "{steve1}"), ("steve1.weights",)),
], ids=["no-file", "steve1-without-mineclip", "wrong-file", "missing-file", "unused-file",
        "steve1-as-vpt-nav"])
def test_bad_options_stop_before_any_work(weights, tmp_path, options, words):
    out = tmp_path / "run"
    result = run_eval(out, *(option.format_map(weights) for option in options))
    one_line_refusal(result, out, *words)


def test_the_demo_takes_the_same_options(weights, tmp_path, monkeypatch):
    from mrsteve.eval import demo

    out = tmp_path / "demo"
    result = CliRunner().invoke(app, ["demo", "--navigator", "vpt-nav", "--out", str(out)])
    one_line_refusal(result, out, "--vpt-nav-weights FILE")
    built = []

    def make_agent(*args, parts="stand-in", **kwargs):
        built.append(kwargs)
        raise ValueError("stopped by the test")

    monkeypatch.setattr(demo, "make_agent", make_agent)
    result = CliRunner().invoke(app, ["demo", "--navigator", "vpt-nav", "--vpt-nav-weights",
                                      str(weights["vpt-nav"]), "--out", str(out)])
    one_line_refusal(result, out, "stopped by the test")
    assert built[0]["weights_files"]["vpt-nav"] == str(weights["vpt-nav"])


WITHOUT_TORCH = """
import sys
sys.modules["torch"] = None  # as if torch were not installed
from typer.testing import CliRunner
from mrsteve.cli import app
result = CliRunner().invoke(app, sys.argv[1:])
print(result.exit_code)
print(result.output)
"""


def test_without_torch_a_minecraft_part_says_what_to_install(weights, tmp_path):
    out = tmp_path / "run"
    done = subprocess.run(
        [sys.executable, "-c", WITHOUT_TORCH, "eval", "aba-sparse", "--episodes", "1",
         "--encoder", "mineclip", "--mineclip-weights", str(weights["mineclip"]),
         "--out", str(out)],
        capture_output=True, text=True, check=True, env={**os.environ, "COLUMNS": "200"})
    code, *lines = [line for line in done.stdout.splitlines() if line.strip()]
    assert code == "2" and len(lines) == 1, done.stdout
    assert "the mineclip encoder needs torch" in lines[0]
    assert "pip install 'mrsteve[minecraft]'" in lines[0]
    assert not out.exists()


def test_each_file_is_read_once_per_process(weights, tmp_path, monkeypatch):
    reads = []
    read = parts.read_checkpoint
    monkeypatch.setattr(parts, "read_checkpoint",
                        lambda path, kind: reads.append(path) or read(path, kind))
    path = tmp_path / "attn.pth"
    path.write_bytes(weights["mineclip"].read_bytes())
    tree = agent_config("mrsteve", parts="stand-in", encoder="mineclip",
                        weights_files={"mineclip": str(path)})
    first, second = build_agent(tree), build_agent(tree)
    assert len(reads) == 1
    shared = [next(agent.encoder.model.parameters()).data_ptr() for agent in (first, second)]
    assert shared[0] == shared[1]  # one copy of the tensors for every agent of the process

    path.write_bytes(weights["vpt-nav"].read_bytes())  # another file in its place
    with pytest.raises(ValueError, match="is not a"):
        build_agent(tree)
    path.write_bytes(weights["mineclip"].read_bytes())
    os.utime(path, ns=(1, 1))
    build_agent(tree)  # the same bytes: read again, the hash still the tree's
    assert len(reads) == 3


def test_a_file_changed_since_the_tree_was_made_is_refused(weights, tmp_path):
    path = tmp_path / "attn.pth"
    path.write_bytes(weights["mineclip"].read_bytes())
    tree = agent_config("mrsteve", parts="stand-in", encoder="mineclip",
                        weights_files={"mineclip": str(path)})
    result = CliRunner().invoke(app, ["weights", "synth", "--kind", "mineclip", "--out",
                                      str(path), "--tiny", "--seed", "5", "--force"])
    assert result.exit_code == 0, result.output
    with pytest.raises(ValueError, match="holds other weights"):
        build_agent(tree)


def test_the_part_options_list_the_registry_names(weights):
    result = CliRunner().invoke(app, ["eval", "aba-sparse", "--help"],
                                env={"COLUMNS": "400"})
    text = " ".join(result.output.split())
    assert "Known: semantic, pixels, mineclip." in text
    assert "Known: depth, learned, vpt-nav." in text
    assert "Known: scripted, learned, steve1." in text


def test_the_released_parts_run_on_the_facade_as_on_the_packages_world(weights):
    """All three parts at once, as ``--world minecraft`` runs them, over the facade that presents
    the package's world as MineStudio's simulator: the same record as on the world directly."""
    from mrsteve.eval.sequential import (
        MinecraftRun,
        SequentialConfig,
        SequentialRun,
        minecraft_episode,
        sequential_episode,
    )
    from mrsteve.eval.spec import RunSpec
    from mrsteve.minecraft.facade import VoxelMinecraftSim
    from mrsteve.tasks.sequential import env_kwargs, find_tasks

    task = dataclasses.replace(find_tasks("aba-sparse", "water-log-water")[0], max_steps=60)
    config = SequentialConfig(
        task=task.name, encoder="mineclip", navigator="vpt-nav", instruction_policy="steve1",
        **{name: str(weights[kind]) for kind, name in (
            ("mineclip", "mineclip_weights"), ("vpt-nav", "vpt_nav_weights"),
            ("steve1", "steve1_weights"), ("steve1-prior", "steve1_prior"))})
    tree = config.agent_tree("mrsteve", task.world, None)
    assert [file.kind for file in tree.weights_files] == ["mineclip", "steve1", "steve1-prior",
                                                          "vpt-nav"]
    spec = RunSpec("aba-sparse", "water-log-water.mrsteve", task.key, SequentialRun.of(task),
                   tree, seed=3)
    minecraft = dataclasses.replace(spec, task=MinecraftRun.of_run(spec.task))
    record = minecraft_episode(minecraft, lambda setup, seed: VoxelMinecraftSim(
        seed=seed, num_empty_frames=0, command_ticks=False, **env_kwargs(task)))
    assert record == sequential_episode(spec)
    assert record["steps"] == 60
