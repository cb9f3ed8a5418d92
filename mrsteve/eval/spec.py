"""The run spec: one episode's whole configuration, built once by the experiment.

A :class:`RunSpec` holds the task's frozen configuration, the agent's configuration tree
(:data:`mrsteve.agent.config.AgentTree`, with the digests of the data files its parts load), the
digests of the world's data files, the seed and the episode's index. The same object is digested
(:attr:`RunSpec.digest`: the key of its record, so a resume never mixes settings), saved in the
group's summary and the run's manifest (:meth:`RunSpec.tree`), sent to the worker, and built
there (:func:`mrsteve.agent.factory.build_agent` on :attr:`RunSpec.agent`): what is saved is what
ran.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from functools import cached_property
from typing import Any

from mrsteve.agent.config import AgentTree
from mrsteve.digests import (
    WORLD_DATA,
    data_digest,
    data_digests,
    digest,
    plain,
)
from mrsteve.world.recipes import own_recipe_file

MAX_EPISODES = 1_000_000
"""The most episodes a group may have (a count beyond any sweep; a typo such as 10**20 would
otherwise list that many seeds)."""


@dataclass(frozen=True)
class RunSpec:
    """One episode of an experiment (module docstring)."""

    experiment: str
    """The experiment's command name (``aba-sparse``); its episode function runs the spec."""
    group: str
    """The group's label: file names, summaries, tables (``water-log-water.fm.c100``)."""
    task_name: str
    """The task's key (``aba-sparse/water-log-water``, ``navigation/flat``)."""
    task: Any
    """The task's frozen configuration (a dataclass of the experiment's module)."""
    agent: AgentTree
    """The agent's configuration tree, built by :func:`~mrsteve.agent.factory.build_agent`."""
    seed: int = 0
    """The episode's seed (the sweep's seed S plus its index: the paper's 42 + episode)."""
    index: int = 0
    """The episode's number within its group."""
    data: tuple[tuple[str, str], ...] = field(default_factory=lambda: data_digests(WORLD_DATA))
    """Digests of the world's data files (blocks, world recipes, the task catalogue; a recipe
    file of its own too, the held-out worlds', the forests' or the deserts', when the task's
    ``world`` is in it: :data:`mrsteve.world.recipes.OWN_FILES`)."""

    def __post_init__(self) -> None:
        world = getattr(self.task, "world", None)
        own = own_recipe_file(world) if isinstance(world, str) else None
        if own is not None and own not in {path for path, _ in self.data}:
            object.__setattr__(self, "data", tuple(sorted((*self.data, (own, data_digest(own))))))

    @property
    def agent_name(self) -> str:
        return self.agent.name

    def episode(self, index: int, seed: int) -> RunSpec:
        """This group's episode ``index`` with ``seed``."""
        return replace(self, index=int(index), seed=int(seed))

    def tree(self, *, episode: bool = False) -> dict[str, Any]:
        """The spec as JSON data (without seed and index unless ``episode``): what summaries
        and manifests save."""
        tree = plain(self)
        if not episode:
            tree.pop("seed"), tree.pop("index")
        return tree

    @cached_property
    def digest(self) -> str:
        """The key of this episode's record: a digest of the whole spec (computed once: a spec
        is frozen)."""
        return digest(self.tree(episode=True))

    @cached_property
    def settings_digest(self) -> str:
        """A digest of the group's configuration (the spec without seed and index)."""
        return digest(self.tree())


def episode_seed(base_seed: int, index: int) -> int:
    """The seed of episode ``index`` of a sweep seeded with ``base_seed`` (the paper: 42 +
    episode)."""
    return int(base_seed) + int(index)


def check_seed(seed: Any) -> int:
    """``seed`` if it is a non-negative integer, else a ``ValueError`` saying so."""
    if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
        raise ValueError(f"seed must be a non-negative integer, got {seed!r}")
    return seed


def check_episodes(episodes: Any) -> int:
    """``episodes`` if it is a count from 1 to :data:`MAX_EPISODES`, else a ``ValueError``."""
    if isinstance(episodes, bool) or not isinstance(episodes, int) or not (
            1 <= episodes <= MAX_EPISODES):
        raise ValueError(f"episodes must be an integer from 1 to {MAX_EPISODES:,} per group, got "
                         f"{episodes!r}")
    return episodes


@dataclass(frozen=True)
class Group:
    """A group of a sweep: one task and one agent configuration, seeded episodes of it."""

    spec: RunSpec
    """The group's spec (seed and index left at 0)."""
    cost: float = 1.0
    """The expected cost of one episode (steps at most, or a guess): the queue runs the most
    expensive first, so a long episode does not start last."""

    @property
    def label(self) -> str:
        return self.spec.group

    @property
    def task(self) -> str:
        return self.spec.task_name

    @property
    def agent(self) -> str:
        return self.spec.agent_name

    def episodes(self, count: int, seed: int) -> list[RunSpec]:
        """The group's ``count`` episodes; episode ``i`` is seeded ``seed + i``."""
        check_episodes(count)
        check_seed(seed)
        return [self.spec.episode(i, episode_seed(seed, i)) for i in range(count)]
