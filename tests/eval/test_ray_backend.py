"""The Ray backend on a local Ray with 2 CPUs: the records of the local backend (each naming its
node), and a worker killed mid-episode is retried and recorded once. Skipped without the ray
extra."""

from __future__ import annotations

import pytest

ray = pytest.importorskip("ray")

import sweep_faults
from sweep_faults import attempts, dies_once, raises, toy_group, toy_specs

from mrsteve.eval.options import SweepOptions
from mrsteve.eval.records import read_records
from mrsteve.eval.sweep import run_episodes, run_sweep


@pytest.fixture(scope="module")
def local_ray():
    """One local Ray session for the tests that use it (starting Ray takes seconds)."""
    ray.cloudpickle.register_pickle_by_value(sweep_faults)  # workers do not see tests/
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    yield
    ray.shutdown()


def test_ray_gives_the_records_of_the_local_backend(tmp_path, local_ray):
    specs = toy_specs(("a", "b"), 3, 5, folder=str(tmp_path))
    local = run_episodes(dies_once, specs)
    on_ray = run_episodes(dies_once, specs, backend="ray")
    assert [{k: v for k, v in r.items() if k != "node"} for r in on_ray] == local
    assert all(r["node"] == ray.get_runtime_context().get_node_id() for r in on_ray)


def test_a_ray_worker_killed_mid_episode_is_retried_and_recorded_once(tmp_path, local_ray):
    options = SweepOptions(episodes=4, seed=3, backend="ray", progress=False,
                           out=tmp_path / "run")
    summaries = run_sweep([toy_group(folder=str(tmp_path), kill=2)], ["value"], options,
                          job=dies_once, echo=lambda _: None)
    assert summaries["g"]["value"]["mean"] == (9 + 16 + 25 + 36) / 4
    assert attempts(tmp_path, 2) == 2, "Ray ran the killed episode again"
    records = read_records(tmp_path / "run" / "summary.episodes.jsonl")
    assert sorted(r["episode"] for r in records) == [0, 1, 2, 3]


def test_an_episodes_own_error_on_ray_is_raised_as_itself(local_ray):
    with pytest.raises(ValueError, match="no such task"):
        run_episodes(raises, toy_specs(), backend="ray")
