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
import itertools
import json
import math
import os
import re
import shlex
import typing
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from mrsteve.digests import PACKAGE_ROOT, data_digest
from mrsteve.eval.experiment import Experiment, Summaries
from mrsteve.eval.exploration import PAPER_SETUP
from mrsteve.eval.long_tasks import LongTaskConfig
from mrsteve.eval.options import summary_path
from mrsteve.eval.plan import PLAN, read_plan
from mrsteve.eval.records import read_records
from mrsteve.eval.registry import experiment as experiment_named
from mrsteve.eval.results import (
    mean_stderr,
    records_path_for,
    same_number,
    with_values_by_seed,
)
from mrsteve.eval.spec import Group
from mrsteve.fileio import write_json

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
    lists). Weights files it names that are gone (:func:`gone_weights`) are left out of its
    checks and kept in it as the run gave them."""
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
    try:
        return config_type(**fields)
    except ValueError:
        gone = gone_weights(fields)
        if not gone:
            raise
    # checked without the weights files that are gone, then holding them as the run gave them
    config = config_type(**{**fields, **gone})
    for name in gone:
        object.__setattr__(config, name, fields[name])
    return config


def gone_weights(options: Mapping[str, Any]) -> dict[str, None]:
    """The options among ``options`` that name weights files (``*_weights``, ``*_prior``; a
    comma-separated list for several parts) of which one is gone, each mapped to ``None``."""
    return {name: None for name, value in options.items()
            if name.endswith(("_weights", "_prior")) and isinstance(value, str)
            and not all(Path(path).is_file() for path in value.split(","))}


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
    manifest = read_run_file(manifest_file)
    if manifest.get("wall_time_s") is None:
        raise ValueError(f"{source}: the run did not finish (its manifest has no wall time)")
    experiment = experiment_named(manifest["experiment"])
    renamed = experiment.renamed_options
    config = config_of(experiment.config_type, {renamed.get(name, name): value
                                                for name, value in manifest["config"].items()})
    try:
        groups = experiment.groups(config)
    except FileNotFoundError as error:  # a file the run was given (--weights) is gone
        try:
            groups = experiment.recorded_groups(manifest["groups"])
        except NotImplementedError:
            groups = groups_without_gone_weights(experiment, config, source, error)
    built = {group.label: group for group in groups}
    missing = [label for label in manifest["groups"] if label not in built]
    if missing:
        raise ValueError(f"{source}: this version builds no group {', '.join(missing)} from its "
                         "config; regenerate it with this version")
    # the groups it ran: a name such as 'all' may stand for more parts since (one registered)
    groups = [built[label] for label in manifest["groups"]]
    summaries = {}
    for group in groups:
        path = summary_path(base, group.label, several=len(groups) > 1)
        if not path.is_file():
            raise ValueError(f"{source}: group {group.label} has no summary ({path.name})")
        summary = read_run_file(path)
        if not isinstance(summary.get("metrics"), dict):
            raise ValueError(f"{path}: a summary without its metrics: the file was changed; "
                             "regenerate the run")
        summaries[group.label] = summary["metrics"]
    notes = manifest_file.parent / NOTES
    if manifest_file.name == MANIFEST:  # a run folder, named by the folder
        return Run(manifest_file.parent, manifest, experiment, config, groups, summaries,
                   notes if notes.is_file() else None)
    return Run(source, manifest, experiment, config, groups, summaries, None)


def add_values_by_seed(sources: list[Path]) -> list[str]:
    """Add each episode's value by seed (``by_seed``) to the summaries of the finished runs at
    ``sources`` that lack it (written before summaries kept it), from the episode records beside
    them (:func:`~mrsteve.eval.results.with_values_by_seed`), so the report can pair their
    groups. Summaries without records beside them are left alone. Every summary is checked
    before any is written: records that do not give their summary's count, mean and standard
    error leave every file as it was (a ``ValueError`` naming them). Returns a line per summary
    changed."""
    changes = []
    for source in unique([Path(source) for source in sources]):
        if planned_not_finished(source):
            continue
        manifest_file, base = run_files(source)
        labels = list(read_run_file(manifest_file).get("groups", {}))
        for label in labels:
            path = summary_path(base, label, several=len(labels) > 1)
            records = read_records(records_path_for(path)) if path.is_file() else []
            if records:
                updated = with_values_by_seed(read_run_file(path), records, str(path))
                if updated is not None:
                    changes.append((path, updated, len(records)))
    for path, updated, _ in changes:
        write_json(path, updated)
    return [f"{path}: values by seed added from its {count} episode records"
            for path, _, count in changes]


def groups_without_gone_weights(experiment: Experiment, config: Any, source: Path,
                                error: FileNotFoundError) -> list[Any]:
    """The groups of a run given weights files that are gone (a training run's output, kept
    elsewhere), rebuilt from its config without those options: the same labels, tasks and
    agents, the parts' kinds (what the tables show; the weights each part ran are read from the
    manifest's trees). A ``ValueError`` naming the file when they cannot be rebuilt so."""
    gone = gone_weights({field.name: getattr(config, field.name)
                         for field in dataclasses.fields(config)})
    if gone:
        try:
            return experiment.groups(dataclasses.replace(config, **gone))
        except (FileNotFoundError, ValueError):
            pass
    raise ValueError(f"{source}: {error.filename} is gone and the run needs it to build its "
                     "groups") from None


