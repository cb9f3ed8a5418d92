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

import math
from dataclasses import dataclass, replace
from functools import singledispatch
from pathlib import Path
from typing import Any

from mrsteve.agent.baselines import Steve1
from mrsteve.agent.config import (
    INSTRUCTION_POLICIES,
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
from mrsteve.control.instruction import (
    SHIPPED_INSTRUCTION_POLICY,
    InstructionPolicyConfig,
    LearnedSkills,
)
from mrsteve.control.learned import (
    SHIPPED_NAVIGATOR,
    LearnedNavigator,
    NavigatorWeights,
    load_navigator_weights,
)
from mrsteve.control.navigation import DepthNavigator, Navigator, NavigatorConfig, StraightNavigator
from mrsteve.control.skills import ScriptedSkills, SkillConfig
from mrsteve.control.wander import WanderExplorer
from mrsteve.digests import data_digest, data_digests
from mrsteve.memory import Memory, memory_variant
from mrsteve.naming import check_name, lookup
from mrsteve.perception import ENCODER_DATA, encoder_thresholds, encoder_weights, make_encoder
from mrsteve.protocols import Agent

SKILL_DATA = ("control/data/skills.toml",)
"""The data files the scripted instruction policy loads."""
INSTRUCTION_POLICY_DATA = {"scripted": SKILL_DATA,
                           "learned": (*SKILL_DATA, SHIPPED_INSTRUCTION_POLICY,
                                       *ENCODER_DATA["pixels"])}
"""The data files each instruction policy loads (the learned one: its weights and the pixel
encoder whose text tower gives the prior its input)."""
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

NAVIGATORS: dict[str, type] = {"depth": DepthNavigator, "straight": StraightNavigator,
                               "learned": LearnedNavigator}
"""Navigators by name: ``depth`` (the VPT-Nav stand-in), ``straight`` (the paper's heuristic)
and ``learned`` (the policy over RGB frames with the shipped weights)."""

AGENT_NAVIGATORS = ("depth", "learned")
"""The navigators MrSteve and the explorers can walk with (the straight heuristic is Plan4MC's
and the Exploration experiment's own rows)."""

NAVIGATOR_DATA = {"learned": (SHIPPED_NAVIGATOR,)}
"""The data files (paths below ``mrsteve/``) each navigator loads (its weights)."""


def make_navigator(kind: str, config: NavigatorConfig | None = None,
                   weights: NavigatorWeights | None = None) -> Navigator:
    """A navigator of :data:`NAVIGATORS` by name (``weights``: the learned one's, default the
    shipped ones)."""
    navigator = lookup(NAVIGATORS, kind, "navigator")
    config = config or NavigatorConfig()
    if weights is not None:
        return navigator(config, weights=weights)
    return navigator(config)


def navigator_data(*kinds: str, trained: bool = False) -> tuple[str, ...]:
    """The data files the navigators of ``kinds`` load (``trained``: a learned one runs with a
    weights file of its own, not the shipped one)."""
    return tuple(dict.fromkeys(path for kind in kinds if not (trained and kind == "learned")
                               for path in NAVIGATOR_DATA.get(kind, ())))


def navigator_weights_file(path: str | None, navigator: str) -> tuple[str | None, str | None]:
    """The absolute path and the hash of the weights file ``path`` a tree's learned navigator
    runs with (``(None, None)``: the shipped one), so that any worker finds it and a file changed
    later is told apart; a bad file, or weights for an agent whose ``navigator`` is not the
    learned one, raise ``ValueError``."""
    if path is None:
        return None, None
    if navigator != "learned":
        raise ValueError(f"navigator weights {path!r} are for the learned navigator; give "
                         f"navigator 'learned', not {navigator!r}")
    return str(Path(path).resolve()), load_navigator_weights(path).sha256


def trained_navigator(path: str | None, sha256: str | None) -> NavigatorWeights | None:
    """The weights file a tree names for its learned navigator, checked against the hash it
    recorded (``None``: the shipped weights)."""
    if path is None:
        return None
    weights = load_navigator_weights(path)
    if weights.sha256 != sha256:
        raise ValueError(f"{path} holds other weights ({weights.sha256}) than the configuration "
                         f"names ({sha256})")
    return weights


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
    navigator: str = "depth",
    navigator_weights: str | None = None,
    instruction_policy: str = "scripted",
    mode_selector: ModeSelectorConfig | None = None,
) -> AgentConfig:
    """The configuration tree of the agent called ``name`` (:data:`AGENTS`). ``patch_size`` is
    the exploration goal patch side G, a task-level setting as in the paper (15 on 100 x 100
    maps, 30 on 200 x 200: :func:`mrsteve.tasks.catalog.exploration_patch_size`); the agent is
    told nothing else of the world. ``capacity``: its memory's; ``encoder``: one of
    :data:`mrsteve.perception.ENCODERS`; ``navigator``: the VPT-Nav stand-in (``depth``) or the
    learned policy (``learned``), for the Execute mode's travel and the explorer (Plan4MC's
    explorer keeps its straight walking); ``navigator_weights``: a weights file the learned
    policy runs with in place of the shipped one; ``instruction_policy``: one of
    :data:`INSTRUCTION_POLICIES` (MrSteve's Execute mode and STEVE-1 alike);
    ``mode_selector``: MrSteve's mode selector."""
    spec = lookup(AGENTS, name, "agent")
    check_name(navigator, AGENT_NAVIGATORS, "navigator")
    check_name(instruction_policy, INSTRUCTION_POLICIES, "instruction policy")
    navigator_weights, weights_sha256 = navigator_weights_file(navigator_weights, navigator)
    if spec.memory is None:
        navigator_weights = weights_sha256 = None  # STEVE-1 has no navigator
    explorer_navigator = "straight" if spec.explorer == "plan4mc" else navigator
    explorer = explorer_config(spec.explorer, explorer_navigator, patch_size)
    memory = None if spec.memory is None else memory_part(spec.memory, capacity=capacity,
                                                         encoder=encoder)
    skill_data = INSTRUCTION_POLICY_DATA[instruction_policy]
    data = skill_data if memory is None else (
        *skill_data, *ENCODER_DATA[encoder],
        *navigator_data(navigator, explorer_navigator, trained=navigator_weights is not None))
    return AgentConfig(
        name=name,
        description=spec.description + ("" if navigator_weights is None
                                        else f" (navigator weights {navigator_weights})"),
        memory=memory,
        encoder=EncoderConfig(encoder, encoder_weights(encoder)),
        explorer=explorer,
        navigator_kind=navigator,
        navigator_weights=navigator_weights,
        navigator_weights_sha256=weights_sha256,
        instruction_policy=instruction_policy,
        mode_selector=mode_selector or ModeSelectorConfig(),
        data=data_digests(tuple(dict.fromkeys(data))),
    )


