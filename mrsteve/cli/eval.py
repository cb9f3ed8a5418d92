"""`mrsteve eval`: the paper's experiments, one subcommand each.

Every experiment is a sweep of seeded episodes over groups of (task, agent) (:func:`run_sweep`):
``--episodes N`` episodes per group, episode ``i`` seeded with ``S + i`` (``--seed S``, the paper:
42), in ``--workers`` processes with a progress bar; the results table is printed beside the
paper's figures. ``--json PATH`` writes the summary ``{"task", "agent", "episodes", "config",
"metrics"}`` (one file per group when a sweep has several: ``PATH`` with the group's name before
the suffix) and the per-episode records as JSON lines beside it, so an interrupted sweep resumes
where it stopped. ``--plots DIR`` saves a top-down trajectory plot per episode. A new experiment
is a new command that builds its groups and calls :func:`run_sweep` with its episode function.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Annotated, Any

import typer

from mrsteve.cli.output import fail

eval_app = typer.Typer(help="Run the paper's experiments and write results.", no_args_is_help=True)

# -- the options every experiment shares ---------------------------------------------------------

Episodes = Annotated[
    int, typer.Option(min=1, help="Episodes per task and agent; episode i uses seed S + i.")
]
Seed = Annotated[int, typer.Option(help="Base seed S of the episodes (the paper: 42 + episode).")]
Workers = Annotated[int, typer.Option(min=1, help="Worker processes running episodes.")]
JsonPath = Annotated[
    Path | None,
    typer.Option(
        "--json",
        help="Write the summary JSON here (one file per task and agent when there are several, "
        "named PATH-stem.<group>.json) and the episode records as JSON lines beside it; an "
        "existing records file is resumed.",
    ),
]
PlotsDir = Annotated[
    Path | None, typer.Option("--plots", help="Save a top-down trajectory PNG per episode here.")
]
Progress = Annotated[bool, typer.Option("--progress/--no-progress", help="Show a progress bar.")]


@dataclass(frozen=True)
class SweepOptions:
    """The shared options of an ``eval`` command."""

    episodes: int
    seed: int
    workers: int = 1
    json_path: Path | None = None
    plots: Path | None = None
    progress: bool = True


@dataclass(frozen=True)
class Group:
    """One (task, agent) of a sweep, with what its summary needs."""

    task: str
    """Task name of the episode specs (``exploration``, ``navigation/flat``, ...)."""
    agent: str
    label: str
    """Short name of the group in file names (``flat``, ``count-based``)."""
    config: dict[str, Any]
    """The group's full configuration, saved in its summary."""


PlotFn = Callable[[dict[str, Any], Path], None]
"""Draws one episode record to a PNG path."""


def run_sweep(
    groups: Sequence[Group],
    episode_fn: Callable,
    metrics: Sequence[str],
    options: SweepOptions,
    *,
    task_options: dict[str, Any] | None = None,
    plot: PlotFn | None = None,
) -> dict[tuple[str, str], dict[str, dict[str, float]]]:
    """Run every group's episodes (resuming from its records file), write summaries and plots;
    returns the metric summaries by ``(task, agent)``."""
    from mrsteve.eval.results import records_path_for, summarize, write_summary
    from mrsteve.eval.runner import make_specs, run_episodes

    summaries = {}
    for group in groups:
        specs = make_specs([group.task], [group.agent], options.episodes, options.seed,
                           **(task_options or {}))
        summary_path = _summary_path(options.json_path, group.label, several=len(groups) > 1)
        try:
            records = run_episodes(
                episode_fn, specs, workers=options.workers, progress=options.progress,
                records_path=records_path_for(summary_path) if summary_path else None,
            )  # fmt: skip
        except ValueError as error:  # a task that cannot be set up on its world
            raise fail(f"{group.task}, {group.agent}: {error}") from None
        summary = summarize(records, metrics)
        summaries[(group.task, group.agent)] = summary
        if summary_path is not None:
            config = {**group.config, "episodes": options.episodes, "seed": options.seed,
                      "seeds": [spec.seed for spec in specs]}
            write_summary(summary_path, task=group.task, agent=group.agent,
                          episodes=len(records), config=config, metrics=summary)
            typer.echo(f"wrote {summary_path}")
        if options.plots is not None and plot is not None:
            for record in records:
                name = f"{group.task.replace('/', '-')}_{group.agent}_{record['episode']:03d}.png"
                plot(record, options.plots / name)
    if options.plots is not None and plot is not None:
        typer.echo(f"plots in {options.plots}")
    return summaries


