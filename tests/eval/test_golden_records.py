"""The same seeds give the same episodes: a fixed sample of sweeps (every experiment, a capacity
grid, the pixel encoder, searched places, ablations, long tasks at small budgets) gives records
identical to those in ``data/golden``, written by the package before its run specs, its driver
and its sweep queue existed (commit 3c68711); ``aba-random`` was rewritten when ABA-Random moved
to the unbounded plains with the spawn cycle, ``aba-pixels`` when the pixel encoder was retrained
on clips of every pitch. The sweeps name ``--parts stand-in`` since the learned parts became the
default (``aba-learned`` runs that default); ``aba-sparse``, ``aba-pixels``, ``aba-random``,
``memory-tasks``, ``ablation`` and ``ablation-topk`` were rewritten when the mode selector came to
read the memory as Algorithm 2 does (at a task's start and after L steps in a mode, no longer on
every Explore step) and the count-based explorer's map to be painted from the frames the memory
holds (with a capacity, evicted places count as unvisited), ``memory-tasks`` also when success
became reaching the goal's place within 3 blocks (the other sweeps' records came out the same).
Only what identifies a record (its
key, and the agent's name in it, which no longer carries the capacity) may differ; every metric,
trajectory, goal and seed must be the same, to the last digit."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from mrsteve.cli import app

GOLDEN = Path(__file__).parent / "data" / "golden"

SWEEPS = {
    "exploration": "exploration --agent count-based,go-explore,plan4mc-straight --steps 600 "
                   "--episodes 2 --parts stand-in",
    "navigation": "navigation --terrain flat,river --navigator depth,straight --episodes 2 "
                  "--parts stand-in",
    "aba-sparse": "aba-sparse --task water-log-water,beef-log-beef --agent mrsteve,fm,steve1 "
                  "--capacity 100,unlimited --episodes 1 --parts stand-in",
    "aba-pixels": "aba-sparse --task water-log-water --agent mrsteve,pm --encoder pixels "
                  "--searched-radius 8 --episodes 1 --parts stand-in",
    "aba-random": "aba-random --task wool-log-wool --agent mrsteve,em --episodes 1 --seed 7 "
                  "--parts stand-in",
    "memory-tasks": "memory-tasks --task find-water,first-house --agent mrsteve,em,steve1 "
                    "--task-steps 400 --episodes 1 --parts stand-in",
    "ablation": "ablation --vary cell-size --values 2,12 --episodes 1 --parts stand-in",
    "ablation-topk": "ablation --vary top-k --values 1 --task beef-log-beef --capacity 500 "
                     "--episodes 1 --parts stand-in",
    "tc-exploration": "tc-exploration --task find-cow --agent mrsteve,mrsteve-tc --steps 800 "
                      "--every 200 --episodes 1 --parts stand-in",
    "long-instruction": "long-instruction --agent mrsteve,fm --steps 4000 --task-limit 1500 "
                        "--episodes 1 --parts stand-in",
    "long-navigation": "long-navigation --agent mrsteve,em --steps 13000 --task-limit 500 "
                       "--episodes 1 --parts stand-in",
    "aba-learned": "aba-sparse --task water-log-water --agent mrsteve,steve1 --episodes 1",
}
"""Each golden file's sweep, as ``mrsteve eval`` arguments."""

IDENTITY = ("agent", "digest", "options_key", "node")
"""What identifies a record and may differ from the golden one."""


def comparable(record: dict) -> dict:
    return {key: value for key, value in record.items() if key not in IDENTITY}


def golden(name: str) -> list[dict]:
    lines = (GOLDEN / f"{name}.jsonl").read_text().splitlines()
    return [comparable(json.loads(line)) for line in lines]


def test_every_golden_file_has_its_sweep():
    assert sorted(path.stem for path in GOLDEN.glob("*.jsonl")) == sorted(SWEEPS)


@pytest.mark.parametrize("name", list(SWEEPS))
def test_a_sweep_gives_the_golden_records(name, tmp_path):
    out = tmp_path / name
    result = CliRunner().invoke(app, ["eval", *SWEEPS[name].split(), "--out", str(out),
                                      "--workers", "2", "--no-progress"])
    assert result.exit_code == 0, result.output
    records = [comparable(json.loads(line)) for path in sorted(out.glob("*.episodes.jsonl"))
               for line in path.read_text().splitlines()]
    records.sort(key=lambda record: (record["group"], record["episode"]))
    expected = golden(name)
    assert [r["group"] for r in records] == [r["group"] for r in expected]
    for mine, theirs in zip(records, expected):
        assert mine == theirs, f"{mine['group']} episode {mine['episode']} changed"
