"""The sequential task suites as the paper defines them, and what one episode reports."""

import pytest

from mrsteve.tasks.episode import EpisodeResult, TaskOutcome
from mrsteve.tasks.sequential import find_tasks, sequential_record, task_by_key, task_suites


def test_aba_sparse_has_the_papers_twenty_tasks_on_the_right_maps():
    tasks = task_suites()["aba-sparse"]
    assert len(tasks) == 20
    for task in tasks.values():
        a, b, a2 = task.name.split("-")
        assert a == a2 and task.items[0] == task.items[2] and task.max_steps == 12_000
        expected = "map3" if b == "sand" else ("map1" if a == "water" else "map2")
        assert task.world == expected, task.name
    assert tasks["wool-log-wool"].items == ("wool", "log", "wool")
    assert tasks["milk-seeds-milk"].items == ("milk_bucket", "wheat_seeds", "milk_bucket")
    assert [t.name for t in tasks.values()][:6] == [
        "water-log-water", "water-dirt-water", "water-seeds-water", "water-leaves-water",
        "water-sand-water", "beef-log-beef"]


def test_aba_random_and_seq4():
    suites = task_suites()
    assert set(suites["aba-random"]) == {"water-log-water", "beef-log-beef", "wool-log-wool"}
    (seq4,) = suites["seq4"].values()
    assert seq4.items == ("log", "water_bucket", "wool", "beef") and seq4.max_steps == 16_000
    assert {t.world for t in suites["aba-random"].values()} == {"plains_unbounded"}
    assert all(t.spawn_cycle for suite in ("aba-random", "seq4") for t in suites[suite].values())
    assert not any(t.spawn_cycle for t in suites["aba-sparse"].values())


def test_metric_names_follow_the_labels():
    task = task_by_key("aba-sparse/water-log-water")
    assert task.key == "aba-sparse/water-log-water"
    assert task.metric_names == ("success_rate", "success_A", "success_B", "success_A2",
                                 "duration_A", "duration_B", "duration_A2")


def test_a_record_counts_the_episode_a_success_only_when_every_subtask_succeeds():
    task = task_by_key("aba-sparse/water-log-water")
    done = EpisodeResult([TaskOutcome("water_bucket", 0, 100, True),
                          TaskOutcome("log", 100, 130, True)], steps=12_000)
    record = sequential_record(task, done)
    assert record["success_A"] == record["success_B"] == 100.0 and record["success_A2"] == 0.0
    assert (record["duration_A"], record["duration_B"], record["duration_A2"]) == (100, 30, None)
    assert record["success_rate"] == 0.0 and record["steps"] == 12_000


def test_unknown_names_list_the_valid_ones():
    with pytest.raises(ValueError, match="unknown task suite 'aba'; known: aba-sparse"):
        find_tasks("aba", "all")
    with pytest.raises(ValueError, match="water-log-water"):
        find_tasks("aba-sparse", "water-wood-water")
    assert len(find_tasks("aba-sparse", "water-log-water, beef-log-beef")) == 2
