"""The results page, generated from run folders: every published number traces to a run.

:func:`report` reads run folders (``mrsteve eval ... --out DIR``: the manifest and the groups'
summaries; the episode records are not needed) and writes one Markdown section per run: the
experiment, the command and the commit that made it, the date, the machine's share (workers,
wall time), the experiment's own table beside the paper's figures (the same table ``mrsteve
eval`` prints), and the run's notes (``NOTES.md`` in the folder, written by whoever ran it: what
the numbers show and why) verbatim. ``mrsteve report`` prints or writes it; the repository's
``docs/results.md`` is this page for the runs kept in ``results/``.
"""

from __future__ import annotations

import dataclasses
import json
import math
import shlex
import typing
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mrsteve.eval.experiment import Experiment, Summaries
from mrsteve.eval.experiments import experiment as experiment_named
from mrsteve.eval.spec import Group
from mrsteve.eval.sweep import summary_path

NOTES = "NOTES.md"
"""A run folder's hand-written notes, copied into its section."""


@dataclass(frozen=True)
class Run:
    """A run folder, read back: its manifest, its experiment's config and groups, and the
    groups' metric summaries."""

    folder: Path
    manifest: dict[str, Any]
    experiment: Experiment
    config: Any
    groups: list[Group]
    summaries: Summaries
    notes: str

    @property
    def episodes(self) -> int:
        return int(self.manifest["sweep"]["episodes"])


def config_of(config_type: type, values: dict[str, Any]) -> Any:
    """The config dataclass a manifest saved (``dataclasses.asdict``: tuples came back as
    lists)."""
    hints = typing.get_type_hints(config_type)
    known = {field.name for field in dataclasses.fields(config_type)}
    unknown = sorted(set(values) - known)
    if unknown:
        raise ValueError(f"the manifest's config has fields this version of "
                         f"{config_type.__name__} does not: {', '.join(unknown)}")
    fields = {}
    for name, value in values.items():
        tuple_typed = "tuple" in str(hints[name])
        fields[name] = tuple(value) if isinstance(value, list) and tuple_typed else value
    return config_type(**fields)


def load_run(folder: Path | str) -> Run:
    """The run folder ``folder`` (a ``ValueError`` naming what is missing)."""
    folder = Path(folder)
    manifest_file = folder / "manifest.json"
    if not manifest_file.is_file():
        raise ValueError(f"{folder} is not a run folder: it has no manifest.json")
    manifest = json.loads(manifest_file.read_text(encoding="utf-8"))
    if manifest.get("wall_time_s") is None:
        raise ValueError(f"{folder}: the run did not finish (its manifest has no wall time)")
    experiment = experiment_named(manifest["experiment"])
    config = config_of(experiment.config_type, manifest["config"])
    try:
        groups = experiment.groups(config)
    except FileNotFoundError as error:  # a file the run was given (--weights) is gone
        try:
            groups = experiment.recorded_groups(manifest["groups"])
        except NotImplementedError:
            raise ValueError(f"{folder}: {error.filename} is gone and the run needs it to "
                             "build its groups") from None
    if [group.label for group in groups] != list(manifest["groups"]):
        raise ValueError(f"{folder}: its groups are not the ones this version builds from its "
                         "config; regenerate it with this version")
    summaries = {}
    for group in groups:
        path = summary_path(folder / "summary.json", group.label, several=len(groups) > 1)
        if not path.is_file():
            raise ValueError(f"{folder}: group {group.label} has no summary ({path.name})")
        summaries[group.label] = json.loads(path.read_text(encoding="utf-8"))["metrics"]
    notes_file = folder / NOTES
    notes = notes_file.read_text(encoding="utf-8").strip() if notes_file.is_file() else ""
    return Run(folder, manifest, experiment, config, groups, summaries, notes)


def command_line(run: Run, folder_name: str) -> str:
    """The command that made the run, as a user would type it (``--out`` naming where its folder
    is kept, progress options dropped)."""
    recorded = run.manifest.get("command_line")
    argv = shlex.split(recorded)[1:] if recorded else list(run.manifest["command"])
    if "eval" in argv:
        argv = argv[argv.index("eval"):]
    words, skip = ["mrsteve"], False
    for argument in argv:
        if skip:
            skip = False
            continue
        if argument in ("--out", "--json", "--plots"):
            skip = True
            continue
        if argument in ("--progress", "--no-progress") or argument.startswith("--out="):
            continue
        words.append(argument)
    return shlex.join([*words, "--out", folder_name])


def run_section(run: Run, folder_name: str) -> str:
    """One run's Markdown section."""
    manifest = run.manifest
    git = manifest.get("git") or {}
    commit = git.get("commit", "")[:10] or "not a git checkout"
    if git.get("dirty"):
        commit += " (with uncommitted changes)"
    started = manifest["started"][:10]
    minutes = manifest["wall_time_s"] / 60
    sweep = manifest["sweep"]
    first, last = sweep["seed"], sweep["seed"] + run.episodes - 1
    seeds = f"seed {first}" if first == last else f"seeds {first} to {last}"
    title = run.experiment.summary.split("\n\n")[0]
    lines = [
        f"## {title}",
        "",
        f"`{command_line(run, folder_name)}`",
        "",
        (f"Commit {commit}, {started}; {run.episodes} episode{'s' * (run.episodes > 1)} per "
         f"group ({seeds}), "
         f"{sweep['workers']} worker{'s' * (sweep['workers'] > 1)} ({sweep['backend']}), "
         f"{minutes:.1f} min; run folder `{folder_name}`."),
        "",
        "```text",
        run.experiment.table(run.config, run.groups, run.summaries),
        "```",
    ]
    if run.notes:
        lines += ["", run.notes]
    return "\n".join(lines)


