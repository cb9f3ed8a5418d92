"""The instruction policy alone: STEVE-1's role measured without memory or navigation.

Each episode runs STEVE-1 (the instruction policy with the task's execute prompt, no memory:
:class:`~mrsteve.agent.baselines.Steve1`) on a procedural plains world (``plains``, ABA-Random's
maps, never a training world of the learned policies) for one item of the task catalog, holding
the task's tool as the tasks set it. The evaluator, unlike the agent, reads the world to place
the agent (``placement``):

- ``near``: within ``near_distance`` (12) blocks of a target of the item's skill (a block of its
  class with open air beside it, or a mob of its kind), facing a random way: the target is in
  view range, but not necessarily in view;
- ``far``: where the nearest target is ``far_distance`` (20 to 40) blocks away: out of view
  range, so the policy must search (not for the items of :data:`EVERYWHERE`).

Success is read from the inventory: the item's count rose within ``max_steps``. Metrics:
success (percent), the steps taken (``max_steps`` on failure), and what the evaluator sees of
how a policy fails (:class:`EpisodeWatch`): the closest it came to a target, the other items it
gathered, the shares of steps it looked steeply down and up, and the share of its attack and use
presses aimed at a target of the item's skill.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mrsteve.agent.factory import agent_config, build_agent
from mrsteve.agent.parts import AgentParts, instruction_weights_file
from mrsteve.agent.registry import BUILT_IN_INSTRUCTION_POLICIES
from mrsteve.control.skill_book import load_skills
from mrsteve.digests import OMITTED_WHEN_DEFAULT
from mrsteve.env import make_env
from mrsteve.env.commands import TREE_CUTS
from mrsteve.env.voxel_env import DEFAULT_OBS_SIZE
from mrsteve.eval.experiment import Experiment, LookOption
from mrsteve.eval.records import Record
from mrsteve.eval.results import by_look, format_metric, format_table
from mrsteve.eval.spec import Group, RunSpec
from mrsteve.naming import check_name, choose
from mrsteve.seeding import episode_rng
from mrsteve.tasks import placement as placing
from mrsteve.tasks.catalog import load_catalog
from mrsteve.tasks.driver import Driver
from mrsteve.world.recipes import WORLD_RECIPES

PLACEMENTS = ("near", "far")
"""Where an episode puts the agent relative to the item's targets (module docstring)."""

METRICS = ("success_rate", "steps", "closest", "other_items", "looking_down", "looking_up",
           "aimed")

STEEP_PITCH = 45.0
"""Pitch (degrees below or above the horizon) beyond which a step counts as looking steeply
down or up."""

EVERYWHERE = ("leaves", "wheat_seeds", "dirt")
"""Items whose targets (oak crowns, tall grass, the ground) cover the plains: no place lies 20
blocks from one, so they run ``near`` only."""


def target_positions(world, item: str) -> np.ndarray:
    """``float[K, 2]``: the world ``(x, z)`` of every target of ``item``'s skill
    (:func:`mrsteve.tasks.placement.target_positions` of its classes)."""
    skill = load_skills().skill(load_catalog().item(item).prompts.execute)
    return placing.target_positions(world, skill.targets, skill.on_mobs)


class EpisodeWatch:
    """What the evaluator (not the agent) reads along an instruction episode: the closest the
    player came to a target of the item's skill on the ground plane (blocks as the episode
    began, mobs where they are at each step), the items it gathered other than the task's, the
    shares of steps its view pitched more than :data:`STEEP_PITCH` degrees down and up, and the
    share of the steps pressing attack or use whose crosshair was on a target of the skill
    within reach (:meth:`pressed`)."""

    def __init__(self, world, item: str, inventory: np.ndarray) -> None:
        skill = load_skills().skill(load_catalog().item(item).prompts.execute)
        self.world, self.item = world, item
        self.targets = frozenset(skill.targets)
        self.fixed = None if skill.on_mobs else target_positions(world, item)
        self.start = inventory.astype(np.int64)
        self.slot = world.content.item_names.index(item)
        self.closest = math.inf
        self.steps = self.down = self.up = self.presses = self.aimed = 0

    def pressed(self, action) -> None:
        """Count ``action`` before the world takes it: whether it presses attack or use, and
        whether the crosshair then points at a target of the skill (water counts when using)."""
        use = bool(action.get("use", 0))
        if not (use or action.get("attack", 0)):
            return
        self.presses += 1
        target = self.world.target(use=use)
        content = self.world.content
        if target.kind == "block":
            name = content.blocks[int(self.world.blocks[target.cell])].name
        elif target.kind == "mob":
            name = content.mobs[int(self.world.mobs.records["kind"][target.mob])].name
        else:
            return
        self.aimed += name in self.targets

    def update(self, obs) -> None:
        targets = self.fixed if self.fixed is not None else target_positions(self.world,
                                                                             self.item)
        x, _, z, _, pitch = (float(v) for v in obs["pose"][:5])
        if len(targets):
            self.closest = min(self.closest, float(np.min(np.hypot(targets[:, 0] - x,
                                                                   targets[:, 1] - z))))
        self.steps += 1
        self.down += pitch > STEEP_PITCH
        self.up += pitch < -STEEP_PITCH

    def metrics(self, inventory: np.ndarray) -> dict[str, float]:
        gained = np.maximum(inventory.astype(np.int64) - self.start, 0)
        gained[self.slot] = 0
        return {"closest": self.closest, "other_items": float(gained.sum()),
                "looking_down": 100.0 * self.down / max(self.steps, 1),
                "looking_up": 100.0 * self.up / max(self.steps, 1),
                "aimed": 100.0 * self.aimed / self.presses if self.presses else None}


