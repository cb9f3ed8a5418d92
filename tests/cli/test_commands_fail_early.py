"""What the commands owe their user: an output that cannot be written is refused before any work,
every error the user can cause is one line (a full disk and a folder made read-only meanwhile
included), every command's help shows working examples, and nothing the package ships speaks of
its development's issues.

The work itself (benchmarks, calibration, training) is replaced here: by a function that fails
the test if it runs, or by one that returns a finished result at once."""

from __future__ import annotations

import errno
import os
import re
import shlex
from pathlib import Path
from types import SimpleNamespace

import pytest
import typer
from typer.testing import CliRunner

from mrsteve.cli import app

COMMANDS = {
    "bench agent": ("mrsteve.bench.agent.bench_agent", ["--steps", "100"]),
    "bench memory": ("mrsteve.bench.memory.run_memory_benchmark", ["--frames", "10"]),
    "bench world": ("mrsteve.bench.world.run_world_bench", ["--worlds", "flat"]),
    "calibrate": ("mrsteve.calibration.calibrate_on_world", ["--clips", "10"]),
    "train encoder": ("mrsteve.train.encoder.train_encoder", []),
    "train navigator": ("mrsteve.train.navigator.train_navigator", []),
    "train instruction-policy": ("mrsteve.train.instruction.train_instruction_policy", []),
    "train direction-policy": ("mrsteve.train.direction.train_direction_policy", []),
    "train dqn-navigator": ("mrsteve.train.dqn.train_dqn_navigator", []),
}
"""Each command: the function that does its work, and options that make a small run."""

OUTPUTS = [("bench agent", "--json"), ("bench memory", "--json"), ("bench world", "--json"),
           ("calibrate", "--out"), ("calibrate", "--json"), ("train encoder", "--json"),
           ("train navigator", "--json"), ("train instruction-policy", "--json"),
           ("train direction-policy", "--json"), ("train dqn-navigator", "--json")]
"""The output files the commands take."""

AS_ROOT = os.geteuid() == 0
"""Root writes into read-only folders, so those cases cannot be made."""


def invoke(command: str, *arguments: str, tmp_path: Path | None = None):
    """Run ``mrsteve <command> <its small run> <arguments>`` (``train`` commands get a run folder
    in ``tmp_path`` unless ``--out`` is given)."""
    line = [*command.split(), *COMMANDS[command][1], *arguments]
    if command.startswith("train") and "--out" not in arguments:
        line += ["--out", str(tmp_path / "run")]
    return CliRunner().invoke(app, line)


def must_not_run(*args, **kwargs):
    raise AssertionError("work ran")


def forbid_work(monkeypatch) -> None:
    for target, _ in COMMANDS.values():
        monkeypatch.setattr(target, must_not_run)


def finish_work_at_once(monkeypatch, during=lambda: None) -> None:
    """Each command's work returns a finished result at once (calling ``during`` first)."""

    def returning(value):
        def work(*args, **kwargs):
            during()
            return value

        return work

    agent = {"agent": "mrsteve", "world": "map1", "obs_size": [40, 64], "steps": 100,
             "steps_per_second": 1000.0, "tasks_completed": 0, "paper_steps_per_second": 11.0,
             "microseconds_per_step": {"memory read": 10.0}, "warm_up_steps": 300,
             "warm_up_seconds": 0.1}
    calibration = SimpleNamespace(summary=lambda command: {"command": command})
    training = SimpleNamespace(history=[{"val_map": 0.5, "val_loss": 1.0}], seconds=1.0,
                               weights=SimpleNamespace(sha256="0" * 64))
    for target, value in (("mrsteve.bench.agent.bench_agent", agent),
                          ("mrsteve.bench.memory.run_memory_benchmark", {}),
                          ("mrsteve.bench.memory.run_long_run", {}),
                          ("mrsteve.bench.world.run_world_bench", {}),
                          ("mrsteve.calibration.calibrate_on_world", calibration),
                          ("mrsteve.train.encoder.train_encoder", training),
                          ("mrsteve.train.navigator.train_navigator", training),
                          ("mrsteve.train.instruction.train_instruction_policy", training),
                          ("mrsteve.train.direction.train_direction_policy", training),
                          ("mrsteve.train.dqn.train_dqn_navigator", training)):
        monkeypatch.setattr(target, returning(value))
    for target in ("mrsteve.bench.memory.format_report", "mrsteve.bench.memory.format_long_run",
                   "mrsteve.bench.world.format_report",
                   "mrsteve.calibration.format_world_calibration"):
        monkeypatch.setattr(target, lambda *args, **kwargs: "the results\n")


