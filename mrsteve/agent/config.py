"""The configuration tree of an agent: a frozen dataclass per part, the paper's values as defaults.

Which parts an agent is made of has no default here: a tree names them all, as
:func:`~mrsteve.agent.factory.agent_config` chooses them (the learned parts unless told
otherwise, :data:`mrsteve.agent.parts.PARTS`).

:func:`~mrsteve.agent.factory.agent_config` builds the tree of a named agent,
:func:`~mrsteve.agent.factory.build_agent` builds the agent from a tree, and nothing else does
either: an experiment's run spec holds the tree (:mod:`mrsteve.eval.spec`), its digest keys the
episode's record, its summary saves it, and the worker builds exactly that tree. Each part holds
its own whole configuration (the memory its every hyperparameter, the event thresholds read from
the encoder's calibration included), and :attr:`AgentConfig.data` the digests of the data files
and weights the parts load, so a recalibration or a retrain is a different tree.

The names of the parts are those of their registries (:mod:`mrsteve.agent.registry`,
:mod:`mrsteve.control.registry`, :mod:`mrsteve.perception.registry`, :mod:`mrsteve.memory`).
Four kinds of tree (:data:`AgentTree`): :class:`AgentConfig` (MrSteve and its variants, and
STEVE-1 alone), :class:`ExplorerAgentConfig` (an explorer run alone: the Exploration experiment),
:class:`NavigatorAgentConfig` (a navigator alone: the Navigation experiment) and
:class:`HierarchicalAgentConfig` (a planner over MrSteve or STEVE-1: the crafting tasks).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mrsteve.agent.hierarchical import MineInstruction
from mrsteve.agent.mrsteve import ModeSelectorConfig
from mrsteve.agent.planners import PlannerConfig
from mrsteve.agent.registry import INSTRUCTION_POLICIES
from mrsteve.control.goals import DirectionConfig, ExplorationConfig
from mrsteve.control.instruction import InstructionPolicyConfig
from mrsteve.control.navigation import NavigatorConfig
from mrsteve.control.registry import (
    EXPLORER_KINDS,
    LEARNED_NAVIGATORS,
    NAVIGATORS,
    learned_navigator,
)
from mrsteve.control.skills import SkillConfig
from mrsteve.control.visitation import VisitationConfig
from mrsteve.control.wander import WanderConfig
from mrsteve.digests import OMITTED_WHEN_DEFAULT, WeightsFile
from mrsteve.memory import MEMORY_VARIANTS, MemoryConfig, PlaceEventConfig, memory_variant
from mrsteve.naming import check_name
from mrsteve.perception.registry import ENCODERS

DataDigests = tuple[tuple[str, str], ...]
"""``((path below mrsteve/, sha256), ...)`` of the data files a tree's parts load."""


@dataclass(frozen=True)
class MemoryPart:
    """The episodic memory the agent writes to and reads from."""

    kind: str = "place-event"
    """A variant of :data:`mrsteve.memory.MEMORY_VARIANTS` (the paper's MrSteve:
    ``place-event``)."""
    capacity: int | None = None
    """Frames held at most; ``None``: unlimited (the paper's ABA-Sparse)."""
    config: MemoryConfig = field(default_factory=PlaceEventConfig)
    """The variant's whole configuration (:meth:`mrsteve.memory.MemoryVariant.config`)."""

    def __post_init__(self) -> None:
        check_name(self.kind, MEMORY_VARIANTS, "memory")
        if self.capacity is not None and (isinstance(self.capacity, bool)
                                          or not isinstance(self.capacity, int)
                                          or self.capacity < 1):
            raise ValueError(f"capacity must be an int >= 1 or None, got {self.capacity!r}")
        variant = memory_variant(self.kind)
        if type(self.config) is not variant.config_type:
            raise ValueError(f"the {self.kind} memory's config is a "
                             f"{variant.config_type.__name__}, got a {type(self.config).__name__}")


