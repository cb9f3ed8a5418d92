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
    LearnedSkills,
)
from mrsteve.control.registry import explorer_spec, navigator_spec
from mrsteve.control.skills import InstructionPolicy, ScriptedSkills, SkillConfig
from mrsteve.digests import WeightsFile, check_files
from mrsteve.memory import memory_variant
from mrsteve.naming import Selection, entry_point
from mrsteve.perception import make_encoder
from mrsteve.perception.registry import PIXEL_ENCODER_DATA
from mrsteve.registry import Registry
from mrsteve.spaces import AGENT_OBSERVATION_KEYS

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
    reads: tuple[str, ...] = AGENT_OBSERVATION_KEYS
    """The observation keys its policy reads (default: any the agent is given)."""
    check_file: Callable[[str, str], WeightsFile] | str | None = None
    """``check_file(kind, path)``: a weights file of :attr:`files` read key by key and recorded
    (:class:`~mrsteve.digests.WeightsFile`), for a part built from released files."""

    def make(self, skills: SkillConfig | None = None,
             config: InstructionPolicyConfig | None = None,
             files: tuple[WeightsFile, ...] = ()) -> InstructionPolicy:
        """A new policy (``files``: the weights files of :attr:`files`, in their order),
        checked against the InstructionPolicy protocol."""
        what = f"the {self.name} instruction policy"
        check_files(files, self.files, what)
        policy = entry_point(self.build, what, self.extra)(skills, config, *files)
        if not isinstance(policy, InstructionPolicy):
            raise ValueError(f"{what}'s builder gave a {type(policy).__name__}, which lacks the "
                             "InstructionPolicy protocol (reset, act)")
        return policy


def _scripted(skills: SkillConfig | None, config: InstructionPolicyConfig | None):
    return ScriptedSkills(skills)


def _learned(skills: SkillConfig | None, config: InstructionPolicyConfig | None):
    text = make_encoder(TEXT_ENCODER)
    weights = (config or InstructionPolicyConfig()).load_weights()
    return LearnedSkills(text.embed_words, text.weights.sha256, config, weights=weights)


def check_instruction_policy_spec(spec: InstructionPolicySpec) -> None:
    """Raise ``ValueError`` (one line) unless ``spec`` is an :class:`InstructionPolicySpec`
    naming its data files; what it builds is checked against the protocol when it is built."""
    if not isinstance(spec, InstructionPolicySpec):
        raise ValueError(f"an instruction-policy plug-in gives an InstructionPolicySpec, not a "
                         f"{type(spec).__name__}")
    if not all(isinstance(path, str) for path in spec.data):
        raise ValueError(f"the {spec.name} instruction policy's data are paths below mrsteve/")


INSTRUCTION_POLICIES: Registry[InstructionPolicySpec] = Registry(
    "instruction policy", "mrsteve.instruction_policies", (
        InstructionPolicySpec("scripted", "the stand-in over depth and semantic frames",
                              _scripted, SKILL_DATA,
                              reads=("depth", "semantic", "pose", "inventory")),
        InstructionPolicySpec("learned", "STEVE-1's recipe over RGB frames", _learned,
                              (*SKILL_DATA, SHIPPED_INSTRUCTION_POLICY,
                               *PIXEL_ENCODER_DATA), reads=("rgb",)),
    ), check=check_instruction_policy_spec)
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
    return INSTRUCTION_POLICIES.spec(kind)


def make_instruction_policy(kind: str, skills: SkillConfig | None = None,
                            config: InstructionPolicyConfig | None = None,
                            files: tuple[WeightsFile, ...] = ()) -> InstructionPolicy:
    """The instruction policy of :data:`INSTRUCTION_POLICIES` by name (``skills``: the scripted
    skills' settings; ``config``: the learned policy's run-time settings; ``files``: the
    released weights files its entry is built from)."""
    return instruction_policy_spec(kind).make(skills, config, files)


@dataclass(frozen=True)
class AgentSpec:
    """How one named agent is assembled: MrSteve's loop over a memory and an explorer, or the
    instruction policy alone; its other parts come from the run's options (``--parts`` and
    each part's own flag). :func:`mrsteve.agent.factory.make_agent` builds it."""

    name: str
    description: str
    """What the agent is, in the paper's words (its tree's description)."""
    memory: str | None
    """A variant of :data:`mrsteve.memory.MEMORY_VARIANTS`, or ``None`` (no memory: the
    instruction policy alone)."""
    explorer: str = "count-based"
    """An explorer of :data:`mrsteve.control.registry.EXPLORER_KINDS`."""


