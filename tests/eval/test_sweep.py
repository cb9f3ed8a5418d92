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
