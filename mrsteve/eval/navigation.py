"""The Navigation experiment (appendix "VPT Navigator Ablation Study").

A navigator starts at a terrain's spawn and must come within 3 blocks of a goal 10 to 20 blocks
away. Terrains (``TERRAINS``) are the embedded world's test maps: ``flat``, ``plains`` (world
``plains_nav``), ``mountain`` and ``river``. Metrics per episode: success (as a percentage, so the
mean is the success rate) and SPL, success weighted by ``shortest / max(taken, shortest)``.

The evaluator, unlike the navigator, reads the world's blocks:

- the goal is the centre of a column of walkable ground (not water, no tree, inside the walls) at
  10 to 20 blocks from the spawn, that the player can reach; on ``river`` it must lie across the
  water (no dry path leads there) with its success disc on land (swim across, then climb out);
- the shortest path length is planned on the true height map of the world
  (:class:`~mrsteve.control.path_planning.WorldGround`) with the walking rules of the game (steps
  up of one block, drops, swimming): A* over columns with plain distances, straightened by string
  pulling (so open ground counts as a straight line), measured up to where it enters the success
  disc. The taken path is the agent's ground-plane trajectory until it is within the disc.

The paper does not state the time limit: we give ``max_steps = 1000`` steps (50 s of game time),
about five times what walking 20 blocks takes.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from mrsteve.agent.config import NavigatorAgentConfig
from mrsteve.agent.factory import build_agent, navigator_agent_config
from mrsteve.agent.parts import AgentParts
from mrsteve.control.path_planning import WorldGround
from mrsteve.control.registry import BUILT_IN_NAVIGATORS, navigator_spec
from mrsteve.digests import OMITTED_WHEN_DEFAULT
from mrsteve.env import make_env
from mrsteve.env.voxel_env import DEFAULT_OBS_SIZE
from mrsteve.eval.experiment import Experiment, LookOption
from mrsteve.eval.records import Record
from mrsteve.eval.results import by_look, format_metric, format_table
from mrsteve.eval.spec import Group, RunSpec
from mrsteve.naming import choose
from mrsteve.tasks.driver import compact_trajectory
from mrsteve.tasks.navigation import METRICS, pick_goal, run_navigation

PAPER_TERRAINS = {"flat": "flat", "plains": "plains_nav", "mountain": "mountain",
                  "river": "river"}
"""The paper's terrain names and the world recipes they run on (``all``)."""
TERRAINS = {**PAPER_TERRAINS, "highlands": "heldout_highlands", "forest": "forest_nav",
            "desert": "desert_nav", "unbounded": "plains_unbounded"}
"""Terrain names of the experiment and the world recipes they run on: the paper's, the held-out
highlands, which no navigator trains or is tuned on, a forest as dense as Minecraft's and a desert
(beyond the paper), and the unbounded Minecraft-like world ABA-Random, SEQ(4) and WISE's 384 x 384
exploration run on (its plains, forests, lakes and rivers; no navigator trains there either)."""

PAPER_NAVIGATORS = {
    # (SPL, success rate %) per terrain, appendix Table "Performance of different Low-Level
    # Navigators".
    "Heuristic": {"flat": (0.962, 100), "plains": (0.906, 94), "mountain": (0.188, 100),
                  "river": (0.000, 0)},
    "Low-level Navigator in Plan4MC": {"flat": (0.416, 61), "plains": (0.326, 47),
                                       "mountain": (0.010, 10), "river": (0.000, 0)},
    "VPT-Nav (KL = 0)": {"flat": (0.806, 90), "plains": (0.774, 85), "mountain": (0.131, 97),
                         "river": (0.034, 13)},
    "VPT-Nav (KL = 1e-4)": {"flat": (0.849, 96), "plains": (0.780, 88),
                            "mountain": (0.157, 100), "river": (0.274, 87)},
    "VPT-Nav (KL = 1e-3)": {"flat": (0.762, 95), "plains": (0.651, 78), "mountain": (0.015, 17),
                            "river": (0.012, 6)},
    "VPT-Nav (KL = 1e-2)": {"flat": (0.692, 84), "plains": (0.702, 83), "mountain": (0.078, 87),
                            "river": (0.014, 7)},
}
"""The paper's low-level navigator table."""

