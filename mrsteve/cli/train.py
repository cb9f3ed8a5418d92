"""`mrsteve train encoder`, `navigator`, `instruction-policy`, `direction-policy` and
`dqn-navigator`: train the learned parts (torch, the ``train`` extra).

Each command is generated from its training config (:class:`~mrsteve.train.encoder.
TrainingConfig`, :class:`~mrsteve.train.navigator.NavigatorTrainingConfig`,
:class:`~mrsteve.train.instruction.InstructionTrainingConfig`,
:class:`~mrsteve.train.direction.DirectionTrainingConfig`,
:class:`~mrsteve.train.dqn.DQNTrainingConfig`), as ``mrsteve eval``'s commands are
from their experiments' (:func:`mrsteve.cli.eval.options_of`): the fields a command offers become
its options, with the field's type, default (the recipe of the shipped weights) and docstring as
help; then the options every training shares (``--out``, ``--progress``, ``--json``).
"""

from __future__ import annotations

import importlib
import inspect
import typing
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Annotated, Any

import typer

from mrsteve.cli.eval import examples_epilog, options_of
from mrsteve.cli.output import check_outputs, fail, fail_on_os_error, write_json
from mrsteve.train.direction import DirectionTrainingConfig
from mrsteve.train.dqn import DQNTrainingConfig
from mrsteve.train.encoder import TrainingConfig
from mrsteve.train.instruction import InstructionTrainingConfig
from mrsteve.train.navigator import NavigatorTrainingConfig


def run_training(out: Path, weights_name: str, json_path: Path | None,
                 train: Callable[[Callable[[str], None]], Any]) -> Any:
    """What every training command does around its training: refuse an ``--out`` that is a
    file and outputs that cannot be written (before any work), run ``train(say)`` (its lines go
    to stderr), write the history to ``--json``, and turn bad settings, a missing torch and a
    full disk into one error line."""
    if out.exists() and not out.is_dir():
        raise fail(f"--out {out} exists and is not a folder; give a folder or a new path")
    check_outputs([out / weights_name, json_path])
    try:
        result = train(lambda line: typer.echo(line, err=True))
        if json_path is not None:
            write_json(json_path, {"weights_sha256": result.weights.sha256,
                                   "seconds": result.seconds, "history": result.history})
    except (ImportError, ValueError) as error:
        raise fail(str(error)) from None
    except OSError as error:  # a full disk, say
        raise fail_on_os_error(error) from None
    return result


SHARES = (0.0, 1.0)
"""The range of an option that is a share."""


@dataclass(frozen=True)
class TrainingCommand:
    """One ``mrsteve train`` command: the config it fills and the function it runs."""

    name: str
    """The command name (``mrsteve train <name>``)."""
    config_type: type
    options: tuple[str, ...]
    """The config's fields offered as options, in the help's order."""
    ranges: Mapping[str, tuple[float | None, float | None]]
    """``(least, most)`` of the options whose range is not :func:`options_of`'s rule (a count
    at least 1, a seed at least 0)."""
    train: str
    """``module:function`` that trains, looked up when the command runs (torch loads then):
    ``function(out, config, progress=, say=)``."""
    weights: str
    """The weights file the run folder gets."""
    data: str
    """What the run folder caches besides checkpoints (for ``--out``'s help; empty: nothing)."""
    summary: str
    examples: tuple[str, ...]
    """Example arguments (the help's closing lines)."""
    flags: Mapping[str, str] = field(default_factory=dict)
    """Options whose flag is not the field's name."""
    nested: tuple[tuple[str, str, str], ...] = ()
    """``(config field, its config's field, flag)`` of options of a nested config
    (``--ppo-iterations``: ``ppo.iterations``)."""
    check: Callable[[Any], None] | None = None
    """Refuses a config the command cannot run (``ValueError``), before any work."""
    outcome: Callable[[Any], str] = field(default=lambda result: "")
    """What the closing line says of the result after the time taken."""

    def parameters(self) -> list[inspect.Parameter]:
        """The command's options: ``--out``, the config's, then ``--progress`` and ``--json``."""
        hints = typing.get_type_hints(self.config_type)
        out, *shared = shared_options(self.data, self.weights)
        return [
            out,
            *options_of(self.config_type, self.options, {}, self.flags, ranges=self.ranges),
            *(parameter for owner, name, flag in self.nested
              for parameter in options_of(hints[owner], [name], {}, {name: flag},
                                          ranges=self.ranges)),
            *shared,
        ]

    def config(self, values: dict[str, Any]) -> Any:
        """The config of the option ``values`` (a nested config from the defaults and its
        options); refused by :attr:`check` as by the config's own checks (``ValueError``)."""
        hints = typing.get_type_hints(self.config_type)
        values = dict(values)
        nested: dict[str, dict[str, Any]] = {}
        for owner, name, _ in self.nested:
            nested.setdefault(owner, {})[name] = values.pop(name)
        config = self.config_type(**values, **{owner: hints[owner](**settings)
                                               for owner, settings in nested.items()})
        if self.check is not None:
            self.check(config)
        return config


