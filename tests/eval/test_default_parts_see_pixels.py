"""With the default parts no agent part reads the depth or the semantic frame, in any experiment.

The paper's agent sees the RGB frame and its pose. Every experiment runs its agents here, all of
them, for one short episode, while the agent's view of each observation (what
:meth:`mrsteve.spaces.AgentFrame.view` hands every agent part) holds no ``depth`` and no
``semantic`` key: a part that reads either fails with a ``KeyError``. Evaluators, scripted
phases and goal pickers still read the environment's own observation, as they may. The same
runs with the stand-ins (``--parts stand-in``) must fail, so the check can tell."""

from __future__ import annotations

import dataclasses

import pytest

import mrsteve.spaces
from mrsteve.eval.ablation import AblationConfig
from mrsteve.eval.exploration import ExplorationTaskConfig
from mrsteve.eval.instruction import InstructionTaskConfig
from mrsteve.eval.llm_planner import LLMPlannerConfig
from mrsteve.eval.long_tasks import LongTaskConfig
from mrsteve.eval.memory_tasks import MemoryTasksConfig
from mrsteve.eval.navigation import NavigationTaskConfig
from mrsteve.eval.registry import EXPERIMENTS
from mrsteve.eval.sequential import SequentialConfig
from mrsteve.eval.sweep import run_episodes
from mrsteve.eval.tc_exploration import TcExplorationConfig

PIXELS_AND_POSE = ("rgb", "pose", "inventory")
"""What the paper's agent is given of an observation."""

CONFIGS = {
    "exploration": (ExplorationTaskConfig, dict(agent="all", steps=120)),
    "navigation": (NavigationTaskConfig, dict(terrain="river")),
    "aba-sparse": (SequentialConfig, dict(task="water-log-water", agent="all")),
    "aba-random": (SequentialConfig, dict(task="wool-log-wool", agent="mrsteve,steve1")),
    "seq4": (SequentialConfig, dict(agent="mrsteve,steve1")),
    "memory-tasks": (MemoryTasksConfig, dict(task="find-water", agent="all", task_steps=120)),
    "ablation": (AblationConfig, dict(values="12", task="water-log-water")),
    "tc-exploration": (TcExplorationConfig, dict(steps=120, every=60)),
    "long-instruction": (LongTaskConfig, dict(agent="all", steps=150, task_limit=60)),
    "long-navigation": (LongTaskConfig, dict(agent="mrsteve,steve1", steps=12_060,
                                             task_limit=30)),
    "llm-planner": (LLMPlannerConfig, dict(task="sign")),
    "instruction": (InstructionTaskConfig, dict(item="log", placement="near", max_steps=60)),
}
"""A short set-up of every experiment (its config type and options; the long tasks' steps cover
Long-Navigation's scripted visits, then a few goals)."""


BUDGETS = {"max_steps": 150, "explore_steps": None}
"""Task fields shortened in each episode's spec (``None``: left as the config made it)."""


def short(spec):
    """``spec`` with its task's step budget cut to :data:`BUDGETS`."""
    task = spec.task
    if not dataclasses.is_dataclass(task):
        return spec
    changes = {name: value for name, value in BUDGETS.items()
               if value is not None and hasattr(task, name)}
    return dataclasses.replace(spec, task=dataclasses.replace(task, **changes))


def experiment_specs(name: str, **parts) -> list:
    """The experiment ``name`` and one short episode of each of its groups, with ``parts``
    (default: the default parts)."""
    experiment, (config_type, options) = EXPERIMENTS[name], CONFIGS[name]
    config = config_type(**options, **parts)
    return experiment, [short(group.episodes(1, 42)[0]) for group in experiment.groups(config)]


@pytest.fixture
def pixels_and_pose_only(monkeypatch):
    """Agent parts are handed views without the depth and the semantic frame."""
    monkeypatch.setattr(mrsteve.spaces, "AGENT_OBSERVATION_KEYS", PIXELS_AND_POSE)


def test_every_experiment_is_checked():
    assert sorted(CONFIGS) == sorted(EXPERIMENTS)


@pytest.mark.parametrize("name", list(CONFIGS))
def test_default_agents_run_on_pixels_and_pose_alone(name, pixels_and_pose_only):
    experiment, specs = experiment_specs(name)
    assert specs, name
    records = run_episodes(experiment.episode, specs)
    assert len(records) == len(specs)


@pytest.mark.parametrize("name", ["exploration", "memory-tasks", "aba-sparse"])
def test_the_stand_ins_are_refused_by_the_same_view(name, pixels_and_pose_only):
    """The check can fail: the stand-ins read the frames the view leaves out."""
    experiment, specs = experiment_specs(name, parts="stand-in")
    with pytest.raises(KeyError, match="depth|semantic"):
        run_episodes(experiment.episode, specs)
