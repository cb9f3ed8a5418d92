"""Every experiment of the paper by command name (``mrsteve eval <name>``)."""

from __future__ import annotations

from mrsteve.eval.ablation import ABLATION
from mrsteve.eval.experiment import Experiment
from mrsteve.eval.exploration import EXPLORATION
from mrsteve.eval.instruction import INSTRUCTION
from mrsteve.eval.llm_planner import LLM_PLANNER
from mrsteve.eval.long_tasks import LONG_INSTRUCTION, LONG_NAVIGATION
from mrsteve.eval.memory_tasks import MEMORY_TASKS_EXPERIMENT
from mrsteve.eval.navigation import NAVIGATION
from mrsteve.eval.sequential import ABA_RANDOM, ABA_SPARSE, SEQ4
from mrsteve.eval.tc_exploration import TC_EXPLORATION
from mrsteve.naming import lookup

EXPERIMENTS: dict[str, Experiment] = {
    experiment.name: experiment
    for experiment in (EXPLORATION, NAVIGATION, ABA_SPARSE, ABA_RANDOM, SEQ4,
                       MEMORY_TASKS_EXPERIMENT, ABLATION, TC_EXPLORATION, LONG_INSTRUCTION,
                       LONG_NAVIGATION, LLM_PLANNER, INSTRUCTION)
}
"""The experiments in the order ``mrsteve eval --help`` lists them."""


def experiment(name: str) -> Experiment:
    """The experiment called ``name`` (an unknown name lists the known ones)."""
    return lookup(EXPERIMENTS, name, "experiment")
