"""``--searched-radius`` (MrSteveConfig.searched_radius) on the experiments that run MrSteve: it
reaches the group's configuration tree (saved in the summary) and the agent each episode builds,
and a bad value is a clear error before any episode runs."""

from dataclasses import replace

import pytest

from mrsteve.agent.mrsteve import MrSteve
from mrsteve.eval.long_tasks import LONG_INSTRUCTION, LONG_NAVIGATION, LongTaskConfig
from mrsteve.eval.memory_tasks import MEMORY_TASKS_EXPERIMENT, MemoryTasksConfig
from mrsteve.eval.sequential import ABA_SPARSE, SequentialConfig
from mrsteve.eval.sweep import make_specs

EXPERIMENTS = {
    "aba-sparse": (ABA_SPARSE, SequentialConfig(task="water-log-water")),
    "memory-tasks": (MEMORY_TASKS_EXPERIMENT, MemoryTasksConfig(task="find-water",
                                                                agent="mrsteve")),
    "long-instruction": (LONG_INSTRUCTION, LongTaskConfig(agent="mrsteve")),
    "long-navigation": (LONG_NAVIGATION, LongTaskConfig(agent="mrsteve")),
}


class Built(Exception):
    """Raised by the patched agent constructor with the mode selector's configuration."""


@pytest.mark.parametrize("name", list(EXPERIMENTS))
def test_the_searched_radius_reaches_the_summary_tree_and_the_episodes_agent(name, monkeypatch):
    experiment, config = EXPERIMENTS[name]
    (group,) = experiment.groups(replace(config, searched_radius=8.0))
    assert group.config["agent"]["mode_selector"]["searched_radius"] == 8.0

    def built(self, *args, config=None, **kwargs):
        raise Built(config)

    monkeypatch.setattr(MrSteve, "__init__", built)
    (spec,) = make_specs([group.task], [group.agent], 1, 42, group.config, **group.options)
    with pytest.raises(Built) as agent:
        experiment.episode(spec)
    assert agent.value.args[0].searched_radius == 8.0


@pytest.mark.parametrize("name", list(EXPERIMENTS))
def test_off_by_default_and_a_bad_radius_is_refused(name):
    _, config = EXPERIMENTS[name]
    assert config.searched_radius == 0.0, "the release's rule is the default"
    with pytest.raises(ValueError, match="searched_radius must be a number of blocks >= 0"):
        replace(config, searched_radius=-2.0)