@dataclass(frozen=True)
class InstructionTaskConfig(AgentParts, LookOption):
    """The instruction experiment's set-up. Of the agent's parts
    (:class:`~mrsteve.agent.parts.AgentParts`) it takes the instruction policies, each a row of
    its own: ``instruction_policy`` comma-separated or ``all`` (default: the one ``parts``
    names; scripted,learned compares them)."""

    item: str = "all"
    """Items of the task catalog (comma-separated, or 'all')."""
    placement: str = "near,far"
    """near (a target within 12 blocks) and/or far (the nearest 20-40 blocks away)."""
    max_steps: int = 600
    """Steps before an episode fails."""
    near_distance: float = 12.0
    far_distance: tuple[float, float] = (20.0, 40.0)
    world: str = "plains"
    """The world recipe (plains: ABA-Random's; heldout_highlands: a family no learned part
    trains or is tuned on)."""
    trees: str = "whole"
    """The world's oak trees (comma-separated, each a condition of its own): whole, eye (each
    trunk's log at eye level taken, as after an agent's first log) or foot (only the foot log
    left open at its side, the rest inside the leaves: a tree once its easy logs are gone)."""
    obs_size: tuple[int, int] = DEFAULT_OBS_SIZE

    def __post_init__(self) -> None:
        super().__post_init__()
        check_name(self.world, WORLD_RECIPES, "world")
        self.tree_states  # noqa: B018 (its checks, its messages)
        self.looks  # noqa: B018 (its checks, its messages)
        self.items  # noqa: B018 (its checks, its messages)
        choose(self.placement, list(PLACEMENTS), "placement")
        if self.max_steps < 1 or not 0 < self.near_distance:
            raise ValueError(f"max_steps must be >= 1 and near_distance > 0, got {self}")

    def check_parts(self) -> None:
        """The instruction policies to compare are built-in ones (several, or all); a weights
        file given is the learned policy's, which is among them."""
        if self.instruction_weights is not None and "learned" not in self.policies:
            raise ValueError(f"--instruction-weights {self.instruction_weights} runs the learned "
                             f"instruction policy, which --instruction-policy "
                             f"{self.instruction_policy} leaves out")
        instruction_weights_file(self.instruction_weights, "learned")

    @property
    def policies(self) -> list[str]:
        """The instruction policies of :attr:`instruction_policy`."""
        return choose(self.instruction_policy, list(BUILT_IN_INSTRUCTION_POLICIES),
                      "instruction policy")

    @property
    def tree_states(self) -> list[str]:
        """The tree conditions of :attr:`trees`."""
        return choose(self.trees, ["whole", *TREE_CUTS], "trees", allow_all=False)

    @property
    def items(self) -> list[str]:
        return choose(self.item, [i for i in load_catalog().items], "item")


@dataclass(frozen=True)
class InstructionTask:
    """The task part of an instruction episode's run spec."""

    item: str
    placement: str
    distance: tuple[float, float]
    world: str
    max_steps: int
    obs_size: tuple[int, int]
    look: str = field(default="day", metadata=OMITTED_WHEN_DEFAULT)
    trees: str = field(default="whole", metadata=OMITTED_WHEN_DEFAULT)


