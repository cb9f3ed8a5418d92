"""`mrsteve eval`: the paper's experiments, one subcommand each, generated from the experiments.

Every experiment (:data:`mrsteve.eval.registry.EXPERIMENTS`) gets a command whose own options
are the fields it names in its config dataclass (default and docstring as help) and the options
every experiment shares (:class:`mrsteve.eval.options.SweepOptions`): ``--episodes N`` episodes per
group, episode ``i`` seeded with ``S + i`` (``--seed S``, the paper: 42), in ``--workers``
processes or as Ray tasks (``--backend ray [--address A]``); ``--out DIR`` writes a run folder
(summaries, records, plots, ``manifest.json``), by default ``runs/eval-<name>-<time>``; ``--json
PATH`` writes the summary ``{"task", "agent", "episodes", "config", "metrics"}`` there instead
(one file per group when there are several) with the per-episode records as JSON lines and the
manifest beside it; an interrupted sweep resumes from its records, and an interrupt says how.
``--plots DIR`` saves the experiment's plots.
"""

from __future__ import annotations

import dataclasses
import inspect
import re
import time
import typing
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Annotated, Any

import typer

from mrsteve.cli.output import (
    Terminated,
    fail,
    fail_on_os_error,
    literal_paragraphs,
    resume_hint,
    terminate_as_interrupt,
)
from mrsteve.eval.experiment import Experiment, field_docs
from mrsteve.eval.options import SweepOptions
from mrsteve.eval.registry import EXPERIMENTS
from mrsteve.eval.spec import MAX_EPISODES
from mrsteve.jitcache import CompileWatch

eval_app = typer.Typer(rich_markup_mode=None, help="Run the paper's experiments and write results.", no_args_is_help=True)

SHARED_FLAGS = {"json_path": "--json", "progress": "--progress/--no-progress", "plan": "--plan",
                "trace": "--trace"}
"""Shared options whose flag is not the field's name (the rest: ``--episodes``, ``--seed``,
``--workers``, ``--plots``, each a field of :class:`~mrsteve.eval.options.SweepOptions`)."""


def options_of(config_type: type, names: Sequence[str], defaults: dict[str, Any],
               flags: dict[str, str] | None = None,
               choices: Mapping[str, Sequence[str]] | None = None,
               ranges: Mapping[str, tuple[float | None, float | None]] | None = None,
               ) -> list[inspect.Parameter]:
    """One keyword parameter per named field of a config dataclass: its type, its default (or the
    one in ``defaults``) and its docstring as help, followed by the names it accepts when
    ``choices`` lists them (:attr:`~mrsteve.eval.experiment.Experiment.choices`), or those it
    takes one of when the config's ``one_of`` names its registry
    (:attr:`~mrsteve.eval.experiment.AgentOptions.one_of`); counts (``int``) are at least 1,
    seeds and counts whose default 0 means "off" (``--rss-every``) at least 0, and
    ``--episodes`` at most :data:`~mrsteve.eval.spec.MAX_EPISODES`, unless ``ranges`` gives a
    field's ``(least, most)``."""
    fields = {field.name: field for field in dataclasses.fields(config_type)}
    hints = typing.get_type_hints(config_type)
    docs = field_docs(config_type)
    one_of = getattr(config_type, "one_of", {})  # options naming one entry of a registry
    parameters = []
    for name in names:
        default = defaults.get(name, fields[name].default)
        least = (0 if name == "seed" or default == 0 else 1) if hints[name] in (
            int, int | None) else None
        most = MAX_EPISODES if name == "episodes" else None
        least, most = (ranges or {}).get(name, (least, most))
        help_text = docs.get(name, "")
        if name in (choices or {}):
            help_text += f" Known: {', '.join(choices[name])} (comma-separated)."
        elif name in one_of:
            help_text += f" Known: {', '.join(one_of[name])}."
        option = typer.Option(*(flags or {}).get(name, "").split() or (),
                              min=least, max=most, help=literal_help(help_text))
        parameters.append(inspect.Parameter(
            name, inspect.Parameter.KEYWORD_ONLY, default=default,
            annotation=Annotated[hints[name], option],
        ))  # fmt: skip
    return parameters


