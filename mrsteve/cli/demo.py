"""``mrsteve demo``: one MrSteve episode with a live view, a plot and a video."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from mrsteve.agent.registry import AGENTS, INSTRUCTION_POLICIES
from mrsteve.cli.output import fail, fail_on_os_error
from mrsteve.control.registry import AGENT_NAVIGATORS
from mrsteve.eval.experiment import DEFAULT_PARTS, PARTS_HELP
from mrsteve.naming import alternatives
from mrsteve.perception import ENCODERS

EXAMPLES = """Examples:

  mrsteve demo

  mrsteve demo --task beef-log-beef --agent fm --seed 3 --out runs/fm-beef

  mrsteve demo --task bed --agent steve1

  mrsteve demo --task aba-random/wool-log-wool --seed 3

  mrsteve demo --parts stand-in --no-video

  mrsteve demo --parts stand-in --encoder pixels

  mrsteve demo --task milk-log-milk --navigator-weights runs/navigator/navigator.npz"""


def command(
    task: Annotated[str, typer.Option(help="ABA-Sparse task (water-log-water, beef-log-beef, ...), crafting task (bed, sign, leather-boots, ...), or SUITE/TASK of another suite (aba-random/wool-log-wool on the unbounded plains, seq4/log-water-wool-beef).")] = "water-log-water",
    agent: Annotated[str, typer.Option(help=f"Agent: {alternatives(AGENTS)}.")] = "mrsteve",
    seed: Annotated[int, typer.Option(min=0, help="Episode seed (world, mobs and agent).")] = 0,
    out: Annotated[Path | None, typer.Option(help="Output folder, new or an earlier demo's, which is replaced whole (default: runs/demo-TASK-AGENT-seedN, with the parts other than the default before -seedN, e.g. runs/demo-water-log-water-mrsteve-parts-stand-in-seed0).")] = None,
    video: Annotated[bool, typer.Option(help="Write a GIF of the agent's view (and an MP4 with the video extra).")] = True,
    parts: Annotated[str, typer.Option(help=f"The agent's parts: {PARTS_HELP} --encoder, --navigator and --instruction-policy override it for their part.")] = DEFAULT_PARTS,
    encoder: Annotated[str | None, typer.Option(help=f"The agent's encoder: {alternatives(ENCODERS)} (default: the one --parts names).")] = None,
    navigator: Annotated[str | None, typer.Option(help=f"The agent's navigator: {alternatives(AGENT_NAVIGATORS)} (default: the one --parts names).")] = None,
    instruction_policy: Annotated[str | None, typer.Option(help=f"The agent's instruction policy: {alternatives(INSTRUCTION_POLICIES)} (default: the one --parts names).")] = None,
    navigator_weights: Annotated[Path | None, typer.Option(help="A weights file (mrsteve train navigator) the learned navigator (the default) runs with in place of the shipped one.")] = None,
    mineclip_weights: Annotated[Path | None, typer.Option(help="MineCLIP's released attn.pth: the weights of --encoder mineclip, and the text tower of --instruction-policy steve1.")] = None,
    vpt_nav_weights: Annotated[Path | None, typer.Option(help="VPT-Nav's released vpt_nav.weights (its .model beside it): the weights of --navigator vpt-nav.")] = None,
    steve1_weights: Annotated[Path | None, typer.Option(help="STEVE-1's released steve1.weights (its .model beside it): the policy of --instruction-policy steve1.")] = None,
    steve1_prior: Annotated[Path | None, typer.Option(help="STEVE-1's released steve1_prior.pt: the prior of --instruction-policy steve1.")] = None,
    progress: Annotated[bool, typer.Option(help="Show a progress bar.")] = True,
) -> None:
    """Run one episode of an ABA-Sparse task, or of a crafting task with the ground-truth planner
    over the agent, and show what the agent did: the sub-task results, a top-down plot of its path
    coloured by mode with the remembered targets, and a GIF of its view (the subgoal in its
    caption)."""
    from mrsteve.eval.demo import run_demo
    from mrsteve.eval.results import format_table
    from mrsteve.jitcache import say_above_bars

    try:
        from mrsteve.naming import unknown_name
        from mrsteve.tasks.catalog import load_catalog

        catalog = load_catalog()
        if "/" in task:  # suite/name: any suite's task (aba-random/wool-log-wool, seq4/...)
            catalog.by_key(task)
            key = task
        else:
            suite = "crafting" if task in catalog.crafting else "aba-sparse"
            if task not in catalog.crafting and task not in catalog.suites["aba-sparse"]:
                raise unknown_name("task", task, (*catalog.suites["aba-sparse"],
                                                  *catalog.crafting))
            key = f"{suite}/{task}"
        demo = run_demo(key, agent, seed, out, video, progress, parts=parts, encoder=encoder,
                        navigator=navigator, instruction_policy=instruction_policy,
                        navigator_weights=None if navigator_weights is None
                        else str(navigator_weights),
                        weights_files={kind: None if path is None else str(path)
                                       for kind, path in (("mineclip", mineclip_weights),
                                                          ("vpt-nav", vpt_nav_weights),
                                                          ("steve1", steve1_weights),
                                                          ("steve1-prior", steve1_prior))},
                        say=say_above_bars)
    except KeyboardInterrupt as interrupt:  # the output folder is as it was (run_demo)
        typer.secho(str(interrupt) or "interrupted: no demo was written", err=True,
                    fg=typer.colors.YELLOW)
        raise typer.Exit(code=130) from None
    except ValueError as error:
        raise fail(str(error)) from None
    except OSError as error:
        raise fail_on_os_error(error) from None
    labels = catalog.by_key(key).labels if not key.startswith("crafting/") else ("",)
    rows = [[f"{labels[i]}: {t.item}" if labels[i] else t.item, "yes" if t.success else "no",
             t.duration]
            for i, t in enumerate(demo.result.tasks)]
    typer.echo(format_table(["sub-task", "success", "steps"], rows))
    typer.echo(f"\n{demo.result.steps} steps. Wrote to {demo.out}/:")
    for name, path in demo.files.items():
        typer.echo(f"  {name:8s} {path.name}")
    for note in demo.notes:
        typer.echo(note)
