"""Episode functions for sweeps: each turns an :class:`~mrsteve.eval.runner.EpisodeSpec` into one
run of a task of :mod:`mrsteve.tasks` and returns its JSON record.

They are module-level functions so that worker processes can run them. ``spec.agent`` names the
agent (or explorer, or navigator), ``spec.task`` the task, and ``spec.options`` any other field of
the task's configuration dataclass.
"""

from __future__ import annotations

import dataclasses
from typing import Any, TypeVar

import numpy as np

from mrsteve.eval.runner import EpisodeSpec, Record
from mrsteve.tasks import exploration, navigation, sequential

Config = TypeVar("Config")


def config_from_spec(config_type: type[Config], spec: EpisodeSpec, **fixed: Any) -> Config:
    """``config_type`` with ``fixed`` fields and those of ``spec.options`` it has (sizes as
    tuples, since JSON records hold lists)."""
    names = {field.name for field in dataclasses.fields(config_type)}
    fields = {key: value for key, value in spec.options if key in names}
    if "obs_size" in fields and fields["obs_size"] is not None:
        fields["obs_size"] = tuple(fields["obs_size"])
    return config_type(**fields, **fixed)


def exploration_episode(spec: EpisodeSpec) -> Record:
    """The Exploration experiment: metrics, goals and the trajectory (every
    ``trajectory_every``-th position, rounded to 0.01 block)."""
    config = config_from_spec(exploration.ExplorationTaskConfig, spec, agent=spec.agent)
    result = exploration.run_exploration(config, spec.seed)
    return {
        **result["metrics"],
        "trajectory": navigation.compact_trajectory(result["trajectory"], config.trajectory_every),
        "goals": np.round(result["goals"], 2).tolist(),
    }


def navigation_episode(spec: EpisodeSpec) -> Record:
    """The Navigation experiment (``spec.task`` is ``navigation/<terrain>``): metrics, goal and
    trajectory (every ``trajectory_every``-th position)."""
    config = config_from_spec(navigation.NavigationTaskConfig, spec,
                              terrain=spec.task.partition("/")[2], navigator=spec.agent)
    result = navigation.run_navigation(config, spec.seed)
    return {
        **result["metrics"],
        "goal": list(result["goal"]),
        "trajectory": navigation.compact_trajectory(result["trajectory"], config.trajectory_every),
    }


def sequential_episode(spec: EpisodeSpec) -> Record:
    """A sequential item task (``spec.task`` is ``suite/name``, e.g. ``aba-sparse/water-log-water``):
    success and duration of each sub-task."""
    options = dict(spec.options)
    return sequential.sequential_episode(
        spec.task, spec.agent, spec.seed,
        capacity=options.get("capacity"), obs_size=options.get("obs_size"),
    )  # fmt: skip