def shared_options(data: str, weights: str) -> list[inspect.Parameter]:
    """``--out`` (required), ``--progress/--no-progress`` and ``--json``: every training's."""

    def option(name: str, annotation: Any, default: Any = inspect.Parameter.empty):
        return inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default,
                                 annotation=annotation)

    return [
        option("out", Annotated[Path, typer.Option(
            help=f"Run folder: {data + ', ' if data else ''}checkpoints (a run resumes from "
                 f"them), curve.png, {weights}.")]),
        option("progress", Annotated[bool, typer.Option("--progress/--no-progress",
                                                        help="Show a progress bar.")], True),
        option("json_path", Annotated[Path | None, typer.Option(
            "--json", help="Also write the training history as JSON here.")], None),
    ]


def make_command(spec: TrainingCommand) -> Callable[..., None]:
    """The typer command of ``spec``."""

    def command(*, out: Path, progress: bool, json_path: Path | None, **values: Any) -> None:
        def train(say):
            module, function = spec.train.split(":")
            config = spec.config(values)
            return getattr(importlib.import_module(module), function)(
                out, config, progress=progress, say=say)

        result = run_training(out, spec.weights, json_path, train)
        typer.echo(f"wrote {out / spec.weights} (sha256 {result.weights.sha256[:16]}...) after "
                   f"{result.seconds / 60:.1f} min{spec.outcome(result)}; curve in "
                   f"{out / 'curve.png'}")

    parameters = spec.parameters()
    command.__signature__ = inspect.Signature(parameters)
    command.__annotations__ = {p.name: p.annotation for p in parameters} | {"return": None}
    command.__doc__ = spec.summary
    command.__name__ = spec.name.replace("-", "_")
    return command


def foundation_run(config: NavigatorTrainingConfig) -> None:
    """``--foundation`` must be the folder of an earlier navigator run."""
    if config.foundation is not None and not (Path(config.foundation) / "foundation.npz"
                                              ).is_file():
        raise ValueError(f"--foundation {config.foundation} holds no foundation.npz; give the "
                         f"folder of an earlier `mrsteve train navigator` run")


def foundation_file(config: InstructionTrainingConfig) -> None:
    """``--foundation`` must be a navigator weights file."""
    if config.foundation is not None and not Path(config.foundation).is_file():
        raise ValueError(f"--foundation {config.foundation} is not a file; give a navigator "
                         f"weights file such as RUN/foundation.npz")


def validation_scores(result) -> str:
    """The encoder's closing numbers: its last validation mAP and loss."""
    last = result.history[-1]
    return f": validation mAP {last['val_map']:.3f}, loss {last['val_loss']:.3f}"


def grid_scores(result) -> str:
    """The direction policy's closing numbers: distinct cells at each validation horizon."""
    scores = [f"{row['cells']:.1f} cells in {row['epoch']} decisions"
              for row in result.history if row.get("stage") == "validation"]
    return f": {', '.join(scores)}" if scores else ""


def goals_reached(result) -> str:
    """The DQN navigator's closing number: the validation goals it reached."""
    scores = [f"{row['reached']:.0%} of {row['epoch']} validation goals reached"
              for row in result.history if row.get("stage") == "validation"]
    return f": {scores[0]}" if scores else ""