def _summary_path(json_path: Path | None, label: str, *, several: bool) -> Path | None:
    if json_path is None or not several:
        return json_path
    return json_path.with_name(f"{json_path.stem}.{label}{json_path.suffix or '.json'}")


def choices(what: str, value: str, valid: Sequence[str], *, allow_all: bool = True) -> list[str]:
    """``value`` as a list of choices (comma-separated, or ``all``); an unknown one exits with an
    error listing the valid ones."""
    if allow_all and value == "all":
        return list(valid)
    picked = [part.strip() for part in value.split(",") if part.strip()]
    unknown = [part for part in picked if part not in valid]
    if unknown or not picked:
        extra = " or 'all'" if allow_all else ""
        raise fail(f"unknown {what} {', '.join(map(repr, unknown)) or repr(value)}; valid: "
                   f"{', '.join(valid)}{extra}")
    return picked


# -- experiments ----------------------------------------------------------------------------------


@eval_app.command("exploration")
def exploration(
    agent: Annotated[
        str,
        typer.Option(help="Explorer: count-based, count-based-straight, plan4mc, "
                     "plan4mc-straight, go-explore (comma-separated, or 'all')."),
    ] = "count-based",
    steps: Annotated[int, typer.Option(min=1, help="Steps per episode (the paper: 6K).")] = 6000,
    episodes: Episodes = 20,
    seed: Seed = 42,
    workers: Workers = 1,
    json_path: JsonPath = None,
    plots: PlotsDir = None,
    progress: Progress = True,
) -> None:
    """Exploration (paper Table 1): Map Coverage and Revisit Count on Map 1.

    The explorer starts at the centre of Map 1 and explores for --steps steps. Map Coverage is the
    percentage of an 11 x 11 grid over the walkable area (inside the walls) that the trajectory
    enters; Revisit Count the mean number of returns to the cells where it spent over 300 steps.
    """
    from mrsteve.tasks import exploration as task

    agents = choices("agent", agent, list(task.EXPLORERS))
    options = SweepOptions(episodes, seed, workers, json_path, plots, progress)
    configs = [task.ExplorationTaskConfig(agent=name, steps=steps) for name in agents]
    groups = [
        Group("exploration", config.agent, config.agent,
              {"task": asdict(config), "components": task.component_configs(config)})
        for config in configs
    ]
    world = task.ExplorationTaskConfig().world

    def plot(record: dict[str, Any], path: Path) -> None:
        from mrsteve.eval.plots import save_trajectory_plot, world_blocks

        save_trajectory_plot(
            path, world_blocks(world, record["seed"]), record["trajectory"], goals=record["goals"],
            title=f"{record['agent']}, seed {record['seed']}: coverage "
                  f"{record['map_coverage']:.1f} %, revisits {record['revisit_count']:.2f}",
        )  # fmt: skip

    from mrsteve.eval.experiments import exploration_episode

    summaries = run_sweep(groups, exploration_episode, task.METRICS, options,
                          task_options={"steps": steps}, plot=plot)
    from mrsteve.eval.results import format_metric, format_table

    rows = []
    for name in agents:
        summary = summaries[("exploration", name)]
        paper_coverage, paper_revisits = task.PAPER_RESULTS[name]
        rows.append([name, format_metric(summary["map_coverage"]),
                     format_metric(summary["revisit_count"]), f"{paper_coverage:.2f}",
                     f"{paper_revisits:.2f}"])
    typer.echo(format_table(
        ["agent", "map coverage %", "revisit count", "paper coverage %", "paper revisits"], rows,
    ))  # fmt: skip


