"""`mrsteve bench sweep`: how a sweep of an experiment scales from one worker to N.

One subcommand per experiment, with the experiment's own options (as ``mrsteve eval``) and the
sweep's: the same episodes run with one worker, then with ``--workers`` (or on a Ray cluster), and
the speed-up is printed with where the time went: each run's start-up (until its first episode
starts) apart from its episodes per second after it.
"""

from __future__ import annotations

import dataclasses
import inspect
import os
from pathlib import Path
from typing import Annotated, Any

import typer

from mrsteve.cli.eval import examples_epilog, options_of
from mrsteve.cli.output import check_outputs, fail, write_json, writing_results
from mrsteve.eval.experiment import Experiment
from mrsteve.eval.options import SweepOptions
from mrsteve.eval.registry import EXPERIMENTS

sweep_app = typer.Typer(
    rich_markup_mode=None,
    help="How a sweep scales: the same episodes with one worker and with N, and the speed-up.",
    no_args_is_help=True)

SHARED = ("episodes", "seed", "workers", "backend", "address")
"""The sweep options of the benchmark (no outputs: its runs go to temporary folders)."""

EXAMPLES = {
    "aba-sparse": (("--task water-log-water,beef-log-beef,wool-log-wool,milk-log-milk "
                    "--agent mrsteve,steve1 --episodes 1 --workers 2"),
                   "--task all --agent mrsteve,steve1 --episodes 8 --workers 16"),
}


def make_command(experiment: Experiment):
    """The ``mrsteve bench sweep <name>`` command of ``experiment``."""

    def command(**values: Any) -> None:
        from mrsteve.eval.results import format_table
        from mrsteve.eval.scaling import measure_scaling

        json_path = values.pop("json_path")
        shared = {name: values.pop(name) for name in SHARED}
        check_outputs([json_path])
        try:
            options = SweepOptions(**shared, progress=False)
            config = experiment.config_type(**values)
            typer.echo(f"{experiment.name}: {len(experiment.groups(config))} groups x "
                       f"{options.episodes} episodes, with 1 worker and then "
                       f"{options.workers} ({options.backend})...", err=True)
            scaling = measure_scaling(experiment, config, options)
        except ValueError as error:
            raise fail(str(error)) from None
        rows = []
        for timing in (scaling.serial, scaling.parallel):
            rate = timing.steps_per_second
            rows.append([timing.workers, f"{timing.seconds:.1f}", f"{timing.startup:.2f}",
                         timing.episodes, f"{timing.steady_episodes_per_second:.2f}",
                         "-" if timing.steps is None else f"{timing.steps:,}",
                         "-" if rate is None else f"{rate:,.0f}", f"{100 * timing.busy:.0f} %",
                         timing.processes])
        typer.echo(format_table(["workers", "seconds", "start-up s", "episodes",
                                 "episodes/s after start-up", "steps", "steps/s",
                                 "workers busy", "processes"], rows))
        typer.echo(f"\nspeed-up with {scaling.parallel.workers} workers: {scaling.speedup:.2f}x "
                   f"(ideal {scaling.parallel.workers}x); records "
                   f"{'identical' if scaling.identical else 'DIFFERENT'} in both runs; start-up: "
                   "from the run's start to its first episode's (the driver's set-up, its "
                   "warm-up of what every worker reads, the workers' start); workers busy: their "
                   "share of the wall time spent in episodes (the rest: start-up, the last "
                   "episodes' tail, the driver)")
        if json_path is not None:
            with writing_results():
                write_json(json_path, {"experiment": experiment.name,
                                       "config": dataclasses.asdict(config),
                                       "backend": options.backend, **scaling.as_dict()})
        if not scaling.identical:
            raise typer.Exit(code=1)

    parameters = [
        *options_of(experiment.config_type, experiment.options, {}),
        *options_of(SweepOptions, SHARED, {"episodes": 1, "workers": os.cpu_count() or 2}),
        inspect.Parameter("json_path", inspect.Parameter.KEYWORD_ONLY, default=None,
                          annotation=Annotated[Path | None, typer.Option(
                              "--json", help="Also write the timings as JSON here.")]),
    ]
    command.__signature__ = inspect.Signature(parameters)
    command.__annotations__ = {p.name: p.annotation for p in parameters} | {"return": None}
    command.__doc__ = (f"Run {experiment.name}'s episodes with one worker, then with --workers, "
                       "and print the speed-up (the records of both runs must be identical).")
    command.__name__ = experiment.name.replace("-", "_")
    return command


for _experiment in EXPERIMENTS.values():
    sweep_app.command(_experiment.name, epilog=examples_epilog(
        f"mrsteve bench sweep {_experiment.name}",
        EXAMPLES.get(_experiment.name, ("--episodes 2 --workers 2",))))(make_command(_experiment))
