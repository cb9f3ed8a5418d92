"""``mrsteve bench agent``: steps per second of the whole agent on one core."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer

from mrsteve.agent.parts import PART_KINDS, PARTS, AgentParts
from mrsteve.cli.eval import with_options
from mrsteve.cli.output import check_outputs, fail, write_json, writing_results

EXAMPLES = """Examples:

  mrsteve bench agent

  mrsteve bench agent --agent fm --task aba-sparse/beef-log-beef --steps 1000

  mrsteve bench agent --obs-size 160 256 --json agent.json

  mrsteve bench agent --parts stand-in --encoder pixels --steps 500

  mrsteve bench agent --parts stand-in --navigator learned

  mrsteve bench agent --parts stand-in --instruction-policy learned --steps 1000"""


def bench(
    agent: Annotated[str, typer.Option(help="Agent to run (see `mrsteve eval aba-sparse --help`).")] = "mrsteve",
    task: Annotated[str, typer.Option(help="Task whose world and items the agent cycles through.")] = "aba-sparse/water-log-water",
    steps: Annotated[int, typer.Option(min=100, help="Steps to run.")] = 3000,
    seed: Annotated[int, typer.Option(min=0, help="Episode seed.")] = 0,
    obs_size: Annotated[tuple[int, int] | None, typer.Option(
        help="Observation height and width (default: the environment's).",
        show_default=False)] = None,
    json_path: Annotated[Path | None, typer.Option("--json", help="Write the results as JSON here.")] = None,
    **parts: Any,
) -> None:
    """Steps per second of the whole agent (world, renderer, encoder, memory, control) on one
    core, and the time per step of each part."""
    from mrsteve.bench.agent import bench_agent
    from mrsteve.bench.machine import describe_machine, machine_info
    from mrsteve.eval.results import format_table

    check_outputs([json_path])
    size = obs_size
    if size is not None and min(size) < 1:
        raise fail(f"--obs-size takes a height and a width of at least 1 pixel, got {size[0]} "
                   f"{size[1]}")
    try:
        chosen = AgentParts(**parts).chosen
        result = bench_agent(agent, task, steps, seed, size, **chosen)
        stand_in = dict(PARTS["stand-in"])
        if chosen != stand_in:  # measured against the stand-in agent, in the same process
            reference = bench_agent(agent, task, steps, seed, size, **stand_in)
            result["reference"] = stand_in
            result["reference_steps_per_second"] = reference["steps_per_second"]
            result["speed_vs_reference"] = result["steps_per_second"] / reference["steps_per_second"]
    except ValueError as error:
        raise fail(str(error)) from None
    result["machine"] = machine_info()
    rows = [[part, f"{us:.0f}"] for part, us in result["microseconds_per_step"].items()]
    typer.echo(format_table(["part", "µs / step"], rows))
    typer.echo(
        f"\n{result['agent']} ({chosen['encoder']} encoder, {chosen['navigator']} navigator, {chosen['instruction_policy']} instruction policy) on {result['world']} at {result['obs_size'][0]}x{result['obs_size'][1]}, "
        f"one core of {describe_machine(result['machine'])}: "
        f"{result['steps_per_second']:.0f} steps/s over {result['steps']} steps "
        f"({result['tasks_completed']} tasks done); the paper: about "
        f"{result['paper_steps_per_second']:.0f} steps/s on a GPU; warm-up "
        f"({result['warm_up_steps']} untimed steps, compiling the jitted kernels when not cached): "
        f"{result['warm_up_seconds']:.1f} s"
    )
    if "speed_vs_reference" in result:
        reference = result["reference"]
        typer.echo(f"the stand-in agent ({reference['encoder']} encoder, "
                   f"{reference['navigator']} navigator, {reference['instruction_policy']} "
                   f"instruction policy), in the same process: "
                   f"{result['reference_steps_per_second']:.0f} steps/s; this agent runs at "
                   f"{result['speed_vs_reference']:.2f} x that speed")
    if json_path is not None:
        with writing_results():
            write_json(json_path, result)


command = with_options(bench, AgentParts, ("parts", *PART_KINDS))
"""``mrsteve bench agent``: :func:`bench` with the agent's parts (the shipped ones, by name) as
options."""
