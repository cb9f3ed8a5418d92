"""Every agent of the paper by name, their configuration trees, and the one function that builds
an agent from a tree.

The agents and their parts are named in their registries (:mod:`mrsteve.agent.registry`: agents,
instruction policies and the Exploration experiment's explorers; :mod:`mrsteve.control.registry`:
navigators and explorers; :mod:`mrsteve.perception.registry`: encoders;
:mod:`mrsteve.memory.variants`: memories), re-exported here. :func:`agent_config`,
:func:`explorer_agent_config` and :func:`navigator_agent_config` make the trees
(:mod:`mrsteve.agent.config`) from those entries; :func:`build_agent` builds any tree, and refuses
one whose data digests are not those of the installed data files. The weights a tree's learned
parts run with are read from the paths it records, checked against its hashes, once per process;
so are the released weights files its parts of :mod:`mrsteve.minecraft` run with
(:func:`released_files`).
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import replace
from functools import singledispatch
from pathlib import Path
from types import MappingProxyType
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
from mrsteve.agent.registry import (
    AGENTS,
    EXPLORERS,
    INSTRUCTION_POLICIES,
    AgentSpec,
    ExplorerAgentSpec,
    instruction_policy_spec,
    make_instruction_policy,
)
from mrsteve.agent.standalone import ExplorerAgent, NavigatorAgent
from mrsteve.control.goals import DirectionConfig, ExplorationConfig
from mrsteve.control.navigation import NavigatorConfig
from mrsteve.control.registry import (
    AGENT_NAVIGATORS,
    EXPLORER_KINDS,
    LEARNED_NAVIGATORS,
    NAVIGATORS,
    explorer_spec,
    learned_navigator,
    make_navigator,
    navigator_data,
    navigator_spec,
)
from mrsteve.control.skills import GoalConditionedPolicy, InstructionPolicy
from mrsteve.control.visitation import VisitationConfig
from mrsteve.digests import WeightsFile, data_digest, data_digests
from mrsteve.memory import Memory, memory_variant
from mrsteve.naming import check_name, entry_point, lookup
from mrsteve.nn import Weights
from mrsteve.perception import (
    ENCODERS,
    encoder_data,
    encoder_thresholds,
    encoder_weights,
    make_encoder,
)
from mrsteve.perception.registry import encoder_spec
from mrsteve.protocols import Agent

__all__ = [
    "AGENTS",
    "AGENT_NAVIGATORS",
    "ENCODERS",
    "EXPLORERS",
    "EXPLORER_KINDS",
    "INSTRUCTION_POLICIES",
    "NAVIGATORS",
    "AgentSpec",
    "ExplorerAgentSpec",
    "agent_config",
    "build_agent",
    "build_explorer",
    "check_data",
    "explorer_agent_config",
    "explorer_config",
    "hierarchical_agent_config",
    "make_agent",
    "make_instruction_policy",
    "make_navigator",
    "memory_part",
    "navigator_agent_config",
    "navigator_data",
    "navigator_weights_file",
    "recorded_weights",
    "released_files",
    "with_memory",
]

RECIPE_DATA = ("world/data/crafting.toml",)
"""The crafting recipes a planner reads (Minecraft's public rules, as a recipe book)."""


def navigator_weights_file(path: str | None, navigator: str) -> tuple[str | None, str | None]:
    """The absolute path and the hash of the weights file ``path`` a tree's learned navigator
    runs with (``(None, None)``: the shipped one), so that any worker finds it and a file changed
    later is told apart; a bad file, or weights for an agent whose ``navigator`` is not a
    learned one, raise ``ValueError``."""
    if path is None:
        return None, None
    spec = navigator_spec(navigator)
    if not spec.learned:
        learned = " or ".join(repr(name) for name in LEARNED_NAVIGATORS)
        raise ValueError(f"navigator weights {path!r} are for the learned navigator; give "
                         f"navigator {learned}, not {navigator!r}")
    return str(Path(path).resolve()), spec.read_weights(path).sha256


CHECKED_FILE = "mrsteve.minecraft.parts:checked_file"
"""What checks a released weights file and records it in a tree
(:class:`~mrsteve.digests.WeightsFile`), imported only when a part needs one."""

WeightsPaths = Mapping[str, "str | None"]
"""The released weights files given for the parts that take them: path by kind (``mineclip``,
``vpt-nav``, ``steve1``, ``steve1-prior``; ``None``: not given)."""


def released_files(parts: Iterable[tuple[str, Any]], paths: WeightsPaths | None
                   ) -> tuple[WeightsFile, ...]:
    """The tree's records of the released weights files the ``parts`` (``(what, registry
    entry)`` pairs) are built from, each checked key by key, sorted by kind. A part whose
    dependencies are not installed, a file not given, or a file that is not the checkpoint its
    kind names is a one-line ``ValueError``; files no part takes are not read."""
    paths = paths or {}
    files: dict[str, WeightsFile] = {}
    for what, spec in parts:
        if not spec.files:
            continue
        entry_point(spec.build, what, spec.extra)  # its dependencies, else how to install them
        check = entry_point(CHECKED_FILE, what, spec.extra)
        for kind in spec.files:
            if kind in files:
                continue
            if paths.get(kind) is None:
                raise ValueError(f"{what} runs on a released {kind} weights file; none is given")
            files[kind] = check(kind, paths[kind])
    return tuple(files[kind] for kind in sorted(files))


def _files_of(spec: Any, what: str, files: tuple[WeightsFile, ...]) -> tuple[WeightsFile, ...]:
    """The weights files of a tree that a part's entry (``spec``) is built from, in its order."""
    recorded = {file.kind: file for file in files}
    missing = [kind for kind in spec.files if kind not in recorded]
    if missing:
        raise ValueError(f"the configuration names no {', '.join(missing)} weights file for "
                         f"{what}; rebuild it")
    return tuple(recorded[kind] for kind in spec.files)


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
                    painted_from: str = "memory") -> ExplorerConfig:
    """An explorer whose goal patch side is G = ``patch_size`` (a task-level setting, as in the
    paper); the Plan4MC-style explorer's grid cells are 0.6 G (its 11 x 11 grid over a 100 x 100
    map); ``painted_from``: what an agent with a memory paints its visitation map with
    (:attr:`~mrsteve.control.visitation.VisitationConfig.painted_from`)."""
    return ExplorerConfig(kind=kind, navigator=navigator,
                          goals=ExplorationConfig(patch_size=patch_size),
                          visitation=VisitationConfig(painted_from=painted_from),
                          direction=DirectionConfig(cell_size=0.6 * patch_size))


