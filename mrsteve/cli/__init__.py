"""The ``mrsteve`` command line: one entry point, one subcommand per job.

Each subcommand lives in its own module and imports its heavy dependencies inside the command, so
``mrsteve --help`` stays instant.
"""

from __future__ import annotations

from mrsteve.workers import prefer_one_blas_thread

# One BLAS thread (unless the user set a count): the commands' numbers are one core's, and their
# worker processes each take a core. Set before numpy is first imported.
prefer_one_blas_thread()

from importlib import metadata
from typing import Annotated

import typer

from mrsteve.cli import (
    bench_agent,
    bench_memory,
    bench_world,
    calibrate,
    demo,
    far_views,
    report,
    train,
    view,
    worlds,
)
from mrsteve.cli.bench_sweep import sweep_app
from mrsteve.cli.eval import eval_app
from mrsteve.cli.output import literal_paragraphs
from mrsteve.cli.weights import weights_app

app = typer.Typer(
    rich_markup_mode=None,
    name="mrsteve",
    help="MrSteve: What-Where-When episodic memory agents for Minecraft-like worlds.",
    no_args_is_help=True,
    add_completion=False,
    pretty_exceptions_enable=False,
    context_settings={"help_option_names": ["-h", "--help"]},
)


def show_version(value: bool) -> None:
    """``--version``: print the installed package's version and exit."""
    if value:
        try:
            version = metadata.version("mrsteve")
        except metadata.PackageNotFoundError:  # run from a source tree that is not installed
            from mrsteve import __version__ as version
        typer.echo(f"mrsteve {version}")
        raise typer.Exit()


@app.callback()
def options(
    version: Annotated[bool, typer.Option("--version", callback=show_version, is_eager=True,
                                          help="Print the version and exit.")] = False,
) -> None:
    """The options before a command."""


bench_app = typer.Typer(rich_markup_mode=None, help="Measure speed: memory reads and writes, world steps, the whole "
                        "agent, sweeps over workers.", no_args_is_help=True)
app.add_typer(bench_app, name="bench")
app.add_typer(eval_app, name="eval")
train_app = typer.Typer(rich_markup_mode=None, help="Train the learned parts (pip install 'mrsteve[train]').",
                        no_args_is_help=True)
app.add_typer(train_app, name="train")
app.add_typer(weights_app, name="weights")

bench_app.command("memory", epilog=literal_paragraphs(bench_memory.EXAMPLES))(bench_memory.command)
bench_app.command("world", epilog=literal_paragraphs(bench_world.EXAMPLES))(bench_world.command)
bench_app.command("agent", epilog=literal_paragraphs(bench_agent.EXAMPLES))(bench_agent.command)
bench_app.add_typer(sweep_app, name="sweep")
app.command("demo", epilog=literal_paragraphs(demo.EXAMPLES))(demo.command)
app.command("calibrate", epilog=literal_paragraphs(calibrate.EXAMPLES))(calibrate.command)
app.command("far-views", epilog=literal_paragraphs(far_views.EXAMPLES))(far_views.command)
app.command("worlds", epilog=literal_paragraphs(worlds.EXAMPLES))(worlds.command)
app.command("report", epilog=literal_paragraphs(report.EXAMPLES))(report.command)
app.command("view", epilog=literal_paragraphs(view.EXAMPLES))(view.command)
train_app.command("encoder", epilog=literal_paragraphs(train.ENCODER_EXAMPLES))(train.encoder)
train_app.command("navigator", epilog=literal_paragraphs(train.NAVIGATOR_EXAMPLES))(train.navigator)
train_app.command("instruction-policy", epilog=literal_paragraphs(train.INSTRUCTION_EXAMPLES))(
    train.instruction_policy)
train_app.command("direction-policy", epilog=literal_paragraphs(train.DIRECTION_EXAMPLES))(
    train.direction_policy)
train_app.command("dqn-navigator", epilog=literal_paragraphs(train.DQN_EXAMPLES))(
    train.dqn_navigator)


def main() -> None:
    """Entry point of the ``mrsteve`` script."""
    app()
