"""`mrsteve.bench.machine`: what a benchmark report says it ran on."""

from __future__ import annotations

from pathlib import Path

from mrsteve.bench.machine import cpu_caches, describe_machine, machine_info


def fake_caches(root: Path, caches: list[tuple[str, str, str]]) -> Path:
    """A ``/sys/devices/system/cpu/cpu0/cache`` tree of ``(level, type, size)`` entries."""
    for number, (level, kind, size) in enumerate(caches):
        index = root / f"index{number}"
        index.mkdir(parents=True)
        (index / "level").write_text(f"{level}\n")
        (index / "type").write_text(f"{kind}\n")
        (index / "size").write_text(f"{size}\n")
    return root


def test_the_data_caches_are_read_in_bytes_and_instruction_caches_left_out(tmp_path):
    root = fake_caches(tmp_path, [("1", "Data", "48K"), ("1", "Instruction", "64K"),
                                  ("2", "Unified", "2048K"), ("3", "Unified", "491520K")])
    assert cpu_caches(root) == {"L1d": 48 * 2**10, "L2": 2 * 2**20, "L3": 480 * 2**20}


def test_a_cache_the_system_does_not_describe_is_left_out(tmp_path):
    root = fake_caches(tmp_path / "cache", [("2", "Unified", "unknown"), ("3", "Unified", "32M")])
    (root / "index2").mkdir()  # no files: unreadable
    assert cpu_caches(root) == {"L3": 32 * 2**20}
    assert cpu_caches(tmp_path / "missing") == {}


def test_a_machine_is_described_by_its_processor_cores_and_caches():
    machine = {"processor": "Example CPU", "cpus": 2,
               "caches": {"L1d": 48 * 2**10, "L2": 2 * 2**20, "L3": 480 * 2**20}}
    assert describe_machine(machine) == "Example CPU, 2 cpus, L2 2 MiB, L3 480 MiB"
    assert describe_machine({"processor": "Old report", "cpus": 4}) == "Old report, 4 cpus"
    here = machine_info()
    assert here["processor"] and here["cpus"] >= 1 and isinstance(here["caches"], dict)
    assert describe_machine(here).startswith(here["processor"])
