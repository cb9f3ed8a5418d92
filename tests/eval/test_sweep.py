"""The sweep: seeds, one queue over every group's episodes, resume without redoing finished
episodes, records keyed by their run spec, summaries as groups finish, outputs and the backend
checked before any work."""

import errno
import json
from pathlib import Path

import pytest
from sweep_faults import raises, sleeps, square_of_seed, toy_group, toy_specs

from mrsteve.eval.options import SweepOptions
from mrsteve.eval.records import DiskFull, RecordsFile, read_records
from mrsteve.eval.spec import MAX_EPISODES, episode_seed
from mrsteve.eval.sweep import run_episodes, run_sweep


def sweep(groups, tmp_path, job=square_of_seed, **options):
    """Run ``groups`` into the run folder ``tmp_path / run``; the summaries by label."""
    settings = {"episodes": 1, "out": tmp_path / "run", "progress": False, **options}
    return run_sweep(groups, ["value"], SweepOptions(**settings), job=job, echo=lambda _: None)


def records_of(tmp_path, label):
    return read_records(tmp_path / "run" / f"summary.{label}.episodes.jsonl")


def test_episode_seeds_follow_the_papers_convention():
    specs = toy_group().episodes(3, 42)
    assert [s.seed for s in specs] == [42, 43, 44] and [s.index for s in specs] == [0, 1, 2]
    assert episode_seed(42, 7) == 49


@pytest.mark.parametrize("episodes", [0, -1, MAX_EPISODES + 1, 99999999999999999999999, True])
def test_episode_counts_out_of_range_are_refused_with_the_bound(episodes):
    with pytest.raises(ValueError, match="from 1 to 1,000,000"):
        SweepOptions(episodes=episodes)
    with pytest.raises(ValueError, match="from 1 to 1,000,000"):
        toy_group().episodes(episodes, 0)


def test_records_are_appended_and_a_rerun_resumes(tmp_path):
    calls = []

    def episode(spec):
        calls.append(spec.index)
        return {"value": spec.index}

    sweep([toy_group("a"), toy_group("b")], tmp_path, episode, episodes=2)
    assert calls == [0, 1, 0, 1]
    summaries = sweep([toy_group("a"), toy_group("b")], tmp_path, episode, episodes=4)
    assert calls == [0, 1, 0, 1, 2, 3, 2, 3], "finished episodes must not run again"
    assert summaries["a"]["value"]["mean"] == 1.5
    assert [r["episode"] for r in records_of(tmp_path, "b")] == [0, 1, 2, 3]


def test_a_finished_groups_summary_stands_for_its_lost_records_and_only_for_its_settings(
        tmp_path):
    calls = []

    def episode(spec):
        calls.append((spec.group, spec.task.size, spec.index))
        return {"value": spec.index}

    sweep([toy_group("a"), toy_group("b")], tmp_path, episode, episodes=2)
    kept, cut = (tmp_path / "run" / "summary.a.json"), (tmp_path / "run" / "summary.b.json")
    kept = kept.read_text()
    for label in ("a", "b"):  # records are not kept with a run's committed files
        (tmp_path / "run" / f"summary.{label}.episodes.jsonl").unlink()
    cut.write_text(cut.read_text().replace('"episodes": 2', '"episodes": 1', 1))
    calls.clear()
    summaries = sweep([toy_group("a"), toy_group("b")], tmp_path, episode, episodes=2)
    assert calls == [("b", 1, 0), ("b", 1, 1)], "a's finished summary stands, b's does not"
    assert summaries["a"]["value"]["mean"] == 0.5
    assert (tmp_path / "run" / "summary.a.json").read_text() == kept
    calls.clear()
    sweep([toy_group("a")], tmp_path / "other", episode, episodes=2)
    (tmp_path / "other" / "run" / "summary.episodes.jsonl").unlink()
    sweep([toy_group("a", size=2)], tmp_path / "other", episode, episodes=2)
    assert calls[2:] == [("a", 2, 0), ("a", 2, 1)], "a summary of other settings is redone"


def test_a_torn_last_line_from_a_crash_is_ignored(tmp_path):
    path = tmp_path / "r.jsonl"
    good = {"task": "t", "agent": "a", "episode": 0, "seed": 0, "value": 1}
    path.write_text(json.dumps(good) + "\n" + '{"task": "t", "ag')
    assert read_records(path) == [good]


def test_a_corrupted_middle_line_is_an_error_naming_the_line(tmp_path):
    path = tmp_path / "r.jsonl"
    path.write_text('not json\n{"task": "t", "agent": "a", "episode": 0, "seed": 0}\n')
    with pytest.raises(ValueError, match=r"r\.jsonl:1"):
        read_records(path)


