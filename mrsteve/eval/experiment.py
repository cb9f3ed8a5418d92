"""What an experiment of the paper is: a config dataclass, its groups of episodes, an episode
function, metrics, a table beside the paper's numbers, and plots.

Each experiment (:mod:`mrsteve.eval.exploration`, :mod:`~mrsteve.eval.navigation`,
:mod:`~mrsteve.eval.sequential`) is one :class:`Experiment` object. :meth:`Experiment.run` sweeps
it (:func:`mrsteve.eval.sweep.run_sweep`); the command line (``mrsteve eval <name>``) is generated
from it: one option per name in :attr:`Experiment.options`, with the config field's default and
its docstring as help, plus the options every experiment shares
(:class:`~mrsteve.eval.sweep.SweepOptions`).
"""

from __future__ import annotations

import ast
import dataclasses
import inspect
import textwrap
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any, ClassVar

from mrsteve.agent.config import AgentConfig
from mrsteve.agent.factory import agent_config
from mrsteve.agent.mrsteve import MrSteveConfig
from mrsteve.eval.sweep import EpisodeFn, Group, Record, SweepOptions, run_sweep
from mrsteve.naming import check_name
from mrsteve.perception import ENCODERS
from mrsteve.tasks.catalog import exploration_patch_size

Summaries = dict[tuple[str, str], dict[str, dict[str, float]]]
"""Metric summaries of a sweep by ``(task, agent)``."""


def agent_on_world(name: str, world: str, *, capacity: int | None = None,
                   encoder: str = "semantic", image_goal_target: str = "best",
                   searched_radius: float = 0.0) -> AgentConfig:
    """The configuration tree of the agent called ``name`` for a task on ``world``: the
    exploration goal patch for the world's size (a task-level setting, as in the paper:
    :func:`~mrsteve.tasks.catalog.exploration_patch_size`), its memory ``capacity``, its
    ``encoder``, which frame an image goal targets and the mode selector's searched radius."""
    return agent_config(name, patch_size=exploration_patch_size(world), capacity=capacity,
                        encoder=encoder,
                        config=MrSteveConfig(image_goal_target=image_goal_target,
                                             searched_radius=searched_radius))


@dataclass(frozen=True)
class AgentOptions:
    """The agent's settings shared by the experiments that run MrSteve and its variants (their
    configs derive from it; each field is a command-line option)."""

    encoder: str = "semantic"
    """The agent's encoder: semantic (the renderer's semantic frame) or pixels (the learned
    encoder over RGB frames)."""
    searched_radius: float = 0.0
    """Blocks around a target the agent reached and executed at for L steps without success
    within which the mode selector skips remembered frames for the rest of the task (0: off, the
    release's rule; beyond the paper)."""

    def __post_init__(self) -> None:
        check_name(self.encoder, ENCODERS, "encoder")
        MrSteveConfig(searched_radius=self.searched_radius)  # its check, its message


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
        for node, after in zip(body, body[1:]):
            if (isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name)
                    and isinstance(after, ast.Expr) and isinstance(after.value, ast.Constant)
                    and isinstance(after.value.value, str)):
                docs[node.target.id] = " ".join(after.value.value.split())
    return docs


def config_from_options(config_type: type, options: Mapping[str, Any], **fixed: Any) -> Any:
    """``config_type`` with ``fixed`` fields and those of ``options`` it has (sizes as tuples,
    since JSON records hold lists)."""
    names = {field.name for field in dataclasses.fields(config_type)}
    fields = {key: value for key, value in options.items() if key in names and key not in fixed}
    for key, value in fields.items():
        if isinstance(value, list):
            fields[key] = tuple(value)
    return config_type(**fields, **fixed)


class Experiment:
    """One experiment of the paper. Subclasses fill in the class attributes and :meth:`groups`,
    :meth:`metrics` and :meth:`table`; :meth:`plot_episode` and :meth:`plot_summary` are
    optional."""

    name: ClassVar[str]
    """The command name (``mrsteve eval <name>``)."""
    config_type: ClassVar[type]
    """The experiment's configuration dataclass (the paper's values as defaults)."""
    options: ClassVar[tuple[str, ...]] = ()
    """Config fields offered on the command line (``--max-steps`` for ``max_steps``)."""
    default_episodes: ClassVar[int] = 10
    """Episodes per group unless ``--episodes`` says otherwise."""
    episode: EpisodeFn
    """The module-level (picklable) function running one episode: ``spec -> record``."""

    @property
    def summary(self) -> str:
        """What the experiment measures (its docstring): the command's help."""
        doc = inspect.getdoc(self) or self.name
        return "\n\n".join(" ".join(part.split()) for part in doc.split("\n\n"))

    def groups(self, config: Any) -> list[Group]:
        """The (task, agent) groups of a sweep."""
        raise NotImplementedError

    def metrics(self, config: Any) -> Sequence[str]:
        """The metric names summarised over each group's episodes."""
        raise NotImplementedError

    def table(self, config: Any, groups: Sequence[Group], summaries: Summaries) -> str:
        """The results table, with the paper's figures beside ours."""
        raise NotImplementedError

    def plot_episode(self, record: Record, path: Path) -> None:
        """Draw one episode record to ``path`` (nothing by default)."""

    def plot_summary(self, config: Any, summaries: Summaries, plots: Path) -> Path | None:
        """Draw the sweep's figure into the folder ``plots`` (nothing by default)."""
        return None

    @property
    def plots_episodes(self) -> bool:
        return type(self).plot_episode is not Experiment.plot_episode

    def run(self, config: Any, sweep: SweepOptions,
            echo: Callable[[str], Any] = print) -> Summaries:
        """Sweep every group, print the table and write summaries, plots and the manifest
        (:mod:`mrsteve.eval.manifest`: written when the run starts, again with its wall time when
        it ends)."""
        from mrsteve.eval.manifest import manifest
        from mrsteve.fileio import write_json

        groups = self.groups(config)
        started = time.time()
        configs = {group.label: group.config for group in groups}
        summaries = run_sweep(
            groups, self.episode, self.metrics(config), sweep,
            plot=self.plot_episode if self.plots_episodes else None, echo=echo,
            on_start=lambda path: write_json(path, manifest(self.name, config, configs, sweep,
                                                            started, None)),
        )  # fmt: skip
        echo(self.table(config, groups, summaries))
        plots = sweep.plots_dir
        if plots is not None:
            path = self.plot_summary(config, summaries, plots)
            if path is not None:
                echo(f"wrote {path}")
        if sweep.manifest_path is not None:
            write_json(sweep.manifest_path, manifest(self.name, config, configs, sweep, started,
                                                     time.time() - started))
            echo(f"wrote {sweep.manifest_path}")
        return summaries