def explorer_agent_config(name: str, *, patch_size: float = 15.0, navigator: str = "depth",
                          navigator_weights: str | None = None) -> ExplorerAgentConfig:
    """The tree of the Exploration experiment's explorer called ``name`` (:data:`EXPLORERS`);
    ``navigator = "learned"`` puts the learned policy under an explorer that walks with the
    VPT-Nav stand-in, with ``navigator_weights`` in place of the shipped ones if given (the
    explorers that walk otherwise ignore both)."""
    kind, low, description = lookup(EXPLORERS, name, "explorer")
    check_name(navigator, AGENT_NAVIGATORS, "navigator")
    navigator_weights, weights_sha256 = navigator_weights_file(navigator_weights, navigator)
    if low == "depth" and navigator == "learned" and kind != "go-explore":
        low, description = "learned", f"{description}, learned navigator"
    if low != "learned":
        navigator_weights = weights_sha256 = None
    elif navigator_weights is not None:
        description = f"{description} (weights {navigator_weights})"
    return ExplorerAgentConfig(
        name, description, explorer_config(kind, low, patch_size),
        data=data_digests(navigator_data(low, trained=navigator_weights is not None)),
        navigator_weights=navigator_weights, navigator_weights_sha256=weights_sha256)


NAVIGATOR_DESCRIPTIONS = {
    "depth": "The VPT-Nav stand-in: depth-aware planning, terrain skills",
    "straight": "The paper's heuristic: turn to the goal and walk",
    "learned": "VPT-Nav's recipe: a goal-conditioned policy over RGB frames",
}
"""What each navigator of :data:`NAVIGATORS` is."""