COMMANDS = (
    TrainingCommand(
        "encoder", TrainingConfig,
        ("clips", "epochs", "seed", "explored", "any_pitch", "pairwise", "hard_negatives",
         "hard_negative_pool", "colour_jitter", "threads"),
        {"explored": SHARES, "any_pitch": SHARES, "pairwise": (0.0, None),
         "hard_negatives": (0, None), "colour_jitter": (0.0, 1.0)},
        "mrsteve.train.encoder:train_encoder", "pixels.npz", "rendered clips",
        """Train the pixel encoder (a video-text dual encoder over RGB clips) on clips of the
        procedural calibration worlds captioned from the renderer's ground truth; then calibrate
        its thresholds with `mrsteve calibrate --encoder pixels --weights OUT/pixels.npz --out
        FILE`.""",
        ("--out runs/pixels", "--out runs/pixels-small --clips 2000 --epochs 4",
         "--out runs/pixels --json runs/pixels-history.json"),
        outcome=validation_scores),
    TrainingCommand(
        "navigator", NavigatorTrainingConfig,
        ("segments", "worlds", "world_weights", "min_distance", "max_distance",
         "max_segment_steps", "conditioning", "finetune", "kl", "dagger_rounds", "dagger_beta",
         "turn_hold", "finetune_epochs", "anneal_epochs", "nudge_rate", "colour_jitter",
         "across_water", "expert_map", "give_up_goals", "give_up_false_alarms",
         "validation_segments", "foundation", "seed", "threads", "workers"),
        {"min_distance": (1.0, None), "max_distance": (1.0, None), "max_segment_steps": (1, None),
         "kl": (0.0, None), "dagger_rounds": (0, None), "dagger_beta": (0.0, 0.99),
         "turn_hold": (0.0, 180.0), "finetune_epochs": (0, None), "anneal_epochs": (0, None),
         "nudge_rate": (0.0, 0.99), "colour_jitter": (0.0, 1.0), "across_water": SHARES,
         "give_up_goals": (0, None), "give_up_false_alarms": (0.0001, 0.5),
         "validation_segments": (0, None)},
        "mrsteve.train.navigator:train_navigator", "navigator.npz", "demonstrations",
        """Train the learned navigator (a goal-conditioned policy over RGB frames): a foundation
        policy cloned from the depth navigator's walks in the navigator training worlds, then
        goal-conditioned fine-tuning with a KL term to it and rounds of DAgger (and PPO), and a
        give-up head fitted on the depth navigator's verdicts; then ship it with
        `cp OUT/navigator.npz mrsteve/control/data/`.""",
        ("--out runs/navigator", "--out runs/nav-trxl --conditioning trxl",
         "--out runs/nav-small --segments 200 --dagger-rounds 1",
         "--out runs/nav-long --max-distance 60 --max-segment-steps 600",
         "--out runs/nav-forest --worlds nav_meadow,nav_crags,nav_stream,nav_forest",
         ("--out runs/nav-biomes --worlds nav_meadow,nav_crags,nav_stream,nav_forest,nav_desert "
          "--world-weights 1,1,2,1,1")),
        nested=(("ppo", "iterations", "--ppo-iterations"),), check=foundation_run),
    TrainingCommand(
        "instruction-policy", InstructionTrainingConfig,
        ("episodes", "episode_steps", "epochs", "until_last_success", "near_share",
         "far_share", "cut_tree_share", "nudge_rate", "colour_jitter", "dagger_rounds",
         "dagger_far_share", "foundation",
         "validation_episodes", "seed", "threads", "workers"),
        {"episodes": (1, None), "near_share": SHARES, "far_share": SHARES,
         "cut_tree_share": SHARES,
         "nudge_rate": (0.0, 0.99), "colour_jitter": (0.0, 1.0), "dagger_rounds": (0, None),
         "dagger_far_share": SHARES,
         "validation_episodes": (0, None)},
        "mrsteve.train.instruction:train_instruction_policy", "instruction.npz",
        "trajectories",
        """Train the learned instruction policy (STEVE-1's recipe): goal-conditioned behaviour
        cloning of the scripted skills with hindsight-relabelled goals from the pixel encoder, a
        prior from the prompt's text embedding to a visual goal, then rounds of DAgger with the
        skills as the teacher; then ship it with `cp OUT/instruction.npz
        mrsteve/control/data/`.""",
        ("--out runs/instruction", "--out runs/inst-small --episodes 100",
         "--out runs/inst --dagger-rounds 0"),
        flags={"until_last_success": "--until-last-success/--whole-episodes"},
        check=foundation_file),
    TrainingCommand(
        "direction-policy", DirectionTrainingConfig,
        ("iterations", "envs", "decisions", "grid", "off_grid_penalty", "recurrent", "hidden",
         "learning_rate", "entropy_weight", "validation_episodes", "seed", "threads"),
        {"off_grid_penalty": (0.0, None), "learning_rate": (1e-6, 1.0),
         "entropy_weight": (0.0, None), "validation_episodes": (0, None), "grid": (3, None)},
        "mrsteve.train.direction:train_direction_policy", "direction.npz", "",
        """Train Plan4MC's high level (an LSTM over the position that picks north, south, east
        or west) with PPO to visit distinct cells of a grid around the start, one cell per
        decision; then ship it with `cp OUT/direction.npz mrsteve/control/data/`.""",
        ("--out runs/direction", "--out runs/direction-long --decisions 120"),
        outcome=grid_scores),
    TrainingCommand(
        "dqn-navigator", DQNTrainingConfig,
        ("steps", "round_steps", "goals_per_world", "max_goal_steps", "success_reward",
         "replay", "warm_up", "learning_rate", "epsilon_steps", "epsilon_end",
         "validation_goals", "seed", "threads"),
        {"success_reward": (0.0, None), "warm_up": (0, None), "learning_rate": (1e-6, 1.0),
         "epsilon_end": SHARES, "validation_goals": (0, None)},
        "mrsteve.train.dqn:train_dqn_navigator", "dqn_navigator.npz", "",
        """Train Plan4MC's low level (a DQN over RGB frames and the goal) with deep Q-learning,
        walking to goals in the navigator training worlds; then ship it with `cp
        OUT/dqn_navigator.npz mrsteve/control/data/`.""",
        ("--out runs/dqn", "--out runs/dqn-short --steps 20000"),
        outcome=goals_reached),
)
"""Every ``mrsteve train`` command."""

encoder, navigator, instruction_policy, direction_policy, dqn_navigator = (
    make_command(spec) for spec in COMMANDS)
(ENCODER_EXAMPLES, NAVIGATOR_EXAMPLES, INSTRUCTION_EXAMPLES, DIRECTION_EXAMPLES,
 DQN_EXAMPLES) = (examples_epilog(f"mrsteve train {spec.name}", spec.examples)
                  for spec in COMMANDS)
