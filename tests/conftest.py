"""Test-wide settings: one BLAS thread, as the command line uses (set before numpy loads), and
the ``quick`` subset (``pytest -m quick``)."""

import os
from pathlib import Path

import pytest

for _var in ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

TESTS = Path(__file__).resolve().parent

QUICK = ("memory", "world", "env", "agent", "control", "perception", "tasks", "test_layering.py",
         "test_fileio.py", "cli/test_eval_refusals.py", "cli/test_eval_errors.py",
         "cli/test_commands_fail_early.py")
"""The folders and files of ``pytest -m quick``: the memories, the world, the agent and its
parts, the tasks' success checks, the layering and the commands' refusals (under two minutes on
two cores; the experiments, training, docs and benchmarks are left to the whole suite)."""


def pytest_configure(config):
    config.addinivalue_line("markers", "quick: the core subset of the suite (pytest -m quick)")


def pytest_collection_modifyitems(config, items):
    for item in items:
        parts = Path(str(item.path)).resolve().relative_to(TESTS).parts
        if any(parts[:len(Path(quick).parts)] == Path(quick).parts for quick in QUICK):
            item.add_marker(pytest.mark.quick)
