"""The memory-constraint grid of ABA-Sparse, the Place Event Memory ablation and the
task-conditioned exploration experiment, at tiny scale."""

from __future__ import annotations

import json
from dataclasses import replace
from types import SimpleNamespace

import numpy as np
import pytest

from mrsteve.agent.factory import agent_config
from mrsteve.eval.ablation import ABLATION, AblationConfig
from mrsteve.eval.capacity import GRID_TASKS
from mrsteve.eval.experiment import PAPER_CAPACITIES, parse_capacities
from mrsteve.eval.options import SweepOptions
from mrsteve.eval.sequential import ABA_SPARSE, SequentialConfig, SequentialRun, sequential_episode
from mrsteve.eval.spec import RunSpec
from mrsteve.eval.tc_exploration import (
    TC_EXPLORATION,
    TcExplorationConfig,
    pasture_mask,
    pasture_ratios,
)
from mrsteve.tasks.sequential import task_by_key
from mrsteve.world.layout import MobSpawn


def test_a_capacity_list_parses_and_one_value_still_works():
    assert parse_capacities("100,500,1000,2000,12000") == (100, 500, 1000, 2000, 12000)
    assert parse_capacities(" 100 , unlimited") == (100, None)
    assert parse_capacities(2000) == parse_capacities("2000") == (2000,)
    assert parse_capacities(None) == (None,)


@pytest.mark.parametrize("bad", ["0", "100,-5", "100,,500", "1e3", "x", "100,100", 1.5, True])
def test_bad_capacities_are_errors_naming_the_accepted_values(bad):
    with pytest.raises(ValueError, match="capacity") as error:
        SequentialConfig(capacity=bad)
    assert "given twice" in str(error.value) or "100,500,1000,2000,12000" in str(error.value)


def test_the_grid_has_a_group_per_task_capacity_and_agent_carrying_the_capacity():
    config = SequentialConfig(task="beef-log-beef,wool-log-wool", agent="mrsteve,fm,steve1",
                              capacity="100,2000,unlimited")
    groups = ABA_SPARSE.groups(config)
    memoryful = [g for g in groups if g.agent != "steve1"]
    assert len(memoryful) == 2 * 3 * 2 and len(groups) == len(memoryful) + 2  # STEVE-1: once
    for group in memoryful:
        capacity = group.spec.agent.memory.capacity
        task = group.task.partition("/")[2]
        assert group.label == (f"{task}.{group.agent}" if capacity is None
                               else f"{task}.{group.agent}.c{capacity}")
    assert len({g.label for g in groups}) == len(groups)  # summaries never collide
    assert len({g.spec.digest for g in groups}) == len(groups)


def test_the_grid_defaults_to_the_papers_tasks_agents_and_budget():
    """Appendix "ABA-Sparse Tasks with Memory Constraints": Place Event (mrsteve), Place, Event and
    FIFO Memory at 0.1K to 12K frames and STEVE-1, on ABA-Sparse tasks among which Beef-Log-Beef
    and Beef-Leaves-Beef, each episode up to 12K steps ("the maximum episode length")."""
    groups = ABA_SPARSE.groups(SequentialConfig(capacity=",".join(map(str, PAPER_CAPACITIES))))
    assert {g.task for g in groups} == {f"aba-sparse/{name}" for name in GRID_TASKS}
    assert {"beef-log-beef", "beef-leaves-beef"} <= set(GRID_TASKS)
    cells = {(g.spec.agent.memory.kind, g.spec.agent.memory.capacity)
             for g in groups if g.spec.agent.memory is not None}
    assert cells == {(kind, capacity) for kind in ("place-event", "place", "event", "fifo")
                     for capacity in (100, 500, 1000, 2000, 12000)}
    assert sorted(g.task for g in groups if g.agent == "steve1") == sorted(
        f"aba-sparse/{name}" for name in GRID_TASKS)  # once per task: no memory to size
    for group in groups:
        run = group.spec.task
        a, b, a2 = run.items
        assert a == a2 != b and run.labels == ("A", "B", "A2") and run.max_steps == 12000
        assert a in ("beef", "wool", "milk_bucket") and b in ("log", "dirt", "leaves", "sand")
    # without a grid, or with --task and --agent given, the options are as given
    plain = ABA_SPARSE.groups(SequentialConfig())
    assert len({g.task for g in plain}) == 20 and {g.agent for g in plain} == {"mrsteve"}
    everything = ABA_SPARSE.groups(SequentialConfig(task="all", agent="fm", capacity="100,500"))
    assert len({g.task for g in everything}) == 20 and {g.agent for g in everything} == {"fm"}


