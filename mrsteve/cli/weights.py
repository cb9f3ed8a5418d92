"""`mrsteve weights synth` and `inspect`: checkpoints of the released Minecraft models (MineCLIP,
VPT, VPT-Nav, STEVE-1 and its prior) in their file formats (torch, the ``minecraft`` extra)."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from typing import Annotated

import typer

from mrsteve.cli.output import check_outputs, fail, literal_paragraphs, writing_results
from mrsteve.minecraft.registry import CHECKPOINT_KINDS

KINDS = CHECKPOINT_KINDS
"""``--kind`` values (:data:`mrsteve.minecraft.registry.CHECKPOINT_KINDS`: the help needs no
torch)."""

SYNTH_EXAMPLES = """Examples:

  mrsteve weights synth --kind mineclip --out attn.pth

  mrsteve weights synth --kind steve1 --out steve1.weights --tiny"""

INSPECT_EXAMPLES = """Examples:

  mrsteve weights inspect attn.pth

  mrsteve weights inspect vpt_nav.weights --model 2x.model"""

weights_app = typer.Typer(rich_markup_mode=None, help="Checkpoints of the released Minecraft models: write synthetic "
                          "ones, inspect files (pip install 'mrsteve[minecraft]').",
                          no_args_is_help=True)


def require_torch() -> None:
    """Exit with one line saying what to install when torch is missing."""
    if importlib.util.find_spec("torch") is None:
        raise fail("these commands need torch: pip install 'mrsteve[minecraft]'")


@weights_app.command("synth", epilog=literal_paragraphs(SYNTH_EXAMPLES))
def synth(
    kind: Annotated[str, typer.Option(help=f"Which checkpoint: {', '.join(KINDS)}.")],
    out: Annotated[Path, typer.Option(help="File to write (VPT, VPT-Nav, STEVE-1: the .weights; "
                                      "its .model is written beside it).")],
    tiny: Annotated[bool, typer.Option("--tiny", help="A small configuration of the same layout "
                                       "instead of the released sizes.")] = False,
    seed: Annotated[int, typer.Option(help="Seed of the random values.")] = 0,
    force: Annotated[bool, typer.Option("--force", help="Replace files that exist.")] = False,
) -> None:
    """Write a checkpoint in the released format with random values (the released sizes, or
    --tiny), for tests and for trying the Minecraft path without the real files."""
    if kind not in KINDS:
        raise fail(f"unknown --kind {kind!r}; choose one of {', '.join(KINDS)}")
    require_torch()
    from mrsteve.minecraft.checkpoints import (
        VPT_FAMILY,
        CheckpointError,
        synthetic_outputs,
        write_synthetic,
    )

    try:
        paths = synthetic_outputs(kind, out)
    except CheckpointError as error:
        raise fail(str(error)) from None
    folders = [str(path) for path in paths if path.is_dir()]
    if folders:
        raise fail(f"{' and '.join(folders)} {'is a folder' if len(folders) == 1 else 'are folders'}"
                   f"; give the checkpoint's file path, e.g. --out {Path(folders[0]) / kind}"
                   f"{'.weights' if kind in VPT_FAMILY else '.pt'}")
    existing = [str(path) for path in paths if path.exists()]
    if existing and not force:
        raise fail(f"{' and '.join(existing)} already exist{'s' if len(existing) == 1 else ''}; "
                   "pass --force to replace")
    check_outputs(paths)
    with writing_results():
        checkpoint = write_synthetic(kind, out, tiny=tiny, seed=seed)
    typer.echo(f"wrote {', '.join(map(str, paths))}: {kind}, "
               f"{'tiny' if tiny else 'released sizes'}, {checkpoint.parameters:,} parameters")


@weights_app.command("inspect", epilog=literal_paragraphs(INSPECT_EXAMPLES))
def inspect(
    file: Annotated[Path, typer.Argument(help="A checkpoint or VPT .model file.")],
    model: Annotated[Path | None, typer.Option(help="The .model of VPT-family weights (default: "
                                               "the one beside them, else read from the "
                                               "shapes).")] = None,
) -> None:
    """Name a file's format, its configuration and its parameter count, after checking every
    key and shape against the model the configuration builds."""
    require_torch()
    from mrsteve.minecraft.checkpoints import CheckpointError, inspect_file

    try:
        inspection = inspect_file(file, model)
    except CheckpointError as error:
        raise fail(str(error)) from None
    typer.echo(f"file: {file}")
    for line in inspection.lines():
        typer.echo(line)
