"""The sequential task suites as the paper defines them."""

import pytest

from mrsteve.tasks.sequential import TASK_SUITES, find_tasks, task_by_key


def test_aba_sparse_has_the_papers_twenty_tasks_on_the_right_maps():
    tasks = TASK_SUITES["aba-sparse"]
    assert len(tasks) == 20
    for task in tasks.values():
        a, b, a2 = task.name.split("-")
        assert a == a2 and task.items[0] == task.items[2] and task.max_steps == 12_000
        expected = "map3" if b == "sand" else ("map1" if a == "water" else "map2")
        assert task.world == expected, task.name
    assert tasks["wool-log-wool"].items == ("wool", "log", "wool")
    assert tasks["milk-seeds-milk"].items == ("milk_bucket", "wheat_seeds", "milk_bucket")


def test_aba_random_and_seq4():
    assert set(TASK_SUITES["aba-random"]) == {"water-log-water", "beef-log-beef", "wool-log-wool"}
    (seq4,) = TASK_SUITES["seq4"].values()
    assert seq4.items == ("log", "water_bucket", "wool", "beef") and seq4.max_steps == 16_000
    assert {t.world for t in TASK_SUITES["aba-random"].values()} == {"plains"}


def test_metric_names_follow_the_labels():
    task = task_by_key("aba-sparse/water-log-water")
    assert task.metric_names == ("success_rate", "success_A", "success_B", "success_A2",
                                 "duration_A", "duration_B", "duration_A2")


def test_unknown_names_list_the_valid_ones():
    with pytest.raises(ValueError, match="known: aba-sparse"):
        find_tasks("aba", "all")
    with pytest.raises(ValueError, match="water-log-water"):
        find_tasks("aba-sparse", "water-wood-water")
    assert len(find_tasks("aba-sparse", "water-log-water, beef-log-beef")) == 2