@pytest.mark.parametrize("capacity", ["100,500", "100"])
def test_a_capacity_for_agents_without_a_memory_is_refused_in_one_line(capacity, tmp_path,
                                                                       monkeypatch):
    """STEVE-1 remembers nothing: a capacity grid over it alone would collapse to one run and an
    empty plot, so it is refused before any work, naming the agents that have a memory."""
    from typer.testing import CliRunner

    from mrsteve.cli import app

    with pytest.raises(ValueError, match="steve1 has none: add an agent with a memory"):
        SequentialConfig(agent="steve1", capacity=capacity)
    for allowed in ({"agent": "steve1"}, {"agent": "steve1", "capacity": "unlimited"},
                    {"agent": "fm,steve1", "capacity": capacity}):
        SequentialConfig(**allowed)  # no capacity, or an agent it sizes

    monkeypatch.setattr(ABA_SPARSE, "episode", fake_episode)
    out = tmp_path / "run"
    result = CliRunner().invoke(app, ["eval", "aba-sparse", "--agent", "steve1", "--capacity",
                                      capacity, "--out", str(out), "--no-progress"])
    assert result.exit_code == 2 and result.output.count("\n") == 1, result.output
    assert "pmc-fm" in result.output and "leave --capacity out" in result.output
    assert not out.exists()


def test_a_panel_without_values_says_so_without_a_warning(tmp_path):
    import warnings

    from mrsteve.eval.curves import save_curves

    with warnings.catch_warnings():
        warnings.simplefilter("error")  # matplotlib's "No artists with labels" among them
        path = save_curves(tmp_path / "grid.png", {
            "A2 steps": {"fm": [(100.0, {"mean": float("nan"), "n": 0})]},
            "success %": {"fm": [(100.0, {"mean": 50.0, "stderr": 5.0, "n": 2})]},
        }, xlabel="memory capacity (frames)", logx=True)
    assert path.stat().st_size > 0


def fake_episode(spec):
    """An instant stand-in: success falls with a smaller memory (FIFO only)."""
    capacity = spec.agent.memory.capacity if spec.agent.memory is not None else None
    fifo = spec.agent.name == "fm"
    success = 0.0 if fifo and capacity is not None and capacity < 1000 else 100.0
    return {"success_rate": success, "success_A": 100.0, "success_B": 100.0,
            "success_A2": success, "duration_A": 500, "duration_B": 200,
            "duration_A2": 300 if success else None, "explore_A": 400, "explore_B": 0,
            "explore_A2": 0}


def test_a_capacity_grid_resumes_cell_by_cell_and_plots_against_capacity(tmp_path, monkeypatch):
    calls = []

    def counting(spec):
        calls.append((spec.group, spec.index))
        return fake_episode(spec)

    monkeypatch.setattr(ABA_SPARSE, "episode", counting)
    sweep = SweepOptions(episodes=2, out=tmp_path / "run", progress=False)
    small = SequentialConfig(task="beef-log-beef", agent="mrsteve,fm", capacity="100,2000")
    lines = []
    ABA_SPARSE.run(small, sweep, echo=lines.append)
    assert sorted(calls) == sorted((f"beef-log-beef.{a}.c{c}", i) for a in ("mrsteve", "fm")
                                   for c in (100, 2000) for i in range(2))
    table = "\n".join(lines)
    assert "FIFO (fm) degrades" in table and "capacity" in table
    assert (tmp_path / "run" / "plots" / "aba-sparse-capacity.png").stat().st_size > 0

    calls.clear()  # a wider grid runs only the new cells
    wider = replace(small, capacity="100,500,2000")
    summaries = ABA_SPARSE.run(wider, sweep, echo=lambda _: None)
    assert sorted(calls) == sorted((f"beef-log-beef.{a}.c500", i) for a in ("mrsteve", "fm")
                                   for i in range(2))
    assert summaries["beef-log-beef.fm.c100"]["success_rate"]["mean"] == 0.0
    assert summaries["beef-log-beef.fm.c2000"]["success_rate"]["mean"] == 100.0
    summary = json.loads((tmp_path / "run" / "summary.beef-log-beef.fm.c500.json").read_text())
    assert summary["agent"] == "fm" and summary["config"]["agent"]["memory"]["capacity"] == 500

    def interrupted(spec):  # a crash in the middle of a cell: the finished episodes stay
        if spec.group == "beef-log-beef.mrsteve.c1000" and spec.index == 1:
            raise RuntimeError("killed")
        return counting(spec)

    calls.clear()  # the grid widened again (a run folder holds one grid: its cells are kept)
    widest = replace(small, capacity="100,500,1000,2000")
    monkeypatch.setattr(ABA_SPARSE, "episode", interrupted)
    with pytest.raises(RuntimeError):
        ABA_SPARSE.run(widest, sweep, echo=lambda _: None)
    monkeypatch.setattr(ABA_SPARSE, "episode", counting)
    ABA_SPARSE.run(widest, sweep, echo=lambda _: None)
    assert calls == [("beef-log-beef.mrsteve.c1000", 0), ("beef-log-beef.mrsteve.c1000", 1),
                     ("beef-log-beef.fm.c1000", 0), ("beef-log-beef.fm.c1000", 1)]


