"""The results page, generated from runs: every published number traces to a run.

:func:`report` reads runs (``mrsteve eval ... --out DIR``: a run folder's manifest and its
groups' summaries, or ``--json PATH``: the summary files and the manifest beside them; the episode
records are not needed) and writes one Markdown section per run, titled by where it is kept: the
experiment, the command and the commit that made it, the date, the machine's share (workers,
wall time), the parts the agents ran with, the experiment's own table beside the paper's figures
(the same table ``mrsteve eval`` prints) and a link to the run's notes (``NOTES.md`` in the
folder: what the numbers show and why). Two checks are printed with each run: a run whose
manifest records other digests of the package's data files and weights than those installed
(:mod:`mrsteve.digests`) is marked stale (a page of several runs leaves its table out and takes
no first-table row from it), and a task where every agent succeeds every time is
marked at ceiling (such a row orders nothing). ``mrsteve report`` prints or writes the page;
the repository's ``docs/results.md`` is this page for the runs kept in ``results/``.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import re
import shlex
import typing
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mrsteve.digests import PACKAGE_ROOT, data_digest
from mrsteve.eval.experiment import Experiment, Summaries
from mrsteve.eval.exploration import PAPER_SETUP
from mrsteve.eval.long_tasks import LongTaskConfig
from mrsteve.eval.options import summary_path
from mrsteve.eval.registry import experiment as experiment_named
from mrsteve.eval.spec import Group

NOTES = "NOTES.md"
"""A run folder's hand-written notes, linked from its section."""

MANIFEST = "manifest.json"
"""A run folder's manifest (``--json PATH`` writes ``PATH-stem.manifest.json`` beside it)."""

CEILING = 100.0
"""A success rate (%) no agent can pass: a task where every agent is at it orders nothing."""


@dataclass(frozen=True)
class Run:
    """A run, read back: where it is kept, its manifest, its experiment's config and groups, the
    groups' metric summaries and its notes file (``None`` without one)."""

    folder: Path
    """The run folder, or the ``--json`` summary file, as given."""
    manifest: dict[str, Any]
    experiment: Experiment
    config: Any
    groups: list[Group]
    summaries: Summaries
    notes: Path | None

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


ACCEPTED = "a run folder (mrsteve eval --out DIR) or a summary file (mrsteve eval --json PATH)"
"""What ``mrsteve report`` reads, for its messages."""


def run_files(source: Path) -> tuple[Path, Path]:
    """``(manifest, summary base)`` of a run given as its folder (``--out DIR``) or a file in
    it, as the ``PATH`` of ``--json PATH`` (or a summary or the manifest written beside it), or
    as the folder holding one ``--json`` run (a ``ValueError`` saying what was expected
    otherwise)."""
    if source.is_dir():
        if (source / MANIFEST).is_file():
            return source / MANIFEST, source / "summary.json"
        beside = sorted(source.glob(f"*.{MANIFEST}"))
        if len(beside) == 1:
            return run_files(beside[0])
        if beside:
            raise ValueError(f"{source} holds several runs ({', '.join(p.name for p in beside)}): "
                             "give one of their summary files")
        raise ValueError(f"{source} is not a run folder: it has no {MANIFEST} (give {ACCEPTED})")
    if source.suffix == ".json" and (source.parent / MANIFEST).is_file():
        return run_files(source.parent)  # a run folder's manifest or summary
    if source.name.endswith(f".{MANIFEST}"):
        return source, source.with_name(source.name[:-len(MANIFEST)] + "json")
    if source.suffix == ".json":  # PATH of --json, or one group's summary PATH-stem.<group>.json
        words = source.stem.split(".")
        for end in range(len(words), 0, -1):
            stem = ".".join(words[:end])
            manifest = source.with_name(f"{stem}.{MANIFEST}")
            if manifest.is_file():
                return manifest, source.with_name(f"{stem}.json")
        raise ValueError(f"{source} has no manifest beside it ({source.stem}.{MANIFEST}): give "
                         f"{ACCEPTED}")
    if not source.exists():
        raise ValueError(f"{source} does not exist: give {ACCEPTED}")
    raise ValueError(f"{source} is neither {ACCEPTED.replace(' or ', ' nor ')}")