@eval_app.command("navigation")
def navigation(
    terrain: Annotated[
        str, typer.Option(help="flat, plains, mountain, river (comma-separated, or 'all').")
    ] = "all",
    navigator: Annotated[
        str, typer.Option(help="depth (the VPT-Nav stand-in) or straight (the paper's heuristic); "
                          "comma-separated, or 'all'.")
    ] = "depth",
    max_steps: Annotated[
        int, typer.Option(min=1, help="Steps before an episode fails (the paper does not say).")
    ] = 1000,
    episodes: Episodes = 20,
    seed: Seed = 42,
    workers: Workers = 1,
    json_path: JsonPath = None,
    plots: PlotsDir = None,
    progress: Progress = True,
) -> None:
    """Navigation (paper appendix, navigator table): success rate and SPL per terrain.

    The navigator must come within 3 blocks of a goal 10-20 blocks from the spawn (across the
    water on river) within --max-steps steps. SPL weighs success by the shortest path length on
    the true terrain over the path taken.
    """
    from mrsteve.tasks import navigation as task

    terrains = choices("terrain", terrain, list(task.TERRAINS))
    navigators = choices("navigator", navigator, list(task.NAVIGATORS))
    from mrsteve.control.navigation import NavigatorConfig

    options = SweepOptions(episodes, seed, workers, json_path, plots, progress)
    groups = [
        Group(f"navigation/{name}", nav, name if len(navigators) == 1 else f"{name}.{nav}", {
            "task": asdict(task.NavigationTaskConfig(terrain=name, navigator=nav,
                                                     max_steps=max_steps)),
            "world": task.TERRAINS[name],
            "navigator": nav,
            "navigator_config": asdict(NavigatorConfig()),
        })
        for name in terrains
        for nav in navigators
    ]  # fmt: skip

    def plot(record: dict[str, Any], path: Path) -> None:
        from mrsteve.eval.plots import save_trajectory_plot, world_blocks

        name = record["task"].partition("/")[2]
        save_trajectory_plot(
            path, world_blocks(task.TERRAINS[name], record["seed"]), record["trajectory"],
            target=record["goal"],
            title=f"{name}, {record['agent']}, seed {record['seed']}: "
                  f"{'success' if record['success_rate'] else 'failure'}, SPL {record['spl']:.2f}",
        )  # fmt: skip

    from mrsteve.eval.experiments import navigation_episode

    summaries = run_sweep(groups, navigation_episode, task.METRICS, options,
                          task_options={"max_steps": max_steps}, plot=plot)
    from mrsteve.eval.results import format_metric, format_table

    rows = []
    for group in groups:
        summary = summaries[(group.task, group.agent)]
        name = group.task.partition("/")[2]
        paper_spl, paper_success = task.PAPER_RESULTS[group.agent][name]
        rows.append([name, group.agent, format_metric(summary["success_rate"], 1),
                     format_metric(summary["spl"], 3), f"{paper_spl:.3f} ({paper_success} %)"])
    typer.echo(format_table(
        ["terrain", "navigator", "success %", "SPL", "paper SPL (success)"], rows,
    ))  # fmt: skip
    typer.echo("paper: 'straight' beside the Heuristic row, 'depth' beside VPT-Nav (KL = 1e-4)")



