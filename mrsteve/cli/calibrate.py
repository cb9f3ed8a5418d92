"""`mrsteve calibrate`: calibrate the semantic encoder's thresholds on procedural calibration
worlds and measure them held out on the evaluation maps."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path
from typing import Annotated

import typer

from mrsteve.cli.output import check_outputs, fail, write_json, writing_results

EXAMPLES = """Examples:

  mrsteve calibrate --clips 200 --out thresholds.toml

  mrsteve calibrate --clips 400 --event-pairs 100 --json calibration.json

  mrsteve calibrate --encoder pixels --clips 200 --out pixel-thresholds.toml"""


def command(
    clips: Annotated[
        int, typer.Option(min=10, help="Clips to fit on (calibration worlds), and as many held "
                                  "out (evaluation maps).")
    ] = 2000,
    event_pairs: Annotated[
        int | None,
        typer.Option("--event-pairs", min=1,
                     help="Pairs of clips at one place, scene unchanged or changed (default: "
                          "clips / 8), to fit on and held out."),
    ] = None,
    seed: Annotated[int, typer.Option(min=0, help="Seed of the worlds, poses and motions.")] = 0,
    any_pitch: Annotated[
        float, typer.Option(min=0.0, max=1.0, help="Share of the posed clips pitched anywhere "
                                                   "from the sky to the feet (else 0-20 degrees "
                                                   "down).")
    ] = 0.0,
    out: Annotated[
        Path | None, typer.Option("--out", help="Write the thresholds file here instead of printing it.")
    ] = None,
    write: Annotated[
        bool, typer.Option("--write", help="Replace the shipped thresholds (mrsteve/perception/"
                                           "data/thresholds.toml).")
    ] = False,
    json_path: Annotated[
        Path | None, typer.Option("--json", help="Also write thresholds and quality as JSON here.")
    ] = None,
    encoder: Annotated[
        str, typer.Option(help="The encoder to calibrate: semantic or pixels.")
    ] = "semantic",
    weights: Annotated[
        Path | None, typer.Option(help="pixels: a weights file (mrsteve train encoder) instead of "
                                       "the shipped one; its thresholds go to --out.")
    ] = None,
) -> None:
    """Fit an encoder's task and event thresholds on labelled clips of procedural calibration
    worlds and measure them on held-out clips of the evaluation maps; print the thresholds file
    with its record."""
    from mrsteve.calibration import calibrate_on_world, format_world_calibration
    from mrsteve.calibration.clips import ClipConfig
    from mrsteve.digests import PACKAGE_ROOT
    from mrsteve.fileio import atomic_path
    from mrsteve.perception import ENCODERS

    if out is not None and write:
        raise fail("give --out PATH or --write, not both")
    try:
        spec = ENCODERS.spec(encoder)
    except ValueError as error:
        raise fail(str(error)) from None
    if spec.calibration is None:
        fitted = [name for name, known in ENCODERS.items() if known.calibration is not None]
        raise fail(f"the {encoder} encoder is built from a released file, whose thresholds are "
                   f"not fitted here; calibrate one of the encoders the package ships: "
                   f"{', '.join(fitted)}")
    if weights is not None and write:
        raise fail("--write replaces the shipped thresholds, which belong to the shipped "
                   "weights; write the thresholds of other weights with --out")
    if write and spec.thresholds_file is None:
        raise fail(f"the {encoder} encoder ships no thresholds file to replace: give --out PATH")
    target = PACKAGE_ROOT / spec.thresholds_file if write else out
    check_outputs([target, json_path])
    try:
        calibrated = spec.calibration_model(None if weights is None else str(weights))
    except (OSError, ValueError) as error:
        raise fail(str(error)) from None
    model = calibrated.model
    arguments = [*calibrated.arguments, f"--clips {clips}", f"--seed {seed}"]
    if event_pairs is not None:
        arguments.append(f"--event-pairs {event_pairs}")
    if any_pitch:
        arguments.append(f"--any-pitch {any_pitch:g}")
    try:
        result = calibrate_on_world(
            clips, seed, event_pairs=event_pairs, encoder=model,
            config=ClipConfig(window=model.window, frame_keys=model.reads, any_pitch=any_pitch),
            progress=lambda line: typer.echo(line, err=True),
        )
    except ValueError as error:
        raise fail(str(error)) from None
    text = format_world_calibration(
        result, f"mrsteve calibrate {' '.join(arguments)} --write",
        encoder=calibrated.description,
        weights_sha256=calibrated.weights_sha256)
    with writing_results():
        if target is None:
            typer.echo(text, nl=False)
        else:
            with atomic_path(target) as tmp:
                tmp.write_text(text, encoding="utf-8")
            typer.echo(f"wrote {target}", err=True)
        if json_path is not None:
            write_json(json_path, result.summary(shlex.join(sys.argv)))
