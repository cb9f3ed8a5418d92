"""`mrsteve eval`: the paper's experiments (placeholder until issue 4 lands)."""

import typer

eval_app = typer.Typer(help="Run the paper's experiments and write results.", no_args_is_help=True)