def _sequential(
    suite: str,
    task: str,
    agent: str,
    capacity: int | None,
    options: SweepOptions,
) -> None:
    """Shared body of the sequential item task commands (ABA-Sparse, ABA-Random, SEQ(4))."""
    from mrsteve.agent.factory import AGENTS
    from mrsteve.eval.experiments import sequential_episode
    from mrsteve.eval.results import format_metric, format_table, mean_stderr
    from mrsteve.tasks.sequential import find_tasks

    try:
        tasks = find_tasks(suite, task)
    except ValueError as error:
        raise fail(str(error)) from None
    agents = choices("agent", agent, list(AGENTS))
    groups = [
        Group(f"{suite}/{t.name}", name, f"{t.name}.{name}", {
            "task": asdict(t), "agent": AGENTS[name].description, "memory_capacity": capacity,
        })
        for t in tasks
        for name in agents
    ]  # fmt: skip
    metrics = tasks[0].metric_names
    summaries = run_sweep(groups, sequential_episode, metrics, options,
                          task_options={"capacity": capacity})
    labels = [name.removeprefix("duration_") for name in metrics if name.startswith("duration_")]
    rows = []
    for t in tasks:
        for name in agents:
            summary = summaries[(f"{suite}/{t.name}", name)]
            rows.append([t.name, name, format_metric(summary["success_rate"], 1),
                         *(format_metric(summary[f"duration_{label}"], 0) for label in labels)])
    if len(tasks) > 1:
        for name in agents:  # every task weighs the same, as in the paper's averages
            per_task = [summaries[(f"{suite}/{t.name}", name)] for t in tasks]
            rows.append([f"all {len(tasks)}", name,
                         format_metric(mean_stderr([s["success_rate"]["mean"] for s in per_task]), 1),
                         *(format_metric(mean_stderr([s[f"duration_{label}"]["mean"] for s in per_task]), 0)
                           for label in labels)])  # fmt: skip
    typer.echo(format_table(["task", "agent", "success %", *(f"steps {label}" for label in labels)],
                            rows))
    typer.echo("success %: all sub-tasks done in time; steps: mean duration of the successful ones")
    if options.plots is not None:
        from mrsteve.eval.plots import save_success_bars

        bars = {t.name: {name: summaries[(f"{suite}/{t.name}", name)]["success_rate"]
                         for name in agents} for t in tasks}
        path = save_success_bars(options.plots / f"{suite}-success.png", bars,
                                 title=f"{suite}: success rate")
        typer.echo(f"wrote {path}")


AgentChoice = Annotated[
    str, typer.Option(help="mrsteve, mrsteve-tc, center-embed, pm, em, fm, pmc-fm, steve1 (comma-separated, "
                      "or 'all').")
]
Capacity = Annotated[
    int | None, typer.Option(min=1, help="Memory capacity in frames (default: unlimited).")
]


@eval_app.command("aba-sparse")
def aba_sparse(
    task: Annotated[str, typer.Option(help="A-B-A task, e.g. water-log-water, or 'all' (20).")] = "all",
    agent: AgentChoice = "mrsteve",
    capacity: Capacity = None,
    episodes: Episodes = 10,
    seed: Seed = 42,
    workers: Workers = 1,
    json_path: JsonPath = None,
    plots: PlotsDir = None,
    progress: Progress = True,
) -> None:
    """ABA-Sparse (paper Section 4.2): obtain A, then B, then A again within 12K steps.

    A is sparse (water, beef, wool, milk) and B dense (log, dirt, seeds, leaves, sand); map1 for
    water, map2 for beef, wool and milk, map3 when B is sand. The task changes only on success and
    each task starts with the item it needs; success is read from the inventory.
    """
    _sequential("aba-sparse", task, agent, capacity,
                SweepOptions(episodes, seed, workers, json_path, plots, progress))


@eval_app.command("aba-random")
def aba_random(
    task: Annotated[str, typer.Option(help="water-log-water, beef-log-beef, wool-log-wool or 'all'.")] = "all",
    agent: AgentChoice = "mrsteve",
    capacity: Capacity = None,
    episodes: Episodes = 10,
    seed: Seed = 42,
    workers: Workers = 1,
    json_path: JsonPath = None,
    plots: PlotsDir = None,
    progress: Progress = True,
) -> None:
    """ABA-Random (paper appendix): A-log-A on procedural plains, a new map per seed, 12K steps."""
    _sequential("aba-random", task, agent, capacity,
                SweepOptions(episodes, seed, workers, json_path, plots, progress))


@eval_app.command("seq4")
def seq4(
    agent: AgentChoice = "mrsteve",
    capacity: Capacity = None,
    episodes: Episodes = 10,
    seed: Seed = 42,
    workers: Workers = 1,
    json_path: JsonPath = None,
    plots: PlotsDir = None,
    progress: Progress = True,
) -> None:
    """SEQ(4) (paper appendix): log, water, wool and beef in a row on procedural plains, 16K steps."""
    _sequential("seq4", "all", agent, capacity,
                SweepOptions(episodes, seed, workers, json_path, plots, progress))
