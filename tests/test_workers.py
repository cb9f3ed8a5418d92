"""The package's worker processes (a sweep's local workers, a training's rendering processes) run
one BLAS thread each, whatever the driver's count, and leave the driver's as it was."""

from __future__ import annotations

import numpy as np  # noqa: F401  (the BLAS the threads are counted of)
import pytest
from sweep_faults import toy_specs
from threadpoolctl import threadpool_limits

from mrsteve.eval.backends import run_jobs
from mrsteve.workers import BLAS_THREAD_VARIABLES, blas_threads, starmap_in_processes


def threads_of_episode(spec) -> dict:
    return {"threads": blas_threads()}


def threads_of_job(_: int) -> int | None:
    return blas_threads()


@pytest.fixture
def driver_with_two_blas_threads(monkeypatch):
    """This process's BLAS at two threads, and the environment asking new processes for two."""
    for variable in BLAS_THREAD_VARIABLES:
        monkeypatch.setenv(variable, "2")
    with threadpool_limits(2, user_api="blas"):
        assert blas_threads() == 2
        yield


def test_local_workers_run_one_blas_thread_each(driver_with_two_blas_threads):
    records = list(run_jobs(threads_of_episode, toy_specs(episodes=4), workers=2))
    assert [record["threads"] for record in records] == [1, 1, 1, 1]
    assert blas_threads() == 2, "the driver keeps its own count"


def test_spawned_training_workers_run_one_blas_thread_each(driver_with_two_blas_threads):
    assert starmap_in_processes(threads_of_job, [(0,), (1,)]) == [1, 1]
    assert blas_threads() == 2


def test_one_job_runs_in_this_process_as_it_is(driver_with_two_blas_threads):
    assert starmap_in_processes(threads_of_job, [(0,)]) == [2]


def test_fewer_processes_than_jobs_run_every_job_in_order(driver_with_two_blas_threads):
    assert starmap_in_processes(pow, [(2, 1), (2, 2), (2, 3)], processes=2) == [2, 4, 8]
    # one process: every job here, in order, with this process's BLAS
    assert starmap_in_processes(threads_of_job, [(0,), (1,)], processes=1) == [2, 2]
    with pytest.raises(ValueError, match="processes must be at least 1"):
        starmap_in_processes(pow, [(2, 1)], processes=0)