PAPER_CONDITIONING = {
    # (conditioning, fine-tuning): (SPL, success rate %) per terrain, appendix Table "VPT-Nav
    # Performance of different Goal-Conditioning Methods" (Houlsby adapters and LoRA both count
    # as adapters here; the table's LoRA rows are given).
    ("trxl", "full"): {"flat": (0.050, 5), "plains": (0.423, 46), "mountain": (0.000, 0),
                       "river": (0.000, 0)},
    ("trxl", "adapter"): {"flat": (0.481, 55), "plains": (0.475, 51), "mountain": (0.058, 42),
                          "river": (0.000, 0)},
    ("dual", "adapter"): {"flat": (0.798, 96), "plains": (0.762, 90), "mountain": (0.169, 100),
                          "river": (0.287, 100)},
    ("head", "head"): {"flat": (0.849, 96), "plains": (0.780, 88), "mountain": (0.157, 100),
                       "river": (0.274, 87)},
    ("head", "adapter"): {"flat": (0.904, 98), "plains": (0.880, 95), "mountain": (0.150, 100),
                          "river": (0.307, 100)},
}
"""The paper's conditioning study (``head`` fine-tuning is its "No TrXL Update")."""

def paper_figures(navigator: str, training: Sequence | None) -> tuple[str, dict | None]:
    """The paper's row to print beside a navigator, and its figures: a trained variant's
    conditioning-study row where the paper has one, else its KL row, else the row its entry
    names (:attr:`~mrsteve.control.registry.NavigatorSpec.paper_row`; ``("-", None)``: none)."""
    if training is not None:
        conditioning, finetune, kl = training
        if (conditioning, finetune) in PAPER_CONDITIONING:
            return f"{conditioning}/{finetune}", PAPER_CONDITIONING[conditioning, finetune]
        row = f"VPT-Nav (KL = {'0' if kl == 0 else f'{kl:.0e}'.replace('e-0', 'e-')})"
        if row in PAPER_NAVIGATORS:
            return row, PAPER_NAVIGATORS[row]
    row = navigator_spec(navigator).paper_row
    return (row, PAPER_NAVIGATORS[row]) if row in PAPER_NAVIGATORS else ("-", None)


@dataclass(frozen=True)
class NavigationTaskConfig(AgentParts, LookOption):
    """The Navigation experiment's set-up. Of the agent's parts
    (:class:`~mrsteve.agent.parts.AgentParts`) it takes the navigators, each a row of its own:
    ``navigator`` comma-separated or ``all`` (default: the one ``parts`` names), and trained
    weights files beside them, ``navigator_weights`` comma-separated, each named by its training
    settings (the conditioning and KL studies)."""

    terrain: str = "all"
    """flat, plains, mountain, river, highlands (held out: no navigator trains or is tuned
    there), forest (Minecraft's density), desert or unbounded (ABA-Random's world);
    comma-separated, or 'all' (the paper's four)."""
    max_steps: int = 1000
    """Steps before an episode fails (the paper does not say; 1000 = 50 s)."""
    min_distance: float = 10.0
    """Least distance from the spawn to the goal in blocks (the paper: 10)."""
    max_distance: float = 20.0
    """Largest distance from the spawn to the goal in blocks (the paper: 20)."""
    success_radius: float = 3.0
    """Success within this many blocks of the goal (the paper: 3)."""
    trajectory_every: int = 2
    """The record keeps every this-many-th position of the trajectory (for plots)."""
    obs_size: tuple[int, int] = DEFAULT_OBS_SIZE
    """``(height, width)`` of the observations."""

    def __post_init__(self) -> None:
        self.terrains  # noqa: B018 (its checks, its messages)
        self.looks  # noqa: B018 (its checks, its messages)
        super().__post_init__()
        if not 0 < self.min_distance <= self.max_distance:
            raise ValueError(f"need 0 < min_distance <= max_distance, got {self.min_distance}, "
                             f"{self.max_distance}")
        if self.max_steps < 1 or self.trajectory_every < 1 or not self.success_radius > 0:
            raise ValueError(f"max_steps and trajectory_every must be >= 1 and success_radius "
                             f"> 0, got {self}")

    @property
    def terrains(self) -> list[str]:
        return choose(self.terrain, list(TERRAINS), "terrain", all_means=list(PAPER_TERRAINS))

    def check_parts(self) -> None:
        """The navigators to compare are built-in ones (several, or all) and run alone."""
        self.navigators  # noqa: B018 (its checks, its messages)

    @property
    def navigators(self) -> list[str]:
        return choose(self.navigator, list(BUILT_IN_NAVIGATORS), "navigator")

    @property
    def weight_files(self) -> list[str]:
        return [part.strip() for part in (self.navigator_weights or "").split(",")
                if part.strip()]


