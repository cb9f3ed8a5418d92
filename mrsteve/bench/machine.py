"""What a benchmark ran on: the processor, its caches and the libraries, saved in each report.

A ratio between two readers of the same data (the memory against faiss, say) depends on the
processor as well as on the code: how much of the data its caches hold decides how long each
reader waits on memory, and readers that touch different bytes in different orders wait
differently. So every report names the processor and its caches beside its numbers.
"""

from __future__ import annotations

import os
import platform
from pathlib import Path

import numba
import numpy as np

CPU_CACHES = Path("/sys/devices/system/cpu/cpu0/cache")
"""Where Linux describes the caches the first core uses (``index*/level``, ``type``, ``size``)."""

SIZE_UNITS = {"K": 2**10, "M": 2**20, "G": 2**30}
"""The suffixes of a cache's ``size`` file."""


def machine_info() -> dict:
    """The machine and libraries a benchmark runs on, as JSON data."""
    return {
        "platform": platform.platform(),
        "processor": cpu_name(),
        "caches": cpu_caches(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "numba": numba.__version__,
        "cpus": os.cpu_count(),
        "numba_threads": numba.config.NUMBA_NUM_THREADS,
        "omp_threads": os.environ.get("OMP_NUM_THREADS"),
    }


def cpu_name() -> str:
    """The processor's model name (``/proc/cpuinfo``), else what :mod:`platform` says."""
    try:
        with open("/proc/cpuinfo") as info:
            for line in info:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()


def cpu_caches(root: Path = CPU_CACHES) -> dict[str, int]:
    """Bytes of each data cache one core uses, by name (``{"L1d": 49152, "L2": 2097152, "L3":
    503316480}``: a shared cache's whole size); empty where the system does not say (not Linux)."""
    caches = {}
    for index in sorted(root.glob("index*")):
        try:
            level = (index / "level").read_text().strip()
            kind = (index / "type").read_text().strip()
            size = (index / "size").read_text().strip()
        except OSError:
            continue
        scale = SIZE_UNITS.get(size[-1:], 1)
        number = size[:-1] if scale > 1 else size
        if kind == "Instruction" or not number.isdigit():
            continue
        caches[f"L{level}{'d' if kind == 'Data' else ''}"] = int(number) * scale
    return caches


def describe_machine(machine: dict) -> str:
    """``machine`` (:func:`machine_info`) in a few words: the processor, its cores and its
    caches (``Intel(R) Xeon(R) Processor, 2 cpus, L2 2 MiB, L3 480 MiB``)."""
    caches = [f"{name} {_size(size)}" for name, size in machine.get("caches", {}).items()
              if name != "L1d"]
    return ", ".join([machine["processor"], f"{machine['cpus']} cpus", *caches])


def _size(count: int) -> str:
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if count >= scale and count % scale == 0:
            return f"{count // scale:,} {unit}"
    return f"{count:,} B"
