"""A memory keeping int8 codes of its frames (``frame_codes=True``: the mode selector's read
decides most frames from their codes and scores only what its order and its best score need)
changes nothing an agent does: the same reads (candidates, target, logged best score), the
same episode records as the float32 read, and those the golden sweep keeps."""

from dataclasses import replace

import numpy as np
import pytest

from mrsteve.agent.trees import with_memory
from mrsteve.eval.sequential import ABA_SPARSE, SequentialConfig
from mrsteve.eval.trace import TRACE_KEY, requesting_traces
from mrsteve.memory.clustered import ClusteredMemory
from tests.eval.test_golden_records import comparable, golden


@pytest.mark.parametrize("capacity", ["100", None])
@pytest.mark.parametrize("task", ["water-log-water", "beef-log-beef"])
def test_an_agent_reading_frame_codes_does_what_it_does_reading_float32_rows(
    task, capacity, monkeypatch
):
    config = SequentialConfig(task=task, agent="mrsteve", capacity=capacity, parts="stand-in")
    (group,) = ABA_SPARSE.groups(config)
    (plain,) = group.episodes(1, 42)
    assert not plain.agent.memory.config.frame_codes, "the paper's memory keeps no codes"
    coded = replace(plain, agent=with_memory(plain.agent, frame_codes=True))
    unscored = []  # per read: the returned frames whose score was not computed
    plain_read = ClusteredMemory.read

    def counted_read(memory, *args, **kwargs):
        found = plain_read(memory, *args, **kwargs)
        unscored.append(int(np.isnan(found.score).sum()))
        return found

    monkeypatch.setattr(ClusteredMemory, "read", counted_read)
    with requesting_traces():
        expected = ABA_SPARSE.episode(plain)
        reads_before = len(unscored)
        got = ABA_SPARSE.episode(coded)
    assert sum(unscored[:reads_before]) == 0
    assert sum(unscored[reads_before:]) > 0, "the coded reads decided frames from their codes"
    reads = got.pop(TRACE_KEY)["reads"]
    assert reads == expected.pop(TRACE_KEY)["reads"]
    assert sum(read["candidates"] > 0 for read in reads) >= 2, "the reads found targets"
    assert got == expected
    (kept,) = [record for record in golden("aba-sparse") if record["group"] == group.label]
    assert comparable(got) == {key: value for key, value in kept.items() if key in got}