def trained_label(tree: NavigatorAgentConfig) -> str:
    """A navigator's name in groups and tables: its own, or for a trained variant
    ``learned-<conditioning>-<fine-tuning>-kl<KL>``."""
    if tree.training is None:
        return tree.name
    conditioning, finetune, kl = tree.training
    return f"learned-{conditioning}-{finetune}-kl{kl:g}"


def navigator_labels(trees: list[NavigatorAgentConfig]) -> list[str]:
    """The navigators' names in groups and tables (:func:`trained_label`); weights files that
    would share a name (retrains of one recipe) are told apart by the first digits of their
    SHA-256."""
    names = [trained_label(tree) for tree in trees]
    return [f"{name}-{tree.weights_sha256[:8]}"
            if tree.weights_sha256 and names.count(name) > 1 else name
            for name, tree in zip(names, trees, strict=True)]


@dataclass(frozen=True)
class NavigationTask:
    """The task part of a navigation episode's run spec."""

    terrain: str
    world: str
    max_steps: int
    min_distance: float
    max_distance: float
    success_radius: float
    trajectory_every: int
    obs_size: tuple[int, int]
    look: str = field(default="day", metadata=OMITTED_WHEN_DEFAULT)


def navigation_episode(spec: RunSpec) -> Record:
    """One episode on the spec's terrain with the navigator its tree describes: the world and
    the goal from the seed, the navigator until success or ``max_steps``; metrics, goal and
    trajectory (every ``trajectory_every``-th position)."""
    task = spec.task

    def goal(blocks: np.ndarray, start: tuple[float, float], rng: np.random.Generator):
        return pick_goal(WorldGround(blocks), start, rng, task,
                         across_water=task.terrain == "river")

    with make_env(world=task.world, obs_size=task.obs_size, look=task.look) as env:
        episode = run_navigation(env, build_agent(spec.agent), goal, seed=spec.seed,
                                 max_steps=task.max_steps)
    return {
        **episode.metrics,
        "goal": list(episode.goal),
        "trajectory": compact_trajectory(episode.trajectory, task.trajectory_every),
    }