PARTS: Mapping[str, Mapping[str, str]] = MappingProxyType({
    "learned": MappingProxyType({"encoder": "pixels", "navigator": "learned",
                                 "instruction_policy": "learned"}),
    "stand-in": MappingProxyType({"encoder": "semantic", "navigator": "depth",
                                  "instruction_policy": "scripted"}),
})
"""The agent's part of each kind by ``parts`` value (``--parts`` on the command line):
``learned`` (the default, the paper's agent: MineCLIP's, VPT-Nav's and STEVE-1's roles played by
models that see the RGB frame and the pose alone) or ``stand-in`` (the embedded world's stand-ins,
which also read the renderer's depth and semantic frames). A part named on its own (``encoder=``,
``--encoder``, ...) overrides its entry."""

DEFAULT_PARTS = "learned"
"""The ``parts`` value when none is given."""


def part_names(parts: str, **given: str | None) -> dict[str, str]:
    """The part of each kind in ``given`` (``encoder=None, navigator="depth"``): as given, else
    the one ``parts`` names (:data:`PARTS`); an unknown ``parts`` is a ``ValueError`` naming the
    accepted values."""
    chosen = lookup(PARTS, parts, "parts")
    return {kind: chosen[kind] if name is None else name for kind, name in given.items()}


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
    STEVE-1 alike); ``mode_selector``: MrSteve's mode selector; ``weights_files``: the released
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
    data = policy.data if memory is None else (
        *policy.data, *encoder_data(encoder),
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
        weights_files=files,
    )