def navigator_agent_config(name: str, *, success_radius: float = 3.0,
                           weights: str | None = None) -> NavigatorAgentConfig:
    """The tree of the navigator called ``name`` (:data:`NAVIGATORS`); ``weights``: a learned
    navigator's weights file in place of the shipped one."""
    lookup(NAVIGATORS, name, "navigator")
    config = NavigatorConfig(success_radius=success_radius)
    if weights is None:
        return NavigatorAgentConfig(name, NAVIGATOR_DESCRIPTIONS[name], config,
                                    data=data_digests(navigator_data(name)))
    trained = load_navigator_weights(weights)
    settings = dict(trained.info.get("training", {}))
    training = (trained.architecture.conditioning, str(settings.get("finetune")),
                float(settings.get("kl", math.nan)))
    return NavigatorAgentConfig(name, f"{NAVIGATOR_DESCRIPTIONS[name]} ({weights})", config,
                                weights=str(weights), weights_sha256=trained.sha256,
                                training=training)


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
    policy = make_instruction_policy(config.instruction_policy, config.skills,
                                     config.instruction)
    if config.memory is None:
        return Steve1(policy, name=config.name,
                      wanderer=None if config.instruction_policy == "scripted"
                      else WanderExplorer())
    kind, expected = config.encoder.kind, config.encoder.weights_sha256
    if expected is not None and expected != encoder_weights(kind):
        raise ValueError(f"the configuration names {kind} encoder weights {expected}, but the "
                         f"installed ones are {encoder_weights(kind)}")
    encoder = make_encoder(kind)
    memory = memory_variant(config.memory.kind).build(config.memory.capacity, dim=encoder.dim,
                                                      config=config.memory.config)
    weights = trained_navigator(config.navigator_weights, config.navigator_weights_sha256)
    return MrSteve(
        memory=memory,
        encoder=encoder,
        explorer=build_explorer(config.explorer, memory, config.navigator, weights),
        navigator=make_navigator(config.navigator_kind, config.navigator,
                                 weights if config.navigator_kind == "learned" else None),
        policy=policy,
        config=config.mode_selector,
        name=config.name,
    )


@build_agent.register
def _(config: ExplorerAgentConfig) -> Agent:
    check_data(config.data)
    weights = trained_navigator(config.navigator_weights, config.navigator_weights_sha256)
    return ExplorerAgent(build_explorer(config.explorer, navigator=config.navigator,
                                        weights=weights), name=config.name)


@build_agent.register
def _(config: NavigatorAgentConfig) -> Agent:
    check_data(config.data)
    weights = trained_navigator(config.weights, config.weights_sha256)
    return NavigatorAgent(make_navigator(config.name, config.navigator, weights), name=config.name)


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
                   navigator: NavigatorConfig | None = None,
                   weights: NavigatorWeights | None = None):
    """The explorer of ``config`` (``memory``: the event source of task-conditioned goals;
    ``weights``: its learned navigator's, default the shipped ones)."""
    if config.kind == "go-explore":
        return WanderExplorer(config.wander)
    low = make_navigator(config.navigator, navigator,
                         weights if config.navigator == "learned" else None)
    if config.kind == "plan4mc":
        return HierarchicalExplorer(DirectionGoalSelector(config.direction), low)
    if config.kind == "task-conditioned":
        if memory is None:
            raise ValueError("task-conditioned exploration reads the agent's memory")
        selector = TaskConditionedGoalSelector(memory, config.goals, config.visitation)
    else:
        selector = CountBasedGoalSelector(config.goals, config.visitation)
    return HierarchicalExplorer(selector, low)


def make_instruction_policy(kind: str, skills: SkillConfig | None = None,
                            config: InstructionPolicyConfig | None = None):
    """The instruction policy of :data:`INSTRUCTION_POLICIES` by name: the scripted skills
    (``skills``: their settings) or the learned policy with the shipped weights, its prompts
    embedded by the shipped pixel encoder's text tower (``config``: its run-time settings)."""
    check_name(kind, INSTRUCTION_POLICIES, "instruction policy")
    if kind == "scripted":
        return ScriptedSkills(skills)
    from mrsteve.perception.pixels import PixelEncoder, load_shipped_weights

    text = PixelEncoder(load_shipped_weights())
    return LearnedSkills(text.embed_words, text.weights.sha256, config)


def make_agent(
    name: str,
    *,
    patch_size: float = 15.0,
    capacity: int | None = None,
    config: ModeSelectorConfig | AgentConfig | None = None,
    encoder: str = "semantic",
    navigator: str = "depth",
    navigator_weights: str | None = None,
    instruction_policy: str = "scripted",
) -> Agent:
    """The agent called ``name`` (see :func:`agent_config`). ``config`` is the mode selector's
    configuration, or a whole :class:`AgentConfig` tree (``name`` wins; ``encoder`` and
    ``navigator`` are then the tree's); the built agent keeps its tree as
    ``agent.config_tree``."""
    if isinstance(config, AgentConfig):
        tree = replace(config, name=name)
    else:
        tree = agent_config(name, patch_size=patch_size, capacity=capacity, mode_selector=config,
                            encoder=encoder, navigator=navigator,
                            navigator_weights=navigator_weights,
                            instruction_policy=instruction_policy)
    agent = build_agent(tree)
    agent.config_tree = tree
    return agent