def load_run(source: Path | str) -> Run:
    """The run kept at ``source`` (:func:`run_files`; a ``ValueError`` naming what is
    missing)."""
    source = Path(source)
    manifest_file, base = run_files(source)
    manifest = json.loads(manifest_file.read_text(encoding="utf-8"))
    if manifest.get("wall_time_s") is None:
        raise ValueError(f"{source}: the run did not finish (its manifest has no wall time)")
    experiment = experiment_named(manifest["experiment"])
    config = config_of(experiment.config_type, manifest["config"])
    try:
        groups = experiment.groups(config)
    except FileNotFoundError as error:  # a file the run was given (--weights) is gone
        try:
            groups = experiment.recorded_groups(manifest["groups"])
        except NotImplementedError:
            raise ValueError(f"{source}: {error.filename} is gone and the run needs it to "
                             "build its groups") from None
    if [group.label for group in groups] != list(manifest["groups"]):
        raise ValueError(f"{source}: its groups are not the ones this version builds from its "
                         "config; regenerate it with this version")
    summaries = {}
    for group in groups:
        path = summary_path(base, group.label, several=len(groups) > 1)
        if not path.is_file():
            raise ValueError(f"{source}: group {group.label} has no summary ({path.name})")
        summaries[group.label] = json.loads(path.read_text(encoding="utf-8"))["metrics"]
    notes = manifest_file.parent / NOTES
    if manifest_file.name == MANIFEST:  # a run folder, named by the folder
        return Run(manifest_file.parent, manifest, experiment, config, groups, summaries,
                   notes if notes.is_file() else None)
    return Run(source, manifest, experiment, config, groups, summaries, None)


def recorded_data(value: Any) -> Iterator[tuple[str, str]]:
    """Every ``(path, sha256)`` of a package data file a manifest's spec trees record (the
    ``data`` lists of the task and of each part)."""
    if isinstance(value, dict):
        for key, item in value.items():
            if key == "data" and isinstance(item, list):
                yield from ((str(path), str(sha)) for path, sha in item)
            else:
                yield from recorded_data(item)
    elif isinstance(value, list):
        for item in value:
            yield from recorded_data(item)


def stale_files(run: Run) -> list[str]:
    """The package's data files and weights the run loaded in another version than the one
    installed (or that are no longer installed), sorted."""
    stale = set()
    for path, sha in recorded_data(run.manifest["groups"]):
        if not (PACKAGE_ROOT / path).is_file() or data_digest(path) != sha:
            stale.add(path)
    return sorted(stale)


def ceiling_tasks(run: Run) -> list[str]:
    """The run's tasks (in group order) where every group reports a success rate and every one
    is at :data:`CEILING`."""
    rates: dict[str, list[float]] = {}
    for group in run.groups:
        mean = run.summaries[group.label].get("success_rate", {}).get("mean")
        rates.setdefault(group.task, []).append(math.nan if mean is None else mean)
    return [task for task, values in rates.items() if all(value >= CEILING for value in values)]


def task_name(task: str) -> str:
    """A group's task without its experiment's prefix (``aba-sparse/water-log-water``,
    ``instruction/log/near``)."""
    return task.partition("/")[2] or task


def parts_ran(run: Run) -> str:
    """The agents' parts as the manifest records them (``encoder pixels, navigator learned,
    ...``; every kind the groups used, empty for agents without such parts)."""
    kinds: dict[str, list[str]] = {"encoder": [], "navigator": [], "instruction policy": []}
    for tree in run.manifest["groups"].values():
        agent = tree.get("agent") or {}
        encoder = agent.get("encoder")
        explorer = agent.get("explorer")
        found = {
            "encoder": encoder.get("kind") if isinstance(encoder, dict) else None,
            "navigator": agent.get("navigator_kind")
            or (explorer.get("navigator") if isinstance(explorer, dict) else None),
            "instruction policy": agent.get("instruction_policy"),
        }
        for part, kind in found.items():
            if isinstance(kind, str) and kind not in kinds[part]:
                kinds[part].append(kind)
    return ", ".join(f"{part} {' and '.join(names)}" for part, names in kinds.items() if names)


