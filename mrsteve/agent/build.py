"""Building an agent from its configuration tree: :func:`build_agent` (any tree, refused if its
data digests are not those of the installed files), :func:`build_explorer`, and
:func:`make_agent` (a named agent over the default or given parts). The weights a tree's
learned parts run with are read from the paths it records, checked against its hashes, once per
process; so are the released weights files its parts of :mod:`mrsteve.minecraft` run with.
"""

from __future__ import annotations

from dataclasses import replace
from functools import singledispatch

from mrsteve.agent.baselines import Steve1
from mrsteve.agent.config import (
    AgentConfig,
    AgentTree,
    DataDigests,
    ExplorerAgentConfig,
    ExplorerConfig,
    HierarchicalAgentConfig,
    NavigatorAgentConfig,
)
from mrsteve.agent.hierarchical import HierarchicalAgent
from mrsteve.agent.mrsteve import ModeSelectorConfig, MrSteve
from mrsteve.agent.parts import DEFAULT_PARTS, WeightsPaths, _files_of
from mrsteve.agent.planners import make_planner
from mrsteve.agent.registry import instruction_policy_spec, make_instruction_policy
from mrsteve.agent.standalone import ExplorerAgent, NavigatorAgent
from mrsteve.agent.trees import agent_config, check_data
from mrsteve.control.navigation import NavigatorConfig
from mrsteve.control.registry import explorer_spec, make_navigator, navigator_spec
from mrsteve.control.skills import GoalConditionedPolicy, InstructionPolicy
from mrsteve.digests import WeightsFile
from mrsteve.memory import Memory, memory_variant
from mrsteve.nn import Weights
from mrsteve.perception import encoder_weights, make_encoder
from mrsteve.perception.registry import encoder_spec
from mrsteve.protocols import Agent


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
    instruction_weights: str | None = None,
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
                            instruction_policy=instruction_policy,
                            instruction_weights=instruction_weights, mode_selector=config,
                            weights_files=weights_files)
    agent = build_agent(tree)
    agent.config_tree = tree
    return agent
