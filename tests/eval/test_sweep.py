"""The sweep runner: seeds, resume without redoing finished episodes, worker processes."""

import json

import pytest

from mrsteve.eval.sweep import EpisodeSpec, episode_seed, make_specs, read_records, run_episodes


def square_of_seed(spec: EpisodeSpec) -> dict:
    """A module-level (picklable) episode function."""
    return {"value": spec.seed * spec.seed}


def test_episode_seeds_follow_the_papers_convention():
    specs = make_specs(["t"], ["a"], episodes=3, seed=42)
    assert [s.seed for s in specs] == [42, 43, 44]
    assert episode_seed(42, 7) == 49


def test_make_specs_rejects_no_episodes():
    with pytest.raises(ValueError, match="episodes"):
        make_specs(["t"], ["a"], episodes=0, seed=0)


def test_records_are_appended_and_a_rerun_resumes(tmp_path):
    path = tmp_path / "run.episodes.jsonl"
    calls = []

    def episode(spec):
        calls.append(spec.index)
        return {"value": spec.index}

    specs = make_specs(["t"], ["a"], episodes=4, seed=0)
    run_episodes(episode, specs[:2], records_path=path, progress=False)
    assert calls == [0, 1]
    records = run_episodes(episode, specs, records_path=path, progress=False)
    assert calls == [0, 1, 2, 3], "finished episodes must not run again"
    assert [r["value"] for r in records] == [0, 1, 2, 3]
    assert len(read_records(path)) == 4


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


def test_worker_processes_give_the_same_records_as_one_process(tmp_path):
    specs = make_specs(["t"], ["a", "b"], episodes=2, seed=5)
    serial = run_episodes(square_of_seed, specs, progress=False)
    parallel = run_episodes(square_of_seed, specs, workers=2, progress=False)
    assert serial == parallel
    assert [r["value"] for r in serial] == [25, 36, 25, 36]


def test_a_sweep_writes_one_summary_per_group_with_its_config(tmp_path):
    from mrsteve.eval.sweep import Group, SweepOptions, run_sweep

    groups = [Group("t", "a", "first", {"agent": {"name": "a"}}, {"size": 1}),
              Group("t", "b", "second", {"agent": {"name": "b"}}, {"size": 1})]
    options = SweepOptions(episodes=2, seed=10, json_path=tmp_path / "run.json", progress=False)
    summaries = run_sweep(groups, square_of_seed, ["value"], options, echo=lambda _: None)
    assert summaries[("t", "a")]["value"]["mean"] == (100 + 121) / 2
    summary = json.loads((tmp_path / "run.second.json").read_text())
    assert summary["agent"] == "b" and summary["config"]["agent"] == {"name": "b"}
    assert summary["config"]["seeds"] == [10, 11]
    assert (tmp_path / "run.first.episodes.jsonl").exists()


def test_records_of_other_settings_are_not_resumed(tmp_path):
    path = tmp_path / "run.episodes.jsonl"
    run_episodes(square_of_seed, make_specs(["t"], ["a"], 1, 0, steps=100), records_path=path,
                 progress=False)
    calls = []

    def episode(spec):
        calls.append(spec)
        return {"value": 0}

    run_episodes(episode, make_specs(["t"], ["a"], 1, 0, steps=200), records_path=path,
                 progress=False)
    assert len(calls) == 1, "steps=200 is another setting: the steps=100 record does not count"
    run_episodes(episode, make_specs(["t"], ["a"], 1, 0, steps=200), records_path=path,
                 progress=False)
    assert len(calls) == 1, "now it is recorded"


def test_a_torn_last_line_is_cut_before_the_next_record_is_appended(tmp_path):
    path = tmp_path / "run.episodes.jsonl"
    specs = make_specs(["t"], ["a"], 2, 0)
    run_episodes(square_of_seed, specs[:1], records_path=path, progress=False)
    whole = path.read_text()
    path.write_text(whole + '{"task": "t", "agent": "a", "epi')  # a crash while writing
    run_episodes(square_of_seed, specs, records_path=path, progress=False)
    lines = path.read_text().splitlines()
    assert lines[0] == whole.strip() and len(lines) == 2
    assert [r["episode"] for r in read_records(path)] == [0, 1], "no record lost or glued"


