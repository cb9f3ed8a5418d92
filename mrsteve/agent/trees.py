"""The configuration trees of agents (:mod:`mrsteve.agent.config`), made from the registries'
entries: :func:`agent_config` (MrSteve, its variants, STEVE-1), :func:`explorer_agent_config`
(an explorer alone, Table 1), :func:`navigator_agent_config` (a navigator alone) and
:func:`hierarchical_agent_config` (a planner over an agent, the crafting tasks). A tree holds
each part's whole configuration and the digests of the data files and weights it loads;
:func:`check_data` refuses one made for other files than those installed.
"""

from __future__ import annotations

import math
from dataclasses import replace
from pathlib import Path
from typing import Any

from mrsteve.agent.config import (
    AgentConfig,
    DataDigests,
    EncoderConfig,
    ExplorerAgentConfig,
    ExplorerConfig,
    HierarchicalAgentConfig,
    MemoryPart,
    NavigatorAgentConfig,
)
from mrsteve.agent.hierarchical import MineInstruction
from mrsteve.agent.mrsteve import ModeSelectorConfig
from mrsteve.agent.parts import (
    DEFAULT_PARTS,
    WeightsPaths,
    instruction_weights_file,
    navigator_weights_file,
    part_names,
    released_files,
)
from mrsteve.agent.planners import PlannerConfig
from mrsteve.agent.registry import AGENTS, EXPLORERS, instruction_policy_spec
from mrsteve.control.direction_policy import DirectionWeights
from mrsteve.control.goals import DirectionConfig, ExplorationConfig
from mrsteve.control.instruction import SHIPPED_INSTRUCTION_POLICY, InstructionPolicyConfig
from mrsteve.control.navigation import NavigatorConfig
from mrsteve.control.registry import (
    AGENT_NAVIGATORS,
    LEARNED_NAVIGATORS,
    explorer_spec,
    learned_navigator,
    navigator_data,
    navigator_spec,
)
from mrsteve.control.visitation import VisitationConfig
from mrsteve.digests import data_digest, data_digests
from mrsteve.memory import memory_variant
from mrsteve.naming import check_name
from mrsteve.perception import encoder_data, encoder_thresholds, encoder_weights
from mrsteve.perception.registry import encoder_spec

RECIPE_DATA = ("world/data/crafting.toml",)
"""The crafting recipes a planner reads (Minecraft's public rules, as a recipe book)."""


def memory_part(kind: str, *, capacity: int | None = None, encoder: str = "semantic",
                **hyperparameters: Any) -> MemoryPart:
    """The memory node of a tree: variant ``kind`` with ``hyperparameters`` over the paper's
    defaults, the event thresholds those the encoder was calibrated with."""
    if memory_variant(kind).has_events:
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


def explorer_config(kind: str, navigator: str, patch_size: float,
                    painted_from: str = "memory",
                    direction_weights: tuple[str | None, str | None] = (None, None),
                    frontier: str = "nearest") -> ExplorerConfig:
    """An explorer whose goal patch side is G = ``patch_size`` (a task-level setting, as in the
    paper); the Plan4MC-style explorer's grid cells are 0.6 G (its 11 x 11 grid over a 100 x 100
    map); ``painted_from``: what an agent with a memory paints its visitation map with
    (:attr:`~mrsteve.control.visitation.VisitationConfig.painted_from`); ``direction_weights``:
    the path and hash of a learned direction picker's weights file (:func:`direction_weights_file`)
    in place of the shipped one; ``frontier``: how the count-based selectors pick among unpainted
    patches (:attr:`~mrsteve.control.goals.ExplorationConfig.frontier`)."""
    path, sha256 = direction_weights
    return ExplorerConfig(kind=kind, navigator=navigator,
                          goals=ExplorationConfig(patch_size=patch_size, frontier=frontier),
                          visitation=VisitationConfig(painted_from=painted_from),
                          direction=DirectionConfig(cell_size=0.6 * patch_size, weights=path,
                                                    weights_sha256=sha256))


def direction_weights_file(path: str | None, explorer: str) -> tuple[str | None, str | None]:
    """The absolute path and the hash of the direction-policy weights file ``path`` (``(None,
    None)``: the shipped one, or an explorer that loads none, which ignores the file)."""
    if path is None or explorer_spec(explorer).weights is None:
        return None, None
    return str(Path(path).resolve()), DirectionWeights.read(path).sha256