def command_line(run: Run, folder_name: str) -> str:
    """The command that made the run, as a user would type it (``--out`` naming where its folder
    is kept, progress options dropped)."""
    recorded = run.manifest.get("command_line")
    argv = shlex.split(recorded)[1:] if recorded else list(run.manifest["command"])
    if "eval" in argv:
        argv = argv[argv.index("eval"):]
    words, skip, json_given = ["mrsteve"], False, False
    for argument in argv:
        if skip:
            skip = False
            continue
        if argument in ("--out", "--json", "--plots"):
            json_given = json_given or argument == "--json"
            skip = True
            continue
        if argument in ("--progress", "--no-progress") or argument.startswith(("--out=",
                                                                               "--json=")):
            json_given = json_given or argument.startswith("--json=")
            continue
        words.append(argument)
    return shlex.join([*words, "--json" if json_given else "--out", folder_name])


def anchor(title: str) -> str:
    """The anchor GitHub gives a Markdown heading."""
    return re.sub(r"[^\w\- ]", "", title.lower()).replace(" ", "-")


def code(text: str) -> str:
    """``text`` as Markdown code."""
    return f"`{text}`"


def run_section(run: Run, folder_name: str, page_folder: Path, brief_if_stale: bool) -> str:
    """One run's Markdown section (links relative to the folder the page is kept in); a stale
    run's table is left out when ``brief_if_stale`` (its numbers measured other files than
    those installed)."""
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
    parts = parts_ran(run)
    facts = (f"Commit {commit}, {started}; {run.episodes} episode{'s' * (run.episodes > 1)} per "
             f"group ({seeds}), "
             f"{sweep['workers']} worker{'s' * (sweep['workers'] > 1)} ({sweep['backend']}), "
             f"{minutes:.1f} min.{f' Parts: {parts}.' if parts else ''}")
    if run.notes is not None:
        link = Path(os.path.relpath(run.notes, page_folder)).as_posix()
        facts += f" What the numbers show: [{folder_name}/{NOTES}]({link})."
    lines = [f"## {folder_name}", "", run.experiment.summary.split("\n\n")[0], "",
             f"`{command_line(run, folder_name)}`", "", facts]
    stale = stale_files(run)
    if stale:
        lines += ["", (f"**Stale:** made with other versions of {', '.join(map(code, stale))} "
                       "than those installed; a rerun measures the installed ones.")]
        if brief_if_stale:
            lines[-1] += f" Its table is left out here: `mrsteve report {folder_name}` prints it."
            return "\n".join(lines)
    lines += ["", "```text", run.experiment.table(run.config, run.groups, run.summaries), "```"]
    ceiling, tasks = ceiling_tasks(run), len({group.task for group in run.groups})
    if ceiling:
        where = ("every task" if len(ceiling) == tasks else
                 f"{len(ceiling)} of {tasks} tasks ({', '.join(map(task_name, ceiling))})")
        lines += ["", (f"**At ceiling** on {where}: every agent succeeds in 100 % of the "
                       "episodes, so the table orders nothing there.")]
    return "\n".join(lines)


@dataclass(frozen=True)
class Headline:
    """One row of the page's first table: an experiment's main metric for MrSteve and for the
    baseline the paper sets it against, over every task of the run (each task weighing the
    same), beside the paper's figures; the paper puts MrSteve above the baseline."""

    title: str
    metric: str
    ours: str
    baseline: str
    paper: str
    digits: int = 1
    setup: dict[str, Any] | None = None
    """The config values of the paper's set-up, where a run can differ from it: a run of other
    values is not comparable with the paper's figures and gives no row."""

    def comparable(self, run: Run) -> bool:
        return all(getattr(run.config, name) == value
                   for name, value in (self.setup or {}).items())


LONG_TASK_SETUP = {"steps": LongTaskConfig.steps}
"""The long tasks' counts compare with the paper's only over its steps (the configs' default,
500K)."""