class Navigation(Experiment):
    """Navigation (paper appendix, navigator table): success rate and SPL per terrain.

    The navigator must come within 3 blocks of a goal 10-20 blocks from the spawn (across the
    water on river) within --max-steps steps. SPL weighs success by the shortest path length on
    the true terrain over the path taken.
    """

    name = "navigation"
    examples = ('--terrain all --navigator depth,straight --workers 2', '--terrain river --episodes 5 --plots runs/river-plots',)
    config_type = NavigationTaskConfig
    choices = {"navigator": BUILT_IN_NAVIGATORS}
    options = ("terrain", "parts", "navigator", "navigator_weights", "max_steps", "min_distance",
               "max_distance", "look")
    agent_options = ("navigator_weights",)  # --navigator chooses the rows, --parts the default
    renamed_options = {"weights": "navigator_weights"}
    default_episodes = 20
    episode = staticmethod(navigation_episode)

    def groups(self, config: NavigationTaskConfig) -> list[Group]:
        several = len(config.navigators) + len(config.weight_files) > 1
        groups = []
        for terrain, look in ((t, look) for t in config.terrains for look in config.looks):
            task = NavigationTask(terrain, TERRAINS[terrain], config.max_steps,
                                  config.min_distance, config.max_distance, config.success_radius,
                                  config.trajectory_every, tuple(config.obs_size), look)
            where = terrain if look == "day" else f"{terrain}-{look}"
            trees = [navigator_agent_config(nav, success_radius=config.success_radius)
                     for nav in config.navigators]
            trees += [navigator_agent_config("learned", success_radius=config.success_radius,
                                             weights=path) for path in config.weight_files]
            for tree, name in zip(trees, navigator_labels(trees), strict=True):
                label = f"{where}.{name}" if several else where
                groups.append(Group(RunSpec(self.name, label, f"navigation/{where}", task, tree),
                                    cost=config.max_steps))
        return groups

    def metrics(self, config: NavigationTaskConfig) -> tuple[str, ...]:
        return METRICS

    def recorded_groups(self, recorded: dict) -> list[Group]:
        """The groups of a run given ``--navigator-weights`` files that are gone: its navigators as the
        manifest recorded them (name, weights' SHA-256, training)."""
        from mrsteve.control.heightmap import HeightMapConfig
        from mrsteve.control.navigation import NavigatorConfig
        from mrsteve.control.path_planning import PathCosts

        def pairs(rows) -> tuple:
            return tuple(tuple(row) for row in rows)

        groups = []
        for tree in recorded.values():
            agent, settings = dict(tree["agent"]), dict(tree["agent"]["navigator"])
            settings.update(costs=PathCosts(**settings["costs"]),
                            map=HeightMapConfig(**settings["map"]))
            training = agent["training"]
            agent.update(navigator=NavigatorConfig(**settings), data=pairs(agent["data"]),
                         training=None if training is None else tuple(training))
            task = NavigationTask(**{**tree["task"], "obs_size": tuple(tree["task"]["obs_size"])})
            groups.append(Group(RunSpec(tree["experiment"], tree["group"], tree["task_name"], task,
                                        NavigatorAgentConfig(**agent),
                                        data=pairs(tree["data"]))))
        return groups

    def table(self, config, groups, summaries) -> str:
        if len(config.looks) > 1:  # the looks side by side (the paper's figures are the day's)
            looks, rows = by_look(
                groups, summaries, lambda group: (
                    group.spec.task.terrain,
                    group.label.partition(".")[2] or trained_label(group.spec.agent)),
                lambda group, summary: (format_metric(summary["success_rate"], 1),
                                        format_metric(summary["spl"], 3)))
            return format_table(["terrain", "navigator",
                                 *(f"{name} ({look})" for look in looks
                                   for name in ("success %", "SPL"))], rows)
        rows = []
        for group in groups:
            summary = summaries[group.label]
            task, tree = group.spec.task, group.spec.agent
            terrain = task.terrain
            row, figures = paper_figures(tree.name, tree.training)
            paper = ("-" if figures is None or terrain not in figures or task.look != "day"
                     else "{:.3f} ({} %)".format(*figures[terrain]))
            name = group.label.partition(".")[2] or trained_label(tree)
            where = terrain if task.look == "day" else f"{terrain} ({task.look})"
            rows.append([where, name, format_metric(summary["success_rate"], 1),
                         format_metric(summary["spl"], 3), paper, row])
        return format_table(["terrain", "navigator", "success %", "SPL", "paper SPL (success)",
                             "paper row"], rows)

    def plot_episode(self, record: Record, group: Group, path: Path) -> None:
        from mrsteve.eval.plots import save_trajectory_plot, world_blocks

        task = group.spec.task
        save_trajectory_plot(
            path, world_blocks(task.world, record["seed"]), record["trajectory"],
            target=record["goal"], radius=task.success_radius,
            title=f"{task.terrain}, {record['agent']}, seed {record['seed']}: "
                  f"{'success' if record['success_rate'] else 'failure'}, SPL {record['spl']:.2f}",
        )  # fmt: skip


NAVIGATION = Navigation()