def agent_config(
    name: str,
    *,
    patch_size: float = 15.0,
    capacity: int | None = None,
    parts: str = DEFAULT_PARTS,
    encoder: str | None = None,
    navigator: str | None = None,
    navigator_weights: str | None = None,
    instruction_policy: str | None = None,
    instruction_weights: str | None = None,
    mode_selector: ModeSelectorConfig | None = None,
    weights_files: WeightsPaths | None = None,
    explorer_map: str = "memory",
) -> AgentConfig:
    """The configuration tree of the agent called ``name`` (:data:`AGENTS`). ``patch_size`` is
    the exploration goal patch side G, a task-level setting as in the paper (15 on 100 x 100
    maps, 30 on 200 x 200: :func:`mrsteve.tasks.catalog.exploration_patch_size`); the agent is
    told nothing else of the world. ``capacity``: its memory's; ``parts``: the parts of
    :data:`PARTS` (the learned ones by default, as ``mrsteve eval``), which a part given on its
    own overrides: ``encoder``, one of :data:`ENCODERS`; ``navigator``, one of
    :data:`AGENT_NAVIGATORS` (the VPT-Nav stand-in ``depth``, the learned policy ``learned``),
    for the Execute mode's travel and the explorer (an explorer that keeps a navigator of its
    own, Plan4MC's straight walking, keeps it);
    ``navigator_weights``: a weights file the learned policy runs with in place of the shipped
    one; ``instruction_policy``: one of :data:`INSTRUCTION_POLICIES` (MrSteve's Execute mode and
    STEVE-1 alike); ``instruction_weights``: a weights file the learned instruction policy runs
    with in place of the shipped one; ``mode_selector``: MrSteve's mode selector; ``weights_files``: the released
    weights files the parts of :mod:`mrsteve.minecraft` among these run with, by kind
    (:func:`released_files`); ``explorer_map``: what its count-based explorer's visitation map
    is painted with (``memory``, the paper's, or ``steps``)."""
    spec = AGENTS.spec(name)
    chosen = part_names(parts, encoder=encoder, navigator=navigator,
                        instruction_policy=instruction_policy)
    encoder, navigator = chosen["encoder"], chosen["navigator"]
    instruction_policy = chosen["instruction_policy"]
    check_name(navigator, AGENT_NAVIGATORS, "navigator")
    policy = instruction_policy_spec(instruction_policy)
    explorer_navigator = explorer_spec(spec.explorer).navigator or navigator
    parts = [(f"the {instruction_policy} instruction policy", policy)]
    if spec.memory is not None:  # STEVE-1 alone has no encoder and no navigator
        parts += [(f"the {encoder} encoder", encoder_spec(encoder)),
                  *((f"the {kind} navigator", navigator_spec(kind))
                    for kind in (navigator, explorer_navigator))]
    files = released_files(parts, weights_files)
    navigator_weights, weights_sha256 = navigator_weights_file(navigator_weights, navigator)
    if spec.memory is None:
        navigator_weights = weights_sha256 = None  # STEVE-1 has no navigator
    explorer = explorer_config(spec.explorer, explorer_navigator, patch_size, explorer_map)
    memory = None if spec.memory is None else memory_part(spec.memory, capacity=capacity,
                                                         encoder=encoder)
    instruction_weights, instruction_sha256 = instruction_weights_file(instruction_weights,
                                                                       instruction_policy)
    data = policy.data if instruction_weights is None else tuple(
        path for path in policy.data if path != SHIPPED_INSTRUCTION_POLICY)
    if memory is not None:
        data = (*data, *encoder_data(encoder),
                *navigator_data(navigator, explorer_navigator,
                                trained=navigator_weights is not None),
                *explorer_spec(spec.explorer).data_files())
    trained = [f"{what} weights {path}" for what, path in (
        ("navigator", navigator_weights), ("instruction-policy", instruction_weights)) if path]
    return AgentConfig(
        name=name,
        description=spec.description + (f" ({', '.join(trained)})" if trained else ""),
        memory=memory,
        encoder=EncoderConfig(encoder, encoder_weights(encoder)),
        explorer=explorer,
        navigator_kind=navigator,
        navigator_weights=navigator_weights,
        navigator_weights_sha256=weights_sha256,
        instruction_policy=instruction_policy,
        instruction=InstructionPolicyConfig(weights=instruction_weights,
                                            weights_sha256=instruction_sha256),
        mode_selector=mode_selector or ModeSelectorConfig(),
        data=data_digests(tuple(dict.fromkeys(data))),
        weights_files=files,
    )


