"""Every agent of the paper by name: MrSteve and its memory variants, PMC-MrSteve-FM, STEVE-1.

The names follow the paper's figures: ``mrsteve`` (Place Event Memory), ``center-embed``
(Place Event Memory keeping only event centres), ``pm`` / ``em`` / ``fm`` (MrSteve-PM / -EM / -FM:
Place, Event, FIFO Memory), ``pmc-fm`` (PMC-MrSteve-FM: FIFO Memory with Plan4MC's explorer) and
``steve1`` (the instruction policy alone). ``mrsteve-tc`` is MrSteve with the task-conditioned
exploration of the paper's appendix.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace

from mrsteve.agent.baselines import Steve1
from mrsteve.agent.config import AgentConfig, EncoderConfig, ExplorerConfig, MemoryConfig
from mrsteve.agent.mrsteve import MrSteve, MrSteveConfig
from mrsteve.agent.protocols import Agent
from mrsteve.control.explorers import HierarchicalExplorer
from mrsteve.control.goals import (
    CountBasedGoalSelector,
    DirectionConfig,
    DirectionGoalSelector,
    ExplorationConfig,
    TaskConditionedGoalSelector,
)
from mrsteve.control.navigation import DepthNavigator, Navigator, NavigatorConfig, StraightNavigator
from mrsteve.control.skills import ScriptedSkills
from mrsteve.memory import EventMemory, FIFOMemory, Memory, PlaceEventMemory, PlaceMemory
from mrsteve.naming import lookup
from mrsteve.perception import Encoder, encoder_weights, make_encoder


@dataclass(frozen=True)
class AgentSpec:
    """How one named agent is assembled."""

    description: str
    memory: str | None
    """``place_event``, ``center_embed``, ``place``, ``event``, ``fifo``, or ``None`` (no memory)."""
    explorer: str = "count-based"
    """``count-based`` (MrSteve), ``task-conditioned`` or ``plan4mc``."""


AGENTS: dict[str, AgentSpec] = {
    "mrsteve": AgentSpec("MrSteve: Place Event Memory, count-based exploration", "place_event"),
    "center-embed": AgentSpec("MrSteve (Center Embed): event centres only", "center_embed"),
    "pm": AgentSpec("MrSteve-PM: Place Memory", "place"),
    "em": AgentSpec("MrSteve-EM: Event Memory", "event"),
    "fm": AgentSpec("MrSteve-FM: FIFO Memory", "fifo"),
    "pmc-fm": AgentSpec("PMC-MrSteve-FM: FIFO Memory, Plan4MC-style exploration", "fifo", "plan4mc"),
    "mrsteve-tc": AgentSpec("MrSteve with task-conditioned exploration (appendix)", "place_event",
                            "task-conditioned"),
    "steve1": AgentSpec("STEVE-1: the instruction policy alone, no memory", None),
}

NAVIGATORS: dict[str, type] = {"depth": DepthNavigator, "straight": StraightNavigator}
"""Navigators by name: ``depth`` (the VPT-Nav stand-in) and ``straight`` (the paper's heuristic)."""


def make_navigator(kind: str, config: NavigatorConfig | None = None) -> Navigator:
    """A navigator of :data:`NAVIGATORS` by name."""
    return lookup(NAVIGATORS, kind, "navigator")(config or NavigatorConfig())


def make_memory(kind: str, encoder: Encoder, capacity: int | None = None,
                cell_size: float | None = None) -> Memory:
    """A memory of ``kind`` whose event thresholds are the encoder's calibrated ones
    (``cell_size``: the place cell side C of the memories with places; ``None``: their own)."""
    events = {
        "merge_threshold": encoder.thresholds.event_merge,
        "fold_threshold": encoder.thresholds.event_fold,
    }
    if cell_size is not None:
        MemoryConfig(kind, capacity, cell_size)  # checks that ``kind`` has places
    places = {} if cell_size is None else {"cell_size": float(cell_size)}
    makers: dict[str, Callable[[], Memory]] = {
        "place_event": lambda: PlaceEventMemory(capacity, dim=encoder.dim, **events, **places),
        "center_embed": lambda: PlaceEventMemory(
            capacity, dim=encoder.dim, center_only=True, **events, **places
        ),
        "place": lambda: PlaceMemory(capacity, dim=encoder.dim, **places),
        "event": lambda: EventMemory(capacity, dim=encoder.dim, **events),
        "fifo": lambda: FIFOMemory(capacity, dim=encoder.dim),
    }
    return lookup(makers, kind, "memory")()


def agent_config(
    name: str,
    *,
    patch_size: float = 15.0,
    capacity: int | None = None,
    config: MrSteveConfig | None = None,
    encoder: str = "semantic",
) -> AgentConfig:
    """The configuration tree of the agent called ``name``. ``patch_size`` is the exploration goal
    patch side G, a task-level setting as in the paper (15 on 100 x 100 maps, 30 on 200 x 200:
    :func:`mrsteve.tasks.catalog.exploration_patch_size`); the Plan4MC-style explorer's grid cells
    are 0.6 G (its 11 x 11 grid over a 100 x 100 map). The agent is told nothing else of the
    world. ``encoder``: one of :data:`mrsteve.perception.ENCODERS` (the tree records its weights'
    hash)."""
    spec = lookup(AGENTS, name, "agent")
    explorer = ExplorerConfig(
        kind=spec.explorer, navigator="straight" if spec.explorer == "plan4mc" else "depth",
        goals=ExplorationConfig(patch_size=patch_size),
        direction=DirectionConfig(cell_size=0.6 * patch_size),
    )  # fmt: skip
    return AgentConfig(
        name=name,
        description=spec.description,
        memory=None if spec.memory is None else MemoryConfig(spec.memory, capacity),
        encoder=EncoderConfig(encoder, encoder_weights(encoder)),
        explorer=explorer,
        mode_selector=config or MrSteveConfig(),
    )


def build_agent(config: AgentConfig) -> Agent:
    """The agent a configuration tree describes."""
    policy = ScriptedSkills(config.skills)
    if config.memory is None:
        return Steve1(policy, name=config.name)
    kind, expected = config.encoder.kind, config.encoder.weights_sha256
    if expected is not None and expected != encoder_weights(kind):
        raise ValueError(f"the configuration names {kind} encoder weights {expected}, but the "
                         f"installed ones are {encoder_weights(kind)}")
    encoder = make_encoder(kind)
    memory = make_memory(config.memory.kind, encoder, config.memory.capacity,
                         config.memory.cell_size)
    return MrSteve(
        memory=memory,
        encoder=encoder,
        explorer=build_explorer(config.explorer, memory, config.navigator),
        navigator=make_navigator("depth", config.navigator),
        policy=policy,
        config=config.mode_selector,
        name=config.name,
    )


def build_explorer(config: ExplorerConfig, memory: Memory | None = None,
                   navigator: NavigatorConfig | None = None) -> HierarchicalExplorer:
    """The hierarchical explorer of ``config`` (``memory``: the event source of task-conditioned
    goals)."""
    low = make_navigator(config.navigator, navigator)
    if config.kind == "plan4mc":
        return HierarchicalExplorer(DirectionGoalSelector(config.direction), low)
    if config.kind == "task-conditioned":
        if memory is None:
            raise ValueError("task-conditioned exploration reads the agent's memory")
        selector = TaskConditionedGoalSelector(memory, config.goals, config.visitation)
    else:
        selector = CountBasedGoalSelector(config.goals, config.visitation)
    return HierarchicalExplorer(selector, low)


def make_agent(
    name: str,
    *,
    patch_size: float = 15.0,
    capacity: int | None = None,
    config: MrSteveConfig | AgentConfig | None = None,
    encoder: str = "semantic",
) -> Agent:
    """The agent called ``name`` (see :func:`agent_config`). ``config`` is the mode selector's
    configuration, or a whole :class:`AgentConfig` tree (``name`` wins; ``encoder`` is then the
    tree's); the built agent keeps its tree as ``agent.config_tree``."""
    if isinstance(config, AgentConfig):
        tree = replace(config, name=name)
    else:
        tree = agent_config(name, patch_size=patch_size, capacity=capacity, config=config,
                            encoder=encoder)
    agent = build_agent(tree)
    agent.config_tree = tree
    return agent