def assert_one_error_line(result, *fragments: str) -> str:
    """The command ended with exit code 2 and one ``error:`` line holding every fragment, and no
    exception escaped it."""
    assert result.exit_code == 2, result.output
    assert not isinstance(result.exception, Exception), result.exception
    assert "Traceback" not in result.output
    (line,) = [line for line in result.output.splitlines() if line.startswith("error:")]
    for fragment in fragments:
        assert fragment in line, result.output
    return line


@pytest.fixture
def read_only(tmp_path):
    """An empty folder nobody but root may write into."""
    if AS_ROOT:
        pytest.skip("root writes into read-only folders")
    folder = tmp_path / "read-only"
    folder.mkdir()
    folder.chmod(0o555)
    yield folder
    folder.chmod(0o755)


# --- outputs are checked before the work -------------------------------------------------------


@pytest.mark.parametrize(("command", "option"), OUTPUTS)
def test_a_device_as_output_is_refused_before_any_work(command, option, tmp_path, monkeypatch):
    forbid_work(monkeypatch)
    result = invoke(command, option, "/dev/full", tmp_path=tmp_path)
    assert_one_error_line(result, "cannot write /dev/full", "not a regular file")


@pytest.mark.parametrize(("command", "option"), OUTPUTS)
def test_a_folder_as_output_file_is_refused_before_any_work(command, option, tmp_path,
                                                             monkeypatch):
    forbid_work(monkeypatch)
    folder = tmp_path / "results"
    folder.mkdir()
    result = invoke(command, option, str(folder), tmp_path=tmp_path)
    assert_one_error_line(result, f"cannot write {folder}", "it is a directory")


@pytest.mark.parametrize(("command", "option"), OUTPUTS)
def test_an_output_in_a_read_only_folder_is_refused_before_any_work(command, option, read_only,
                                                                    tmp_path, monkeypatch):
    forbid_work(monkeypatch)
    result = invoke(command, option, str(read_only / "results"), tmp_path=tmp_path)
    assert_one_error_line(result, f"cannot write {read_only / 'results'}",
                          f"directory {read_only} is not writable")
    assert list(read_only.iterdir()) == []


def test_calibrate_checks_the_shipped_thresholds_file_before_replacing_it(monkeypatch):
    forbid_work(monkeypatch)
    monkeypatch.setattr("mrsteve.digests.PACKAGE_ROOT", Path("/dev/full"))
    result = invoke("calibrate", "--write")
    assert_one_error_line(result, "cannot write /dev/full")


@pytest.mark.parametrize("where", ["the folder", "a new folder in it"])
def test_train_refuses_a_run_folder_it_cannot_write_before_any_work(where, read_only,
                                                                    monkeypatch):
    forbid_work(monkeypatch)
    out = read_only if where == "the folder" else read_only / "run"
    result = invoke("train encoder", "--out", str(out))
    assert_one_error_line(result, f"cannot write {out / 'pixels.npz'}", "not writable")
    assert list(read_only.iterdir()) == []


def test_train_refuses_a_run_folder_under_a_file_before_any_work(tmp_path, monkeypatch):
    forbid_work(monkeypatch)
    blocker = tmp_path / "notes.txt"
    blocker.write_text("mine")
    result = invoke("train encoder", "--out", str(blocker / "run"))
    assert_one_error_line(result, f"{blocker} is not a directory")
    assert blocker.read_text() == "mine"


