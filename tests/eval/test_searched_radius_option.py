"""``--searched-radius`` (ModeSelectorConfig.searched_radius) on the experiments that run MrSteve:
the re-read after L steps skips a searched target's frames by default (8 blocks), 0 is the
release's literal pick; it reaches each group's run spec, which is what the summary saves and
what the worker builds, and a bad value is a clear error before any episode runs."""

from dataclasses import replace

import pytest

from mrsteve.agent.factory import build_agent
from mrsteve.eval.long_tasks import LONG_INSTRUCTION, LONG_NAVIGATION, LongTaskConfig
from mrsteve.eval.memory_tasks import MEMORY_TASKS_EXPERIMENT, MemoryTasksConfig
from mrsteve.eval.sequential import ABA_SPARSE, SequentialConfig

EXPERIMENTS = {
    "aba-sparse": (ABA_SPARSE, SequentialConfig(task="water-log-water")),
    "memory-tasks": (MEMORY_TASKS_EXPERIMENT, MemoryTasksConfig(task="find-water",
                                                                agent="mrsteve")),
    "long-instruction": (LONG_INSTRUCTION, LongTaskConfig(agent="mrsteve")),
    "long-navigation": (LONG_NAVIGATION, LongTaskConfig(agent="mrsteve")),
}


@pytest.mark.parametrize("name", list(EXPERIMENTS))
def test_the_searched_radius_reaches_the_spec_the_summary_and_the_built_agent(name):
    experiment, config = EXPERIMENTS[name]
    (group,) = experiment.groups(replace(config, searched_radius=0.0))
    assert group.spec.tree()["agent"]["mode_selector"]["searched_radius"] == 0.0
    (spec,) = group.episodes(1, 42)
    assert build_agent(spec.agent).config.searched_radius == 0.0
    (default,) = experiment.groups(config)
    assert default.spec.digest != group.spec.digest, "a record of one is not resumed by the other"


@pytest.mark.parametrize("name", list(EXPERIMENTS))
def test_on_by_default_and_a_bad_radius_is_refused(name):
    experiment, config = EXPERIMENTS[name]
    assert config.searched_radius == 8.0, "the paper's re-query is the default"
    (group,) = experiment.groups(config)
    assert build_agent(group.episodes(1, 42)[0].agent).config.searched_radius == 8.0
    with pytest.raises(ValueError, match="searched_radius must be a number of blocks >= 0"):
        replace(config, searched_radius=-2.0)
