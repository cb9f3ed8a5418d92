"""The long-horizon experiments' episodes: the resident-memory curve counts the memory's frames
for an agent whose tree has a memory, and none for STEVE-1."""

from __future__ import annotations

from mrsteve.eval.long_tasks import LONG_INSTRUCTION, LongTaskConfig, long_instruction_episode


def test_the_resident_memory_curve_follows_the_agents_memory():
    config = LongTaskConfig(agent="mrsteve,steve1", steps=300, rss_every=100)
    records = {group.agent: long_instruction_episode(group.episodes(1, 3)[0])
               for group in LONG_INSTRUCTION.groups(config)}
    assert [(t, frames) for t, _, frames in records["mrsteve"]["rss"]] == [
        (100, 100), (200, 200), (300, 300)], "one frame a step, capacity 20K"
    assert [frames for _, _, frames in records["steve1"]["rss"]] == [None, None, None]
    assert all(mb > 0 for record in records.values() for _, mb, _ in record["rss"])
    assert records["mrsteve"]["steps"] == records["steve1"]["steps"] == 300


def test_a_run_in_a_diagnostic_world_is_tabled_without_the_papers_figures():
    summaries = {label: {"tasks_solved": {"mean": 700.0, "stderr": 20.0, "n": 3},
                         "tasks_given": {"mean": 702.0, "stderr": 20.0, "n": 3},
                         "mean_duration": {"mean": 700.0, "stderr": 10.0, "n": 3}}
                 for label in ("mrsteve", "em")}

    def table(**options):
        config = LongTaskConfig(agent="mrsteve,em", **options)
        return LONG_INSTRUCTION.table(config, LONG_INSTRUCTION.groups(config), summaries)

    assert "paper (500K steps)" in table() and "> 80" in table()
    regrowing = table(log_regrowth=12_000)
    assert "paper" not in regrowing.splitlines()[0] and "> 80" not in regrowing
    assert "700.0 ± 20.0" in regrowing and "no figure" in regrowing
    static = table(log_regrowth=12_000, herds="static")
    assert "paper" not in static.splitlines()[0] and "logs grow back, static herds" in static


def test_static_herds_reach_the_episodes_world_and_its_own_records(monkeypatch):
    """A static-herds run is its own group (its records never mix with the paper's set-up on
    resume), and its episodes run in a world whose herds stand still."""
    from mrsteve.eval import long_tasks

    default, static = (LONG_INSTRUCTION.groups(LongTaskConfig(agent="em", herds=herds))[0]
                       for herds in ("wander", "static"))
    assert default.spec.digest != static.spec.digest
    made = {}

    def make_env(**kwargs):
        made.update(kwargs)
        raise RuntimeError("stop after making the world")

    monkeypatch.setattr(long_tasks, "make_env", make_env)
    for group, herds in ((default, "wander"), (static, "static")):
        try:
            long_instruction_episode(group.episodes(1, 3)[0])
        except RuntimeError:
            pass
        assert made["herds"] == herds