HEADLINES = {
    "exploration": Headline("Exploration: map coverage %", "map_coverage", "count-based",
                            "go-explore", "84.4 vs 50.8 (Table 1)", setup=PAPER_SETUP),
    "navigation": Headline("Navigation: success %", "success_rate", "learned",
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
                                 "fm", "> 80 vs < 50 (Figure 7)", setup=LONG_TASK_SETUP),
    "long-navigation": Headline("Long-Navigation: goals reached", "goals_reached", "mrsteve",
                                "fm", "~70 vs < 10 (Figure 7)", setup=LONG_TASK_SETUP),
    "llm-planner": Headline("Crafting, ground-truth plans: success %", "success_rate",
                            "mrsteve+gt", "steve1+gt",
                            "50.8 vs 40.5 (appendix, 11 tasks)"),
}
"""The first table's rows: ours is MrSteve (or its count-based explorer, its learned navigator), the
baseline STEVE-1 (or the paper's weakest memory, FIFO, on the long tasks)."""


SIGNIFICANT = 2.0
"""How many standard errors MrSteve's lead over the baseline must exceed for the first table to
say the paper's ordering holds (the standard error of the difference of the task means, the
groups' episodes taken as independent samples)."""


def task_stats(run: Run, agent: str, metric: str) -> dict[str, tuple[float, float]]:
    """``agent``'s mean ``metric`` and its standard error per task of the run, from its groups at
    the experiment's default memory capacity (tasks where no episode reported it left out)."""
    default = getattr(type(run.config)(), "capacities", (None,))[0]
    stats = {}
    for group in run.groups:
        memory = getattr(group.spec.agent, "memory", None)
        if group.agent != agent or (memory is not None and memory.capacity != default):
            continue
        summary = run.summaries[group.label].get(metric, {})
        mean = summary.get("mean")
        if mean is not None and not math.isnan(mean):  # NaN: no episode reported it
            stats[group.task] = (mean, summary.get("stderr", math.nan))
    return stats


def ordering(ours: dict[str, tuple[float, float]], base: dict[str, tuple[float, float]],
             ceiling: bool) -> str:
    """Whether the paper's ordering (MrSteve above the baseline) holds, given each side's
    ``(mean, stderr)`` per task: on every task, on the mean only, or not at all, and only where
    the lead of the mean over the tasks exceeds :data:`SIGNIFICANT` standard errors; tasks where
    both are at the ceiling counted apart."""
    tasks = sorted(set(ours) & set(base))
    at_ceiling = [task for task in tasks
                  if ceiling and min(ours[task][0], base[task][0]) >= CEILING]
    ahead = [task for task in tasks if ours[task][0] > base[task][0]]
    rest = len(tasks) - len(at_ceiling)
    note = f", {len(at_ceiling)} at ceiling" if at_ceiling else ""
    detail = f"ahead on {len(ahead)} of {len(tasks)}{note}"
    if rest == 0:
        return "at ceiling"
    lead = sum(ours[task][0] - base[task][0] for task in tasks)
    if lead <= 0:
        return f"**does not hold** ({detail})"
    stderr = math.sqrt(sum(ours[task][1] ** 2 + base[task][1] ** 2 for task in tasks))
    if not math.isnan(stderr) and lead <= SIGNIFICANT * stderr:
        within = f"within {SIGNIFICANT:g} SE (ahead by {lead / stderr:.1f} SE"
        return within + (f"; {detail})" if len(tasks) > 1 else ")")
    unknown = "; standard error unknown" if math.isnan(stderr) else ""
    if len(ahead) == rest:
        return "holds" + (f" ({detail}{unknown})" if note or unknown else "")
    return f"holds on the mean ({detail}{unknown})"


def headline_table(runs: list[Run]) -> str | None:
    """The page's first table (:data:`HEADLINES`), one row per experiment that has a run (not
    stale) with MrSteve and its baseline (``None`` when none has)."""
    rows = ["| experiment | tasks | MrSteve | baseline | paper | the paper's ordering here |",
            "| --- | --- | --- | --- | --- | --- |"]
    done = set()
    for run in runs:
        line = HEADLINES.get(run.experiment.name)
        if line is None or line.title in done or not line.comparable(run) or stale_files(run):
            continue
        ours, base = (task_stats(run, agent, line.metric) for agent in (line.ours, line.baseline))
        if not ours or not base:
            continue
        done.add(line.title)
        mean_ours, mean_base = (sum(mean for mean, _ in stats.values()) / len(stats)
                                for stats in (ours, base))
        verdict = ordering(ours, base, ceiling=line.metric == "success_rate")
        rows.append(f"| {line.title} | {len(ours)} | {mean_ours:.{line.digits}f} | "
                    f"{mean_base:.{line.digits}f} ({line.baseline}) | {line.paper} | {verdict} |")
    return "\n".join(rows) if done else None