def test_train_refuses_a_file_as_run_folder_and_says_what_it_takes(tmp_path, monkeypatch):
    forbid_work(monkeypatch)
    file = tmp_path / "run"
    file.write_text("mine")
    result = invoke("train encoder", "--out", str(file))
    assert_one_error_line(result, "is not a folder", "give a folder or a new path")


# --- failures while writing the results ----------------------------------------------------------


def full_disk(path, *args, **kwargs):
    raise OSError(errno.ENOSPC, "No space left on device", str(path))


@pytest.mark.parametrize(("command", "option"), OUTPUTS)
def test_a_disk_that_fills_before_the_results_are_written_is_one_line(command, option, tmp_path,
                                                                     monkeypatch):
    finish_work_at_once(monkeypatch)
    monkeypatch.setattr("mrsteve.fileio.atomic_path", full_disk)
    result = invoke(command, option, str(tmp_path / "results"), tmp_path=tmp_path)
    assert_one_error_line(result, "could not write the results", "the disk is full")


def test_a_disk_that_fills_while_training_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setattr("mrsteve.train.encoder.train_encoder", full_disk)
    result = invoke("train encoder", tmp_path=tmp_path)
    assert_one_error_line(result, "the disk is full")


@pytest.mark.skipif(AS_ROOT, reason="root writes into read-only folders")
@pytest.mark.parametrize(("command", "option"), OUTPUTS)
def test_a_folder_made_read_only_during_the_work_is_one_line(command, option, tmp_path,
                                                           monkeypatch):
    folder = tmp_path / "results"
    folder.mkdir()
    finish_work_at_once(monkeypatch, during=lambda: folder.chmod(0o555))
    try:
        result = invoke(command, option, str(folder / "results"), tmp_path=tmp_path)
    finally:
        folder.chmod(0o755)
    assert_one_error_line(result, f"cannot write {folder / 'results'}",
                          f"directory {folder} is not writable")
    assert list(folder.iterdir()) == []


def test_a_full_disk_in_a_long_memory_run_is_one_line(tmp_path, monkeypatch):
    finish_work_at_once(monkeypatch)
    monkeypatch.setattr("mrsteve.fileio.atomic_path", full_disk)
    result = invoke("bench memory", "--long-run", "--json", str(tmp_path / "long.json"))
    assert_one_error_line(result, "the disk is full")


# --- bad option values ---------------------------------------------------------------------------


@pytest.mark.parametrize("command", ["bench agent", "bench memory", "bench world", "calibrate",
                                     "train encoder", "train navigator",
                                     "train instruction-policy", "train direction-policy",
                                     "train dqn-navigator"])
def test_a_negative_seed_is_refused_before_any_work(command, tmp_path, monkeypatch):
    forbid_work(monkeypatch)
    result = invoke(command, "--seed", "-1", tmp_path=tmp_path)
    assert result.exit_code == 2 and not isinstance(result.exception, Exception)
    assert "--seed" in result.output and "greater than or equal to 0" in result.output


def test_no_observation_size_is_refused_with_the_accepted_forms(monkeypatch):
    forbid_work(monkeypatch)
    result = invoke("bench world", "--sizes", ",")
    assert_one_error_line(result, "give at least one observation size", "HxW (like 64x64)",
                          "'default'")


def test_an_observation_size_out_of_bounds_names_the_bounds(monkeypatch):
    forbid_work(monkeypatch)
    result = invoke("bench world", "--sizes", "0x0")
    assert_one_error_line(result, "0 x 0", "1..4096")


def test_an_old_memory_name_is_refused_with_the_names_of_today(monkeypatch):
    forbid_work(monkeypatch)
    result = invoke("bench memory", "--memory", "place-event-centre")
    assert_one_error_line(result, "unknown --memory 'place-event-centre'", "center-embed",
                          "place-event-fp16")