@dataclass(frozen=True)
class Headline:
    """One row of the page's first table: an experiment's main metric for MrSteve and for the
    baseline the paper sets it against, over every task of the run (each task weighing the
    same), beside the paper's figures."""

    title: str
    metric: str
    ours: str
    baseline: str
    paper: str
    digits: int = 1


HEADLINES = {
    "exploration": Headline("Exploration: map coverage %", "map_coverage", "count-based",
                            "go-explore", "84.4 vs 50.8 (Table 1)"),
    "navigation": Headline("Navigation: success %", "success_rate", "depth",
                           "straight", "92.8 vs 73.5 (VPT-Nav vs heuristic, appendix)"),
    "aba-sparse": Headline("ABA-Sparse: success %", "success_rate", "mrsteve",
                           "steve1", "MrSteve above STEVE-1 on every task (Figure 5)"),
    "aba-random": Headline("ABA-Random: success %", "success_rate", "mrsteve", "steve1",
                           "MrSteve above STEVE-1 on every task (appendix)"),
    "seq4": Headline("SEQ(4): success %", "success_rate", "mrsteve", "steve1",
                     "MrSteve above STEVE-1 (appendix)"),
    "memory-tasks": Headline("Memory Tasks: success %", "success_rate", "mrsteve",
                             "steve1", "~95 vs ~23 (Figure 6)"),
    "long-instruction": Headline("Long-Instruction: tasks solved", "tasks_solved", "mrsteve",
                                 "fm", "> 80 vs < 50 (Figure 7)"),
    "long-navigation": Headline("Long-Navigation: goals reached", "goals_reached", "mrsteve",
                                "fm", "~70 vs < 10 (Figure 7)"),
    "llm-planner": Headline("Crafting, ground-truth plans: success %", "success_rate",
                            "mrsteve+gt", "steve1+gt",
                            "50.8 vs 40.5 (appendix, 11 tasks)"),
}
"""The first table's rows: ours is MrSteve (or its count-based explorer, its navigator), the
baseline STEVE-1 (or the paper's weakest memory, FIFO, on the long tasks)."""


def headline_value(run: Run, agent: str, metric: str) -> float | None:
    """The mean over the run's tasks of ``agent``'s ``metric``, from its groups at the
    experiment's default memory capacity (``None`` when the run has no such group)."""
    default = getattr(type(run.config)(), "capacities", (None,))[0]
    means = []
    for group in run.groups:
        memory = getattr(group.spec.agent, "memory", None)
        if group.agent != agent or (memory is not None and memory.capacity != default):
            continue
        mean = run.summaries[group.label].get(metric, {}).get("mean")
        if mean is not None and not math.isnan(mean):  # NaN: no episode reported it
            means.append(mean)
    return sum(means) / len(means) if means else None


def headline_table(runs: list[Run]) -> str:
    """The page's first table (:data:`HEADLINES`), one row per experiment that has a run."""
    rows = ["| experiment | tasks | MrSteve | baseline | paper |",
            "| --- | --- | --- | --- | --- |"]
    done = set()
    for run in runs:
        line = HEADLINES.get(run.experiment.name)
        if line is None or line.title in done:
            continue
        ours, base = (headline_value(run, agent, line.metric) for agent in (line.ours,
                                                                            line.baseline))
        if ours is None or base is None:
            continue
        done.add(line.title)
        tasks = len({group.task for group in run.groups})
        rows.append(f"| {line.title} | {tasks} | {ours:.{line.digits}f} | "
                    f"{base:.{line.digits}f} ({line.baseline}) | {line.paper} |")
    return "\n".join(rows)


HEADER = """# Results

Generated by `mrsteve report {folders}` from the run folders kept in the repository (each
group's summary and the run's manifest; the episode records are not kept). Do not edit by hand:
change a run's `NOTES.md` or rerun it, then generate the page again. Every number below was
measured by the command above its table, on the commit it names; the paper's figures stand
beside ours. The embedded world is not Minecraft: read each comparison as "the same experiment,
with our stand-ins".
"""


def report(folders: list[Path]) -> str:
    """The results page of the run folders ``folders``: the experiments in the order
    ``mrsteve eval`` lists them, the folders of one experiment by name."""
    from mrsteve.eval.experiments import EXPERIMENTS

    if not folders:
        raise ValueError("give at least one run folder")
    order = list(EXPERIMENTS)
    runs = sorted((load_run(folder) for folder in folders),
                  key=lambda run: (order.index(run.experiment.name), run.folder.name))
    names = [str(folder) for folder in folders]
    sections = [run_section(run, str(run.folder)) for run in runs]
    header = HEADER.format(folders=" ".join(names) if len(names) <= 3
                           else f"{Path(names[0]).parent}/*")
    glance = f"## At a glance\n\n{HEADLINE_START}\n{headline_table(runs)}\n{HEADLINE_END}"
    return "\n\n".join([header.rstrip(), glance, *sections]) + "\n"


HEADLINE_START, HEADLINE_END = "<!-- headline -->", "<!-- /headline -->"
"""The markers around the first table (the README holds a copy between the same markers)."""


def headline_block(page: str) -> str:
    """The first table of a page (or of the README), between its markers."""
    start, end = page.find(HEADLINE_START), page.find(HEADLINE_END)
    if start < 0 or end < start:
        raise ValueError("no headline table (between <!-- headline --> markers) in the page")
    return page[start:end + len(HEADLINE_END)]
