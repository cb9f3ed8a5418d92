"""The configuration tree of an agent: a frozen dataclass per part, the paper's values as defaults.

:func:`~mrsteve.agent.factory.make_agent` builds an :class:`AgentConfig` for a named agent and a
world, then the agent from it; every run saves ``dataclasses.asdict`` of the tree beside its
results, so a summary says exactly which memory, explorer, navigator, skills and mode selector
produced it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mrsteve.agent.mrsteve import MrSteveConfig
from mrsteve.control.goals import DirectionConfig, ExplorationConfig
from mrsteve.control.navigation import NavigatorConfig
from mrsteve.control.skills import SkillConfig
from mrsteve.control.visitation import VisitationConfig
from mrsteve.naming import check_name
from mrsteve.perception.registry import ENCODERS

MEMORY_KINDS = ("place_event", "center_embed", "place", "event", "fifo")
"""Place Event Memory, its centre-only variant, Place, Event and FIFO Memory."""
PLACE_MEMORY_KINDS = ("place_event", "center_embed", "place")
"""The memories that cluster frames by place (a place cell side C)."""
EXPLORER_KINDS = ("count-based", "task-conditioned", "plan4mc")
"""Count-based goals (MrSteve), task-conditioned goals (appendix), Plan4MC's direction picking."""
NAVIGATOR_KINDS = ("depth", "straight")
"""The VPT-Nav stand-in (depth-aware, terrain skills) and the paper's straight-line heuristic."""


@dataclass(frozen=True)
class MemoryConfig:
    """Which episodic memory the agent writes to and reads from."""

    kind: str = "place_event"
    """One of :data:`MEMORY_KINDS` (the paper's MrSteve: ``place_event``)."""
    capacity: int | None = None
    """Frames held at most; ``None``: unlimited (the paper's ABA-Sparse)."""
    cell_size: float | None = None
    """Side C of a place cell in blocks, for the memories with places (``place_event``,
    ``center_embed``, ``place``); ``None``: the memory's own (the paper: 6; its ablation varies
    it, appendix "Ablation Studies on Place Event Memory")."""

    def __post_init__(self) -> None:
        check_name(self.kind, MEMORY_KINDS, "memory")
        if self.capacity is not None and self.capacity < 1:
            raise ValueError(f"capacity must be >= 1 or None, got {self.capacity}")
        if self.cell_size is not None:
            if self.kind not in PLACE_MEMORY_KINDS:
                raise ValueError(f"cell_size is a setting of the memories with places "
                                 f"({', '.join(PLACE_MEMORY_KINDS)}), not of {self.kind!r}")
            if isinstance(self.cell_size, bool) or not self.cell_size > 0:
                raise ValueError(f"cell_size must be > 0 blocks or None, got {self.cell_size!r}")


@dataclass(frozen=True)
class EncoderConfig:
    """The encoder the agent perceives with (MineCLIP's role)."""

    kind: str = "semantic"
    """One of :data:`mrsteve.perception.ENCODERS`: ``semantic`` (the renderer's semantic frame)
    or ``pixels`` (the learned encoder over RGB frames)."""
    weights_sha256: str | None = None
    """Hash of the encoder's weights (``pixels``), so a summary names the weights it ran with."""

    def __post_init__(self) -> None:
        check_name(self.kind, ENCODERS, "encoder")


@dataclass(frozen=True)
class ExplorerConfig:
    """The explorer of the Explore mode: a goal selector over a navigator."""

    kind: str = "count-based"
    """One of :data:`EXPLORER_KINDS`."""
    navigator: str = "depth"
    """The explorer's own navigator, one of :data:`NAVIGATOR_KINDS` (``plan4mc``: ``straight``)."""
    goals: ExplorationConfig = field(default_factory=ExplorationConfig)
    """Count-based goal selection; ``patch_size`` G is a task-level setting (the paper: G = 15 on
    100 x 100 maps, 30 on 200 x 200)."""
    visitation: VisitationConfig = field(default_factory=VisitationConfig)
    """The visitation map of count-based and task-conditioned goals."""
    direction: DirectionConfig = field(default_factory=DirectionConfig)
    """Plan4MC-style direction picking (``plan4mc`` only)."""

    def __post_init__(self) -> None:
        check_name(self.kind, EXPLORER_KINDS, "explorer")
        check_name(self.navigator, NAVIGATOR_KINDS, "navigator")


@dataclass(frozen=True)
class AgentConfig:
    """Everything that makes one agent: the tree saved in every run's summary."""

    name: str
    """The agent's name (a key of :data:`mrsteve.agent.factory.AGENTS`)."""
    description: str = ""
    """What the agent is, in the paper's words."""
    memory: MemoryConfig | None = field(default_factory=MemoryConfig)
    """``None``: no memory (STEVE-1 alone: only the instruction policy)."""
    encoder: EncoderConfig = field(default_factory=EncoderConfig)
    """The encoder of the memory's frames and the mode selector's prompts (unused by STEVE-1)."""
    explorer: ExplorerConfig = field(default_factory=ExplorerConfig)
    navigator: NavigatorConfig = field(default_factory=NavigatorConfig)
    """The navigators' settings (VPT-Nav stand-in): the Execute mode's travel to remembered places
    and the explorer's low level."""
    skills: SkillConfig = field(default_factory=SkillConfig)
    """The scripted instruction policy (STEVE-1 stand-in)."""
    mode_selector: MrSteveConfig = field(default_factory=MrSteveConfig)
    """MrSteve's mode selector (Algorithm 2)."""