def explorer_agent_config(name: str, *, patch_size: float = 15.0, navigator: str = "depth",
                          navigator_weights: str | None = None,
                          instruction_policy: str = "scripted",
                          weights_files: WeightsPaths | None = None) -> ExplorerAgentConfig:
    """The tree of the Exploration experiment's explorer called ``name`` (:data:`EXPLORERS`);
    another ``navigator`` of :data:`AGENT_NAVIGATORS` (the learned policy) takes the place of the
    VPT-Nav stand-in under an explorer that walks with it, with ``navigator_weights`` in place
    of the shipped ones if given, or the released weights file of ``weights_files`` it runs on
    (VPT-Nav's; the explorers that walk otherwise ignore them). An instructed explorer (STEVE-1
    told to "go explore") is ``instruction_policy`` of :data:`INSTRUCTION_POLICIES`, and records
    ``navigator`` as the parts the run was given (it walks with none)."""
    spec = EXPLORERS.spec(name)
    check_name(navigator, AGENT_NAVIGATORS, "navigator")
    kind = explorer_spec(spec.explorer)
    navigator_weights, weights_sha256 = navigator_weights_file(navigator_weights, navigator)
    low, description = spec.navigator or navigator, spec.description
    if kind.walks:
        description = f"{description}, {low} navigator"
    if low not in LEARNED_NAVIGATORS or not kind.walks:
        navigator_weights = weights_sha256 = None
    elif navigator_weights is not None:
        description = f"{description} (weights {navigator_weights})"
    parts = [(f"the {low} navigator", navigator_spec(low))] if kind.walks else []
    data = navigator_data(low, trained=navigator_weights is not None) if kind.walks else ()
    policy = None
    if kind.instructed:
        policy = instruction_policy
        parts.append((f"the {policy} instruction policy", instruction_policy_spec(policy)))
        data = (*data, *instruction_policy_spec(policy).data)
        description = f"{description} ({policy} instruction policy)"
    return ExplorerAgentConfig(
        name, description, explorer_config(spec.explorer, low, patch_size),
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


def recorded_weights(kind: str, data: DataDigests, path: str | None = None,
                     sha256: str | None = None) -> Weights | None:
    """The weights the navigator ``kind`` of a tree runs with, read once per process from the
    path the tree records: the file it names (``path``), checked against the hash it recorded
    (``sha256``), or else the shipped file its data digests list (checked by :func:`check_data`);
    ``None`` for a navigator without weights."""
    spec = navigator_spec(kind)
    if not spec.learned:
        return None
    if path is not None:
        return spec.read_weights(path, sha256)
    if spec.weights not in dict(data):
        raise ValueError(f"the configuration records no weights for its {kind} navigator "
                         f"({spec.weights} is not among its data files); rebuild it")
    return spec.read_weights()


@singledispatch
def build_agent(config: AgentTree) -> Agent:
    """The agent a configuration tree describes (any :data:`~mrsteve.agent.config.AgentTree`)."""
    raise TypeError(f"not an agent configuration tree: {type(config).__name__}")


@build_agent.register
def _(config: AgentConfig) -> Agent:
    check_data(config.data)
    files = config.weights_files
    what = f"its {config.instruction_policy} instruction policy"
    policy = make_instruction_policy(
        config.instruction_policy, config.skills, config.instruction,
        _files_of(instruction_policy_spec(config.instruction_policy), what, files))
    if config.memory is None:
        visual_goals = (isinstance(policy, GoalConditionedPolicy)
                        and policy.goal_encoder == config.encoder.weights_sha256)
        return Steve1(policy, name=config.name, visual_goals=visual_goals)
    kind, expected = config.encoder.kind, config.encoder.weights_sha256
    if expected is not None and expected != encoder_weights(kind):
        raise ValueError(f"the configuration names {kind} encoder weights {expected}, but the "
                         f"installed ones are {encoder_weights(kind)}")
    encoder = make_encoder(kind, _files_of(encoder_spec(kind), f"its {kind} encoder", files))
    memory = memory_variant(config.memory.kind).build(config.memory.capacity, dim=encoder.dim,
                                                      config=config.memory.config)
    trained = config.navigator_weights, config.navigator_weights_sha256
    low, travel = config.explorer.navigator, config.navigator_kind
    return MrSteve(
        memory=memory,
        encoder=encoder,
        explorer=build_explorer(config.explorer, memory, config.navigator,
                                recorded_weights(low, config.data, *trained), files),
        navigator=make_navigator(travel, config.navigator,
                                 recorded_weights(travel, config.data, *trained),
                                 _files_of(navigator_spec(travel), f"its {travel} navigator",
                                           files)),
        policy=policy,
        config=config.mode_selector,
        name=config.name,
    )


@build_agent.register
def _(config: ExplorerAgentConfig) -> Agent:
    check_data(config.data)
    policy = None
    if config.instruction_policy is not None:
        kind = config.instruction_policy
        policy = make_instruction_policy(kind, files=_files_of(
            instruction_policy_spec(kind), f"its {kind} instruction policy",
            config.weights_files))
    walks = explorer_spec(config.explorer.kind).walks
    weights = recorded_weights(config.explorer.navigator, config.data, config.navigator_weights,
                               config.navigator_weights_sha256) if walks else None
    return ExplorerAgent(build_explorer(config.explorer, navigator=config.navigator,
                                        weights=weights, files=config.weights_files,
                                        policy=policy),
                         name=config.name)


@build_agent.register
def _(config: NavigatorAgentConfig) -> Agent:
    check_data(config.data)
    weights = recorded_weights(config.name, config.data, config.weights, config.weights_sha256)
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
                   navigator: NavigatorConfig | None = None, weights: Weights | None = None,
                   files: tuple[WeightsFile, ...] = (), policy: InstructionPolicy | None = None):
    """The explorer of ``config`` (:data:`EXPLORER_KINDS`; ``memory``: the event source of goals
    that read the agent's memory; ``weights``: its learned navigator's, default the shipped
    ones; ``files``: the tree's released weights files, its navigator's among them;
    ``policy``: the instruction policy an instructed explorer is told to "go explore")."""
    spec = explorer_spec(config.kind)
    if spec.instructed and policy is None:
        raise ValueError(f"the {config.kind} explorer is an instruction policy told to "
                         "explore: give the tree an instruction policy")
    low = None
    if spec.walks:
        kind = config.navigator
        low = make_navigator(kind, navigator, weights,
                             _files_of(navigator_spec(kind), f"its {kind} navigator", files))
    return spec.make(config, low, memory, policy)


