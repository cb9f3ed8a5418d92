"""What an experiment of the paper is: a config dataclass, its groups of run specs, an episode
function, metrics, a table beside the paper's numbers, and plots.

Each experiment (:mod:`mrsteve.eval.exploration`, :mod:`~mrsteve.eval.navigation`,
:mod:`~mrsteve.eval.sequential`, ...) is one :class:`Experiment` object. :meth:`Experiment.groups`
builds every group's :class:`~mrsteve.eval.spec.RunSpec` once, agent tree included;
:meth:`Experiment.run` sweeps them (:func:`mrsteve.eval.sweep.run_sweep`) and the worker runs
:attr:`Experiment.episode` on each episode's spec. The command line (``mrsteve eval <name>``) is
generated from the experiment: one option per name in :attr:`Experiment.options`, with the config
field's default and its docstring as help, plus the options every experiment shares
(:class:`~mrsteve.eval.options.SweepOptions`).
"""

from __future__ import annotations

import ast
import inspect
import itertools
import shlex
import textwrap
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache, cached_property
from pathlib import Path
from types import MappingProxyType
from typing import Any, ClassVar

from mrsteve.agent.config import AgentConfig
from mrsteve.agent.mrsteve import IMAGE_GOAL_TARGETS, ModeSelectorConfig
from mrsteve.agent.parts import AGENT_PARTS, AgentParts
from mrsteve.agent.registry import AGENTS
from mrsteve.agent.trees import agent_config
from mrsteve.control.visitation import PAINTED_FROM
from mrsteve.digests import OMITTED_WHEN_DEFAULT
from mrsteve.eval.options import SweepOptions
from mrsteve.eval.records import Record
from mrsteve.eval.spec import Group
from mrsteve.eval.sweep import run_sweep
from mrsteve.naming import check_name, choose
from mrsteve.tasks.catalog import exploration_patch_size
from mrsteve.world.render import LOOKS

Summaries = dict[str, dict[str, dict[str, float]]]
"""Metric summaries of a sweep by group label."""

UNLIMITED = "unlimited"
"""The word for no capacity in a ``--capacity`` list."""

PAPER_CAPACITIES = (100, 500, 1000, 2000, 12000)
"""The capacities of the paper's memory-constraint figure (0.1K to 12K, the episode length)."""

MODE_SELECTOR_OPTIONS = ("memory_reads", "searched_radius", "searched_targets",
                         "text_goal_target", "explorer_map")
"""The :class:`AgentOptions` fields that set the mode selector's reads and what its explorer's
map remembers: command-line options of every experiment whose agents follow tasks."""


def parse_capacities(value: str | int | None) -> tuple[int | None, ...]:
    """The memory capacities of ``--capacity``: one number of frames, ``unlimited`` (or
    ``None``), or a comma-separated list of them (e.g. ``100,500,1000,2000,12000``); anything
    else is a ``ValueError`` naming the bad entry and what is accepted."""
    if value is None:
        return (None,)
    accepted = (f"a number of frames >= 1, {UNLIMITED!r}, or a comma-separated list of them "
                f"(e.g. {','.join(map(str, PAPER_CAPACITIES))})")
    if isinstance(value, bool) or not isinstance(value, int | str):
        raise ValueError(f"capacity must be {accepted}, got {value!r}")  # noqa: TRY004
    parts = [value] if isinstance(value, int) else [p.strip() for p in value.split(",")]
    capacities: list[int | None] = []
    for part in parts:
        if isinstance(part, str) and part.lower() in (UNLIMITED, "none"):
            capacity = None
        else:
            try:
                capacity = int(part)
            except ValueError:
                capacity = 0
            if capacity < 1:
                where = "" if len(parts) == 1 else f" in {value!r}"
                raise ValueError(f"capacity must be {accepted}, got {part!r}{where}")
        if capacity in capacities:
            raise ValueError(f"capacity {part!r} is given twice in {value!r}")
        capacities.append(capacity)
    return tuple(capacities)


@dataclass(frozen=True)
class LookOption:
    """The light of an experiment's worlds, for the experiments that evaluate learned parts
    where they never trained (their configs derive from it)."""

    look: str = field(default="day", metadata=OMITTED_WHEN_DEFAULT)
    """The light the world is rendered in: day, or dusk or overcast, looks no learned part is
    trained on (held-out evaluation); comma-separated, or 'all', for a group each."""

    @property
    def looks(self) -> list[str]:
        return choose(self.look, list(LOOKS), "look")


