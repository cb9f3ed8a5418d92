"""The Ray backend on a local Ray with 2 CPUs: the same records as the local backend, and a worker
killed mid-episode leaves every episode recorded exactly once. Skipped without the ray extra."""

from __future__ import annotations

import pytest

ray = pytest.importorskip("ray")

import sweep_faults
from sweep_faults import attempts, dies_once, raises

from mrsteve.eval.sweep import make_specs, read_records, run_episodes


@pytest.fixture(scope="module", autouse=True)
def local_ray():
    """One Ray session for the module (starting Ray takes seconds)."""
    ray.cloudpickle.register_pickle_by_value(sweep_faults)  # workers do not see tests/
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def test_ray_gives_the_records_of_the_local_backend(tmp_path):
    specs = make_specs(["t"], ["a", "b"], 3, 5, folder=str(tmp_path), kill=-1)
    local = run_episodes(dies_once, specs, progress=False)
    on_ray = run_episodes(dies_once, specs, records_path=tmp_path / "r.episodes.jsonl",
                          backend="ray", progress=False)
    assert on_ray == local
    assert len(read_records(tmp_path / "r.episodes.jsonl")) == 6


def test_a_ray_worker_killed_mid_episode_is_retried_and_recorded_once(tmp_path):
    path = tmp_path / "run.episodes.jsonl"
    specs = make_specs(["t"], ["a"], 4, 3, folder=str(tmp_path), kill=2)
    records = run_episodes(dies_once, specs, records_path=path, backend="ray", progress=False)
    assert [r["value"] for r in records] == [9, 16, 25, 36]
    assert attempts(tmp_path, 2) == 2, "Ray ran the killed episode again"
    assert sorted(r["episode"] for r in read_records(path)) == [0, 1, 2, 3]


def test_an_episodes_own_error_on_ray_is_raised_as_itself(tmp_path):
    specs = make_specs(["t"], ["a"], 1, 0)
    with pytest.raises(ValueError, match="no such task"):
        run_episodes(raises, specs, backend="ray", progress=False)