def make_agent(
    name: str,
    *,
    patch_size: float = 15.0,
    capacity: int | None = None,
    config: ModeSelectorConfig | AgentConfig | None = None,
    parts: str = DEFAULT_PARTS,
    encoder: str | None = None,
    navigator: str | None = None,
    navigator_weights: str | None = None,
    instruction_policy: str | None = None,
    weights_files: WeightsPaths | None = None,
) -> Agent:
    """The agent called ``name`` (see :func:`agent_config`) over the parts ``parts`` names
    (:data:`PARTS`: the learned ones by default, as ``mrsteve eval``), a part given on its own
    (``encoder``, ``navigator``, ``instruction_policy``) overriding it. ``config`` is the mode
    selector's configuration, or a whole :class:`AgentConfig` tree (``name`` wins; the parts
    are then the tree's); the built agent keeps its tree as ``agent.config_tree``."""
    if isinstance(config, AgentConfig):
        tree = replace(config, name=name)
    else:
        tree = agent_config(name, patch_size=patch_size, capacity=capacity, parts=parts,
                            encoder=encoder, navigator=navigator,
                            navigator_weights=navigator_weights,
                            instruction_policy=instruction_policy, mode_selector=config,
                            weights_files=weights_files)
    agent = build_agent(tree)
    agent.config_tree = tree
    return agent
