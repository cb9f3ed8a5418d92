"""``mrsteve demo``: one MrSteve episode with a live view, a plot and a video."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from mrsteve.agent.parts import AGENT_PARTS, AgentParts
from mrsteve.agent.registry import AGENTS
from mrsteve.cli.eval import with_options
from mrsteve.cli.output import fail, fail_on_os_error
from mrsteve.naming import alternatives

EXAMPLES = """Examples:

  mrsteve demo

  mrsteve demo --task beef-log-beef --agent fm --seed 3 --out runs/fm-beef

  mrsteve demo --task bed --agent steve1

  mrsteve demo --task aba-random/wool-log-wool --seed 3

  mrsteve demo --parts stand-in --no-video

  mrsteve demo --parts stand-in --encoder pixels

  mrsteve demo --task milk-log-milk --navigator-weights runs/navigator/navigator.npz"""


def demo(
    task: Annotated[str, typer.Option(help="ABA-Sparse task (water-log-water, beef-log-beef, ...), crafting task (bed, sign, leather-boots, ...), or SUITE/TASK of another suite (aba-random/wool-log-wool on the unbounded plains, seq4/log-water-wool-beef).")] = "water-log-water",
    agent: Annotated[str, typer.Option(help=f"Agent: {alternatives(AGENTS)}.")] = "mrsteve",
    seed: Annotated[int, typer.Option(min=0, help="Episode seed (world, mobs and agent).")] = 0,
    out: Annotated[Path | None, typer.Option(help="Output folder, new or an earlier demo's, which is replaced whole (default: runs/demo-TASK-AGENT-seedN, with the parts other than the default before -seedN, e.g. runs/demo-water-log-water-mrsteve-parts-stand-in-seed0).")] = None,
    video: Annotated[bool, typer.Option(help="Write a GIF of the agent's view (and an MP4 with the video extra).")] = True,
    progress: Annotated[bool, typer.Option(help="Show a progress bar.")] = True,
    **parts: Any,
) -> None:
    """Run one episode of an ABA-Sparse task, or of a crafting task with the ground-truth planner
    over the agent, and show what the agent did: the sub-task results, a top-down plot of its path
    coloured by mode with the remembered targets, a GIF of its view (the subgoal in its
    caption), and view.html: the episode's page of what its memory held and read (`mrsteve
    view`)."""
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
        demo = run_demo(key, agent, seed, out, video, progress, say=say_above_bars, **parts)
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
    if "view" in demo.files:
        typer.echo(f"Open {demo.files['view']} in a browser: the map, the memory and its reads.")


command = with_options(demo, AgentParts, AGENT_PARTS)
"""``mrsteve demo``: :func:`demo` with the agent's parts as options."""