def test_a_records_file_in_use_by_another_sweep_is_refused(tmp_path):
    from mrsteve.eval.sweep import RecordsFile

    path = tmp_path / "run.episodes.jsonl"
    calls = []

    def episode(spec):
        calls.append(spec)
        return {"value": 0}

    with RecordsFile(path):  # another sweep holds it
        with pytest.raises(ValueError, match="in use by another sweep"):
            run_episodes(episode, make_specs(["t"], ["a"], 1, 0), records_path=path,
                         progress=False)
    assert calls == [], "nothing ran"
    run_episodes(episode, make_specs(["t"], ["a"], 1, 0), records_path=path, progress=False)
    assert len(calls) == 1, "free again once the other sweep ends"


@pytest.mark.parametrize("line", ['{"loss": 0.5, "step": 3}', "[1, 2, 3]",
                                  '{"task": "t", "agent": "a", "episode": "0", "seed": 0}'])
def test_an_unrelated_jsonl_at_the_records_path_is_a_clear_error(tmp_path, line):
    path = tmp_path / "run.episodes.jsonl"
    path.write_text(line + "\n")
    with pytest.raises(ValueError, match=r"run\.episodes\.jsonl:1: not an episode record"):
        run_episodes(square_of_seed, make_specs(["t"], ["a"], 1, 0), records_path=path,
                     progress=False)
    assert path.read_text() == line + "\n", "the file is left alone"


def test_records_of_another_group_config_are_not_resumed(tmp_path):
    """Settings outside the episode's options (an agent's memory capacity in its config tree)
    count too: the key holds a digest of the summary's whole config."""
    from mrsteve.eval.sweep import Group, SweepOptions, run_sweep

    calls = []

    def episode(spec):
        calls.append(spec.index)
        return {"value": 1}

    options = SweepOptions(episodes=2, json_path=tmp_path / "run.json", progress=False)
    for capacity in (100, 100, 5000):
        group = Group("t", "a", "a", {"agent": {"memory": {"capacity": capacity}}})
        run_sweep([group], episode, ["value"], options, echo=lambda _: None)
    assert calls == [0, 1, 0, 1], "the same config resumes, another one runs again"


@pytest.mark.parametrize("where", ["directory", "plots-file", "below-a-file"])
def test_unwritable_outputs_fail_before_the_first_episode(tmp_path, where):
    from mrsteve.eval.sweep import Group, SweepOptions, run_sweep

    (tmp_path / "file").write_text("x")
    (tmp_path / "folder").mkdir()
    json_path = {"directory": tmp_path / "folder", "below-a-file": tmp_path / "file" / "r.json"}
    options = SweepOptions(episodes=1, progress=False,
                           json_path=json_path.get(where, tmp_path / "run.json"),
                           plots=tmp_path / "file" if where == "plots-file" else None)

    def must_not_run(spec):
        raise AssertionError("an episode ran before the outputs were checked")

    with pytest.raises(ValueError, match="cannot write"):
        run_sweep([Group("t", "a", "a", {})], must_not_run, ["value"], options,
                  plot=lambda record, path: None, echo=lambda _: None)


def test_sweep_options_reject_a_negative_seed_and_unknown_backends():
    from mrsteve.eval.sweep import SweepOptions

    with pytest.raises(ValueError, match="seed must be a non-negative integer, got -5"):
        SweepOptions(episodes=1, seed=-5)
    with pytest.raises(ValueError, match="local, ray"):
        SweepOptions(episodes=1, backend="dask")
    with pytest.raises(ValueError, match="--backend ray"):
        SweepOptions(episodes=1, address="auto")
