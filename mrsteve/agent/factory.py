"""Every agent of the paper by name: MrSteve and its memory variants, PMC-MrSteve-FM, STEVE-1.

The names follow the paper's figures: ``mrsteve`` (Place Event Memory), ``center-embed``
(Place Event Memory keeping only event centres), ``pm`` / ``em`` / ``fm`` (MrSteve-PM / -EM / -FM:
Place, Event, FIFO Memory), ``pmc-fm`` (PMC-MrSteve-FM: FIFO Memory with Plan4MC's explorer) and
``steve1`` (the instruction policy alone). ``mrsteve-tc`` is MrSteve with the task-conditioned
exploration of the paper's appendix.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from mrsteve.agent.baselines import Steve1
from mrsteve.agent.mrsteve import MrSteve, MrSteveConfig
from mrsteve.agent.protocols import Agent
from mrsteve.control.explorers import HierarchicalExplorer
from mrsteve.control.goals import (
    CountBasedGoalSelector,
    DirectionGoalSelector,
    ExplorationConfig,
    TaskConditionedGoalSelector,
)
from mrsteve.control.navigation import DepthNavigator, StraightNavigator
from mrsteve.control.skills import ScriptedSkills
from mrsteve.memory import EventMemory, FIFOMemory, Memory, PlaceEventMemory, PlaceMemory
from mrsteve.perception import Encoder, SemanticEncoder


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


def make_memory(kind: str, encoder: Encoder, capacity: int | None = None) -> Memory:
    """A memory of ``kind`` whose event thresholds are the encoder's calibrated ones."""
    events = {
        "merge_threshold": encoder.thresholds.event_merge,
        "fold_threshold": encoder.thresholds.event_fold,
    }
    makers: dict[str, Callable[[], Memory]] = {
        "place_event": lambda: PlaceEventMemory(capacity, dim=encoder.dim, **events),
        "center_embed": lambda: PlaceEventMemory(
            capacity, dim=encoder.dim, center_only=True, **events
        ),
        "place": lambda: PlaceMemory(capacity, dim=encoder.dim),
        "event": lambda: EventMemory(capacity, dim=encoder.dim, **events),
        "fifo": lambda: FIFOMemory(capacity, dim=encoder.dim),
    }
    if kind not in makers:
        raise ValueError(f"unknown memory {kind!r}; known: {', '.join(makers)}")
    return makers[kind]()


def make_agent(
    name: str,
    *,
    world_size: tuple[int, int],
    capacity: int | None = None,
    config: MrSteveConfig | None = None,
) -> Agent:
    """The agent called ``name`` for a walled world of ``world_size`` (grid columns, wall ring
    included). The exploration goal patches are 15% of the map side (the paper: G = 15 on
    100 x 100 maps, 30 on 200 x 200) and cover the walkable area inside the walls."""
    if name not in AGENTS:
        raise ValueError(f"unknown agent {name!r}; known: {', '.join(AGENTS)}")
    spec = AGENTS[name]
    policy = ScriptedSkills()
    if spec.memory is None:
        return Steve1(policy, name=name)
    encoder = SemanticEncoder()
    memory = make_memory(spec.memory, encoder, capacity)
    bounds = (1.0, 1.0, float(world_size[0] - 1), float(world_size[1] - 1))
    if spec.explorer == "plan4mc":
        explorer = HierarchicalExplorer(DirectionGoalSelector(bounds), StraightNavigator())
    else:
        patches = ExplorationConfig(patch_size=0.15 * min(world_size[0] - 2, world_size[1] - 2))
        selector = (
            TaskConditionedGoalSelector(memory, patches, bounds=bounds)
            if spec.explorer == "task-conditioned"
            else CountBasedGoalSelector(patches, bounds=bounds)
        )
        explorer = HierarchicalExplorer(selector, DepthNavigator())
    return MrSteve(
        memory=memory,
        encoder=encoder,
        explorer=explorer,
        navigator=DepthNavigator(),
        policy=policy,
        config=config,
        name=name,
    )