@pytest.mark.parametrize(("vary", "value"), [("top-k", 4), ("cell-size", 2)])
def test_ablation_values_reach_the_agents_config_tree_and_its_memory(vary, value):
    from mrsteve.agent.factory import build_agent

    config = AblationConfig(vary=vary, values=f"{value},12")
    groups = ABLATION.groups(config)
    assert [g.spec.task.value for g in groups] == [value, 12]
    assert groups[0].label == f"wool-log-wool.mrsteve.{'k' if vary == 'top-k' else 'c'}{value}"
    agent = build_agent(groups[0].spec.agent)  # what the worker builds
    tree = groups[0].spec.tree()["agent"]  # what the summary saves
    if vary == "top-k":
        assert tree["mode_selector"]["top_k"] == value
        assert agent.config.top_k == value and agent.memory.config.cell_size == 6.0
    else:
        assert tree["memory"]["config"]["cell_size"] == value
        assert agent.memory.config.cell_size == value and agent.config.top_k is None


def test_ablation_defaults_and_bad_values():
    config = AblationConfig()
    assert (config.task, config.agent, config.capacity, config.points) == (
        "wool-log-wool", "mrsteve", None, (1, 2, 4, 10, 30))
    assert AblationConfig(vary="cell-size").points == (1, 2, 4, 6, 12)
    for bad in ({"vary": "size"}, {"values": "2,x"}, {"vary": "cell-size", "values": "0"},
                {"values": "2,2"}, {"task": "wool-log"}):
        with pytest.raises(ValueError):
            AblationConfig(**bad)
    for agent in ("steve1", "em", "fm"):
        with pytest.raises(ValueError, match="no place cells"):
            AblationConfig(vary="cell-size", agent=agent)


def test_the_explore_mode_length_is_recorded_per_sub_task():
    task = replace(task_by_key("aba-sparse/beef-log-beef"), max_steps=120)

    def episode(agent: str) -> dict:
        spec = RunSpec("aba-sparse", agent, task.key, SequentialRun.of(task, (32, 32)),
                       agent_config(agent, parts="stand-in"), seed=42)
        return sequential_episode(spec)

    record = episode("mrsteve")
    assert 0 < record["explore_A"] <= record["steps"] == 120  # no cow in sight from the spawn
    assert record["explore_B"] is None and record["explore_A2"] is None
    assert episode("steve1")["explore_A"] is None


def test_pasture_ratio_counts_distinct_explored_columns_in_the_grazing_area():
    layout = SimpleNamespace(size=(20, 20), mobs=(MobSpawn("cow", 15.5, 15.5, roam=2.0),
                                                  MobSpawn("zombie", 3.5, 3.5, roam=3.0)))
    mask = pasture_mask(layout)
    assert mask[15, 15] and mask[17, 15] and not mask[3, 3] and mask.sum() == 13
    positions = [(1, 3.2, 3.9), (2, 3.7, 3.1), (3, 15.2, 15.8), (5, 16.1, 15.0)]
    assert pasture_ratios(positions, mask, [0, 2, 3, 5]) == [None, 0.0, 0.5, 2 / 3]


def test_tc_exploration_groups_and_tables(tmp_path, monkeypatch):
    config = TcExplorationConfig(task="beef-log-beef,find-cow", steps=200, every=100)
    groups = TC_EXPLORATION.groups(config)
    assert [(g.task, g.agent) for g in groups] == [
        ("aba-sparse/beef-log-beef", "mrsteve"), ("aba-sparse/beef-log-beef", "mrsteve-tc"),
        ("tc/find-cow", "mrsteve"), ("tc/find-cow", "mrsteve-tc")]
    assert groups[3].spec.agent.explorer.kind == "task-conditioned"

    def episode(spec):
        if spec.task_name == "tc/find-cow":
            return {"explore_A": 200, "pasture_share_of_map": 0.1, "pasture_t100": 0.0,
                    "pasture_t200": 0.25 if spec.agent.name == "mrsteve-tc" else 0.1}
        return fake_episode(spec)

    monkeypatch.setattr(TC_EXPLORATION, "episode", episode)
    lines = []
    TC_EXPLORATION.run(config, SweepOptions(episodes=1, out=tmp_path, progress=False),
                       echo=lines.append)
    table = "\n".join(lines)
    assert "93% / 1203 ± 67" in table and "92% / 1512 ± 62" in table  # the paper's, per agent
    assert "0.250" in table and "pasture ratio t=200" in table
    assert "±" not in table.split("find cow")[1], "one episode has no standard error"
    assert (tmp_path / "plots" / "tc-exploration-pasture.png").stat().st_size > 0
    with pytest.raises(ValueError, match="find-cow"):
        TcExplorationConfig(task="find-sheep")
    with pytest.raises(ValueError):
        TcExplorationConfig(steps=100, every=200)
    assert np.isclose(len(config.checkpoints), 2)