@dataclass(frozen=True)
class EncoderConfig:
    """The encoder the agent perceives with (MineCLIP's role)."""

    kind: str
    """One of :data:`mrsteve.perception.ENCODERS` (``semantic``: the renderer's semantic frame;
    ``pixels``: the learned encoder over RGB frames)."""
    weights_sha256: str | None = None
    """Hash of the encoder's weights (``pixels``), so a summary names the weights it ran with."""

    def __post_init__(self) -> None:
        check_name(self.kind, ENCODERS, "encoder")


def check_navigator_weights(weights: str | None, navigators: tuple[str, ...]) -> None:
    """Raise ``ValueError`` if a tree names navigator weights but none of its ``navigators`` is
    a learned one (the file would be ignored)."""
    if weights is not None and not any(kind in LEARNED_NAVIGATORS for kind in navigators):
        raise ValueError(f"navigator weights {weights!r} are for the learned navigator, but the "
                         f"agent walks with {', '.join(sorted(set(navigators)))}")


@dataclass(frozen=True)
class ExplorerConfig:
    """The explorer of the Explore mode: a goal selector over a navigator (or a wanderer)."""

    kind: str
    """One of :data:`mrsteve.control.registry.EXPLORER_KINDS`."""
    navigator: str
    """The explorer's own navigator, one of :data:`mrsteve.control.registry.NAVIGATORS`
    (``plan4mc``: ``straight``)."""
    goals: ExplorationConfig = field(default_factory=ExplorationConfig)
    """Count-based goal selection; ``patch_size`` G is a task-level setting (the paper: G = 15 on
    100 x 100 maps, 30 on 200 x 200)."""
    visitation: VisitationConfig = field(default_factory=VisitationConfig)
    """The visitation map of count-based and task-conditioned goals."""
    direction: DirectionConfig = field(default_factory=DirectionConfig)
    """Plan4MC-style direction picking (``plan4mc`` only)."""
    wander: WanderConfig = field(default_factory=WanderConfig)
    """STEVE-1's "go explore" (``go-explore`` only)."""

    def __post_init__(self) -> None:
        check_name(self.kind, EXPLORER_KINDS, "explorer")
        check_name(self.navigator, NAVIGATORS, "navigator")


@dataclass(frozen=True)
class AgentConfig:
    """Everything that makes one agent (MrSteve, its variants, STEVE-1): the tree saved in every
    run's summary."""

    name: str
    """The agent's name (a key of :data:`mrsteve.agent.registry.AGENTS`)."""
    description: str = ""
    """What the agent is, in the paper's words."""
    memory: MemoryPart | None = field(default_factory=MemoryPart)
    """``None``: no memory (STEVE-1 alone: only the instruction policy)."""
    encoder: EncoderConfig = field(kw_only=True)
    """The encoder of the memory's frames and the mode selector's prompts (unused by STEVE-1)."""
    explorer: ExplorerConfig = field(kw_only=True)
    navigator: NavigatorConfig = field(default_factory=NavigatorConfig)
    """The navigators' settings: the Execute mode's travel to remembered places and the
    explorer's low level."""
    navigator_kind: str = field(kw_only=True)
    """The Execute mode's navigator, one of :data:`mrsteve.control.registry.NAVIGATORS`
    (``depth``: the VPT-Nav stand-in; ``learned``: the policy over RGB frames); the explorer
    names its own."""
    navigator_weights: str | None = None
    """A weights file (``mrsteve train navigator``) every learned navigator of the agent (its
    travel, its explorer's) runs with in place of the shipped one."""
    navigator_weights_sha256: str | None = None
    """The hash of :attr:`navigator_weights` (a retrained file is another tree)."""
    skills: SkillConfig = field(default_factory=SkillConfig)
    """The scripted instruction policy's settings (STEVE-1 stand-in)."""
    instruction_policy: str = field(kw_only=True)
    """pi_Inst of the Execute mode and of STEVE-1, one of
    :data:`mrsteve.agent.registry.INSTRUCTION_POLICIES` (``scripted``: the stand-in; ``learned``:
    STEVE-1's recipe over RGB frames)."""
    instruction: InstructionPolicyConfig = field(default_factory=InstructionPolicyConfig)
    """The learned instruction policy's run-time settings (its guidance scale)."""
    mode_selector: ModeSelectorConfig = field(default_factory=ModeSelectorConfig)
    """MrSteve's mode selector (Algorithm 2)."""
    data: DataDigests = ()
    """Digests of the data files the parts load (thresholds, lexicon, skills, weights)."""
    weights_files: tuple[WeightsFile, ...] = field(default=(), metadata=OMITTED_WHEN_DEFAULT)
    """The released weights files its parts of :mod:`mrsteve.minecraft` run with (MineCLIP,
    VPT-Nav, STEVE-1 and its prior), by path and hash, sorted by kind; left out of the tree
    while there are none."""

    def __post_init__(self) -> None:
        check_name(self.navigator_kind, NAVIGATORS, "navigator")
        check_name(self.instruction_policy, INSTRUCTION_POLICIES, "instruction policy")
        check_navigator_weights(self.navigator_weights,
                                (self.navigator_kind, self.explorer.navigator))


