"""Running a sweep: every episode of every group in one queue, its progress bar, summaries.

An experiment (:mod:`mrsteve.eval.experiment`) is a list of groups
(:class:`~mrsteve.eval.spec.Group`: one task and one agent configuration each) whose episodes are run specs
(:class:`~mrsteve.eval.spec.RunSpec`). :func:`run_sweep` puts every episode of every group that
its group's records file does not already hold into one queue (a group whose finished summary of
the same settings is there is done even without its records), most expensive first, and hands it
to a backend (:mod:`mrsteve.eval.backends`): worker processes that live for the whole sweep
and take the next episode as they free up, or Ray tasks with a bounded window so an N-CPU
cluster runs N at once. Each record is appended to its group's file as it arrives, each group's
summary is written when its last episode ends, and one progress bar counts the whole sweep.

Records and their files are :mod:`mrsteve.eval.records`; the options every sweep shares and the
checks of its outputs, :mod:`mrsteve.eval.options`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from contextlib import ExitStack
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

from tqdm import tqdm

from mrsteve.eval.backends import check_backend, connected, run_jobs, warm_workers
from mrsteve.eval.options import SweepOptions, check_outputs, check_run_folder, summary_path
from mrsteve.eval.records import Job, Record, RecordsFile, episode_record
from mrsteve.eval.results import (
    Metric,
    finished_summary,
    records_path_for,
    summarize,
    write_summary,
)
from mrsteve.eval.spec import Group, RunSpec


@dataclass
class GroupRun:
    """A group's part in a running sweep: its episodes, its records file, what is still due."""

    group: Group
    specs: list[RunSpec]
    summary: Path | None
    records_file: RecordsFile | None
    done: dict[str, Record]
    summarised: dict[str, Metric] | None = None
    """The metrics of this group's finished summary, kept when its records are gone."""

    @property
    def finished(self) -> bool:
        return self.summarised is not None or len(self.done) == len(self.specs)

    @property
    def due(self) -> list[RunSpec]:
        """The episodes still to run."""
        if self.summarised is not None:
            return []
        return [spec for spec in self.specs if spec.digest not in self.done]

    def records(self) -> list[Record]:
        """The group's records in episode order."""
        return [self.done[spec.digest] for spec in self.specs]


class SweepBar(tqdm):
    """The sweep's bar, without tqdm's monitor thread (worker processes are forked from the
    driver, and a fork should not copy a process with other threads running)."""

    monitor_interval = 0


class SweepProgress:
    """One progress bar over a sweep: episodes done (resumed ones counted from the start), the
    groups finished, and the group of the last episode done."""

    def __init__(self, runs: Sequence[GroupRun], enabled: bool,
                 echo: Callable[[str], Any] = print) -> None:
        self.enabled, self.echo = enabled, echo
        total = sum(len(run.specs) for run in runs)
        resumed = sum(len(run.specs) - len(run.due) for run in runs)
        self.groups = len(runs)
        self.finished = sum(run.finished for run in runs)
        self.bar = SweepBar(total=total, initial=resumed, disable=not enabled, unit="ep",
                            dynamic_ncols=True,
                            desc=f"{self.groups} group{'s' * (self.groups > 1)}")
        if resumed:
            self.write(f"resuming: {resumed} of {total} episodes are in the records or in "
                       "finished groups' summaries")
        self._postfix("")

    def _postfix(self, last: str) -> None:
        self.bar.set_postfix_str(f"groups done {self.finished}/{self.groups}"
                                 + (f", last: {last}" if last else ""))

    def episode_done(self, run: GroupRun) -> None:
        self.finished += run.finished
        self.bar.update(1)
        self._postfix(run.group.label)

    def write(self, line: str) -> None:
        """A line above the bar (or through ``echo`` without a bar)."""
        if self.enabled:
            self.bar.write(line)
        else:
            self.echo(line)

    def close(self) -> None:
        self.bar.close()


def summary_config(group: Group, specs: Sequence[RunSpec], options: SweepOptions
                   ) -> dict[str, Any]:
    """What a group's summary records of its settings: its spec's tree, episodes and seeds."""
    return {**group.spec.tree(), "episodes": options.episodes, "seed": options.seed,
            "seeds": [spec.seed for spec in specs]}


def queue_order(runs: Sequence[GroupRun]) -> list[RunSpec]:
    """Every episode still due, the most expensive group's first (stable otherwise)."""
    due = [(run.group.cost, order, spec) for order, run in enumerate(runs) for spec in run.due]
    due.sort(key=lambda item: (-item[0], item[1], item[2].index))
    return [spec for _, _, spec in due]