@dataclass(frozen=True)
class AgentOptions(AgentParts):
    """The agent's settings shared by the experiments that run MrSteve and its variants (their
    configs derive from it; each field an experiment lists in :attr:`Experiment.options` is a
    command-line option): its parts (:class:`~mrsteve.agent.parts.AgentParts`), its memory's
    capacity and the mode selector's and explorer's options."""

    capacity: str | None = None
    """Memory capacity in frames (default: unlimited), or a comma-separated grid of them,
    'unlimited' allowed (the appendix's: 100,500,1000,2000,12000)."""
    searched_radius: float = 8.0
    """Blocks around a searched target (see --searched-targets: L steps toward it passed without
    success) within which the mode selector skips remembered frames for the rest of the task, so
    the re-read every L steps finds new candidates as the paper's appendix intends (0: the
    release's literal pick, the nearest match every time)."""
    searched_targets: str = field(default="reached", metadata=OMITTED_WHEN_DEFAULT)
    """Which targets the re-read leaves as searched: reached (one the agent reached) or
    reached-or-blocked (also one it was still walking to when the L steps ran out while the
    navigator reported it out of reach: stalled, standing still or judged unreachable; beyond
    the paper)."""
    memory_reads: str = "algorithm-2"
    """When the agent reads its memory: algorithm-2 (the paper's: when a task starts and after L =
    600 steps in a mode) or every-explore-step (also on every step while exploring, as the
    authors' release does; beyond the paper)."""
    image_goal_target: str = "best"
    """Which frame matching an image goal the agent targets: best (the highest-scoring) or
    nearest (nearest the agent, the release's rule for text tasks; the paper states none)."""
    text_goal_target: str = field(default="nearest", metadata=OMITTED_WHEN_DEFAULT)
    """Which frame matching a text task's prompt the agent targets: nearest (nearest the agent,
    the authors' release) or best (the highest-scoring: a diagnostic beyond the paper)."""
    explorer_map: str = "memory"
    """What the count-based explorer's visitation map is painted with: memory (the frames the
    agent's memory holds, the paper's: a place it forgot is unvisited again) or steps (every
    step it took, as an agent without a memory paints)."""

    def __post_init__(self) -> None:
        super().__post_init__()
        self.capacities  # noqa: B018 (parsed once, its checks, its messages)
        check_name(self.image_goal_target, IMAGE_GOAL_TARGETS, "image_goal_target")
        check_name(self.explorer_map, PAINTED_FROM, "explorer map")
        self.mode_selector  # noqa: B018 (its checks, its messages)

    @cached_property
    def capacities(self) -> tuple[int | None, ...]:
        """The capacities of :attr:`capacity` (one, or a grid), parsed once."""
        return parse_capacities(self.capacity)

    @property
    def mode_selector(self) -> ModeSelectorConfig:
        return ModeSelectorConfig(image_goal_target=self.image_goal_target,
                                  text_goal_target=self.text_goal_target,
                                  searched_radius=self.searched_radius,
                                  searched_targets=self.searched_targets,
                                  memory_reads=self.memory_reads)

    def agent_tree(self, name: str, world: str, capacity: int | None) -> AgentConfig:
        """The configuration tree of the agent called ``name`` for a task on ``world``: the
        exploration goal patch for the world's size (a task-level setting, as in the paper:
        :func:`~mrsteve.tasks.catalog.exploration_patch_size`), its memory ``capacity`` and these
        options."""
        return agent_config(name, patch_size=exploration_patch_size(world), capacity=capacity,
                            encoder=self.encoder, navigator=self.navigator,
                            navigator_weights=self.navigator_weights,
                            instruction_policy=self.instruction_policy,
                            instruction_weights=self.instruction_weights,
                            mode_selector=self.mode_selector,
                            weights_files=self.weights_files, explorer_map=self.explorer_map)

    def cells(self, agents: Sequence[str]) -> list[tuple[str, int | None]]:
        """The (agent, capacity) pairs of a sweep: every capacity for the agents with a memory,
        one cell for those without (a capacity means nothing to them). A capacity given for
        agents none of which has a memory (STEVE-1 alone) is a ``ValueError``: it would change
        nothing."""
        if (all(AGENTS[name].memory is None for name in agents)
                and self.capacities != self.default_capacities()):
            remembering = [name for name in AGENTS if AGENTS[name].memory is not None]
            raise ValueError(
                f"capacity {self.capacity} sizes an agent's memory, and {', '.join(agents)} "
                f"{'has' if len(agents) == 1 else 'have'} none: add an agent with a memory "
                f"({', '.join(remembering)}) or leave --capacity out")
        cells: list[tuple[str, int | None]] = []
        for capacity in self.capacities:
            for name in agents:
                cell = (name, capacity if AGENTS[name].memory is not None else None)
                if cell not in cells:
                    cells.append(cell)
        return cells

    @classmethod
    def default_capacities(cls) -> tuple[int | None, ...]:
        """The capacities of the config's default :attr:`capacity`."""
        return parse_capacities(cls.capacity)

    def cell_label(self, agent: str, capacity: int | None) -> str:
        """An agent's part of a group label: its name, with ``.c<capacity>`` when its capacity
        is not the experiment's default."""
        default = self.default_capacities()[0]
        return agent if capacity == default or AGENTS[agent].memory is None else (
            f"{agent}.c{capacity or UNLIMITED}")


