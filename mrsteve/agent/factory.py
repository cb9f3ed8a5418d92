"""Every agent of the paper by name, their configuration trees, and the one function that builds
an agent from a tree.

The names follow the paper's figures: ``mrsteve`` (Place Event Memory), ``center-embed``
(Place Event Memory keeping only event centres), ``pm`` / ``em`` / ``fm`` (MrSteve-PM / -EM / -FM:
Place, Event, FIFO Memory), ``pmc-fm`` (PMC-MrSteve-FM: FIFO Memory with Plan4MC's explorer) and
``steve1`` (the instruction policy alone). ``mrsteve-tc`` is MrSteve with the task-conditioned
exploration of the paper's appendix. The Exploration experiment runs explorers alone
(:data:`EXPLORERS`), the Navigation experiment navigators alone (:data:`NAVIGATORS`).

:func:`agent_config`, :func:`explorer_agent_config` and :func:`navigator_agent_config` make the
trees (:mod:`mrsteve.agent.config`); :func:`build_agent` builds any tree, and refuses one whose
data digests are not those of the installed data files.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from functools import singledispatch
from typing import Any

from mrsteve.agent.baselines import Steve1
from mrsteve.agent.config import (
    AgentConfig,
    AgentTree,
    DataDigests,
    EncoderConfig,
    ExplorerAgentConfig,
    ExplorerConfig,
    HierarchicalAgentConfig,
    MemoryPart,
    NavigatorAgentConfig,
)
from mrsteve.agent.hierarchical import HierarchicalAgent, MineInstruction
from mrsteve.agent.mrsteve import ModeSelectorConfig, MrSteve
from mrsteve.agent.planners import PlannerConfig, make_planner
from mrsteve.agent.standalone import ExplorerAgent, NavigatorAgent
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
from mrsteve.control.wander import WanderExplorer
from mrsteve.digests import data_digest, data_digests
from mrsteve.memory import Memory, memory_variant
from mrsteve.naming import lookup
from mrsteve.perception import ENCODER_DATA, encoder_thresholds, encoder_weights, make_encoder
from mrsteve.protocols import Agent

SKILL_DATA = ("control/data/skills.toml",)
"""The data files the scripted instruction policy loads."""
RECIPE_DATA = ("world/data/crafting.toml",)
"""The crafting recipes a planner reads (Minecraft's public rules, as a recipe book)."""
EVENT_MEMORIES = ("event", "place-event", "center-embed")
"""The variants that cluster events, whose thresholds come from the encoder's calibration."""


@dataclass(frozen=True)
class AgentSpec:
    """How one named agent is assembled."""

    description: str
    memory: str | None
    """A variant of :data:`mrsteve.memory.MEMORY_VARIANTS`, or ``None`` (no memory)."""
    explorer: str = "count-based"
    """``count-based`` (MrSteve), ``task-conditioned`` or ``plan4mc``."""


AGENTS: dict[str, AgentSpec] = {
    "mrsteve": AgentSpec("MrSteve: Place Event Memory, count-based exploration", "place-event"),
    "center-embed": AgentSpec("MrSteve (Center Embed): event centres only", "center-embed"),
    "pm": AgentSpec("MrSteve-PM: Place Memory", "place"),
    "em": AgentSpec("MrSteve-EM: Event Memory", "event"),
    "fm": AgentSpec("MrSteve-FM: FIFO Memory", "fifo"),
    "pmc-fm": AgentSpec("PMC-MrSteve-FM: FIFO Memory, Plan4MC-style exploration", "fifo",
                        "plan4mc"),
    "mrsteve-tc": AgentSpec("MrSteve with task-conditioned exploration (appendix)", "place-event",
                            "task-conditioned"),
    "steve1": AgentSpec("STEVE-1: the instruction policy alone, no memory", None),
}

EXPLORERS: dict[str, tuple[str, str, str]] = {
    "count-based": ("count-based", "depth",
                    "Count-based goals over the VPT-Nav stand-in (MrSteve)"),
    "count-based-straight": ("count-based", "straight",
                             "Count-based goals over a navigator without terrain skills"),
    "plan4mc": ("plan4mc", "depth", "Plan4MC's direction picking over the VPT-Nav stand-in"),
    "plan4mc-straight": ("plan4mc", "straight", "Plan4MC: direction picking, straight walking"),
    "go-explore": ("go-explore", "depth", "STEVE-1 told to 'go explore'"),
}
"""The Exploration experiment's agents: ``(explorer kind, navigator, description)`` by name."""

NAVIGATORS: dict[str, type] = {"depth": DepthNavigator, "straight": StraightNavigator}
"""Navigators by name: ``depth`` (the VPT-Nav stand-in) and ``straight`` (the paper's heuristic)."""


def make_navigator(kind: str, config: NavigatorConfig | None = None) -> Navigator:
    """A navigator of :data:`NAVIGATORS` by name."""
    return lookup(NAVIGATORS, kind, "navigator")(config or NavigatorConfig())


def memory_part(kind: str, *, capacity: int | None = None, encoder: str = "semantic",
                **hyperparameters: Any) -> MemoryPart:
    """The memory node of a tree: variant ``kind`` with ``hyperparameters`` over the paper's
    defaults, the event thresholds those the encoder was calibrated with."""
    if kind in EVENT_MEMORIES:
        thresholds = encoder_thresholds(encoder)
        hyperparameters = {"merge_threshold": thresholds.event_merge,
                           "fold_threshold": thresholds.event_fold, **hyperparameters}
    return MemoryPart(kind, capacity, memory_variant(kind).config(**hyperparameters))


def with_memory(tree: AgentConfig, **hyperparameters: Any) -> AgentConfig:
    """``tree`` with its memory's ``hyperparameters`` changed (an ablation's varied value)."""
    if tree.memory is None:
        raise ValueError(f"agent {tree.name!r} has no memory to set {', '.join(hyperparameters)}"
                         " of")
    config = memory_variant(tree.memory.kind).config(
        **{**_fields(tree.memory.config), **hyperparameters})
    return replace(tree, memory=replace(tree.memory, config=config))


def _fields(config: Any) -> dict[str, Any]:
    return {name: getattr(config, name) for name in config.__dataclass_fields__}


def explorer_config(kind: str, navigator: str, patch_size: float) -> ExplorerConfig:
    """An explorer whose goal patch side is G = ``patch_size`` (a task-level setting, as in the
    paper); the Plan4MC-style explorer's grid cells are 0.6 G (its 11 x 11 grid over a 100 x 100
    map)."""
    return ExplorerConfig(kind=kind, navigator=navigator,
                          goals=ExplorationConfig(patch_size=patch_size),
                          direction=DirectionConfig(cell_size=0.6 * patch_size))


def agent_config(
    name: str,
    *,
    patch_size: float = 15.0,
    capacity: int | None = None,
    encoder: str = "semantic",
    mode_selector: ModeSelectorConfig | None = None,
) -> AgentConfig:
    """The configuration tree of the agent called ``name`` (:data:`AGENTS`). ``patch_size`` is
    the exploration goal patch side G, a task-level setting as in the paper (15 on 100 x 100
    maps, 30 on 200 x 200: :func:`mrsteve.tasks.catalog.exploration_patch_size`); the agent is
    told nothing else of the world. ``capacity``: its memory's; ``encoder``: one of
    :data:`mrsteve.perception.ENCODERS`; ``mode_selector``: MrSteve's mode selector."""
    spec = lookup(AGENTS, name, "agent")
    explorer = explorer_config(spec.explorer, "straight" if spec.explorer == "plan4mc" else "depth",
                               patch_size)
    memory = None if spec.memory is None else memory_part(spec.memory, capacity=capacity,
                                                         encoder=encoder)
    data = SKILL_DATA if memory is None else (*SKILL_DATA, *ENCODER_DATA[encoder])
    return AgentConfig(
        name=name,
        description=spec.description,
        memory=memory,
        encoder=EncoderConfig(encoder, encoder_weights(encoder)),
        explorer=explorer,
        mode_selector=mode_selector or ModeSelectorConfig(),
        data=data_digests(data),
    )


def explorer_agent_config(name: str, *, patch_size: float = 15.0) -> ExplorerAgentConfig:
    """The tree of the Exploration experiment's explorer called ``name`` (:data:`EXPLORERS`)."""
    kind, navigator, description = lookup(EXPLORERS, name, "explorer")
    return ExplorerAgentConfig(name, description, explorer_config(kind, navigator, patch_size))


def navigator_agent_config(name: str, *, success_radius: float = 3.0) -> NavigatorAgentConfig:
    """The tree of the navigator called ``name`` (:data:`NAVIGATORS`)."""
    lookup(NAVIGATORS, name, "navigator")
    description = {"depth": "The VPT-Nav stand-in: depth-aware planning, terrain skills",
                   "straight": "The paper's heuristic: turn to the goal and walk"}[name]
    return NavigatorAgentConfig(name, description,
                                NavigatorConfig(success_radius=success_radius))


def hierarchical_agent_config(controller: AgentConfig, planner: PlannerConfig,
                              mining: tuple[MineInstruction, ...]) -> HierarchicalAgentConfig:
    """The tree of a planner over ``controller`` (MrSteve or STEVE-1) for crafting tasks,
    ``mining`` saying how the controller obtains each raw item; named
    ``<controller>+<planner>`` (``+memory`` when the planner reads the memory)."""
    name = f"{controller.name}+{planner.kind}" + ("+memory" if planner.memory_access else "")
    reads = "reading the controller's memory" if planner.memory_access else "blind to its memory"
    description = f"{planner.kind} planner over {controller.description}, {reads}"
    return HierarchicalAgentConfig(name, description, controller, planner, tuple(mining),
                                   (*controller.data, *data_digests(RECIPE_DATA)))


def check_data(data: DataDigests) -> None:
    """Raise ``ValueError`` if a tree's data digests are not those of the installed files (the
    tree was made for other thresholds, weights or rules)."""
    stale = [path for path, sha in data if data_digest(path) != sha]
    if stale:
        raise ValueError(f"the configuration was made for other versions of {', '.join(stale)} "
                         "than the installed ones; rebuild it (results of other data files are "
                         "not comparable)")


@singledispatch
def build_agent(config: AgentTree) -> Agent:
    """The agent a configuration tree describes (any :data:`~mrsteve.agent.config.AgentTree`)."""
    raise TypeError(f"not an agent configuration tree: {type(config).__name__}")


@build_agent.register
def _(config: AgentConfig) -> Agent:
    check_data(config.data)
    policy = ScriptedSkills(config.skills)
    if config.memory is None:
        return Steve1(policy, name=config.name)
    kind, expected = config.encoder.kind, config.encoder.weights_sha256
    if expected is not None and expected != encoder_weights(kind):
        raise ValueError(f"the configuration names {kind} encoder weights {expected}, but the "
                         f"installed ones are {encoder_weights(kind)}")
    encoder = make_encoder(kind)
    memory = memory_variant(config.memory.kind).build(config.memory.capacity, dim=encoder.dim,
                                                      config=config.memory.config)
    return MrSteve(
        memory=memory,
        encoder=encoder,
        explorer=build_explorer(config.explorer, memory, config.navigator),
        navigator=make_navigator("depth", config.navigator),
        policy=policy,
        config=config.mode_selector,
        name=config.name,
    )


@build_agent.register
def _(config: ExplorerAgentConfig) -> Agent:
    check_data(config.data)
    return ExplorerAgent(build_explorer(config.explorer, navigator=config.navigator),
                         name=config.name)


@build_agent.register
def _(config: NavigatorAgentConfig) -> Agent:
    check_data(config.data)
    return NavigatorAgent(make_navigator(config.name, config.navigator), name=config.name)


@build_agent.register
def _(config: HierarchicalAgentConfig) -> Agent:
    from mrsteve.world.crafting import load_recipes

    check_data(config.data)
    recipes = load_recipes()
    mining = {instruction.item: instruction for instruction in config.mining}
    return HierarchicalAgent(build_agent(config.controller),
                             make_planner(config.planner, recipes, tuple(mining)), mining,
                             recipes, memory_access=config.planner.memory_access,
                             explore_horizon=config.planner.explore_horizon, name=config.name)


def build_explorer(config: ExplorerConfig, memory: Memory | None = None,
                   navigator: NavigatorConfig | None = None):
    """The explorer of ``config`` (``memory``: the event source of task-conditioned goals)."""
    if config.kind == "go-explore":
        return WanderExplorer(config.wander)
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
    config: ModeSelectorConfig | AgentConfig | None = None,
    encoder: str = "semantic",
) -> Agent:
    """The agent called ``name`` (see :func:`agent_config`). ``config`` is the mode selector's
    configuration, or a whole :class:`AgentConfig` tree (``name`` wins; ``encoder`` is then the
    tree's); the built agent keeps its tree as ``agent.config_tree``."""
    if isinstance(config, AgentConfig):
        tree = replace(config, name=name)
    else:
        tree = agent_config(name, patch_size=patch_size, capacity=capacity, mode_selector=config,
                            encoder=encoder)
    agent = build_agent(tree)
    agent.config_tree = tree
    return agent
