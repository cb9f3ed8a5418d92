"""`mrsteve train encoder|navigator|instruction-policy|direction-policy|dqn-navigator` are generated from the training configs:
each option is a config field with its default and docstring, the flags are those the commands
have always had, and what is given reaches the config the training gets."""

from __future__ import annotations

import dataclasses
import inspect
from types import SimpleNamespace

import click
import pytest
import typer
from typer.testing import CliRunner

from mrsteve.cli import app, train
from mrsteve.cli.eval import literal_help
from mrsteve.eval.experiment import field_docs

FLAGS = {
    "encoder": {"--out", "--clips", "--epochs", "--seed", "--explored", "--any-pitch",
                "--pairwise", "--hard-negatives", "--hard-negative-pool", "--colour-jitter",
                "--threads",
                "--progress", "--no-progress", "--json"},
    "navigator": {"--out", "--segments", "--worlds", "--world-weights", "--min-distance",
                  "--max-distance",
                  "--max-segment-steps", "--conditioning", "--finetune", "--kl",
                  "--dagger-rounds", "--dagger-beta", "--turn-hold", "--finetune-epochs",
                  "--anneal-epochs",
                  "--ppo-iterations",
                  "--nudge-rate", "--colour-jitter", "--across-water", "--expert-map",
                  "--give-up-goals",
                  "--give-up-false-alarms", "--validation-segments", "--foundation", "--seed",
                  "--threads", "--workers", "--progress", "--no-progress", "--json"},
    "instruction-policy": {"--out", "--episodes", "--episode-steps", "--epochs",
                           "--until-last-success", "--whole-episodes", "--near-share",
                           "--far-share", "--cut-tree-share", "--nudge-rate", "--colour-jitter",
                           "--dagger-rounds",
                           "--dagger-far-share", "--foundation", "--validation-episodes", "--seed",
                           "--threads", "--workers", "--progress", "--no-progress", "--json"},
    "direction-policy": {"--out", "--iterations", "--envs", "--decisions", "--grid",
                         "--off-grid-penalty", "--recurrent", "--hidden", "--learning-rate",
                         "--entropy-weight", "--validation-episodes", "--seed", "--threads",
                         "--progress", "--no-progress", "--json"},
    "dqn-navigator": {"--out", "--steps", "--round-steps", "--goals-per-world",
                      "--max-goal-steps", "--success-reward", "--replay", "--warm-up",
                      "--learning-rate", "--epsilon-steps", "--epsilon-end", "--validation-goals",
                      "--seed", "--threads", "--progress", "--no-progress", "--json"},
}
"""Every flag of each command, as the README and the notes use them."""


def click_command(name: str) -> click.Command:
    return typer.main.get_command(app).commands["train"].commands[name]


@pytest.mark.parametrize("spec", train.COMMANDS, ids=lambda spec: spec.name)
def test_the_flags_are_those_the_commands_always_had(spec):
    flags = {flag for parameter in click_command(spec.name).params
             for flag in (*parameter.opts, *parameter.secondary_opts)} - {"--help"}
    assert flags == FLAGS[spec.name]


@pytest.mark.parametrize("spec", train.COMMANDS, ids=lambda spec: spec.name)
def test_each_option_is_a_config_field_with_its_default_and_docstring(spec):
    defaults, docs = spec.config_type(), field_docs(spec.config_type)
    options = {parameter.name: parameter for parameter in click_command(spec.name).params}
    for name in spec.options:
        assert options[name].default == getattr(defaults, name), name
        assert options[name].help == literal_help(docs[name]), name
    for owner, name, _ in spec.nested:
        nested = getattr(defaults, owner)
        assert options[name].default == getattr(nested, name)
        assert options[name].help == literal_help(field_docs(type(nested))[name])


def capture(monkeypatch, target: str) -> list:
    """Replace the training ``target`` with one that keeps the config it was given."""
    configs = []

    def trained(out, config, *, progress, say):
        configs.append(config)
        return SimpleNamespace(history=[{"val_map": 0.5, "val_loss": 1.0}], seconds=1.0,
                               weights=SimpleNamespace(sha256="0" * 64))

    monkeypatch.setattr(target, trained)
    return configs


def test_options_reach_the_config_nested_ones_included(tmp_path, monkeypatch):
    from mrsteve.train.navigator import NavigatorTrainingConfig
    from mrsteve.train.navigator_ppo import PPOConfig

    configs = capture(monkeypatch, "mrsteve.train.navigator.train_navigator")
    result = CliRunner().invoke(app, ["train", "navigator", "--out", str(tmp_path / "run"),
                                      "--ppo-iterations", "3", "--dagger-rounds", "0",
                                      "--expert-map", "segment", "--max-distance", "60",
                                      "--max-segment-steps", "600"])
    assert result.exit_code == 0, result.output
    assert configs == [dataclasses.replace(NavigatorTrainingConfig(), dagger_rounds=0,
                                           expert_map="segment", ppo=PPOConfig(iterations=3),
                                           max_distance=60.0, max_segment_steps=600)]


def test_a_switch_reaches_the_config(tmp_path, monkeypatch):
    configs = capture(monkeypatch, "mrsteve.train.instruction.train_instruction_policy")
    result = CliRunner().invoke(app, ["train", "instruction-policy", "--out",
                                      str(tmp_path / "run"), "--whole-episodes"])
    assert result.exit_code == 0, result.output
    assert [config.until_last_success for config in configs] == [False]


@pytest.mark.parametrize(("command", "option", "value"), [
    ("navigator", "--across-water", "1.5"), ("navigator", "--give-up-false-alarms", "0.9"),
    ("navigator", "--max-segment-steps", "0"),
    ("instruction-policy", "--nudge-rate", "0.995"), ("encoder", "--explored", "-0.1"),
    ("encoder", "--hard-negatives", "-1")])
def test_a_value_out_of_its_range_is_refused_before_any_work(command, option, value, tmp_path,
                                                             monkeypatch):
    configs = capture(monkeypatch, {"encoder": "mrsteve.train.encoder.train_encoder",
                                    "navigator": "mrsteve.train.navigator.train_navigator",
                                    "instruction-policy": "mrsteve.train.instruction."
                                                          "train_instruction_policy"}[command])
    result = CliRunner().invoke(app, ["train", command, "--out", str(tmp_path / "run"), option,
                                      value])
    assert result.exit_code == 2 and option in result.output and configs == []
    assert not (tmp_path / "run").exists()


def test_the_commands_are_made_from_their_specs():
    for spec in train.COMMANDS:
        command = getattr(train, spec.name.replace("-", "_"))
        assert list(inspect.signature(command).parameters)[0] == "out"
        assert command.__doc__ == spec.summary