def _option_text(value: Any) -> str:
    """An option's value as typed on the command line."""
    if isinstance(value, tuple | list):
        return " ".join(map(str, value))
    return str(value)


@cache
def field_docs(config_type: type) -> Mapping[str, str]:
    """The docstring under each field of a dataclass (``field: int = 1`` then ``\"\"\"...\"\"\"``),
    one line each: the help of the command-line options generated from it."""
    docs: dict[str, str] = {}
    for cls in reversed(config_type.__mro__):
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
        except (OSError, TypeError):
            continue
        body = tree.body[0].body if tree.body and isinstance(tree.body[0], ast.ClassDef) else []
        for node, after in itertools.pairwise(body):
            if (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
                    and isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)
                    and isinstance(after.value.value, str)):
                docs[node.target.id] = " ".join(after.value.value.split())
    return docs


class Experiment:
    """One experiment of the paper. Subclasses fill in the class attributes, :meth:`groups`,
    :meth:`metrics` and :meth:`table`; :meth:`plot_episode` and :meth:`plot_summary` are
    optional."""

    name: ClassVar[str]
    """The command name (``mrsteve eval <name>``)."""
    config_type: ClassVar[type]
    """The experiment's configuration dataclass (the paper's values as defaults)."""
    options: ClassVar[tuple[str, ...]] = ()
    """Config fields offered on the command line (``--max-steps`` for ``max_steps``)."""
    choices: ClassVar[Mapping[str, Sequence[str]]] = {}
    """The names options listed here accept, comma-separated (``--memory-access``: off, on): its
    help lists them as its errors do."""
    default_episodes: ClassVar[int] = 10
    """Episodes per group unless ``--episodes`` says otherwise."""
    traces: ClassVar[bool] = False
    """Whether its episodes keep a trace for `mrsteve view` when asked (``--trace``)."""
    examples: ClassVar[tuple[str, ...]] = ()
    """Example command lines (arguments after ``mrsteve eval <name>``) for the help."""
    renamed_options: ClassVar[Mapping[str, str]] = MappingProxyType({})
    """Config fields of earlier versions by their names now: a manifest made before a rename is
    read, and its command shown, with the new ones."""
    agent_options: ClassVar[tuple[str, ...]] = (*AGENT_PARTS, *MODE_SELECTOR_OPTIONS,
                                                "image_goal_target")
    """The config fields that set the agents' parts and settings (not which agents run): a run
    where one differs from its default is not a run of the package's default agents."""
    episode: Callable[[Any], Record]
    """The module-level (picklable) function running one episode: ``RunSpec -> record``."""

    @property
    def summary(self) -> str:
        """What the experiment measures (its docstring): the command's help."""
        doc = inspect.getdoc(self) or self.name
        return "\n\n".join(" ".join(part.split()) for part in doc.split("\n\n"))

    def groups(self, config: Any) -> list[Group]:
        """The sweep's groups, each with its run spec."""
        raise NotImplementedError

    def recorded_groups(self, recorded: dict[str, Any]) -> list[Group]:
        """The groups a finished run's manifest recorded (``manifest["groups"]``: label to spec
        tree), for a report when :meth:`groups` cannot rebuild them (a weights file the run was
        given is gone); experiments whose groups read no files have nothing to rebuild."""
        raise NotImplementedError(f"{self.name} rebuilds its groups from the config alone")

    def metrics(self, config: Any) -> Sequence[str]:
        """The metric names summarised over each group's episodes."""
        raise NotImplementedError

    def table(self, config: Any, groups: Sequence[Group], summaries: Summaries) -> str:
        """The results table, with the paper's figures beside ours."""
        raise NotImplementedError

    def plot_episode(self, record: Record, group: Group, path: Path) -> None:
        """Draw one episode record of ``group`` to ``path`` (nothing by default)."""

    def plot_summary(self, config: Any, groups: Sequence[Group], summaries: Summaries,
                     plots: Path) -> Path | None:
        """Draw the sweep's figure into the folder ``plots`` (nothing by default)."""
        return None

    def command_line(self, config: Any, sweep: SweepOptions) -> str:
        """The ``mrsteve eval`` command that runs ``config`` with ``sweep`` (the options that
        differ from their defaults), whoever started the run: what the manifest records."""
        words = ["mrsteve", "eval", self.name]
        default = self.config_type()
        # a part is given when it is not the one --parts names
        same_parts = self.config_type(parts=config.parts) if "parts" in self.options else default
        for name in self.options:
            value = getattr(config, name)
            if value != getattr(default if name == "parts" else same_parts, name):
                flag = name.replace("_", "-")
                words += ([f"--{flag}" if value else f"--no-{flag}"] if isinstance(value, bool)
                          else [f"--{flag}", _option_text(value)])
        shared = {"episodes": self.default_episodes, "seed": 42, "workers": 1,
                  "backend": "local", "address": None, "out": None, "json_path": None,
                  "plots": None}
        for name, value in shared.items():
            given = getattr(sweep, name)
            if given != value:
                flag = "--json" if name == "json_path" else f"--{name}"
                words += [flag, _option_text(given)]
        return shlex.join(words)

    @property
    def plots_episodes(self) -> bool:
        return type(self).plot_episode is not Experiment.plot_episode

    def check_trace(self, sweep: SweepOptions) -> None:
        """A ``ValueError`` unless this experiment can keep traces on ``sweep``'s backend."""
        if not self.traces:
            raise ValueError(f"--trace: {self.name}'s episodes keep no trace (those of the "
                             "item-task, Memory Tasks and long-task experiments do, e.g. "
                             "`mrsteve eval aba-sparse --trace`; `mrsteve demo` traces one "
                             "episode)")
        if sweep.backend != "local":
            raise ValueError("--trace keeps traces on the local backend only: drop --backend "
                             f"{sweep.backend} or --trace")

    def run(self, config: Any, sweep: SweepOptions,
            echo: Callable[[str], Any] = print) -> Summaries:
        """Sweep every group, print the table and write summaries, plots and the manifest
        (:mod:`mrsteve.eval.manifest`: written when the run starts, again with its wall time when
        it ends); with ``sweep.plan`` write the run's plan instead and run nothing, and without
        it refuse a run that is not the plan in its folder (:mod:`mrsteve.eval.plan`)."""
        from mrsteve.eval.manifest import earlier_sittings, git_commit, manifest
        from mrsteve.eval.plan import check_plan, plan_of, plan_path, plan_provenance, write_plan
        from mrsteve.fileio import write_json

        if sweep.trace:
            self.check_trace(sweep)
        groups = self.groups(config)
        command = self.command_line(config, sweep)
        planned, kept = plan_of(self.name, groups, sweep, command), plan_path(sweep)
        if sweep.plan:
            if kept is None:
                raise ValueError("--plan writes the run's plan into its run folder: give --out")
            wrote = write_plan(kept, planned)
            echo(f"{'wrote' if wrote else 'already planned:'} {kept}: commit it, then run the "
                 "same command without --plan")
            return {}
        check_plan(kept, planned)
        started = time.time()
        git = git_commit()
        sitting = dict(git=git, plan=plan_provenance(kept, git and git["commit"]),
                       sittings=earlier_sittings(sweep.manifest_path, self.name))
        specs = {group.label: group.spec.tree() for group in groups}
        plots = sweep.plots_dir

        def plot_group(group: Group, records: list[Record]) -> None:
            if plots is None or not self.plots_episodes:
                return
            for record in records:
                name = f"{group.label}_{record['episode']:03d}.png"
                self.plot_episode(record, group, plots / name)

        summaries = run_sweep(
            groups, self.metrics(config), sweep, job=self.episode, on_group=plot_group, echo=echo,
            on_start=lambda path: write_json(path, manifest(self.name, config, specs, sweep,
                                                            started, None, command, **sitting)),
        )  # fmt: skip
        if plots is not None and self.plots_episodes:
            echo(f"plots in {plots}")
        echo(self.table(config, groups, summaries))
        if plots is not None:
            path = self.plot_summary(config, groups, summaries, plots)
            if path is not None:
                echo(f"wrote {path}")
        if sweep.manifest_path is not None:
            write_json(sweep.manifest_path, manifest(self.name, config, specs, sweep, started,
                                                     time.time() - started, command, **sitting))
            echo(f"wrote {sweep.manifest_path}")
        return summaries
