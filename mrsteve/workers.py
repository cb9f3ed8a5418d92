"""The package's worker processes: one BLAS thread each.

A sweep, an evaluation or a training's rendering runs one episode per worker process, one worker
per core. numpy's BLAS (OpenBLAS by default) starts a thread per core in every process, so N
workers on N cores would run N x N BLAS threads: the learned policies' per-step matrix products
then wait on each other (two workers on two cores ran an ABA-Sparse sweep over the pixel encoder
about 4x slower). Each worker therefore limits its BLAS to one thread when it starts, whatever the
driver's setting; the driver keeps its own (a lone process gains from the BLAS's threads on large
memory scans). ``threadpoolctl`` does it at run time, after numpy has loaded, and for any BLAS.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable
from typing import Any

BLAS_THREAD_VARIABLES = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")
"""Environment variables the BLAS libraries read for their thread count when they load."""


def prefer_one_blas_thread() -> None:
    """Ask for one BLAS thread through the environment (where the user set no count): the BLAS
    reads it when numpy loads, so this acts only before (the ``mrsteve`` command calls it first,
    its numbers being one core's)."""
    for variable in BLAS_THREAD_VARIABLES:
        os.environ.setdefault(variable, "1")


def one_blas_thread() -> None:
    """Limit this process's BLAS to one thread, numpy loaded or not (a BLAS loaded later reads the
    environment): what every worker process does first (module docstring)."""
    from threadpoolctl import threadpool_limits

    os.environ.update(dict.fromkeys(BLAS_THREAD_VARIABLES, "1"))
    threadpool_limits(1, user_api="blas")


def usable_cores() -> int:
    """Cores this process may run on (its CPU affinity where the system tells it)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def blas_threads() -> int | None:
    """Threads of this process's BLAS (the most, if several are loaded); ``None`` if none is."""
    from threadpoolctl import threadpool_info

    counts = [pool["num_threads"] for pool in threadpool_info() if pool["user_api"] == "blas"]
    return max(counts, default=None)


def starmap_in_processes(function: Callable[..., Any], jobs: Iterable[tuple],
                         processes: int | None = None) -> list[Any]:
    """``[function(*job) for job in jobs]`` in fresh (spawned) processes with one BLAS thread
    each, at most ``processes`` at once (default: one per job); in this process when there is
    one job or one process."""
    jobs = list(jobs)
    processes = len(jobs) if processes is None else min(processes, len(jobs))
    if processes < 1 and jobs:
        raise ValueError(f"processes must be at least 1, got {processes}")
    if processes <= 1:
        return [function(*job) for job in jobs]
    import multiprocessing

    with multiprocessing.get_context("spawn").Pool(processes, initializer=one_blas_thread) as pool:
        return pool.starmap(function, jobs)