def explorer_agent_config(name: str, *, patch_size: float = 15.0, navigator: str = "depth",
                          navigator_weights: str | None = None,
                          direction_weights: str | None = None,
                          instruction_policy: str = "scripted",
                          weights_files: WeightsPaths | None = None,
                          frontier: str = "nearest") -> ExplorerAgentConfig:
    """The tree of the Exploration experiment's explorer called ``name`` (:data:`EXPLORERS`);
    another ``navigator`` of :data:`AGENT_NAVIGATORS` (the learned policy) takes the place of the
    VPT-Nav stand-in under an explorer that walks with it, with ``navigator_weights`` in place
    of the shipped ones if given, or the released weights file of ``weights_files`` it runs on
    (VPT-Nav's; the explorers that walk otherwise ignore them); ``direction_weights``: a weights
    file Plan4MC's learned direction picker (``rnn``) runs with in place of the shipped one (the
    others ignore it); ``frontier``: how a count-based explorer picks among unpainted patches
    (the others ignore it). An instructed explorer (STEVE-1 told to "go explore") is
    ``instruction_policy`` of :data:`INSTRUCTION_POLICIES`, and records ``navigator`` as the
    parts the run was given (it walks with none)."""
    spec = EXPLORERS.spec(name)
    check_name(navigator, AGENT_NAVIGATORS, "navigator")
    kind = explorer_spec(spec.explorer)
    navigator_weights, weights_sha256 = navigator_weights_file(navigator_weights, navigator)
    low, description = spec.navigator or navigator, spec.description
    if kind.walks:
        description = f"{description}, {low} navigator"
    if low != navigator or low not in LEARNED_NAVIGATORS or not kind.walks:
        navigator_weights = weights_sha256 = None  # weights for the run's navigator only
    elif navigator_weights is not None:
        description = f"{description} (weights {navigator_weights})"
    parts = [(f"the {low} navigator", navigator_spec(low))] if kind.walks else []
    direction = direction_weights_file(direction_weights, spec.explorer)
    data = (*(navigator_data(low, trained=navigator_weights is not None) if kind.walks else ()),
            *kind.data_files(trained=direction[0] is not None))
    if direction[0] is not None:
        description = f"{description} (direction weights {direction_weights})"
    policy = None
    if kind.instructed:
        policy = instruction_policy
        parts.append((f"the {policy} instruction policy", instruction_policy_spec(policy)))
        data = (*data, *instruction_policy_spec(policy).data)
        description = f"{description} ({policy} instruction policy)"
    return ExplorerAgentConfig(
        name, description, explorer=explorer_config(spec.explorer, low, patch_size,
                                                    direction_weights=direction,
                                                    frontier=frontier),
        data=data_digests(tuple(dict.fromkeys(data))),
        navigator_weights=navigator_weights, navigator_weights_sha256=weights_sha256,
        instruction_policy=policy, weights_files=released_files(parts, weights_files))


def navigator_agent_config(name: str, *, success_radius: float = 3.0,
                           weights: str | None = None) -> NavigatorAgentConfig:
    """The tree of the navigator called ``name`` (:data:`NAVIGATORS`); ``weights``: a learned
    navigator's weights file in place of the shipped one."""
    spec = navigator_spec(name)
    config = NavigatorConfig(success_radius=success_radius)
    if weights is None:
        return NavigatorAgentConfig(name, spec.description, config,
                                    data=data_digests(spec.data_files()))
    trained = learned_navigator(name).read_weights(weights)
    settings = dict(trained.info.get("training", {}))
    training = (trained.architecture.conditioning, str(settings.get("finetune")),
                float(settings.get("kl", math.nan)))
    return NavigatorAgentConfig(name, f"{spec.description} ({weights})", config,
                                data=data_digests(spec.data_files(trained=True)),
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
    return HierarchicalAgentConfig(name, description, planner=planner, mining=tuple(mining),
                                   data=(*controller.data, *data_digests(RECIPE_DATA)),
                                   controller=controller)


def check_data(data: DataDigests) -> None:
    """Raise ``ValueError`` if a tree's data digests are not those of the installed files (the
    tree was made for other thresholds, weights or rules)."""
    stale = [path for path, sha in data if data_digest(path) != sha]
    if stale:
        raise ValueError(f"the configuration was made for other versions of {', '.join(stale)} "
                         "than the installed ones; rebuild it (results of other data files are "
                         "not comparable)")