def run_index(runs: list[Run], names: list[str]) -> str:
    """A table of the page's runs: each one's section, experiment and flags."""
    rows = ["| run | experiment | episodes per group | flags |", "| --- | --- | --- | --- |"]
    for run, name in zip(runs, names, strict=True):
        flags = [flag for flag, present in (("stale", stale_files(run)),
                                            ("at ceiling", ceiling_tasks(run))) if present]
        title = run.experiment.summary.split("\n\n")[0].split(":")[0].split(" (")[0]
        rows.append(f"| [{name}](#{anchor(name)}) | {title} | {run.episodes} | "
                    f"{', '.join(flags) or '-'} |")
    return "\n".join(rows)


HEADER = """# Results

Each section below is one run: the command and the commit that made it, the parts its agents
ran with, and the experiment's table, with the paper's figures beside ours where the set-up is
the paper's. A run made with other versions of the package's data files or weights than those
installed is marked **stale**, its table left out; a task where every agent succeeds every time
is marked **at ceiling**. The embedded world is not Minecraft: read each comparison as "the
same experiment in the embedded world". Generated from the runs' summaries and manifests by

    mrsteve report {command}
"""


def unique(sources: list[Path]) -> list[Path]:
    """``sources`` without a run given twice (the same manifest under another path), in the
    order given."""
    seen, kept = set(), []
    for source in sources:
        key = run_files(Path(source))[0].resolve()
        if key not in seen:
            seen.add(key)
            kept.append(Path(source))
    return kept


def report(sources: list[Path], out: Path | None = None) -> str:
    """The results page of the runs at ``sources`` (run folders or ``--json`` summary files;
    a run given twice is reported once), to be written to ``out`` (links to the runs' notes are
    relative to its folder; by default the current one): the experiments in the order ``mrsteve
    eval`` lists them, the runs of one experiment by name. A page of several runs leaves out a
    stale run's table (and its "at ceiling" note)."""
    from mrsteve.eval.registry import EXPERIMENTS

    if not sources:
        raise ValueError("give at least one run folder")
    sources = unique(list(sources))
    order = list(EXPERIMENTS)
    runs = sorted((load_run(source) for source in sources),
                  key=lambda run: (order.index(run.experiment.name), str(run.folder)))
    names = [str(run.folder) for run in runs]
    given = [str(source) for source in sources]
    command = (" ".join(given) if len(given) <= 3 else f"{Path(given[0]).parent}/*")
    if out is not None:
        command += f" --out {out}"
    page_folder = Path.cwd() if out is None else Path(out).absolute().parent
    parts = [HEADER.format(command=command).rstrip()]
    headline = headline_table(runs)
    if headline is not None:
        parts.append(f"## At a glance\n\n{HEADLINE_START}\n{headline}\n{HEADLINE_END}\n\n"
                     f"{ORDERING_KEY}")
    if len(runs) > 1:
        parts.append(f"## Runs\n\n{run_index(runs, names)}")
    parts += [run_section(run, name, page_folder, brief_if_stale=len(runs) > 1)
              for run, name in zip(runs, names, strict=True)]
    return "\n\n".join(parts) + "\n"


ORDERING_KEY = (f"The ordering holds where MrSteve's mean over the tasks leads the baseline's by "
                f"more than {SIGNIFICANT:g} standard errors of the difference, and holds on the "
                f"mean where it does so without leading on every task.")
"""How the first table's last column reads, printed under it."""

HEADLINE_START, HEADLINE_END = "<!-- headline -->", "<!-- /headline -->"
"""The markers around the first table (the README holds a copy between the same markers)."""


def headline_block(page: str) -> str:
    """The first table of a page (or of the README), between its markers."""
    start, end = page.find(HEADLINE_START), page.find(HEADLINE_END)
    if start < 0 or end < start:
        raise ValueError("no headline table (between <!-- headline --> markers) in the page")
    return page[start:end + len(HEADLINE_END)]