def run_sweep(
    groups: Sequence[Group],
    metrics: Sequence[str],
    options: SweepOptions,
    *,
    job: Job,
    on_group: Callable[[Group, list[Record]], Any] | None = None,
    echo: Callable[[str], Any] = print,
    on_start: Callable[[Path], Any] | None = None,
    isolated: bool = False,
) -> dict[str, dict[str, Metric]]:
    """Run every group's episodes in one queue with ``job`` (``RunSpec -> metrics``, picklable:
    a module-level function, such as an experiment's episode function), resuming from each
    group's records file; write each group's summary when its last episode ends and call
    ``on_group(group, records)`` then;
    returns the metric summaries by group label. Every output is checked, the run folder found to
    hold no other run (:func:`check_run_folder`), the backend connected (a Ray cluster found) and
    every records file locked before the first episode; then ``on_start`` is called with the
    manifest's path (when there is one). ``isolated``: episodes run in worker processes even with
    one worker (as a benchmark compares)."""
    labels = [group.label for group in groups]
    repeated = sorted({label for label in labels if labels.count(label) > 1})
    if repeated:
        raise ValueError(f"groups must differ; given twice: {', '.join(repeated)}")
    paths = [summary_path(options.summary_base, label, several=len(groups) > 1)
             for label in labels]
    check_outputs([*paths, options.manifest_path], options.plots_dir)
    check_run_folder(options.out, groups[0].spec.experiment if groups else "", paths)
    check_backend(options.backend, available=True)
    summaries: dict[str, dict[str, Metric]] = {}
    with ExitStack() as stack:
        stack.enter_context(connected(options.backend, address=options.address,
                                      workers=options.workers))
        runs = []
        for group, path in zip(groups, paths):
            records_file = (stack.enter_context(RecordsFile(records_path_for(path)))
                            if path is not None else None)
            specs = group.episodes(options.episodes, options.seed)
            wanted = {spec.digest for spec in specs}
            existing = records_file.records if records_file is not None else []
            done = {r["digest"]: r for r in existing if r.get("digest") in wanted}
            summarised = None if done else finished_summary(
                path, summary_config(group, specs, options), len(specs), metrics)
            runs.append(GroupRun(group, specs, path, records_file, done, summarised))
        if on_start is not None and options.manifest_path is not None:
            on_start(options.manifest_path)
        by_label = {run.group.label: run for run in runs}
        progress = SweepProgress(runs, options.progress, echo)
        stack.callback(progress.close)

        def finish(run: GroupRun) -> None:
            if run.summarised is not None:  # its summary stands; its records are gone
                summaries[run.group.label] = run.summarised
                return
            records = run.records()
            summary = summarize(records, metrics)
            summaries[run.group.label] = summary
            if run.summary is not None:
                write_summary(run.summary, task=run.group.task, agent=run.group.agent,
                              episodes=len(records),
                              config=summary_config(run.group, run.specs, options),
                              metrics=summary)
                progress.write(f"wrote {run.summary}")
            if on_group is not None:
                on_group(run.group, records)

        for run in runs:
            if run.finished:
                finish(run)
        for record in _records(job, queue_order(runs), options, isolated):
            run = by_label[record["group"]]
            if record["digest"] in run.done:  # never a record twice, whatever a backend hands back
                continue
            if run.records_file is not None:
                run.records_file.append(record)
            run.done[record["digest"]] = record
            progress.episode_done(run)
            if run.finished:
                finish(run)
    return {label: summaries[label] for label in labels}


def _records(job: Job, specs: list[RunSpec], options: SweepOptions,
             isolated: bool = False) -> Iterator[Record]:
    """Records of ``specs`` as they finish, on the sweep's backend."""
    return run_jobs(partial(episode_record, job), specs, workers=options.workers,
                    backend=options.backend, address=options.address, isolated=isolated,
                    warm=warm_workers)


def run_episodes(job: Job, specs: Sequence[RunSpec], *, workers: int = 1, backend: str = "local",
                 address: str | None = None) -> list[Record]:
    """Run ``specs`` (no records file, no summary) and return their records in order: a sweep
    without outputs, for tests and notebooks."""
    found: dict[str, Record] = {}
    for record in run_jobs(partial(episode_record, job), list(specs), workers=workers,
                           backend=backend, address=address, warm=warm_workers):
        found[record["digest"]] = record
    return [found[spec.digest] for spec in specs]