def test_too_few_calibration_clips_are_refused_before_any_work(monkeypatch):
    from mrsteve.calibration.thresholds import MIN_CLIPS

    forbid_work(monkeypatch)
    result = CliRunner().invoke(app, ["calibrate", "--clips", str(2 * MIN_CLIPS - 1)])
    assert result.exit_code == 2 and not isinstance(result.exception, Exception)
    assert "--clips" in result.output and f"greater than or equal to {2 * MIN_CLIPS}" in (
        result.output)


def test_a_calibration_the_clips_cannot_support_is_one_line(monkeypatch):
    def refuses(*args, **kwargs):
        raise ValueError("clips must be at least 10, got 9")

    monkeypatch.setattr("mrsteve.calibration.calibrate_on_world", refuses)
    assert_one_error_line(invoke("calibrate"), "clips must be at least 10")


# --- examples in the help ------------------------------------------------------------------------

EXAMPLE_COMMANDS = ["bench agent", "bench memory", "bench world", "calibrate", "train encoder",
                    "train navigator", "train instruction-policy", "train direction-policy",
                    "train dqn-navigator", "worlds"]


def examples_of(command: str) -> list[str]:
    """The example command lines of ``mrsteve <command> --help``."""
    click_command = typer.main.get_command(app)
    for name in command.split():
        click_command = click_command.commands[name]
    epilog = click_command.epilog or ""
    return [line.strip() for line in epilog.splitlines() if line.strip().startswith("mrsteve ")]


@pytest.mark.parametrize("command", EXAMPLE_COMMANDS)
def test_the_help_shows_examples(command):
    result = CliRunner().invoke(app, [*command.split(), "--help"], terminal_width=200)
    assert result.exit_code == 0
    examples = examples_of(command)
    assert examples and "Examples:" in result.output
    for example in examples:
        assert example in result.output


@pytest.mark.parametrize("command", EXAMPLE_COMMANDS)
def test_every_example_runs(command, tmp_path, monkeypatch):
    """Each example's options parse and pass every check (the work itself finishes at once)."""
    monkeypatch.chdir(tmp_path)
    finish_work_at_once(monkeypatch)
    examples = examples_of(command)
    assert examples
    for example in examples:
        arguments = shlex.split(example)[1:]
        result = CliRunner().invoke(app, arguments)
        assert result.exit_code == 0, f"{example}: {result.output}"


# --- the package speaks of itself and the paper --------------------------------------------------

ISSUE = re.compile(r"\bissues?\b", re.IGNORECASE)


def test_nothing_the_package_ships_mentions_its_issues():
    root = Path(__file__).resolve().parents[2] / "mrsteve"
    found = []
    for path in root.rglob("*"):
        if path.suffix not in {".py", ".toml", ".md", ".txt", ".json"} or not path.is_file():
            continue
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if ISSUE.search(line):
                found.append(f"{path.relative_to(root.parent)}:{number}: {line.strip()}")
    assert found == []


def test_a_bad_navigator_training_setting_is_one_line_before_any_work(tmp_path, monkeypatch):
    forbid_work(monkeypatch)
    result = invoke("train navigator", "--conditioning", "before", tmp_path=tmp_path)
    assert_one_error_line(result, "conditioning must be one of trxl, head, dual", "'before'")
    result = invoke("train navigator", "--foundation", str(tmp_path), tmp_path=tmp_path)
    assert_one_error_line(result, f"--foundation {tmp_path} holds no foundation.npz")


def test_a_bad_instruction_policy_foundation_is_one_line_before_any_work(tmp_path, monkeypatch):
    forbid_work(monkeypatch)
    result = invoke("train instruction-policy", "--foundation", str(tmp_path), tmp_path=tmp_path)
    assert_one_error_line(result, f"--foundation {tmp_path} is not a file")
