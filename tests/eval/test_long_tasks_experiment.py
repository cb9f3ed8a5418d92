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