@dataclass(frozen=True)
class ExplorerAgentConfig:
    """An explorer run alone (the Exploration experiment's agents, Table 1)."""

    name: str
    description: str = ""
    explorer: ExplorerConfig = field(kw_only=True)
    navigator: NavigatorConfig = field(default_factory=NavigatorConfig)
    """The settings of the explorer's navigator."""
    data: DataDigests = ()
    navigator_weights: str | None = None
    """A weights file (``mrsteve train navigator``) the explorer's learned navigator runs with in
    place of the shipped one."""
    navigator_weights_sha256: str | None = None
    """The hash of :attr:`navigator_weights`."""
    instruction_policy: str | None = field(default=None, metadata=OMITTED_WHEN_DEFAULT)
    """The instruction policy an instructed explorer (STEVE-1 told to "go explore") is, one of
    :data:`mrsteve.agent.registry.INSTRUCTION_POLICIES`; left out of the tree of the others."""
    weights_files: tuple[WeightsFile, ...] = field(default=(), metadata=OMITTED_WHEN_DEFAULT)
    """The released weights files of its navigator (VPT-Nav) or instruction policy, by path and
    hash; left out of the tree while there are none."""

    def __post_init__(self) -> None:
        check_navigator_weights(self.navigator_weights, (self.explorer.navigator,))
        if self.instruction_policy is not None:
            check_name(self.instruction_policy, INSTRUCTION_POLICIES, "instruction policy")


@dataclass(frozen=True)
class NavigatorAgentConfig:
    """A navigator run alone (the Navigation experiment: goals 10-20 blocks away)."""

    name: str
    """One of :data:`mrsteve.control.registry.NAVIGATORS`."""
    description: str = ""
    navigator: NavigatorConfig = field(default_factory=NavigatorConfig)
    data: DataDigests = ()
    weights: str | None = None
    """A learned navigator only: a weights file (``mrsteve train navigator``) in place of the
    shipped one, as the conditioning and KL studies compare trained variants."""
    weights_sha256: str | None = None
    """The hash of :attr:`weights` (a retrained file is another tree)."""
    training: tuple[str, str, float] | None = None
    """``(conditioning, fine-tuning, KL coefficient)`` the weights were trained with (what the
    studies compare; read from the file's metadata)."""

    def __post_init__(self) -> None:
        check_name(self.name, NAVIGATORS, "navigator")
        if self.weights is not None:
            learned_navigator(self.name)


@dataclass(frozen=True)
class HierarchicalAgentConfig:
    """A planner over a controller, for crafting tasks (paper appendix "LLM-Augmented Agent with
    MrSteve"): :class:`mrsteve.agent.hierarchical.HierarchicalAgent`."""

    name: str
    description: str = ""
    controller: AgentConfig = field(kw_only=True)
    """The low-level controller (MrSteve or STEVE-1) that runs the ``mine`` subgoals."""
    planner: PlannerConfig = field(default_factory=PlannerConfig)
    mining: tuple[MineInstruction, ...] = ()
    """How the controller obtains each raw item (prompts and tool, as the item tasks give
    them)."""
    data: DataDigests = ()
    """The controller's data digests and the crafting recipes'."""


AgentTree = AgentConfig | ExplorerAgentConfig | NavigatorAgentConfig | HierarchicalAgentConfig
"""Any agent's configuration tree."""