def test_worker_processes_give_the_same_records_as_one_process():
    specs = toy_specs(("a", "b"), 2, 5)
    serial = run_episodes(square_of_seed, specs)
    parallel = run_episodes(square_of_seed, specs, workers=2)
    assert serial == parallel
    assert [r["value"] for r in serial] == [25, 36, 25, 36]
    assert {(r["group"], r["episode"]) for r in serial} == {("a", 0), ("a", 1), ("b", 0), ("b", 1)}


def test_a_sweep_writes_one_summary_per_group_with_its_run_spec(tmp_path):
    summaries = sweep([toy_group("first", "a"), toy_group("second", "b", size=3)], tmp_path,
                      episodes=2, seed=10)
    assert summaries["first"]["value"]["mean"] == (100 + 121) / 2
    summary = json.loads((tmp_path / "run" / "summary.second.json").read_text())
    assert summary["agent"] == "b" and summary["config"]["agent"] == {"name": "b"}
    assert summary["config"]["task"]["size"] == 3 and summary["config"]["seeds"] == [10, 11]
    assert summary["config"]["data"], "the world's data digests are part of the spec"
    (record, _) = records_of(tmp_path, "first")
    assert record["digest"] == toy_group("first", "a").episodes(2, 10)[0].digest


def test_records_of_other_settings_are_not_resumed(tmp_path):
    calls = []

    def episode(spec):
        calls.append(spec.task.size)
        return {"value": 0}

    for size in (100, 100, 200, 200, 100):
        sweep([toy_group("g", size=size)], tmp_path, episode)
    assert calls == [100, 200], "the same settings resume, other ones run again"
    assert len(read_records(tmp_path / "run" / "summary.episodes.jsonl")) == 2


def test_every_episode_of_every_group_goes_into_one_queue(tmp_path):
    """Four groups of one episode each on two workers run two at a time (a sweep that ran its
    groups one after another ran one at a time), in two worker processes that live for the whole
    sweep."""
    groups = [toy_group(label, seconds=1.0) for label in "abcd"]
    sweep(groups, tmp_path, sleeps, workers=2)
    runs = [records_of(tmp_path, label)[0] for label in "abcd"]
    assert len({run["pid"] for run in runs}) == 2, "two workers for the whole sweep"
    first, second = sorted(runs, key=lambda run: run["start"])[:2]
    assert second["start"] < first["end"], "two episodes of different groups overlapped"


def test_the_queue_runs_the_most_expensive_group_first(tmp_path):
    calls = []

    def episode(spec):
        calls.append(spec.group)
        return {"value": 0}

    sweep([toy_group("cheap", cost=10), toy_group("dear", cost=12000), toy_group("mid", cost=600)],
          tmp_path, episode, episodes=2)
    assert calls == ["dear", "dear", "mid", "mid", "cheap", "cheap"]


def test_a_groups_summary_is_written_when_its_last_episode_ends(tmp_path):
    seen = []

    def episode(spec):
        seen.append((spec.group, (tmp_path / "run" / "summary.first.json").exists()))
        return {"value": 1}

    sweep([toy_group("first", cost=2), toy_group("second", cost=1)], tmp_path, episode,
          episodes=2)
    assert seen == [("first", False), ("first", False), ("second", True), ("second", True)]


def test_one_progress_bar_counts_the_sweep_and_names_the_groups_done(tmp_path, capsys):
    sweep([toy_group("a"), toy_group("b")], tmp_path, episodes=2)
    capsys.readouterr()
    sweep([toy_group("a"), toy_group("b")], tmp_path, episodes=3, progress=True)
    out, err = capsys.readouterr()
    assert "resuming: 4 of 6 episodes are in the records" in out + err
    assert "groups done 2/2" in err and "6/6" in err and "2 groups" in err


def test_a_torn_last_line_is_cut_before_the_next_record_is_appended(tmp_path):
    sweep([toy_group("g")], tmp_path)
    path = tmp_path / "run" / "summary.episodes.jsonl"
    whole = path.read_text()
    path.write_text(whole + '{"task": "t", "agent": "a", "epi')  # a crash while writing
    sweep([toy_group("g")], tmp_path, episodes=2)
    lines = path.read_text().splitlines()
    assert lines[0] == whole.strip() and len(lines) == 2
    assert [r["episode"] for r in read_records(path)] == [0, 1], "no record lost or glued"


def test_a_records_file_in_use_by_another_sweep_is_refused(tmp_path):
    calls = []

    def episode(spec):
        calls.append(spec)
        return {"value": 0}

    with RecordsFile(tmp_path / "run" / "summary.episodes.jsonl"):  # another sweep holds it
        with pytest.raises(ValueError, match="in use by another sweep"):
            sweep([toy_group("g")], tmp_path, episode)
    assert calls == [], "nothing ran"
    sweep([toy_group("g")], tmp_path, episode)
    assert len(calls) == 1, "free again once the other sweep ends"


@pytest.mark.parametrize("line", ['{"loss": 0.5, "step": 3}', "[1, 2, 3]",
                                  '{"task": "t", "agent": "a", "episode": "0", "seed": 0}'])