def instruction_episode(spec: RunSpec) -> Record:
    """One episode (module docstring): the world from the seed, the tool given and held, the
    agent placed, STEVE-1 with the item's execute prompt until the item's count rises."""
    task = spec.task
    item = load_catalog().item(task.item)
    options: dict[str, Any] = {"clear": True}
    if task.trees != "whole":
        options["cut_trees"] = task.trees
    if item.tool is not None:
        options.update(give={item.tool: 1}, equip=item.tool)
    with make_env(world=task.world, obs_size=task.obs_size, look=task.look) as env:
        driver = Driver(env)
        info = driver.reset(seed=spec.seed, options=options)
        world = env.unwrapped.world
        placed = placing.start_near(driver, target_positions(world, task.item),
                                      episode_rng(spec.seed, "task"), task.distance)
        agent = build_agent(spec.agent)
        agent.reset(driver.view, episode_rng(spec.seed), info["camera"])
        agent.set_task(item.prompts, 0)
        slot = world.content.item_names.index(task.item)
        start = int(driver.obs["inventory"][slot])
        watch = EpisodeWatch(world, task.item, driver.obs["inventory"])
        watch.update(driver.obs)

        def got_it(step) -> bool:
            watch.update(step.obs)
            return int(step.obs["inventory"][slot]) > start

        def act(view, t):
            decision = agent.act(view, t)
            watch.pressed(decision)
            return decision

        last = driver.run(act, steps=task.max_steps, until=got_it)
        success = last is not None and int(driver.obs["inventory"][slot]) > start
        seen = watch.metrics(driver.obs["inventory"])
    return {"success_rate": 100.0 * success,
            "steps": float(driver.t if success else task.max_steps),
            **seen, "start": [placed["x"], placed["z"]]}


class Instruction(Experiment):
    """The instruction policy alone (STEVE-1 without memory): success rate and steps per item,
    with a target within 12 blocks (near) and out of view range (far).

    The learned policy (STEVE-1's recipe over RGB frames) runs by default; --instruction-policy
    scripted,learned runs the scripted skills (the STEVE-1 stand-in) beside it on the same seeds
    of the plains world, holding the task's tool.
    """

    name = "instruction"
    examples = ("--item all --episodes 10 --workers 2",
                "--item log,beef --instruction-policy scripted,learned --placement near")
    config_type = InstructionTaskConfig
    choices = {"instruction_policy": BUILT_IN_INSTRUCTION_POLICIES}
    options = ("item", "parts", "instruction_policy", "instruction_weights", "placement",
               "max_steps", "world", "trees", "look")
    default_episodes = 10
    episode = staticmethod(instruction_episode)

    def groups(self, config: InstructionTaskConfig) -> list[Group]:
        groups = []
        distances = {"near": (0.0, config.near_distance), "far": config.far_distance}
        placements = choose(config.placement, list(PLACEMENTS), "placement")
        for item, placement, look, trees in itertools.product(
                config.items, placements, config.looks, config.tree_states):
            if placement == "far" and item in EVERYWHERE:
                continue
            task = InstructionTask(item, placement, tuple(distances[placement]), config.world,
                                   config.max_steps, tuple(config.obs_size), look, trees)
            where = "-".join([placement, *([look] if look != "day" else []),
                              *([f"trees-{trees}"] if trees != "whole" else [])])
            for policy in config.policies:
                weights = config.instruction_weights if policy == "learned" else None
                tree = agent_config("steve1", parts=config.parts, instruction_policy=policy,
                                    instruction_weights=weights)
                groups.append(Group(RunSpec(self.name, f"{item}.{where}.{policy}",
                                            f"instruction/{item}/{where}", task, tree),
                                    cost=config.max_steps))
        return groups

    def metrics(self, config: InstructionTaskConfig) -> tuple[str, ...]:
        return METRICS

    def table(self, config, groups, summaries) -> str:
        if len(config.looks) > 1:  # the looks side by side: success, and the view turned up
            looks, rows = by_look(
                groups, summaries, lambda group: (
                    group.spec.task.item, group.spec.task.placement,
                    group.spec.agent.instruction_policy),
                lambda group, summary: (format_metric(summary["success_rate"], 1),
                                        format_metric(summary.get("looking_up"), 0)))
            return format_table(["item", "placement", "policy",
                                 *(f"{name} ({look})" for look in looks
                                   for name in ("success %", "looking up %"))], rows)
        rows = []
        for group in groups:
            summary = summaries[group.label]
            task = group.spec.task
            about = [*([task.look] if task.look != "day" else []),
                     *([f"trees: {task.trees}"] if task.trees != "whole" else [])]
            where = task.placement + (f" ({', '.join(about)})" if about else "")
            rows.append([task.item, where, group.spec.agent.instruction_policy,
                         format_metric(summary["success_rate"], 1),
                         format_metric(summary["steps"], 0),
                         format_metric(summary.get("closest"), 1),
                         format_metric(summary.get("other_items"), 1),
                         format_metric(summary.get("looking_down"), 0),
                         format_metric(summary.get("looking_up"), 0),
                         format_metric(summary.get("aimed"), 0)])
        return format_table(["item", "placement", "policy", "success %", "steps",
                             "closest", "other items", "looking down %", "looking up %",
                             "aimed %"], rows)


INSTRUCTION = Instruction()