def read_run_file(path: Path) -> dict[str, Any]:
    """The JSON object in a run's manifest or summary ``path``; a ``ValueError`` naming the file
    when it is not one (cut short, or written over)."""
    try:
        value = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError) as error:
        raise ValueError(f"{path}: cannot be read ({error})") from None
    except json.JSONDecodeError as error:
        raise ValueError(f"{path}: not JSON ({error.msg}, line {error.lineno}): the file was "
                         "cut short or written over; regenerate the run") from None
    if not isinstance(value, dict):
        raise ValueError(f"{path}: not a JSON object: the file was written over; regenerate "
                         "the run")
    return value


def check_page_path(out: Path, sources: list[Path]) -> None:
    """A ``ValueError`` when the page at ``out`` would replace a file of a run it reports (its
    manifest, a summary, its records, plan or notes)."""
    target = Path(out).resolve()
    for source in sources:
        folder = run_files(Path(source))[0].parent.resolve()
        if target.parent == folder and (target.suffix in (".json", ".jsonl")
                                        or target.name in (NOTES, PLAN)):
            raise ValueError(f"--out {out} would replace a file of the run at {source}: write "
                             "the page elsewhere (e.g. --out results.md)")


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
    """The agents' parts as the manifest records them (``encoder pixels (53e8a9be), navigator
    learned (94b4ee61), ...``: every kind the groups used, a learned part with the first digits
    of the SHA-256 of the weights it ran (``Weights.sha256``, as the agent trees record it);
    empty for agents without such parts)."""
    kinds: dict[str, dict[str, list[str]]] = {"encoder": {}, "navigator": {},
                                              "instruction policy": {}}
    for tree in run.manifest["groups"].values():
        agent = tree.get("agent") or {}
        encoder = agent.get("encoder")
        explorer = agent.get("explorer")
        alone = "training" in agent  # a navigator alone (the Navigation experiment's)
        found = {
            "encoder": encoder.get("kind") if isinstance(encoder, dict) else None,
            "navigator": agent.get("navigator_kind")
            or (explorer.get("navigator") if isinstance(explorer, dict) else None)
            or (agent.get("name") if alone else None),
            "instruction policy": agent.get("instruction_policy"),
        }
        for part, kind in found.items():
            if isinstance(kind, str):
                hashes = kinds[part].setdefault(kind, [])
                weights = weights_ran(agent, part, kind)
                if weights is not None and weights[:8] not in hashes:
                    hashes.append(weights[:8])
    return ", ".join(
        f"{part} " + " and ".join(f"{kind} ({'/'.join(hashes)})" if hashes else kind
                                  for kind, hashes in names.items())
        for part, names in kinds.items() if names)


def weights_ran(agent: Mapping[str, Any], part: str, kind: str) -> str | None:
    """The SHA-256 of the weights a tree's learned ``part`` ran: of a file given in place of the
    shipped one, else of the shipped file when the tree lists it among its data files in the
    version installed (``None``: no weights, or an older version of the shipped file)."""
    from mrsteve.control.instruction import SHIPPED_INSTRUCTION_POLICY
    from mrsteve.control.learned_navigator import SHIPPED_NAVIGATOR

    if part == "encoder":
        encoder = agent.get("encoder")
        return encoder.get("weights_sha256") if isinstance(encoder, dict) else None
    if kind != "learned":
        return None
    if part == "navigator":
        given = agent.get("navigator_weights_sha256") or agent.get("weights_sha256")
        shipped = SHIPPED_NAVIGATOR
    else:
        instruction = agent.get("instruction")
        given = instruction.get("weights_sha256") if isinstance(instruction, dict) else None
        shipped = SHIPPED_INSTRUCTION_POLICY
    if given:
        return given
    data = {str(path): str(sha) for path, sha in agent.get("data") or []}
    if data.get(shipped) != data_digest(shipped):
        return None
    return shipped_weights_sha256(shipped)


