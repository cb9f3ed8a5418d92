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


KERNELS = '''
from numba import njit


@njit(cache=True)
def add_one(x):
    return x + 1


@njit(cache=True)
def never_called(x):
    return x - 1
'''


def overloads_of_add_one(spec) -> dict:
    import sys

    return {"overloads": len(sys.modules[spec.task.folder].add_one.overloads)}


@pytest.fixture
def cached_kernels_module(tmp_path, monkeypatch):
    """A module of two cached kernels, one of which another process has called (and so cached)
    for integers and floats; imported here afresh, nothing loaded."""
    import subprocess
    import sys
    import uuid

    name = f"warm_kernels_{uuid.uuid4().hex}"
    (tmp_path / f"{name}.py").write_text(KERNELS)
    calls = (f"import sys; sys.path.insert(0, {str(tmp_path)!r}); "
             f"import {name} as m; m.add_one(1); m.add_one(1.5)")
    subprocess.run([sys.executable, "-c", calls], check=True)
    monkeypatch.syspath_prepend(str(tmp_path))
    module = __import__(name)
    assert len(module.add_one.overloads) == 0
    yield module
    sys.modules.pop(name, None)


def test_cached_kernels_load_in_the_driver_without_compiling_and_forked_workers_have_them(
        cached_kernels_module):
    from mrsteve.jitcache import CompileWatch, load_cached_kernels

    name = cached_kernels_module.__name__
    said = []
    with CompileWatch(say=said.append) as watch:
        assert load_cached_kernels(name) == 2, "both cached signatures of add_one"
    assert watch.seconds == 0 and said == [], "loaded from the cache, nothing compiled"
    assert len(cached_kernels_module.add_one.overloads) == 2
    assert len(cached_kernels_module.never_called.overloads) == 0, "not cached: left alone"
    assert load_cached_kernels(name) == 0, "loaded once"
    records = list(run_jobs(overloads_of_add_one, toy_specs(episodes=2, folder=name), workers=2))
    assert [r["overloads"] for r in records] == [2, 2], "the forked workers start with them"