def check_agent_spec(spec: AgentSpec) -> None:
    """Raise ``ValueError`` (one line) unless ``spec`` is an :class:`AgentSpec` whose memory and
    explorer are registered."""
    if not isinstance(spec, AgentSpec):
        raise ValueError(f"an agent plug-in gives an AgentSpec, not a {type(spec).__name__}")
    if spec.memory is not None:
        memory_variant(spec.memory)  # its error names the known ones
    explorer_spec(spec.explorer)


AGENTS: Registry[AgentSpec] = Registry("agent", "mrsteve.agents", (
    AgentSpec("mrsteve", "MrSteve: Place Event Memory, count-based exploration", "place-event"),
    AgentSpec("center-embed", "MrSteve (Center Embed): event centres only", "center-embed"),
    AgentSpec("pm", "MrSteve-PM: Place Memory", "place"),
    AgentSpec("em", "MrSteve-EM: Event Memory", "event"),
    AgentSpec("fm", "MrSteve-FM: FIFO Memory", "fifo"),
    AgentSpec("pmc-fm", "PMC-MrSteve-FM: FIFO Memory, Plan4MC-style exploration", "fifo",
              "plan4mc"),
    AgentSpec("mrsteve-tc", "MrSteve with task-conditioned exploration (appendix)",
              "place-event", "task-conditioned"),
    AgentSpec("steve1", "STEVE-1: the instruction policy alone, no memory", None),
), check=check_agent_spec)
"""Every agent of the paper by name (module docstring); other packages add agents (their own
memory under MrSteve's loop, say) through the entry-point group ``mrsteve.agents``."""


@dataclass(frozen=True)
class ExplorerAgentSpec:
    """One of the Exploration experiment's agents: an explorer over a navigator, run alone."""

    name: str
    explorer: str
    """An explorer of :data:`mrsteve.control.registry.EXPLORER_KINDS`."""
    navigator: str | None
    """A navigator of :data:`mrsteve.control.registry.NAVIGATORS` of its own, or ``None``: the
    run's (VPT-Nav's role, ``--navigator``)."""
    description: str


def check_explorer_agent_spec(spec: ExplorerAgentSpec) -> None:
    """Raise ``ValueError`` (one line) unless ``spec`` is an :class:`ExplorerAgentSpec` of a
    registered explorer (and navigator)."""
    if not isinstance(spec, ExplorerAgentSpec):
        raise ValueError(f"an exploration-agent plug-in gives an ExplorerAgentSpec, not a "
                         f"{type(spec).__name__}")
    explorer_spec(spec.explorer)
    if spec.navigator is not None:
        navigator_spec(spec.navigator)


EXPLORERS: Registry[ExplorerAgentSpec] = Registry(
    "explorer agent", "mrsteve.explorer_agents", (
        ExplorerAgentSpec("count-based", "count-based", None,
                          "Count-based goals over VPT-Nav (MrSteve)"),
        ExplorerAgentSpec("count-based-straight", "count-based", "straight",
                          "Count-based goals over a navigator without terrain skills"),
        ExplorerAgentSpec("plan4mc", "plan4mc", None, "Plan4MC's direction picking over VPT-Nav"),
        ExplorerAgentSpec("plan4mc-straight", "plan4mc", "straight",
                          "Plan4MC: direction picking, straight walking"),
        ExplorerAgentSpec("count-based-dqn", "count-based", "dqn",
                          "Count-based goals over Plan4MC's DQN"),
        ExplorerAgentSpec("rnn", "rnn", None, "Plan4MC's trained LSTM high level over VPT-Nav"),
        ExplorerAgentSpec("rnn-straight", "rnn", "straight",
                          "Plan4MC's trained LSTM high level, straight walking"),
        ExplorerAgentSpec("rnn-dqn", "rnn", "dqn",
                          "Plan4MC: its trained LSTM high level over its DQN"),
        ExplorerAgentSpec("go-explore", "go-explore", None, "STEVE-1 told to 'go explore'"),
    ), check=check_explorer_agent_spec)
"""The Exploration experiment's agents by name (Table 1's columns)."""
