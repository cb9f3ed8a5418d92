"""`mrsteve calibrate --encoder`, `mrsteve train encoder` and `--encoder` options: bad input gets a
clear error before any work starts."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from mrsteve.cli import app


def run(*arguments: str):
    return CliRunner().invoke(app, list(arguments))


def test_calibrate_names_the_known_encoders():
    result = run("calibrate", "--encoder", "clip")
    assert result.exit_code != 0
    assert "unknown encoder 'clip'; known: semantic, pixels, mineclip" in result.output


def test_calibrate_refuses_an_encoder_built_from_a_released_file():
    result = run("calibrate", "--encoder", "mineclip")
    assert result.exit_code == 2
    assert "calibrate one of the encoders the package ships: semantic, pixels" in result.output


def test_calibrate_takes_weights_only_for_the_pixel_encoder(tmp_path):
    result = run("calibrate", "--weights", str(tmp_path / "w.npz"))
    assert result.exit_code != 0 and "give --encoder pixels too" in result.output


def test_calibrate_will_not_write_other_weights_thresholds_over_the_shipped_ones(tmp_path):
    result = run("calibrate", "--encoder", "pixels", "--weights", str(tmp_path / "w.npz"),
                 "--write")
    assert result.exit_code != 0 and "write the thresholds of other weights with --out" in (
        result.output)


def test_calibrate_refuses_a_bad_weights_file_clearly(tmp_path):
    bad = tmp_path / "w.npz"
    bad.write_text("no")
    result = run("calibrate", "--encoder", "pixels", "--weights", str(bad), "--clips", "10")
    assert result.exit_code != 0 and "not a pixel encoder weights file" in result.output


def test_train_refuses_an_out_path_that_is_a_file(tmp_path):
    path = tmp_path / "file"
    path.write_text("mine")
    result = run("train", "encoder", "--out", str(path))
    assert result.exit_code != 0 and "is not a folder" in result.output
    assert path.read_text() == "mine"


def test_bench_agent_names_the_known_encoders():
    result = run("bench", "agent", "--encoder", "rgb", "--steps", "100")
    assert result.exit_code != 0 and "unknown encoder 'rgb'" in result.output


def test_eval_names_the_known_encoders(tmp_path):
    result = run("eval", "aba-sparse", "--encoder", "rgb", "--out", str(tmp_path / "run"))
    assert result.exit_code != 0 and "unknown encoder 'rgb'" in result.output
    assert not (tmp_path / "run").exists()


def _training_recipe(command: str):
    """The config class of a `mrsteve train` command and the loader of its shipped weights."""
    from mrsteve.control.direction_policy import load_shipped_direction_policy
    from mrsteve.control.dqn_navigator import load_shipped_dqn_navigator
    from mrsteve.control.instruction import load_shipped_instruction_policy
    from mrsteve.control.learned_navigator import load_shipped_navigator
    from mrsteve.perception.pixels import load_shipped_weights
    from mrsteve.train.direction import DirectionTrainingConfig
    from mrsteve.train.dqn import DQNTrainingConfig
    from mrsteve.train.encoder import TrainingConfig
    from mrsteve.train.instruction import InstructionTrainingConfig
    from mrsteve.train.navigator import NavigatorTrainingConfig

    return {"encoder": (TrainingConfig, load_shipped_weights),
            "navigator": (NavigatorTrainingConfig, load_shipped_navigator),
            "instruction_policy": (InstructionTrainingConfig,
                                   load_shipped_instruction_policy),
            "direction_policy": (DirectionTrainingConfig, load_shipped_direction_policy),
            "dqn_navigator": (DQNTrainingConfig, load_shipped_dqn_navigator)}[command]


@pytest.mark.parametrize("command", ["encoder", "navigator", "instruction_policy",
                                     "direction_policy", "dqn_navigator"])
def test_train_defaults_are_the_recipe_of_the_shipped_weights(command):
    """Each `mrsteve train` command with no options trains the shipped
    weights: the command's defaults are its config's, which the shipped weights record."""
    import dataclasses
    import inspect
    import json

    from mrsteve.cli import train

    config, shipped = _training_recipe(command)
    defaults = config()
    options = {name: parameter.default
               for name, parameter in inspect.signature(getattr(train, command)).parameters.items()
               if name in {f.name for f in dataclasses.fields(config)}}
    assert options and options == {name: getattr(defaults, name) for name in options}
    recipe = defaults.recipe() if hasattr(defaults, "recipe") else dataclasses.asdict(defaults)
    recorded = shipped().info["training"]
    assert recorded == json.loads(json.dumps(recipe))
