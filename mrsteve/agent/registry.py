"""The agents, the instruction policies and the Exploration experiment's explorers by name: the one
registry of each that the agent's tree (:mod:`mrsteve.agent.config`), its factory
(:mod:`mrsteve.agent.factory`) and the command line read.

The names of the agents follow the paper's figures: ``mrsteve`` (Place Event Memory),
``center-embed`` (Place Event Memory keeping only event centres), ``pm`` / ``em`` / ``fm``
(MrSteve-PM / -EM / -FM: Place, Event, FIFO Memory), ``pmc-fm`` (PMC-MrSteve-FM: FIFO Memory with
Plan4MC's explorer) and ``steve1`` (the instruction policy alone); ``mrsteve-tc`` is MrSteve with
the task-conditioned exploration of the paper's appendix. The instruction policies (pi_Inst,
STEVE-1's role) are ``scripted``, ``learned`` and ``steve1`` (STEVE-1 itself with its prior, of
released weights files: :mod:`mrsteve.minecraft`, the ``minecraft`` extra). The Exploration experiment runs explorers alone
(:data:`EXPLORERS`, the columns of Table 1).

The navigators and explorers the agents are made of have their registries in
:mod:`mrsteve.control.registry`, the encoders in :mod:`mrsteve.perception.registry`, the memories
in :mod:`mrsteve.memory.variants`. Each entry holds the name, what builds the part, the data files
it loads (paths below ``mrsteve/``) and its one-line description, so that a new part is one entry;
a builder may be named ``"package.module:function"``, imported when the part is chosen
(:func:`~mrsteve.naming.entry_point`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from mrsteve.control.instruction import (
    SHIPPED_INSTRUCTION_POLICY,
    InstructionPolicyConfig,
    InstructionWeights,
    LearnedSkills,
)
from mrsteve.control.skills import InstructionPolicy, ScriptedSkills, SkillConfig
from mrsteve.digests import PACKAGE_ROOT, WeightsFile, check_files
from mrsteve.naming import Selection, entry_point, lookup
from mrsteve.perception import encoder_data, make_encoder

SKILL_DATA = ("control/data/skills.toml",)
"""The data files the scripted instruction policy loads (its skill book)."""

TEXT_ENCODER = "pixels"
"""The encoder whose text tower gives the learned instruction policy its goal (the one its
weights were trained with)."""


@dataclass(frozen=True)
class InstructionPolicySpec:
    """One instruction policy: its name, what builds it and the data files it loads."""

    name: str
    description: str
    build: Callable[..., InstructionPolicy] | str
    """``build(skills, config, *files)``: the policy (``skills``: the scripted skills' settings;
    ``config``: a learned policy's run-time settings; ``files``: the weights files of
    :attr:`files`), or the ``"module:function"`` that is it."""
    data: tuple[str, ...]
    files: tuple[str, ...] = ()
    """The kinds of the weights files it is built from that the package does not ship (a
    released checkpoint each, given on the command line)."""
    extra: str | None = None
    """The package extra that installs what it needs beyond the core (``None``: nothing)."""

    def make(self, skills: SkillConfig | None = None,
             config: InstructionPolicyConfig | None = None,
             files: tuple[WeightsFile, ...] = ()) -> InstructionPolicy:
        """A new policy (``files``: the weights files of :attr:`files`, in their order)."""
        what = f"the {self.name} instruction policy"
        check_files(files, self.files, what)
        return entry_point(self.build, what, self.extra)(skills, config, *files)


def _scripted(skills: SkillConfig | None, config: InstructionPolicyConfig | None):
    return ScriptedSkills(skills)


def _learned(skills: SkillConfig | None, config: InstructionPolicyConfig | None):
    text = make_encoder(TEXT_ENCODER)
    weights = InstructionWeights.read(PACKAGE_ROOT / SHIPPED_INSTRUCTION_POLICY)
    return LearnedSkills(text.embed_words, text.weights.sha256, config, weights=weights)


INSTRUCTION_POLICIES: dict[str, InstructionPolicySpec] = {
    spec.name: spec
    for spec in (
        InstructionPolicySpec("scripted", "the stand-in over depth and semantic frames",
                              _scripted, SKILL_DATA),
        InstructionPolicySpec("learned", "STEVE-1's recipe over RGB frames", _learned,
                              (*SKILL_DATA, SHIPPED_INSTRUCTION_POLICY,
                               *encoder_data(TEXT_ENCODER))),
        InstructionPolicySpec("steve1", "STEVE-1 and its prior, from released weights files",
                              "mrsteve.minecraft.parts:steve1_policy", SKILL_DATA,
                              files=("steve1", "steve1-prior", "mineclip"),
                              extra="minecraft"),
    )
}
"""pi_Inst by name: ``scripted`` (:class:`~mrsteve.control.skills.ScriptedSkills`),
``learned`` (:class:`~mrsteve.control.instruction.LearnedSkills` with the shipped weights, its
prompts embedded by the shipped pixel encoder's text tower) or ``steve1`` (STEVE-1 and its prior
over MineCLIP's text tower, of released weights files)."""


BUILT_IN_INSTRUCTION_POLICIES: Selection[InstructionPolicySpec] = Selection(
    INSTRUCTION_POLICIES, lambda spec: not spec.files)
"""The instruction policies the package builds without a released weights file (the Instruction
experiment's rows)."""


def instruction_policy_spec(kind: str) -> InstructionPolicySpec:
    """The entry of the instruction policy called ``kind`` (an unknown name lists the known
    ones)."""
    return lookup(INSTRUCTION_POLICIES, kind, "instruction policy")


def make_instruction_policy(kind: str, skills: SkillConfig | None = None,
                            config: InstructionPolicyConfig | None = None,
                            files: tuple[WeightsFile, ...] = ()) -> InstructionPolicy:
    """The instruction policy of :data:`INSTRUCTION_POLICIES` by name (``skills``: the scripted
    skills' settings; ``config``: the learned policy's run-time settings; ``files``: the
    released weights files its entry is built from)."""
    return instruction_policy_spec(kind).make(skills, config, files)


@dataclass(frozen=True)
class AgentSpec:
    """How one named agent is assembled."""

    name: str
    description: str
    """What the agent is, in the paper's words (its tree's description)."""
    memory: str | None
    """A variant of :data:`mrsteve.memory.MEMORY_VARIANTS`, or ``None`` (no memory: the
    instruction policy alone)."""
    explorer: str = "count-based"
    """An explorer of :data:`mrsteve.control.registry.EXPLORER_KINDS`."""


AGENTS: dict[str, AgentSpec] = {
    spec.name: spec
    for spec in (
        AgentSpec("mrsteve", "MrSteve: Place Event Memory, count-based exploration",
                  "place-event"),
        AgentSpec("center-embed", "MrSteve (Center Embed): event centres only", "center-embed"),
        AgentSpec("pm", "MrSteve-PM: Place Memory", "place"),
        AgentSpec("em", "MrSteve-EM: Event Memory", "event"),
        AgentSpec("fm", "MrSteve-FM: FIFO Memory", "fifo"),
        AgentSpec("pmc-fm", "PMC-MrSteve-FM: FIFO Memory, Plan4MC-style exploration", "fifo",
                  "plan4mc"),
        AgentSpec("mrsteve-tc", "MrSteve with task-conditioned exploration (appendix)",
                  "place-event", "task-conditioned"),
        AgentSpec("steve1", "STEVE-1: the instruction policy alone, no memory", None),
    )
}
"""Every agent of the paper by name (module docstring)."""


@dataclass(frozen=True)
class ExplorerAgentSpec:
    """One of the Exploration experiment's agents: an explorer over a navigator, run alone."""

    name: str
    explorer: str
    """An explorer of :data:`mrsteve.control.registry.EXPLORER_KINDS`."""
    navigator: str
    """A navigator of :data:`mrsteve.control.registry.NAVIGATORS`."""
    description: str


EXPLORERS: dict[str, ExplorerAgentSpec] = {
    spec.name: spec
    for spec in (
        ExplorerAgentSpec("count-based", "count-based", "depth",
                          "Count-based goals over the VPT-Nav stand-in (MrSteve)"),
        ExplorerAgentSpec("count-based-straight", "count-based", "straight",
                          "Count-based goals over a navigator without terrain skills"),
        ExplorerAgentSpec("plan4mc", "plan4mc", "depth",
                          "Plan4MC's direction picking over the VPT-Nav stand-in"),
        ExplorerAgentSpec("plan4mc-straight", "plan4mc", "straight",
                          "Plan4MC: direction picking, straight walking"),
        ExplorerAgentSpec("go-explore", "go-explore", "depth", "STEVE-1 told to 'go explore'"),
    )
}
"""The Exploration experiment's agents by name."""
