"""`mrsteve eval`: help, errors that list the valid choices, summaries with their episode records,
resuming an interrupted sweep, and plots."""

from __future__ import annotations

import json
import re

import pytest
from typer.testing import CliRunner

import mrsteve
from mrsteve.cli import app
from mrsteve.eval.results import records_path_for


def invoke(*args: str):
    return CliRunner().invoke(app, ["eval", *args, "--no-progress"])


EXPERIMENT_OPTIONS = {
    "exploration": ("--agent", "--navigator", "--navigator-weights", "--direction-weights",
                    "--steps"),
    "navigation": ("--terrain", "--navigator", "--navigator-weights", "--max-steps"),
    "aba-sparse": ("--task", "--agent", "--capacity", "--navigator", "--navigator-weights",
                   "--instruction-policy"),
    "aba-random": ("--task", "--agent", "--capacity", "--navigator", "--navigator-weights",
                   "--instruction-policy"),
    "seq4": ("--agent", "--capacity", "--navigator", "--navigator-weights", "--instruction-policy"),
    "memory-tasks": ("--task", "--agent", "--capacity", "--task-steps", "--radius",
                     "--navigator", "--navigator-weights", "--instruction-policy"),
    "ablation": ("--vary", "--values", "--task", "--agent", "--capacity", "--navigator",
                 "--navigator-weights", "--instruction-policy"),
    "tc-exploration": ("--task", "--agent", "--steps", "--every", "--navigator",
                       "--navigator-weights", "--instruction-policy"),
    "long-instruction": ("--agent", "--steps", "--capacity", "--task-limit", "--rss-every",
                         "--navigator", "--navigator-weights", "--instruction-policy"),
    "long-navigation": ("--agent", "--steps", "--capacity", "--task-limit", "--radius",
                        "--navigator", "--navigator-weights", "--instruction-policy"),
    "llm-planner": ("--task", "--agent", "--planner", "--memory-access", "--llm-url",
                    "--llm-model", "--navigator", "--navigator-weights", "--instruction-policy"),
    "instruction": ("--item", "--instruction-policy", "--placement", "--max-steps"),
}


def test_every_experiment_is_a_command():
    from mrsteve.eval.registry import EXPERIMENTS

    assert list(EXPERIMENTS) == list(EXPERIMENT_OPTIONS)
    result = CliRunner().invoke(app, ["eval", "--help"])
    assert result.exit_code == 0
    for name in EXPERIMENT_OPTIONS:
        assert name in result.output


