"""The navigators and explorers by name: the one registry of each that the agent's tree, its
factory and the command line read.

Navigators (:data:`NAVIGATORS`, pi_L-Nav):

============  ===============================================================================
``depth``     :class:`~mrsteve.control.navigation.DepthNavigator`, the VPT-Nav stand-in
``straight``  :class:`~mrsteve.control.navigation.StraightNavigator`, the paper's heuristic
``learned``   :class:`~mrsteve.control.learned_navigator.LearnedNavigator`, VPT-Nav's recipe over RGB
              frames with the shipped weights (or a trained file)
``dqn``       :class:`~mrsteve.control.dqn_navigator.DQNNavigator`, Plan4MC's low level: a DQN over
              RGB frames and the goal (Table 1's DQN columns)
``vpt-nav``   VPT-Nav itself, a released ``vpt_nav.weights`` (``--vpt-nav-weights``;
              registered by :mod:`mrsteve.minecraft.registry`, the ``minecraft`` extra)
============  ===============================================================================

Explorers (:data:`EXPLORER_KINDS`, pi_H-Nav over a navigator; Table 1): ``count-based``
(MrSteve's pi_H-Cnt), ``task-conditioned`` (the appendix's), ``plan4mc`` (Plan4MC's direction
picking, scripted), ``rnn`` (Plan4MC's high level as trained: an LSTM,
:mod:`~mrsteve.control.direction_policy`) and ``go-explore`` (STEVE-1 told to "go explore": the
instruction policy, or the wanderer of :mod:`mrsteve.control.wander` beside a policy that takes
no goals).

Each entry holds the part's name, what builds it, the data files it loads (paths below
``mrsteve/``) and its one-line description, so that a new navigator or explorer is one entry; a
builder may be named ``"package.module:function"``, imported when the part is chosen
(:func:`~mrsteve.naming.entry_point`). Other packages add navigators and explorers through the
entry-point groups ``mrsteve.navigators`` and ``mrsteve.explorers``
(:class:`~mrsteve.registry.Registry`).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from operator import attrgetter
from typing import Any

from mrsteve.control.direction_policy import (
    SHIPPED_DIRECTION_POLICY,
    DirectionWeights,
    load_shipped_direction_policy,
)
from mrsteve.control.dqn_navigator import SHIPPED_DQN_NAVIGATOR, DQNNavigator, DQNWeights
from mrsteve.control.explorers import Explorer, HierarchicalExplorer, InstructedExplorer
from mrsteve.control.goals import (
    CountBasedGoalSelector,
    DirectionGoalSelector,
    EventSource,
    LearnedDirectionGoalSelector,
    TaskConditionedGoalSelector,
)
from mrsteve.control.learned_navigator import SHIPPED_NAVIGATOR, LearnedNavigator, NavigatorWeights
from mrsteve.control.navigation import DepthNavigator, Navigator, NavigatorConfig, StraightNavigator
from mrsteve.control.skills import GoalConditionedPolicy, InstructionPolicy
from mrsteve.control.wander import WanderExplorer
from mrsteve.digests import PACKAGE_ROOT, WeightsFile, check_files
from mrsteve.naming import Selection, entry_point
from mrsteve.nn import Weights
from mrsteve.registry import Registry
from mrsteve.spaces import AGENT_OBSERVATION_KEYS


@dataclass(frozen=True)
class NavigatorSpec:
    """One navigator: its name, what builds it and the data files it loads."""

    name: str
    description: str
    """What it is, in one line (the Navigation experiment's row)."""
    build: Callable[..., Navigator] | str
    """``build(config)``, ``build(config, weights=...)`` for a learned navigator, or
    ``build(config, *files)`` for one built from weights files of :attr:`files` (or the
    ``"module:function"`` that is it)."""
    data: tuple[str, ...] = ()
    """Data files it loads besides its weights (paths below ``mrsteve/``)."""
    weights: str | None = None
    """A learned navigator's shipped weights (path below ``mrsteve/``); ``None``: it learns
    nothing and takes no weights file."""
    weights_type: type[Weights] = NavigatorWeights
    """The weights it reads (a learned navigator)."""
    agents_walk: bool = True
    """Whether MrSteve and the explorers may walk with it (the straight heuristic is Plan4MC's
    and the Exploration experiment's own rows)."""
    files: tuple[str, ...] = ()
    """The kinds of the weights files it is built from that the package does not ship (a
    released checkpoint each, given on the command line as ``--<kind>-weights``)."""
    extra: str | None = None
    """The package extra that installs what it needs beyond the core (``None``: nothing)."""
    paper_row: str | None = None
    """The row of the paper's navigator table it is printed beside (``None``: none)."""
    reads: tuple[str, ...] = AGENT_OBSERVATION_KEYS
    """The observation keys its navigator reads (default: any the agent is given)."""
    check_file: Callable[[str, str], WeightsFile] | str | None = None
    """``check_file(kind, path)``: a weights file of :attr:`files` read key by key and recorded
    (:class:`~mrsteve.digests.WeightsFile`), for a part built from released files."""

    @property
    def learned(self) -> bool:
        """Whether it runs on weights (the shipped ones, or a trained file in their place)."""
        return self.weights is not None

    def data_files(self, *, trained: bool = False) -> tuple[str, ...]:
        """The data files it loads (``trained``: a weights file of its own in place of the
        shipped one, which the tree names by its hash instead)."""
        return self.data if trained or self.weights is None else (*self.data, self.weights)

    def read_weights(self, path: str | None = None, sha256: str | None = None) -> Weights:
        """The weights at ``path`` (default: the shipped ones), read once per process and, given
        ``sha256``, checked against it."""
        if not self.learned:
            learned_navigator(self.name)  # its error
        return self.weights_type.read(PACKAGE_ROOT / self.weights if path is None else path,
                                      sha256)

    def make(self, config: NavigatorConfig | None = None, weights: Weights | None = None,
             files: tuple[WeightsFile, ...] = ()) -> Navigator:
        """A new navigator (``weights``: a learned one's, default the shipped ones; ``files``:
        the weights files of :attr:`files`, in their order)."""
        config = config or NavigatorConfig()
        build = entry_point(self.build, f"the {self.name} navigator", self.extra)
        if self.files or files:
            check_files(files, self.files, f"the {self.name} navigator")
            navigator = build(config, *files)
        elif not self.learned:
            if weights is not None:
                learned_navigator(self.name)  # its error
            navigator = build(config)
        else:
            navigator = build(config, weights=weights or self.read_weights())
        if not isinstance(navigator, Navigator):
            raise ValueError(f"the {self.name} navigator's builder gave a "
                             f"{type(navigator).__name__}, which lacks the Navigator protocol")
        return navigator


def check_navigator_spec(spec: NavigatorSpec) -> None:
    """Raise ``ValueError`` (one line) unless ``spec`` is a :class:`NavigatorSpec`; what it
    builds is checked against the Navigator protocol when it is built."""
    if not isinstance(spec, NavigatorSpec):
        raise ValueError(f"a navigator plug-in gives a NavigatorSpec, not a "
                         f"{type(spec).__name__}")


NAVIGATORS: Registry[NavigatorSpec] = Registry("navigator", "mrsteve.navigators", (
    NavigatorSpec("depth", "The VPT-Nav stand-in: depth-aware planning, terrain skills",
                  DepthNavigator, paper_row="VPT-Nav (KL = 1e-4)",
                  reads=("depth", "semantic", "pose")),
    NavigatorSpec("straight", "The paper's heuristic: turn to the goal and walk",
                  StraightNavigator, agents_walk=False, paper_row="Heuristic", reads=("pose",)),
    NavigatorSpec("learned", "VPT-Nav's recipe: a goal-conditioned policy over RGB frames",
                  LearnedNavigator, weights=SHIPPED_NAVIGATOR, paper_row="VPT-Nav (KL = 1e-4)",
                  reads=("rgb", "pose")),
    NavigatorSpec("dqn", "Plan4MC's low level: a DQN over RGB frames and the goal",
                  DQNNavigator, weights=SHIPPED_DQN_NAVIGATOR, weights_type=DQNWeights,
                  agents_walk=False, paper_row="Low-level Navigator in Plan4MC",
                  reads=("rgb", "pose")),
), check=check_navigator_spec)
"""Every navigator by name (module docstring)."""

AGENT_NAVIGATORS: Selection[NavigatorSpec] = Selection(NAVIGATORS, attrgetter("agents_walk"))
"""The navigators MrSteve and the explorers can walk with (:attr:`NavigatorSpec.agents_walk`)."""

LEARNED_NAVIGATORS: Selection[NavigatorSpec] = Selection(NAVIGATORS, attrgetter("learned"))
"""The navigators that run on weights (:attr:`NavigatorSpec.learned`)."""

BUILT_IN_NAVIGATORS: Selection[NavigatorSpec] = Selection(NAVIGATORS,
                                                          lambda spec: not spec.files)
"""The navigators the package builds without a released weights file (the Navigation
experiment's rows)."""


def navigator_spec(kind: str) -> NavigatorSpec:
    """The entry of the navigator called ``kind`` (an unknown name lists the known ones)."""
    return NAVIGATORS.spec(kind)


def learned_navigator(kind: str) -> NavigatorSpec:
    """The entry of the navigator called ``kind``, which must run on weights (else a
    ``ValueError`` naming those that do)."""
    spec = navigator_spec(kind)
    if not spec.learned:
        raise ValueError(f"only a learned navigator ({', '.join(LEARNED_NAVIGATORS)}) takes "
                         f"weights, not {kind!r}")
    return spec


def make_navigator(kind: str, config: NavigatorConfig | None = None,
                   weights: Weights | None = None, files: tuple[WeightsFile, ...] = ()
                   ) -> Navigator:
    """A navigator of :data:`NAVIGATORS` by name (``weights``: a learned one's, default the
    shipped ones; ``files``: the released weights files its entry is built from)."""
    return navigator_spec(kind).make(config, weights, files)


def navigator_data(*kinds: str, trained: bool = False) -> tuple[str, ...]:
    """The data files the navigators of ``kinds`` load (``trained``: a learned one runs with a
    weights file of its own, not the shipped one)."""
    return tuple(dict.fromkeys(path for kind in kinds
                               for path in navigator_spec(kind).data_files(trained=trained)))


@dataclass(frozen=True)
class ExplorerSpec:
    """One explorer: its name, what builds it, the navigator it walks with and the data files
    it loads itself (its navigator's are the navigator's entry's)."""

    name: str
    description: str
    build: Callable[[Any, Navigator | None, EventSource | None, InstructionPolicy | None],
                    Explorer] | str
    """``build(config, navigator, memory, policy)``: the explorer of an explorer configuration
    (its ``goals``, ``visitation``, ``direction`` and ``wander`` settings:
    :class:`mrsteve.agent.config.ExplorerConfig`) over ``navigator`` (``None`` when it does not
    walk with one), ``memory`` the agent's memory (``None`` without one), which count-based goals
    build their visitation map from and task-conditioned goals read events from, and ``policy``
    the instruction policy of an :attr:`instructed` one (``None`` otherwise)."""
    walks: bool = True
    """Whether it walks with a navigator (an instructed explorer has its own motion)."""
    instructed: bool = False
    """Whether it is an instruction policy told to "go explore" (built over one)."""
    navigator: str | None = None
    """The navigator it keeps inside an agent (Plan4MC's straight walking); ``None``: the
    agent's."""
    data: tuple[str, ...] = ()
    """Data files it loads besides its weights (paths below ``mrsteve/``)."""
    weights: str | None = None
    """A learned goal selector's shipped weights (path below ``mrsteve/``), which a weights file
    of one's own replaces (``--direction-weights``); ``None``: it learns nothing."""

    def data_files(self, *, trained: bool = False) -> tuple[str, ...]:
        """The data files it loads (``trained``: a weights file of its own in place of the
        shipped one, which the tree names by its hash instead)."""
        return self.data if trained or self.weights is None else (*self.data, self.weights)

    def make(self, config: Any, navigator: Navigator | None = None,
             memory: EventSource | None = None, policy: InstructionPolicy | None = None
             ) -> Explorer:
        """A new explorer (:attr:`build`'s arguments), checked against the Explorer protocol."""
        explorer = entry_point(self.build, f"the {self.name} explorer")(config, navigator,
                                                                        memory, policy)
        if not isinstance(explorer, Explorer):
            raise ValueError(f"the {self.name} explorer's builder gave a "
                             f"{type(explorer).__name__}, which lacks the Explorer protocol")
        return explorer


def _count_based(config, navigator, memory, policy) -> Explorer:
    return HierarchicalExplorer(CountBasedGoalSelector(config.goals, config.visitation, memory),
                                navigator)


def _task_conditioned(config, navigator, memory, policy) -> Explorer:
    if memory is None:
        raise ValueError("task-conditioned exploration reads the agent's memory")
    return HierarchicalExplorer(TaskConditionedGoalSelector(memory, config.goals,
                                                            config.visitation, memory), navigator)


def _plan4mc(config, navigator, memory, policy) -> Explorer:
    return HierarchicalExplorer(DirectionGoalSelector(config.direction), navigator)


def _rnn(config, navigator, memory, policy) -> Explorer:
    direction = config.direction
    weights = (load_shipped_direction_policy() if direction.weights is None
               else DirectionWeights.read(direction.weights, direction.weights_sha256))
    return HierarchicalExplorer(LearnedDirectionGoalSelector(weights, direction), navigator)


def _go_explore(config, navigator, memory, policy) -> Explorer:
    """STEVE-1 told to "go explore": a goal-conditioned policy follows it itself; beside one
    that takes no goals (the scripted skills) the wanderer stands in, reading the depth frame."""
    if isinstance(policy, GoalConditionedPolicy):
        return InstructedExplorer(policy)
    return WanderExplorer(config.wander)


def check_explorer_spec(spec: ExplorerSpec) -> None:
    """Raise ``ValueError`` (one line) unless ``spec`` is an :class:`ExplorerSpec` whose own
    navigator, if it names one, is registered; what it builds is checked against the Explorer
    protocol when it is built."""
    if not isinstance(spec, ExplorerSpec):
        raise ValueError(f"an explorer plug-in gives an ExplorerSpec, not a "
                         f"{type(spec).__name__}")
    if spec.navigator is not None:
        navigator_spec(spec.navigator)  # its error names the known ones


EXPLORER_KINDS: Registry[ExplorerSpec] = Registry("explorer", "mrsteve.explorers", (
    ExplorerSpec("count-based", "count-based goals (MrSteve)", _count_based),
    ExplorerSpec("task-conditioned", "task-conditioned goals (appendix)", _task_conditioned),
    ExplorerSpec("plan4mc", "Plan4MC's direction picking", _plan4mc, navigator="straight"),
    ExplorerSpec("rnn", "Plan4MC's high level: an LSTM trained with PPO", _rnn,
                 navigator="straight", weights=SHIPPED_DIRECTION_POLICY),
    ExplorerSpec("go-explore", "STEVE-1 told to 'go explore'", _go_explore, walks=False,
                 instructed=True),
), check=check_explorer_spec)
"""Every explorer by name (module docstring)."""


def explorer_spec(kind: str) -> ExplorerSpec:
    """The entry of the explorer called ``kind`` (an unknown name lists the known ones)."""
    return EXPLORER_KINDS.spec(kind)
