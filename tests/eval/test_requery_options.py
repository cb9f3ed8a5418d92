"""The re-query's options on the experiments that run MrSteve: ``--searched-radius``
(ModeSelectorConfig.searched_radius: the re-read after L steps skips a searched target's frames by
default, 8 blocks; 0 is the release's literal pick) and ``--searched-targets`` (which targets are
searched: by default one reached; also one the navigator gave up on when asked). Each reaches the group's run
spec, which is what the summary saves and what the worker builds, and a bad value is a clear
error before any episode runs."""

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


NON_DEFAULT = {"searched_radius": 0.0, "searched_targets": "reached-or-blocked"}
"""A value other than the default for each option."""


@pytest.mark.parametrize("option", list(NON_DEFAULT))
@pytest.mark.parametrize("name", list(EXPERIMENTS))
def test_each_option_reaches_the_spec_the_summary_and_the_built_agent(name, option):
    experiment, config = EXPERIMENTS[name]
    value = NON_DEFAULT[option]
    (group,) = experiment.groups(replace(config, **{option: value}))
    assert group.spec.tree()["agent"]["mode_selector"][option] == value
    (spec,) = group.episodes(1, 42)
    assert getattr(build_agent(spec.agent).config, option) == value
    (default,) = experiment.groups(config)
    assert default.spec.digest != group.spec.digest, "a record of one is not resumed by the other"


@pytest.mark.parametrize("name", list(EXPERIMENTS))
def test_on_by_default_and_a_bad_value_is_refused(name):
    experiment, config = EXPERIMENTS[name]
    assert config.searched_radius == 8.0, "the paper's re-query is the default"
    assert config.searched_targets == "reached"
    (group,) = experiment.groups(config)
    built = build_agent(group.episodes(1, 42)[0].agent).config
    assert (built.searched_radius, built.searched_targets) == (8.0, "reached")
    with pytest.raises(ValueError, match="searched_radius must be a number of blocks >= 0"):
        replace(config, searched_radius=-2.0)
    with pytest.raises(ValueError, match="searched_targets.*reached-or-blocked"):
        replace(config, searched_targets="never")