@pytest.mark.parametrize("command", list(EXPERIMENT_OPTIONS))
def test_every_experiment_shares_the_sweep_options_and_has_its_own(command):
    result = CliRunner().invoke(app, ["eval", command, "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    shared = ("--episodes", "--seed", "--workers", "--backend", "--address", "--out", "--json",
              "--plots", "--progress")
    for option in (*shared, *EXPERIMENT_OPTIONS[command]):
        assert option in result.output, option


def test_the_commands_defaults_are_the_experiments_configs():
    import inspect

    from mrsteve.cli.eval import make_command
    from mrsteve.eval.registry import EXPERIMENTS

    defaults = {name: {p.name: p.default
                       for p in inspect.signature(make_command(e)).parameters.values()}
                for name, e in EXPERIMENTS.items()}
    assert defaults["exploration"] == {"agent": "count-based", "parts": "learned",
                                       "navigator": None, "navigator_weights": None,
                                       "direction_weights": None,
                                       "vpt_nav_weights": None, "instruction_policy": None,
                                       "steve1_weights": None, "steve1_prior": None,
                                       "mineclip_weights": None,
                                       "steps": 6000, "world": "map1",
                                       "area": None, "patch_size": None, "frontier": "nearest",
                                       "look": "day",
                                       "episodes": 20,
                                            "seed": 42, "workers": 1, "backend": "local",
                                            "address": None, "out": None, "json_path": None,
                                            "plots": None, "progress": True, "plan": False}
    assert defaults["aba-sparse"]["trace"] is False, "--trace where the episodes keep one"
    assert (defaults["navigation"]["terrain"], defaults["navigation"]["navigator"],
            defaults["navigation"]["max_steps"], defaults["navigation"]["episodes"]) == (
        "all", None, 1000, 20)
    from mrsteve.tasks.catalog import load_catalog

    for name in ("aba-sparse", "aba-random"):
        config = EXPERIMENTS[name].config_type()  # every task, MrSteve, unlimited memory
        assert (config.agents, config.capacity, defaults[name]["episodes"]) == (
            ["mrsteve"], None, 10)
        assert len(EXPERIMENTS[name].groups(config)) == len(load_catalog().suites[name])
        # each part is the one --parts names: the learned ones unless told otherwise
        assert defaults[name]["parts"] == "learned"
        assert defaults[name]["navigator"] is None and defaults[name]["encoder"] is None
    assert defaults["navigation"]["navigator_weights"] is None
    assert "task" not in defaults["seq4"] and defaults["seq4"]["episodes"] == 10


@pytest.mark.parametrize("name", list(EXPERIMENT_OPTIONS))
def test_every_command_runs_with_its_defaults(name, tmp_path, monkeypatch):
    """No option is needed: every default passes its option's own checks (``--rss-every``
    defaults to 0, "never") and reaches the experiment's config unchanged."""
    from mrsteve.eval.registry import EXPERIMENTS

    experiment = EXPERIMENTS[name]
    configs = []
    monkeypatch.setattr(type(experiment), "run",
                        lambda self, config, sweep, echo: configs.append(config))
    result = invoke(name, "--out", str(tmp_path))
    assert result.exit_code == 0, result.output
    assert configs == [experiment.config_type()]


def test_python_dash_m_runs_the_command_line():
    import os
    import subprocess
    import sys
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    env = {**os.environ, "PYTHONPATH": str(root)}
    result = subprocess.run([sys.executable, "-m", "mrsteve", "eval", "--help"], env=env,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0 and "aba-sparse" in result.stdout


@pytest.mark.parametrize(
    ("args", "valid"),
    [
        (["exploration", "--agent", "random"], "count-based, count-based-straight, plan4mc"),
        (["aba-random", "--task", "water-sand-water"], "water-log-water, beef-log-beef"),
        (["navigation", "--terrain", "swamp"], "flat, plains, mountain, river"),
        (["navigation", "--navigator", "vpt"], "depth, straight"),
    ],
)
def test_unknown_choices_are_errors_listing_the_valid_ones(args, valid):
    result = invoke(*args)
    assert result.exit_code == 2
    assert "unknown" in result.output and valid in result.output


def test_a_run_writes_its_summary_and_records_and_a_second_run_resumes(tmp_path, monkeypatch):
    summary_path = tmp_path / "explore.json"
    args = ["exploration", "--parts", "stand-in", "--episodes", "1", "--steps", "200", "--json",
            str(summary_path), "--plots", str(tmp_path / "plots")]
    result = invoke(*args)
    assert result.exit_code == 0, result.output
    summary = json.loads(summary_path.read_text())
    assert summary["task"] == "exploration" and summary["agent"] == "count-based"
    assert summary["episodes"] == 1
    assert set(summary["metrics"]) == {"map_coverage", "revisit_count"}
    assert summary["metrics"]["map_coverage"]["mean"] > 0
    assert summary["config"]["task"]["steps"] == 200 and summary["config"]["seeds"] == [42]
    assert summary["config"]["agent"]["explorer"]["kind"] == "count-based"
    assert summary["config"]["agent"]["explorer"]["goals"]["patch_size"] == 15.0
    # 200 steps is not the paper's 6,000-step set-up: its figure is left out, and the table says so
    assert "84.42" not in result.output and "not comparable" in result.output
    records = records_path_for(summary_path).read_text().splitlines()
    assert len(records) == 1 and json.loads(records[0])["seed"] == 42
    assert (tmp_path / "plots" / "count-based_000.png").stat().st_size > 0

    from mrsteve.eval.exploration import EXPLORATION

    def must_not_run(spec):
        raise AssertionError(f"episode {spec} was already recorded")

    monkeypatch.setattr(EXPLORATION, "episode", must_not_run)
    again = invoke(*args)
    assert again.exit_code == 0, again.output
    assert records_path_for(summary_path).read_text().splitlines() == records
    assert json.loads(summary_path.read_text())["metrics"] == summary["metrics"]

    other_settings = [*args]
    other_settings[other_settings.index("200")] = "100"
    rerun = invoke(*other_settings)
    assert rerun.exit_code != 0, "records of other settings are not resumed from"
    assert "already recorded" in str(rerun.exception)


def test_navigation_writes_one_summary_per_terrain(tmp_path):
    result = invoke("navigation", "--parts", "stand-in", "--terrain", "flat,plains",
                    "--episodes", "1", "--max-steps", "300", "--json", str(tmp_path / "nav.json"))
    assert result.exit_code == 0, result.output
    for terrain in ("flat", "plains"):
        summary = json.loads((tmp_path / f"nav.{terrain}.json").read_text())
        assert summary["task"] == f"navigation/{terrain}" and summary["agent"] == "depth"
        assert set(summary["metrics"]) == {"success_rate", "spl"}
        assert (tmp_path / f"nav.{terrain}.episodes.jsonl").exists()
    assert "0.849 (96 %)" in result.output  # VPT-Nav on flat, beside ours


def test_aba_sparse_writes_its_summary_and_plots_success(tmp_path):
    args = ["eval", "aba-sparse", "--task", "wool-seeds-wool", "--agent", "steve1",
            "--parts", "stand-in", "--episodes", "1", "--no-progress", "--json", str(tmp_path / "aba.json"),
            "--plots", str(tmp_path)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    summary = json.loads((tmp_path / "aba.json").read_text())
    assert summary["task"] == "aba-sparse/wool-seeds-wool" and summary["agent"] == "steve1"
    assert set(summary["metrics"]) == {"success_rate", "success_A", "success_B", "success_A2",
                                       "duration_A", "duration_B", "duration_A2", "explore_A",
                                       "explore_B", "explore_A2"}
    assert summary["metrics"]["explore_A"]["n"] == 0  # STEVE-1 has no Explore mode
    assert summary["config"]["task"]["world"] == "map2"
    agent = summary["config"]["agent"]  # the agent's configuration tree
    assert agent["name"] == "steve1" and agent["memory"] is None
    assert set(agent) >= {"explorer", "navigator", "skills", "mode_selector"}
    assert (tmp_path / "aba-sparse-success.png").stat().st_size > 0


def test_aba_sparse_rejects_unknown_tasks_and_agents():
    bad_task = CliRunner().invoke(app, ["eval", "aba-sparse", "--task", "water-wood-water"])
    assert bad_task.exit_code == 2 and "water-log-water" in bad_task.output
    bad_agent = CliRunner().invoke(app, ["eval", "aba-sparse", "--agent", "mrsteeve"])
    assert bad_agent.exit_code == 2 and "center-embed" in bad_agent.output
    bad_capacity = CliRunner().invoke(app, ["eval", "aba-sparse", "--capacity", "100,0.5k"])
    assert bad_capacity.exit_code == 2
    assert "'0.5k'" in bad_capacity.output and "100,500,1000,2000,12000" in bad_capacity.output


@pytest.mark.parametrize("command", [*(["eval", name] for name in EXPERIMENT_OPTIONS), ["demo"]])
def test_a_negative_seed_is_a_clear_error(command):
    result = CliRunner().invoke(app, [*command, "--seed", "-5"], terminal_width=200)
    assert result.exit_code == 2
    text = " ".join(result.output.replace("│", " ").split())
    assert "--seed" in text and "greater than or equal to 0" in text
    assert "Traceback" not in result.output and "gymnasium" not in result.output


def test_json_to_a_directory_fails_before_the_first_episode(tmp_path, monkeypatch):
    from mrsteve.eval.exploration import EXPLORATION

    def must_not_run(spec):
        raise AssertionError("an episode ran")

    monkeypatch.setattr(EXPLORATION, "episode", must_not_run)
    result = invoke("exploration", "--episodes", "1", "--json", str(tmp_path))
    assert result.exit_code == 2
    assert "is a directory" in result.output


def test_the_ray_backend_without_ray_names_the_extra(tmp_path, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "ray", None)  # as if not installed
    result = invoke("exploration", "--episodes", "2", "--steps", "30", "--backend", "ray",
                    "--json", str(tmp_path / "x.json"))
    assert result.exit_code == 2
    assert "pip install 'mrsteve[ray]'" in result.output


def test_a_run_folder_holds_summary_records_plots_and_manifest(tmp_path):
    out = tmp_path / "run"
    result = invoke("exploration", "--parts", "stand-in", "--episodes", "2", "--steps", "30",
                    "--seed", "7", "--out", str(out))
    assert result.exit_code == 0, result.output
    assert sorted(p.name for p in out.iterdir()) == [
        "manifest.json", "plots", "summary.episodes.jsonl", "summary.json"]
    assert sorted(p.name for p in (out / "plots").iterdir()) == [
        "count-based_000.png", "count-based_001.png"]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["experiment"] == "exploration"
    assert manifest["config"]["steps"] == 30
    assert manifest["groups"]["count-based"]["agent"]["explorer"]["kind"] == "count-based"
    assert manifest["sweep"]["seeds"] == [7, 8] and manifest["sweep"]["backend"] == "local"
    assert manifest["versions"]["numpy"] and manifest["versions"]["mrsteve"] == mrsteve.__version__
    assert manifest["wall_time_s"] > 0
    assert manifest["git"] is None or len(manifest["git"]["commit"]) == 40


def test_a_manifest_names_the_run_folder_as_given_from_where_it_ran(tmp_path, monkeypatch):
    """No machine's folders: an absolute --out inside the working folder is kept relative, and
    the program by its name."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.argv", ["/opt/venv/bin/mrsteve", "eval", "exploration"])
    result = invoke("exploration", "--parts", "stand-in", "--episodes", "1", "--steps", "30",
                    "--out", str(tmp_path / "runs" / "a"))
    assert result.exit_code == 0, result.output
    manifest = json.loads((tmp_path / "runs" / "a" / "manifest.json").read_text())
    assert manifest["sweep"]["out"] == "runs/a"
    assert manifest["command"][0] == "mrsteve"
    assert str(tmp_path) not in json.dumps(manifest["sweep"])


def test_a_rerun_with_more_steps_does_not_reuse_the_records_of_fewer(tmp_path):
    """--steps 30 then --steps 3000 on one --json: the second run does not take the first's
    records (their settings differ)."""
    path = tmp_path / "x.json"
    first = invoke("exploration", "--parts", "stand-in", "--episodes", "1", "--steps", "30",
                   "--json", str(path))
    assert first.exit_code == 0, first.output
    second = invoke("exploration", "--parts", "stand-in", "--episodes", "1", "--steps", "3000",
                    "--json", str(path))
    assert second.exit_code == 0, second.output
    summary = json.loads(path.read_text())
    records = [json.loads(line) for line in records_path_for(path).read_text().splitlines()]
    assert len(records) == 2, "the 3000-step episode ran instead of reusing the 30-step one"
    assert summary["config"]["task"]["steps"] == 3000
    assert summary["metrics"]["map_coverage"]["mean"] == records[1]["map_coverage"]
    assert records[1]["map_coverage"] > records[0]["map_coverage"]


def test_option_help_shows_install_extras_as_written():
    """Help text is shown literally: ``'mrsteve[ray]'`` is not taken for markup and dropped,
    and flags show no type placeholder."""
    result = CliRunner().invoke(app, ["eval", "long-navigation", "--help"], env={"COLUMNS": "200"})
    assert result.exit_code == 0
    assert "pip install 'mrsteve[ray]'" in " ".join(result.output.split())
    assert "<bool>" not in result.output
    assert re.search(r"--progress / --no-progress +Show", result.output)
    result = CliRunner().invoke(app, ["train", "--help"], env={"COLUMNS": "200"})
    assert "pip install 'mrsteve[train]'" in result.output


@pytest.mark.parametrize("name", list(EXPERIMENT_OPTIONS))
def test_every_experiment_has_an_example_in_its_help_that_parses(name, monkeypatch):
    from mrsteve.eval.registry import EXPERIMENTS

    experiment = EXPERIMENTS[name]
    help_text = CliRunner().invoke(app, ["eval", name, "--help"], env={"COLUMNS": "300"}).output
    assert experiment.examples and "Examples" in help_text
    ran = []
    monkeypatch.setattr(type(experiment), "run", lambda self, config, sweep, echo: ran.append(
        (config, sweep)))
    for example in experiment.examples:
        assert f"mrsteve eval {name} {example}" in " ".join(help_text.split())
        result = CliRunner().invoke(app, ["eval", name, *example.split()])
        assert result.exit_code == 0, (example, result.output)
    assert len(ran) == len(experiment.examples), "every example is a valid command line"


@pytest.mark.parametrize(("args", "says"), [
    (("--planner", "deps"), "--llm-url http://"),
    (("--planner", "gpt"), "unknown planner 'gpt'"),
    (("--memory-access", "maybe"), "memory access"),
    (("--task", "bed,diamond-sword"), "diamond-sword"),
    (("--planner", "deps", "--llm-url", "localhost:8000"), "http:// or https://"),
])
def test_the_crafting_experiment_refuses_bad_settings_before_any_episode(args, says, tmp_path):
    result = invoke("llm-planner", *args, "--out", str(tmp_path / "run"))
    assert result.exit_code != 0
    assert says in result.output and "Traceback" not in result.output
    assert not (tmp_path / "run").exists()


LEARNED = {"encoder": "pixels", "navigator": "learned", "instruction_policy": "learned"}
STAND_INS = {"encoder": "semantic", "navigator": "depth", "instruction_policy": "scripted"}


def parts_of(tree: dict) -> dict[str, str]:
    """The parts an agent's configuration tree (a spec's, a summary's) names."""
    return {"encoder": tree["encoder"]["kind"], "navigator": tree["navigator_kind"],
            "instruction_policy": tree["instruction_policy"]}


@pytest.mark.parametrize(("args", "parts"), [
    ((), LEARNED),
    (("--parts", "stand-in"), STAND_INS),
    (("--parts", "stand-in", "--navigator", "learned"), STAND_INS | {"navigator": "learned"}),
    (("--encoder", "semantic"), LEARNED | {"encoder": "semantic"}),
])
def test_the_agent_runs_the_parts_parts_names_each_part_option_overriding_it(args, parts,
                                                                           tmp_path, monkeypatch):
    """The paper's agent sees the RGB frame and its pose alone: with no part option MrSteve and
    STEVE-1 run the learned parts; --parts stand-in runs the stand-ins; a part's own option
    overrides --parts for that part. The run specs (the records' keys, the summaries' and the
    manifest's trees) and the command line the manifest records name the parts that run."""
    from mrsteve.eval.options import SweepOptions
    from mrsteve.eval.sequential import ABA_SPARSE

    configs = []
    monkeypatch.setattr(type(ABA_SPARSE), "run",
                        lambda self, config, sweep, echo: configs.append(config))
    result = invoke("aba-sparse", "--task", "water-log-water", "--agent", "mrsteve,steve1",
                    *args, "--out", str(tmp_path))
    assert result.exit_code == 0, result.output
    (config,) = configs
    assert {kind: getattr(config, kind) for kind in parts} == parts
    trees = {group.agent: group.spec.tree()["agent"] for group in ABA_SPARSE.groups(config)}
    assert parts_of(trees["mrsteve"]) == parts
    assert trees["steve1"]["instruction_policy"] == parts["instruction_policy"]
    command = ABA_SPARSE.command_line(config, SweepOptions(episodes=10))
    assert command.endswith(" ".join(["water-log-water", "--agent", "mrsteve,steve1", *args]))


@pytest.mark.parametrize(("args", "reads"), [
    ((), "algorithm-2"), (("--memory-reads", "every-explore-step"), "every-explore-step")])
def test_the_memory_reads_follow_algorithm_2_unless_the_release_rule_is_asked(args, reads,
                                                                            monkeypatch,
                                                                            tmp_path):
    """By default the agent reads its memory as Algorithm 2 does (at a task's start and after L
    steps in a mode); --memory-reads every-explore-step, the authors' release's rule, reaches the
    agent's tree (so the records' keys tell the two apart) and the command line the manifest
    keeps."""
    from mrsteve.eval.options import SweepOptions
    from mrsteve.eval.sequential import ABA_SPARSE

    configs = []
    monkeypatch.setattr(type(ABA_SPARSE), "run",
                        lambda self, config, sweep, echo: configs.append(config))
    result = invoke("aba-sparse", "--task", "water-log-water", "--agent", "mrsteve", *args,
                    "--out", str(tmp_path))
    assert result.exit_code == 0, result.output
    (config,) = configs
    (group,) = ABA_SPARSE.groups(config)
    assert group.spec.agent.mode_selector.memory_reads == reads
    command = ABA_SPARSE.command_line(config, SweepOptions(episodes=10))
    assert command.endswith(" ".join(["--agent", "mrsteve", *args]))


def test_a_default_run_records_the_learned_parts(tmp_path):
    out = tmp_path / "run"
    result = invoke("exploration", "--episodes", "1", "--steps", "30", "--out", str(out))
    assert result.exit_code == 0, result.output
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["config"]["parts"] == "learned"
    assert manifest["config"]["navigator"] == "learned"
    assert "--parts" not in manifest["command_line"]
    tree = json.loads((out / "summary.json").read_text())["config"]["agent"]
    assert tree["explorer"]["navigator"] == "learned" == manifest["groups"]["count-based"][
        "agent"]["explorer"]["navigator"]
    from mrsteve.eval.exploration import EXPLORATION, ExplorationTaskConfig

    (group,) = EXPLORATION.groups(ExplorationTaskConfig(steps=30))
    (record,) = [json.loads(line) for line in (out / "summary.episodes.jsonl").open()]
    assert record["digest"] == group.spec.episode(0, 42).digest  # keyed by the learned tree


@pytest.mark.parametrize("command", [["eval", "aba-sparse"], ["eval", "exploration"],
                                     ["eval", "navigation"], ["eval", "instruction"], ["demo"],
                                     ["bench", "agent"]])
def test_an_unknown_parts_value_is_one_line_naming_the_accepted_ones(command, tmp_path,
                                                                     monkeypatch):
    monkeypatch.chdir(tmp_path)  # where a run's default folder would be made
    result = CliRunner().invoke(app, [*command, "--parts", "stand_in"])
    assert result.exit_code == 2, result.output
    assert "Traceback" not in result.output and not (tmp_path / "runs").exists()
    (line,) = [line for line in result.output.splitlines() if line.strip()]
    assert "unknown parts 'stand_in'; known: learned, stand-in" in line


@pytest.mark.parametrize("command", [["eval", "aba-sparse"], ["eval", "exploration"], ["demo"],
                                     ["bench", "agent"]])
def test_the_help_states_the_default_parts_and_the_stand_ins_option(command):
    result = CliRunner().invoke(app, [*command, "--help"], env={"COLUMNS": "300"})
    text = " ".join(result.output.replace("│", " ").split())
    assert result.exit_code == 0 and "--parts" in text
    assert "learned (the" in text and "stand-in (" in text