def literal_help(text: str) -> str:
    """``text`` (a docstring) as the help shows it: cross-references and literals as plain
    text (``:class:`~a.B``` as ``B``, a titled one as its title, ````x```` as ``x``)."""
    text = re.sub(r":\w+:`([^`<]*?)\s*<[^`>]*>`", r"\1", text)
    text = re.sub(r":\w+:`~?([^`]*)`", lambda role: role[1].rsplit(".", 1)[-1].strip(), text)
    return text.replace("``", "")


def default_run_folder(name: str) -> Path:
    """The run folder of ``mrsteve eval <name>`` without ``--out`` or ``--json``:
    ``runs/eval-<name>-<local time>``."""
    return Path("runs") / f"eval-{name}-{time.strftime('%Y%m%d-%H%M%S')}"


def with_options(function, config_type: type, names: Sequence[str]):
    """``function`` as a command that also takes the fields ``names`` of the dataclass
    ``config_type`` as options (declared there once: type, default and docstring as help,
    :func:`options_of`); its own parameters come first, the fields arrive as keywords."""
    hints = typing.get_type_hints(function, include_extras=True)
    own = [parameter.replace(annotation=hints[parameter.name])
           for parameter in inspect.signature(function).parameters.values()
           if parameter.kind is not inspect.Parameter.VAR_KEYWORD]
    parameters = [*own, *options_of(config_type, names, {})]

    def command(**values: Any) -> None:
        function(**values)

    command.__signature__ = inspect.Signature(parameters)
    command.__annotations__ = {p.name: p.annotation for p in parameters} | {"return": None}
    command.__doc__, command.__name__ = function.__doc__, function.__name__
    return command


def make_command(experiment: Experiment):
    """The typer command of ``experiment``: its own options, then those every experiment shares."""
    shared = [field.name for field in dataclasses.fields(SweepOptions)
              if field.name != "trace" or experiment.traces]  # only where episodes keep one

    def command(**values: Any) -> None:
        shared_values = {name: values.pop(name) for name in shared}
        if shared_values["out"] is None and shared_values["json_path"] is None:
            shared_values["out"] = default_run_folder(experiment.name)
        sweep = None
        try:
            sweep = SweepOptions(**shared_values)
            config = experiment.config_type(**values)
            with terminate_as_interrupt(), CompileWatch():  # CompileWatch: says so when a
                experiment.run(config, sweep, echo=typer.echo)  # kernel is not cached
        except ValueError as error:  # an unknown name or a task that cannot be set up
            raise fail(str(error)) from None
        except KeyboardInterrupt as interrupt:
            code = 143 if isinstance(interrupt, Terminated) else 130
            if sweep is None or not (sweep.manifest_path and sweep.manifest_path.exists()):
                typer.secho(f"{'terminated' if code == 143 else 'interrupted'} before the first "
                            "episode: nothing was written", err=True, fg=typer.colors.YELLOW)
                raise typer.Exit(code=code) from None
            raise resume_hint(sweep.out, sweep.json_path, code=code) from None
        except OSError as error:  # a full disk: the records written so far are intact
            raise fail_on_os_error(error, resume=(sweep.out, sweep.json_path)) from None

    parameters = [
        *options_of(experiment.config_type, experiment.options, {},
                    choices=experiment.choices),
        *options_of(SweepOptions, shared, {"episodes": experiment.default_episodes}, SHARED_FLAGS),
    ]
    command.__signature__ = inspect.Signature(parameters)
    command.__annotations__ = {p.name: p.annotation for p in parameters} | {"return": None}
    command.__doc__ = experiment.summary
    command.__name__ = experiment.name.replace("-", "_")
    return command


def examples_epilog(prefix: str, examples: Sequence[str]) -> str | None:
    """The help's closing lines: one example command line per example."""
    if not examples:
        return None
    return literal_paragraphs("Examples:\n\n" + "\n\n".join(f"  {prefix} {example}"
                                                              for example in examples))


for _experiment in EXPERIMENTS.values():
    eval_app.command(_experiment.name,
                     epilog=examples_epilog(f"mrsteve eval {_experiment.name}",
                                            _experiment.examples))(make_command(_experiment))