def test_an_unrelated_jsonl_at_the_records_path_is_a_clear_error(tmp_path, line):
    path = tmp_path / "run" / "summary.episodes.jsonl"
    path.parent.mkdir()
    path.write_text(line + "\n")
    with pytest.raises(ValueError, match=r"summary\.episodes\.jsonl:1: not an episode record"):
        sweep([toy_group("g")], tmp_path)
    assert path.read_text() == line + "\n", "the file is left alone"


@pytest.mark.parametrize("where", ["directory", "plots-file", "below-a-file"])
def test_unwritable_outputs_fail_before_the_first_episode(tmp_path, where):
    (tmp_path / "file").write_text("x")
    (tmp_path / "folder").mkdir()
    json_path = {"directory": tmp_path / "folder", "below-a-file": tmp_path / "file" / "r.json"}
    options = SweepOptions(episodes=1, progress=False,
                           json_path=json_path.get(where, tmp_path / "run.json"),
                           plots=tmp_path / "file" if where == "plots-file" else None)

    def must_not_run(spec):
        raise AssertionError("an episode ran before the outputs were checked")

    with pytest.raises(ValueError, match="cannot write"):
        run_sweep([toy_group()], ["value"], options, job=must_not_run)


def test_the_ray_backend_without_ray_leaves_no_file(tmp_path, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "ray", None)  # as if not installed
    with pytest.raises(ValueError, match=r"pip install 'mrsteve\[ray\]'"):
        sweep([toy_group("a"), toy_group("b")], tmp_path, backend="ray")
    assert not (tmp_path / "run").exists(), "no manifest, no empty records file"


def test_groups_of_the_same_label_are_refused_by_name(tmp_path):
    with pytest.raises(ValueError, match="given twice: flat"):
        sweep([toy_group("flat"), toy_group("flat", size=2)], tmp_path)


def test_an_episode_that_cannot_be_set_up_names_its_group(tmp_path):
    with pytest.raises(ValueError, match="river.depth: no such task"):
        sweep([toy_group("river.depth")], tmp_path, raises)


def test_a_full_disk_leaves_the_records_file_as_it_was(tmp_path):
    path = tmp_path / "r.episodes.jsonl"
    with RecordsFile(path) as records:
        records.append({"task": "t", "agent": "a", "episode": 0, "seed": 0})
        before = path.read_bytes()

        class FullDisk:
            def __init__(self, handle):
                self.handle = handle

            def write(self, data):
                self.handle.write(data[: len(data) // 2])  # part of the line made it
                raise OSError(errno.ENOSPC, "No space left on device")

            def __getattr__(self, name):
                return getattr(self.handle, name)

        records.handle = FullDisk(records.handle)
        with pytest.raises(DiskFull, match="the disk is full"):
            records.append({"task": "t", "agent": "a", "episode": 1, "seed": 1})
        records.handle = records.handle.handle
    assert path.read_bytes() == before, "the half-written record was cut off"


def test_sweep_options_reject_a_negative_seed_unknown_backends_and_bad_workers():
    with pytest.raises(ValueError, match="seed must be a non-negative integer, got -5"):
        SweepOptions(episodes=1, seed=-5)
    with pytest.raises(ValueError, match="local, ray"):
        SweepOptions(episodes=1, backend="dask")
    with pytest.raises(ValueError, match="--backend ray"):
        SweepOptions(episodes=1, address="auto")
    with pytest.raises(ValueError, match="workers must be an integer from 1"):
        SweepOptions(episodes=1, workers=0)


def test_a_run_folder_holding_other_groups_is_refused_naming_them_and_kept(tmp_path):
    sweep([toy_group("a"), toy_group("b")], tmp_path)
    before = {path.name: path.read_bytes() for path in (tmp_path / "run").iterdir()}
    with pytest.raises(ValueError, match=r"groups this one would leave beside its own: a, b;"):
        sweep([toy_group("c"), toy_group("d")], tmp_path, job=raises)
    assert {path.name: path.read_bytes() for path in (tmp_path / "run").iterdir()} == before
    summaries = sweep([toy_group("a"), toy_group("b"), toy_group("c")], tmp_path)
    assert set(summaries) == {"a", "b", "c"}, "a sweep that adds groups to its folder goes on"


def test_a_run_folder_of_another_experiment_is_refused(tmp_path):
    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "manifest.json").write_text(json.dumps({"experiment": "navigation"}))
    with pytest.raises(ValueError, match="holds a run of navigation: give another --out"):
        sweep([toy_group("g")], tmp_path, job=raises)
    assert [path.name for path in (tmp_path / "run").iterdir()] == ["manifest.json"]


@pytest.mark.parametrize("out", ["", ".", "/"])
def test_a_run_folder_must_be_a_folder_of_its_own(out):
    with pytest.raises(ValueError, match="no folder of its own"):
        SweepOptions(episodes=1, out=Path(out))