@cache
def shipped_weights_sha256(path: str) -> str:
    """The weights' SHA-256 of the shipped weights file ``path`` (below ``mrsteve/``)."""
    from mrsteve.control.instruction import InstructionWeights
    from mrsteve.control.learned_navigator import SHIPPED_NAVIGATOR, NavigatorWeights

    kind = NavigatorWeights if path == SHIPPED_NAVIGATOR else InstructionWeights
    return kind.read(PACKAGE_ROOT / path).sha256


def command_line(run: Run, folder_name: str) -> str:
    """The command that made the run, as a user would type it (``--out`` naming where its folder
    is kept, progress options dropped)."""
    return command_line_of(run.manifest.get("command_line"), folder_name,
                           list(run.manifest["command"]), run.experiment.renamed_options)


def command_line_of(recorded: str | None, folder_name: str,
                    command: list[str] | None = None,
                    renamed: Mapping[str, str] | None = None) -> str:
    """A recorded ``mrsteve eval`` command line (or the process's arguments ``command``) as a
    user would type it, ``--out`` naming ``folder_name`` and options renamed since
    (``renamed``: field names) by their names now."""
    argv = shlex.split(recorded)[1:] if recorded else list(command or [])
    flags = {f"--{old.replace('_', '-')}": f"--{new.replace('_', '-')}"
             for old, new in (renamed or {}).items()}
    argv = [flags.get(argument, argument) for argument in argv]
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


def provenance(run: Run) -> str:
    """Which commits made the run (every sitting's, a resumed run's several) and which declared
    its plan, in words."""
    sittings = run.manifest.get("sittings") or [{"git": run.manifest.get("git")}]
    commits: list[str] = []
    for sitting in sittings:
        git = sitting.get("git") or {}
        commit = (git.get("commit") or "")[:10] or "not a git checkout"
        if git.get("dirty"):
            commit += " with uncommitted changes"
        if commit not in commits:
            commits.append(commit)
    text = f"Ran at {', '.join(commits)}"
    plan = run.manifest.get("plan")
    if plan is None:
        return text + " (no plan)"
    if not plan.get("commit"):
        return text + " (its plan was not committed when it ran)"
    order = "" if plan.get("before_run") else ", not an ancestor of the code it ran"
    return text + f" (planned at {plan['commit'][:10]}{order})"


