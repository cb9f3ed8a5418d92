"""`mrsteve far-views`: count an encoder's false matches on views far from everything a prompt
names, in a world and a look (the held-out check of its thresholds)."""

from __future__ import annotations

import math
from dataclasses import asdict
from pathlib import Path
from typing import Annotated

import typer

from mrsteve.cli.output import check_outputs, fail, write_json, writing_results

EXAMPLES = """Examples:

  mrsteve far-views --prompt "near cow" --worlds 2 --views 10

  mrsteve far-views --world heldout_highlands --look all --json far-views.json

  mrsteve far-views --world long_instruction --prompt "near cow" --worlds 1 --views 400"""

FAR_PROMPTS = "near cow,near sheep,near water,near sand"
"""The prompts checked by default: those whose targets are scarce enough that a world has
places far from all of them (trees, grass and dirt cover the worlds)."""


def command(
    prompt: Annotated[str, typer.Option(help="Prompts of the encoder's lexicon, "
                                             "comma-separated.")] = FAR_PROMPTS,
    world: Annotated[str, typer.Option(help="The world recipe (mrsteve worlds).")
                     ] = "heldout_highlands",
    look: Annotated[str, typer.Option(help="The light: day, dusk, overcast (comma-separated, "
                                           "or all).")] = "day",
    worlds: Annotated[int, typer.Option(min=1, help="Seeds of the world.")] = 20,
    views: Annotated[int, typer.Option(min=1, help="Views per world.")] = 50,
    min_distance: Annotated[float, typer.Option(
        min=1.0, help="Blocks from every exposed block and live mob the prompt names.")] = 40.0,
    seed: Annotated[int, typer.Option(min=0, help="Seed of the worlds and poses.")] = 0,
    encoder: Annotated[str, typer.Option(help="The encoder: pixels or semantic.")] = "pixels",
    weights: Annotated[Path | None, typer.Option(
        help="pixels: a weights file (mrsteve train encoder) in place of the shipped one; give "
             "--thresholds calibrated for it too.")] = None,
    thresholds: Annotated[Path | None, typer.Option(
        help="The thresholds file mrsteve calibrate --encoder pixels --weights WEIGHTS --out "
             "FILE wrote for --weights.")] = None,
    json_path: Annotated[Path | None, typer.Option("--json", help="Also write the counts as "
                                                                  "JSON here.")] = None,
) -> None:
    """Score clips taken at random standing poses at least --min-distance blocks from every
    target of each prompt, and count those at or above the encoder's threshold (a false match:
    MrSteve's memory would send the agent there). The encoder sees only the frames; the world is
    read to place the poses."""
    from mrsteve.calibration.far_views import far_views
    from mrsteve.naming import check_name, choose
    from mrsteve.perception import ENCODERS, make_encoder
    from mrsteve.perception.pixels import load_calibrated
    from mrsteve.world.recipes import WORLD_RECIPES
    from mrsteve.world.render import LOOKS

    try:
        check_name(encoder, ENCODERS, "encoder")
        check_name(world, WORLD_RECIPES, "world")
        if WORLD_RECIPES[world].size is None:
            raise ValueError(f"world {world!r} is unbounded: give a world with walls "
                             f"(mrsteve worlds lists their sizes)")
        looks = choose(look, list(LOOKS), "look")
        if (weights is None) != (thresholds is None):
            raise ValueError("--weights and --thresholds go together: a trained pixel encoder "
                             "and the thresholds calibrated for it")
        if weights is not None and encoder != "pixels":
            raise ValueError(f"--weights is a trained pixel encoder's: give --encoder pixels, "
                             f"not {encoder}")
        model = make_encoder(encoder) if weights is None else load_calibrated(weights,
                                                                              thresholds)
        prompts = choose(prompt, list(model.lexicon.texts), "prompt", allow_all=False)
    except ValueError as error:
        raise fail(str(error)) from None
    check_outputs([json_path])
    rows = []
    for seen in looks:
        for text in prompts:
            counted = far_views(model, text, world, look=seen, worlds=worlds, views=views,
                                min_distance=min_distance, seed=seed)
            rows.append({"look": seen, **asdict(counted), "per_thousand": counted.per_thousand})
    header = f"{'prompt':<12} {'look':<9} {'threshold':>9} {'views':>6} {'false':>6} " \
             f"{'per 1,000':>9} {'highest margin':>14}"
    named = f"the {encoder} encoder" + (f" with weights {weights}" if weights else "")
    typer.echo(f"far views of {world}, at least {min_distance:g} blocks from every target, "
               f"{worlds} seeds x {views} views (seed {seed}), {named}")
    typer.echo(header)
    for row in rows:
        per = "-" if math.isnan(row["per_thousand"]) else f"{row['per_thousand']:.1f}"
        margin = "-" if math.isnan(row["highest_margin"]) else f"{row['highest_margin']:+.3f}"
        typer.echo(f"{row['prompt']:<12} {row['look']:<9} {row['threshold']:>9.4f} "
                   f"{row['views']:>6} {row['false_matches']:>6} {per:>9} {margin:>14}")
    if json_path is not None:
        with writing_results():
            write_json(json_path, {"world": world, "min_distance": min_distance,
                                   "worlds": worlds, "views": views, "seed": seed,
                                   "encoder": encoder,
                                   "weights": None if weights is None else str(weights),
                                   "weights_sha256": None if weights is None
                                   else model.weights.sha256, "rows": rows})
