"""`mrsteve eval`: the paper's experiments, one subcommand each, generated from the experiments.

Every experiment (:data:`mrsteve.eval.experiments.EXPERIMENTS`) gets a command whose own options
are the fields it names in its config dataclass (default and docstring as help) and the options
every experiment shares (:class:`mrsteve.eval.sweep.SweepOptions`): ``--episodes N`` episodes per
group, episode ``i`` seeded with ``S + i`` (``--seed S``, the paper: 42), in ``--workers``
processes; ``--json PATH`` writes the summary ``{"task", "agent", "episodes", "config",
"metrics"}`` (one file per group when there are several) with the per-episode records as JSON
lines beside it, so an interrupted sweep resumes; ``--plots DIR`` saves the experiment's plots.
"""

from __future__ import annotations

import dataclasses
import inspect
import typing
from pathlib import Path
from typing import Annotated, Any

import typer

from mrsteve.cli.output import fail
from mrsteve.eval.experiment import Experiment, field_docs
from mrsteve.eval.experiments import EXPERIMENTS
from mrsteve.eval.sweep import SweepOptions

eval_app = typer.Typer(help="Run the paper's experiments and write results.", no_args_is_help=True)

_SHARED = field_docs(SweepOptions)
SHARED_OPTIONS: dict[str, tuple[Any, typer.models.OptionInfo]] = {
    "episodes": (int, typer.Option(min=1, help=_SHARED["episodes"])),
    "seed": (int, typer.Option(help=_SHARED["seed"])),
    "workers": (int, typer.Option(min=1, help=_SHARED["workers"])),
    "json_path": (Path | None, typer.Option("--json", help=_SHARED["json_path"])),
    "plots": (Path | None, typer.Option("--plots", help=_SHARED["plots"])),
    "progress": (bool, typer.Option("--progress/--no-progress", help=_SHARED["progress"])),
}
"""The options of every ``eval`` command, defined once: name -> (type, typer option)."""


def _experiment_parameters(experiment: Experiment) -> list[inspect.Parameter]:
    """One keyword parameter per config field the experiment offers on the command line."""
    fields = {field.name: field for field in dataclasses.fields(experiment.config_type)}
    hints = typing.get_type_hints(experiment.config_type)
    docs = field_docs(experiment.config_type)
    parameters = []
    for name in experiment.options:
        counts = hints[name] in (int, int | None)  # steps, capacities: at least 1
        option = typer.Option(min=1 if counts else None, help=docs.get(name, ""))
        parameters.append(inspect.Parameter(
            name, inspect.Parameter.KEYWORD_ONLY, default=fields[name].default,
            annotation=Annotated[hints[name], option],
        ))  # fmt: skip
    return parameters


def make_command(experiment: Experiment):
    """The typer command of ``experiment``: its options, then the shared ones."""

    def command(**values: Any) -> None:
        sweep = SweepOptions(**{name: values.pop(name) for name in SHARED_OPTIONS})
        try:
            config = experiment.config_type(**values)
            experiment.run(config, sweep, echo=typer.echo)
        except ValueError as error:  # an unknown name or a task that cannot be set up
            raise fail(str(error)) from None

    defaults = {"episodes": experiment.default_episodes, "seed": 42, "workers": 1,
                "json_path": None, "plots": None, "progress": True}
    shared = [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=defaults[name],
                          annotation=Annotated[kind, option])
        for name, (kind, option) in SHARED_OPTIONS.items()
    ]
    parameters = [*_experiment_parameters(experiment), *shared]
    command.__signature__ = inspect.Signature(parameters)
    command.__annotations__ = {p.name: p.annotation for p in parameters} | {"return": None}
    command.__doc__ = experiment.summary
    command.__name__ = experiment.name.replace("-", "_")
    return command


for _experiment in EXPERIMENTS.values():
    eval_app.command(_experiment.name)(make_command(_experiment))