def run_section(run: Run, folder_name: str, page_folder: Path, brief: bool,
                superseded: bool = False) -> str:
    """One run's Markdown section (links relative to the folder the page is kept in). With
    ``brief`` (a page of several runs), the table of a stale run (its numbers measured other
    files than those installed) is left out, and that of a run whose plan was not committed
    before it ran where the page holds a planned run of the same experiment (``superseded``):
    ``mrsteve report FOLDER`` prints it."""
    manifest = run.manifest
    started = manifest["started"][:10]
    minutes = manifest["wall_time_s"] / 60
    sweep = manifest["sweep"]
    first, last = sweep["seed"], sweep["seed"] + run.episodes - 1
    seeds = f"seed {first}" if first == last else f"seeds {first} to {last}"
    parts = parts_ran(run)
    facts = (f"{provenance(run)}, {started}; {run.episodes} episode{'s' * (run.episodes > 1)} per "
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
    elif not planned_before(run):
        lines += ["", "**Unplanned:** no plan was committed before it ran."]
    if brief and (stale or superseded):
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


@dataclass(frozen=True, eq=False)
class Claim:
    """An ordering the paper states: each agent of :attr:`above` scores more than each of
    :attr:`below` on :attr:`metric` (fewer, with :attr:`lower_is_better`), task by task, or on
    the mean over the tasks (:attr:`on_mean`), at every memory capacity a run has (or those of
    :attr:`capacities`). Each is one statement of the paper: claims compare by identity."""

    experiment: str
    source: str
    """Where the paper states it (``Figure 5``, ``Table 1``, ``appendix``)."""
    text: str
    """The ordering in words."""
    metric: str
    above: tuple[str, ...]
    below: tuple[str, ...]
    tasks: tuple[str, ...] = ()
    """Only these tasks (names without the experiment's prefix); empty: every task of the run."""
    capacities: tuple[int, ...] = ()
    """Only at these memory capacities (frames); empty: at every capacity of the run."""
    on_mean: bool = False
    """Compared on the mean over the tasks, not task by task."""
    lower_is_better: bool = False
    setup: dict[str, Any] | None = None
    """The config values of the paper's set-up, where a run can differ from it: a run of other
    values is not comparable with the paper's and gives no row."""

    def comparable(self, run: Run) -> bool:
        """Whether ``run`` was made in the paper's set-up: its values of :attr:`setup`, and the
        daylight the paper's worlds are seen in (a run in another look is held-out
        evaluation)."""
        return getattr(run.config, "look", "day") == "day" and all(
            getattr(run.config, name) == value for name, value in (self.setup or {}).items())


LONG_TASK_SETUP = {"steps": LongTaskConfig.steps, "log_regrowth": LongTaskConfig.log_regrowth,
                   "herds": LongTaskConfig.herds}
"""The long tasks' counts compare with the paper's only over its steps (the configs' default,
500K), on a map whose logs do not come back and whose herds wander (Minecraft's rules)."""

UNLIMITED_MEMORY = {"capacity": None}
"""The sequential tasks' set-up: memory without a capacity (the memory-constraint grid is
another experiment of the paper)."""

MEMORY_GRID = {"capacity": "100,500,1000,2000,12000"}
"""The memory-constraint grid's set-up (appendix "ABA-Sparse Tasks with Memory Constraints":
0.1K to 12K frames)."""

MEMORIES = ("mrsteve", "pm", "em", "fm")
"""Figure 6's memory agents: Place Event (MrSteve), Place, Event, FIFO."""

TABLE_1 = ("count-based", "go-explore", "count-based-dqn", "rnn", "rnn-dqn")
"""Table 1's explorers in the order of the paper's coverage (84.4, 50.8, 31.8, 29.8, 16.4 %):
Plan4MC's two levels as trained (its LSTM high level, its DQN low level); the stand-ins that
walked straight or picked directions by a script stand beside them in the tables, not in the
orderings."""

CLAIMS: tuple[Claim, ...] = (
    *(Claim("exploration", "Table 1", f"{high} covers more than {low}", "map_coverage",
            (high,), (low,), setup=PAPER_SETUP) for high, low in zip(TABLE_1, TABLE_1[1:])),
    Claim("exploration", "Table 1", "count-based has the fewest revisits", "revisit_count",
          ("count-based",), TABLE_1[1:], lower_is_better=True, setup=PAPER_SETUP),
    Claim("navigation", "appendix", "VPT-Nav succeeds more than the heuristic, over the "
          "terrains", "success_rate", ("learned",), ("straight",), on_mean=True),
    Claim("navigation", "appendix", "VPT-Nav crosses the river, the heuristic does not",
          "success_rate", ("learned",), ("straight",), tasks=("river",)),
    Claim("navigation", "appendix", "VPT-Nav succeeds more than Plan4MC's DQN, over the "
          "terrains", "success_rate", ("learned",), ("dqn",), on_mean=True),
    Claim("aba-sparse", "Figure 5", "MrSteve above STEVE-1, task by task", "success_rate",
          ("mrsteve",), ("steve1",), setup=UNLIMITED_MEMORY),
    Claim("aba-sparse", "Figure 5", "Place, Event and FIFO Memory above STEVE-1, task by task",
          "success_rate", MEMORIES[1:], ("steve1",), setup=UNLIMITED_MEMORY),
    Claim("aba-sparse", "Figure 5", "PMC-MrSteve-FM below MrSteve, over the tasks",
          "success_rate", ("mrsteve",), ("pmc-fm",), on_mean=True, setup=UNLIMITED_MEMORY),
    Claim("aba-sparse", "appendix", "PMC-MrSteve-FM above STEVE-1, over the tasks",
          "success_rate", ("pmc-fm",), ("steve1",), on_mean=True, setup=UNLIMITED_MEMORY),
    Claim("aba-sparse", "appendix", "Place Event above FIFO at 0.1K frames, task by task",
          "success_rate", ("mrsteve",), ("fm",), capacities=(100,), setup=MEMORY_GRID),
    Claim("aba-sparse", "appendix", "Place Event above Place and Event at 0.1K frames on "
          "Beef-Log-Beef and Beef-Leaves-Beef", "success_rate", ("mrsteve",), ("pm", "em"),
          tasks=("beef-log-beef", "beef-leaves-beef"), capacities=(100,), setup=MEMORY_GRID),
    Claim("aba-random", "appendix", "MrSteve above STEVE-1, task by task", "success_rate",
          ("mrsteve",), ("steve1",), setup=UNLIMITED_MEMORY),
    Claim("seq4", "appendix", "MrSteve above STEVE-1", "success_rate", ("mrsteve",), ("steve1",),
          setup=UNLIMITED_MEMORY),
    Claim("memory-tasks", "Figure 6", "FIFO the lowest memory", "success_rate",
          MEMORIES[:3], ("fm",)),
    Claim("memory-tasks", "Figure 6", "Place below Place Event and Event at the death spot",
          "success_rate", ("mrsteve", "em"), ("pm",), tasks=("zombie-spot",)),
    Claim("memory-tasks", "Figure 6", "Event below Place Event and Place at the first house",
          "success_rate", ("mrsteve", "pm"), ("em",), tasks=("first-house",)),
    Claim("memory-tasks", "Figure 6", "STEVE-1 the lowest", "success_rate", MEMORIES,
          ("steve1",)),
    Claim("long-instruction", "Figure 7", "Place Event and Place above Event", "tasks_solved",
          ("mrsteve", "pm"), ("em",), setup=LONG_TASK_SETUP),
    Claim("long-instruction", "Figure 7", "Place Event and Place above FIFO, PMC-FM and STEVE-1",
          "tasks_solved", ("mrsteve", "pm"), ("fm", "pmc-fm", "steve1"), setup=LONG_TASK_SETUP),
    Claim("long-instruction", "Figure 7", "Event above FIFO, PMC-FM and STEVE-1", "tasks_solved",
          ("em",), ("fm", "pmc-fm", "steve1"), setup=LONG_TASK_SETUP),
    Claim("long-navigation", "Figure 7", "Place Event and Event above Place", "goals_reached",
          ("mrsteve", "em"), ("pm",), setup=LONG_TASK_SETUP),
    Claim("long-navigation", "Figure 7", "Place Event, Event and Place above FIFO",
          "goals_reached", ("mrsteve", "em", "pm"), ("fm",), setup=LONG_TASK_SETUP),
    Claim("llm-planner", "appendix", "MrSteve above STEVE-1 under ground-truth plans, over the "
          "tasks", "success_rate", ("mrsteve+gt",), ("steve1+gt",), on_mean=True),
)
"""Every ordering of the paper the page checks, in the order of the paper."""

SIGNIFICANT = 2.0
"""How many standard errors of the difference a lead must exceed for an ordering to hold (or,
the other way, to be reversed); the groups' episodes are taken as independent samples."""

VERDICTS = ("holds", "within noise", "reversed")
"""How a comparison reads (besides ``at ceiling`` and ``standard error unknown``)."""


@dataclass(frozen=True)
class Comparison:
    """One row of the orderings' table: a claim on one task (or the mean over tasks) at one
    capacity, ``higher`` against ``lower`` (the paper's order), our means and the margin."""

    claim: Claim
    where: str
    """The task, ``mean over N tasks``, with the memory capacity when the run has several."""
    higher: str
    lower: str
    means: tuple[float, float]
    margin: float
    """The lead in the paper's direction, in standard errors of the difference (NaN when
    unknown; +-inf when both groups are exact)."""
    verdict: str


GroupStat = tuple[float, float, dict[str, float] | None]
"""A group's ``(mean, stderr, values by seed or None)`` of one metric on one task."""


def group_stats(run: Run, metric: str) -> dict[tuple[str, int | None], dict[str, GroupStat]]:
    """:data:`GroupStat` of ``metric`` per task (name without the experiment's prefix), by
    ``(agent, capacity)`` of the run's groups (``None``: an agent without a memory), tasks where
    no episode reported it left out."""
    stats: dict[tuple[str, int | None], dict[str, GroupStat]] = {}
    for group in run.groups:
        memory = getattr(group.spec.agent, "memory", None)
        capacity = None if memory is None else memory.capacity
        summary = run.summaries[group.label].get(metric, {})
        mean = summary.get("mean")
        if mean is not None and not math.isnan(mean):  # NaN: no episode reported it
            stats.setdefault((group.agent, capacity), {})[task_name(group.task)] = (
                mean, summary.get("stderr", math.nan), values_by_seed(summary))
    return stats


def values_by_seed(summary: Mapping[str, Any]) -> dict[str, float] | None:
    """A metric summary's values by seed when they are the episodes its mean and count were
    taken over (``None`` otherwise: none kept, or a summary changed since)."""
    values = summary.get("by_seed")
    if not isinstance(values, dict) or len(values) != summary.get("n") or not values:
        return None
    return values if same_number(summary.get("mean"), sum(values.values()) / len(values)) else None


def difference_variance(high: GroupStat, low: GroupStat) -> float:
    """The squared standard error of ``high``'s mean minus ``low``'s: of the per-seed
    differences when both groups kept their values on the same two or more seeds (the same
    worlds and spawns: paired), else the sum of the two squared standard errors."""
    by_seed = (high[2], low[2])
    if all(isinstance(values, dict) for values in by_seed) and len(by_seed[0]) >= 2 \
            and set(by_seed[0]) == set(by_seed[1]):
        differences = [by_seed[0][seed] - by_seed[1][seed] for seed in by_seed[0]]
        return mean_stderr(differences)["stderr"] ** 2
    return high[1] ** 2 + low[1] ** 2


def verdict(lead: float, stderr: float, means: tuple[float, float], ceiling: bool) -> tuple[
        float, str]:
    """``(margin, word)`` of a lead (in the paper's direction) with its standard error."""
    if ceiling and min(means) >= CEILING:
        return math.nan, "at ceiling"
    if math.isnan(stderr):
        return math.nan, "standard error unknown"
    margin = lead / stderr if stderr > 0 else math.copysign(math.inf, lead) if lead else 0.0
    word = (VERDICTS[0] if margin > SIGNIFICANT else VERDICTS[2] if margin < -SIGNIFICANT
            else VERDICTS[1])
    return margin, word


def comparisons(claim: Claim, run: Run) -> list[Comparison]:
    """The rows ``run`` gives ``claim``: every pair of its agents at every capacity, task by task
    or on the mean."""
    stats = group_stats(run, claim.metric)
    capacities = sorted({capacity for _, capacity in stats if capacity is not None}) or [None]
    several = len(capacities) > 1
    sign = -1.0 if claim.lower_is_better else 1.0
    rows = []
    for capacity in capacities:
        if claim.capacities and capacity not in claim.capacities:
            continue
        for high, low in itertools.product(claim.above, claim.below):
            found = [stats.get((agent, capacity), stats.get((agent, None))) for agent in
                     (high, low)]
            if not all(found):
                continue
            tasks = [task for task in found[0] if task in found[1]
                     and (not claim.tasks or task in claim.tasks)]
            if not tasks:
                continue
            at = f", {capacity:,} frames" if several else ""
            pieces = ([(f"mean over {len(tasks)} tasks", tasks)] if claim.on_mean
                      else [(task, [task]) for task in tasks])
            for where, chosen in pieces:
                means = tuple(sum(found[i][task][0] for task in chosen) / len(chosen)
                              for i in range(2))
                lead = sign * sum(found[0][t][0] - found[1][t][0] for t in chosen)
                stderr = math.sqrt(sum(difference_variance(found[0][t], found[1][t])
                                       for t in chosen))
                margin, word = verdict(lead, stderr, means, claim.metric == "success_rate")
                rows.append(Comparison(claim, where + at, high, low, means, margin, word))
    return rows


def default_agents(run: Run) -> bool:
    """Whether the run's agents are the package's default ones: every option that sets their
    parts and settings (:attr:`~mrsteve.eval.experiment.Experiment.agent_options`) is the
    experiment's default."""
    default = type(run.config)()
    return all(getattr(run.config, name, None) == getattr(default, name, None)
               for name in run.experiment.agent_options)


def planned_before(run: Run) -> bool:
    """Whether the run's plan was committed before it ran, in an ancestor of its code."""
    plan = run.manifest.get("plan") or {}
    return bool(plan.get("commit") and plan.get("before_run"))


def run_flags(run: Run) -> list[str]:
    """What keeps a run out of the first table: made from uncommitted changes, without a plan
    committed before it, with other data files than those installed."""
    flags = []
    sittings = run.manifest.get("sittings") or [{"git": run.manifest.get("git")}]
    if any((sitting.get("git") or {}).get("dirty") for sitting in sittings):
        flags.append("uncommitted changes")
    if not planned_before(run):
        flags.append("no plan committed before it ran")
    if stale_files(run):
        flags.append("stale")
    return flags


def headline_runs(runs: list[Run]) -> dict[Claim, Run]:
    """The run each ordering's rows come from: the first run of its experiment, by folder
    name, of the default agents, planned and committed, not stale, made in the ordering's
    set-up (:meth:`Claim.comparable`: the daylight the paper's worlds are seen in, a run in
    other looks being held-out evaluation); of those, the first that holds every agent the
    orderings of its experiment in that set-up compare, where one does (so that they come from
    one run)."""
    eligible = [run for run in runs if default_agents(run) and not run_flags(run)]
    chosen: dict[Claim, Run] = {}
    for claim in CLAIMS:
        agents = {agent for other in CLAIMS
                  if other.experiment == claim.experiment and other.setup == claim.setup
                  for agent in (*other.above, *other.below)}
        candidates = [run for run in eligible
                      if run.experiment.name == claim.experiment and claim.comparable(run)]
        complete = [run for run in candidates
                    if agents <= {group.agent for group in run.groups}]
        if candidates:
            chosen[claim] = (complete or candidates)[0]
    return chosen


def all_comparisons(runs: list[Run]) -> list[tuple[Comparison, Run]]:
    """Every row of every claim, from the runs :func:`headline_runs` picks."""
    chosen = headline_runs(runs)
    return [(row, chosen[claim]) for claim in CLAIMS if claim in chosen
            for row in comparisons(claim, chosen[claim])]


def margin_text(margin: float) -> str:
    """A margin in standard errors as the page writes it (``no spread``: every episode of both
    groups scored the same, so the standard error is 0)."""
    if math.isnan(margin):
        return "-"
    if math.isinf(margin):
        return "no spread"
    return f"{margin:+.1f}"


def headline_table(runs: list[Run]) -> str | None:
    """The page's first table: one row per ordering the paper states, how many of its
    comparisons (task by task, pair by pair, capacity by capacity) hold, are within noise or are
    reversed, and the weakest margin (``None`` when no run gives one)."""
    rows = ["| the paper's ordering | source | run | compared | holds | within noise | reversed "
            "| weakest margin (SE) |", "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    found = all_comparisons(runs)
    for claim in CLAIMS:
        mine = [(row, run) for row, run in found if row.claim is claim]
        if not mine:
            continue
        run = mine[0][1]
        counts = {word: sum(row.verdict == word for row, _ in mine) for word in VERDICTS}
        others = len(mine) - sum(counts.values())
        measured = [row for row, _ in mine if not math.isnan(row.margin)]
        weakest = min(measured, key=lambda row: row.margin, default=None)
        worst = ("-" if weakest is None else
                 f"{margin_text(weakest.margin)} ({weakest.where}: {weakest.higher} vs "
                 f"{weakest.lower})")
        title = f"{run.experiment.summary.split(':')[0].split(' (')[0]}: {claim.text}"
        extra = f" ({others} at ceiling or unknown)" if others else ""
        rows.append(f"| {title} | {claim.source} | {run.folder.name} | {len(mine)}{extra} | "
                    f"{counts['holds']} | {counts['within noise']} | "
                    f"{'**' + str(counts['reversed']) + '**' if counts['reversed'] else 0} | "
                    f"{worst} |")
    return "\n".join(rows) if len(rows) > 2 else None


def orderings_section(runs: list[Run]) -> str | None:
    """Every comparison of the first table, one row each (``None`` when there is none)."""
    found = all_comparisons(runs)
    if not found:
        return None
    rows = ["| the paper's ordering | where | higher in the paper | lower | ours | margin (SE) | "
            "verdict |", "| --- | --- | --- | --- | --- | --- | --- |"]
    for row, run in found:
        digits = 1
        ours = f"{row.means[0]:.{digits}f} vs {row.means[1]:.{digits}f}"
        word = f"**{row.verdict}**" if row.verdict == "reversed" else row.verdict
        rows.append(f"| {row.claim.text} ({row.claim.source}) | {row.where} | {row.higher} | "
                    f"{row.lower} | {ours} | {margin_text(row.margin)} | {word} |")
    return "\n".join(rows)


def run_index(runs: list[Run], names: list[str]) -> str:
    """A table of the page's runs: each one's section, experiment and flags."""
    rows = ["| run | experiment | episodes per group | flags |", "| --- | --- | --- | --- |"]
    for run, name in zip(runs, names, strict=True):
        flags = [*run_flags(run), *(["at ceiling"] if ceiling_tasks(run) else [])]
        title = run.experiment.summary.split("\n\n")[0].split(":")[0].split(" (")[0]
        rows.append(f"| [{name}](#{anchor(name)}) | {title} | {run.episodes} | "
                    f"{', '.join(flags) or '-'} |")
    return "\n".join(rows)


HEADER = """# Results

Each section below is one run: the command, the commits that made it and the one that declared
its plan, the parts its agents ran with (a learned part with the first digits of its weights'
SHA-256), and the experiment's table, with the paper's figures
beside ours where the set-up is the paper's. A run made with other versions of the package's
data files or weights than those installed is marked **stale**, its table left out; one whose
plan was not committed before it ran is marked **unplanned**, its table left out where a planned
run of the same experiment is on the page (`mrsteve report FOLDER` prints any run's table). A
task where every agent succeeds every time is marked **at ceiling**. The embedded world is not Minecraft:
read each comparison as "the same experiment in the embedded world". Generated from the runs'
summaries and manifests by

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
    planned = [Path(source) for source in sources if planned_not_finished(Path(source))]
    sources = unique([source for source in sources if Path(source) not in planned])
    if out is not None:
        check_page_path(out, sources)
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
    if headline is None and len(runs) > 1:
        headline = NO_HEADLINE
    if headline is not None:
        parts.append(f"## At a glance\n\n{HEADLINE_START}\n{headline}\n{HEADLINE_END}\n\n"
                     f"{ORDERING_KEY}")
    orderings = orderings_section(runs)
    if orderings is not None:
        parts.append(f"## Every ordering\n\n{orderings}")
    if len(runs) > 1:
        parts.append(f"## Runs\n\n{run_index(runs, names)}")
    if planned:
        parts.append(f"## Planned, not finished\n\n{planned_index(planned)}")
    planned_experiments = {run.experiment.name for run in runs if planned_before(run)}
    parts += [run_section(run, name, page_folder, brief=len(runs) > 1,
                          superseded=(not planned_before(run)
                                      and run.experiment.name in planned_experiments))
              for run, name in zip(runs, names, strict=True)]
    return "\n\n".join(parts) + "\n"


def planned_not_finished(folder: Path) -> bool:
    """Whether ``folder`` is a run folder that holds a plan and no finished run (not started,
    running, or stopped before its last episode)."""
    if not (folder.is_dir() and (folder / PLAN).is_file()):
        return False
    try:
        manifest = json.loads((folder / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return True
    return not isinstance(manifest, dict) or manifest.get("wall_time_s") is None


def planned_index(folders: list[Path]) -> str:
    """The runs planned and not finished: each one's folder and planned command."""
    rows = ["| run | planned command |", "| --- | --- |"]
    for folder in sorted(folders):
        plan = read_plan(folder / PLAN)
        command = command_line_of(plan.get("command_line", ""), str(folder))
        rows.append(f"| {folder} | `{command}` |")
    return "\n".join(rows)


ORDERING_KEY = (f"Each ordering the paper states, compared task by task (or on the mean over the "
                f"tasks where the paper states it so), pair by pair and at each memory capacity "
                f"of the run: it holds where the agent the paper puts higher leads by more than "
                f"{SIGNIFICANT:g} standard errors of the difference, is reversed where it trails "
                f"by more, and is within noise otherwise. The margin is that lead in standard "
                f"errors: of the seed-by-seed differences where both groups kept each episode's "
                f"value by seed (they ran on the same seeds, worlds and spawns), else of the two "
                f"means' difference. Only runs of the default agent whose plan was committed "
                f"before they ran, from committed code with the installed data files, give rows; "
                f"every comparison is listed under \"Every ordering\".")
"""How the first table's last column reads, printed under it."""

NO_HEADLINE = ("No run of the default agents, planned and committed before it ran, gives the "
               "paper's orderings yet.")
"""The first table of a page of several runs none of which gives a row."""

HEADLINE_START, HEADLINE_END = "<!-- headline -->", "<!-- /headline -->"
"""The markers around the first table (the README holds a copy between the same markers)."""


def headline_block(page: str) -> str:
    """The first table of a page (or of the README), between its markers."""
    start, end = page.find(HEADLINE_START), page.find(HEADLINE_END)
    if start < 0 or end < start:
        raise ValueError("no headline table (between <!-- headline --> markers) in the page")
    return page[start:end + len(HEADLINE_END)]
