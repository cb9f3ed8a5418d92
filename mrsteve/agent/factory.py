"""Every agent of the paper by name, their configuration trees, and the one function that builds
an agent from a tree: the names other code imports, gathered from the modules of each idea.

The agents and their parts are named in their registries (:mod:`mrsteve.agent.registry`: agents,
instruction policies and the Exploration experiment's explorers; :mod:`mrsteve.control.registry`:
navigators and explorers; :mod:`mrsteve.perception.registry`: encoders;
:mod:`mrsteve.memory.variants`: memories). :mod:`mrsteve.agent.parts` says which parts an agent
is made of (``--parts`` and each part's option), :mod:`mrsteve.agent.trees` makes the trees
(:mod:`mrsteve.agent.config`) from the registries' entries, and :mod:`mrsteve.agent.build`
builds an agent from a tree.
"""

from __future__ import annotations

from mrsteve.agent.build import build_agent, build_explorer, make_agent, recorded_weights
from mrsteve.agent.parts import (
    DEFAULT_PARTS,
    PARTS,
    AgentParts,
    navigator_weights_file,
    part_names,
    released_files,
)
from mrsteve.agent.registry import (
    AGENTS,
    EXPLORERS,
    INSTRUCTION_POLICIES,
    AgentSpec,
    ExplorerAgentSpec,
    make_instruction_policy,
)
from mrsteve.agent.trees import (
    agent_config,
    check_data,
    explorer_agent_config,
    explorer_config,
    hierarchical_agent_config,
    memory_part,
    navigator_agent_config,
    with_memory,
)
from mrsteve.control.registry import (
    AGENT_NAVIGATORS,
    EXPLORER_KINDS,
    NAVIGATORS,
    make_navigator,
    navigator_data,
)
from mrsteve.perception import ENCODERS

__all__ = [
    "AGENTS",
    "AGENT_NAVIGATORS",
    "DEFAULT_PARTS",
    "ENCODERS",
    "EXPLORERS",
    "EXPLORER_KINDS",
    "INSTRUCTION_POLICIES",
    "NAVIGATORS",
    "PARTS",
    "AgentParts",
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
    "part_names",
    "recorded_weights",
    "released_files",
    "with_memory",
]
