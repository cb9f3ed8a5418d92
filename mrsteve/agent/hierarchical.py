"""A planner over a low-level controller, for crafting tasks (paper appendix "LLM-Augmented Agent
with MrSteve").

:class:`HierarchicalAgent` is told a target item. Its planner (:mod:`mrsteve.agent.planners`: the
ground-truth plan, or DEPS with a language model) gives subgoals; ``mine`` subgoals go to the
controller (MrSteve or STEVE-1) with the resource's prompts and tool, as an ABA task gives them,
and ``craft`` subgoals are done with the functional ``craft`` action, a crafting table placed in
front first when the recipe needs its 3 x 3 grid (the paper uses MineDojo's functional actions
for both). A subgoal that cannot be done (a craft that makes nothing, a table the agent does not
have) goes back to the planner with what went wrong. Subgoals that may come in any order (the
leading ``mine`` subgoals) are picked by the paper's selector: a softmax over ``-mu(s, g)``, the
estimated thousands of steps a subgoal takes.

Beyond the paper, the planner may read the controller's memory (``memory_access``): a
what-where-when summary (:class:`~mrsteve.protocols.Sighting` of each resource prompt: seen or
not, how far and in which direction from here, how long ago) goes into the planner's description
of the state, and sets ``mu`` of ``mine`` subgoals (remembered and near: short).
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from mrsteve.agent.planners import MemorySummary, Planner
from mrsteve.agent.plans import Subgoal
from mrsteve.control.motion import clamp
from mrsteve.perception import TaskPrompts
from mrsteve.protocols import Decision, Observation, RememberingAgent
from mrsteve.world.content import load_content
from mrsteve.world.crafting import TABLE, RecipeBook

PLACE_PITCH = 45.0
"""Degrees the agent looks down to place a crafting table on the ground in front of it (the
ground 1.6 blocks ahead: clear of the player's own box, well within reach)."""
TURN = 15.0
"""Largest camera turn per step while placing, degrees."""
TABLE_REACH = 3.0
"""Blocks from where the agent placed its crafting table within which it uses it."""
PLACE_TRIES = 4
"""Sides tried for the table before the subgoal fails (a quarter turn after each miss)."""
STEPS_PER_BLOCK = 4.6
"""Steps to walk a block (Minecraft's 4.3 blocks a second at 20 steps a second)."""


@dataclass(frozen=True)
class MineInstruction:
    """How the controller obtains one raw item: its prompts (as an item task tells them) and the
    tool to hold (``None``: whatever is held)."""

    prompts: TaskPrompts
    tool: str | None = None

    @property
    def item(self) -> str:
        return self.prompts.item


@dataclass
class SubgoalState:
    """The running subgoal and what it has done so far."""

    subgoal: Subgoal
    start: int
    baseline: int
    """The item's count when the subgoal began (a craft counts what it made)."""
    tries: int = 0


@dataclass
class PlanReport:
    """What the planner did in an episode (the record's plan columns)."""

    plans: list[list[str]] = field(default_factory=list)
    done: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)
    replans: int = 0
    planner_failures: int = 0
    """Requests for a plan that gave none (an answer that was no plan, no answer, no budget)."""


class HierarchicalAgent:
    """A planner over a low-level controller (module docstring)."""

    def __init__(self, controller: RememberingAgent, planner: Planner,
                 mining: Mapping[str, MineInstruction], recipes: RecipeBook, *,
                 memory_access: bool = False, explore_horizon: float = 1.5,
                 name: str = "hierarchical") -> None:
        self.controller = controller
        self.planner = planner
        self.mining = dict(mining)
        self.recipes = recipes
        self.memory_access = memory_access
        self.explore_horizon = explore_horizon
        self.name = name
        self._items = load_content().item_names
        self._index = {item: i for i, item in enumerate(self._items)}
        self.report = PlanReport()

    # -- the Agent interface ------------------------------------------------------------------

    def reset(self, obs: Observation, rng: np.random.Generator, camera: Any) -> None:
        self.controller.reset(obs, rng, camera)
        self._rng = rng.spawn(1)[0]  # the selector's own stream
        self.target: str | None = None
        self.plan: list[Subgoal] | None = None
        self.current: SubgoalState | None = None
        self.told: str | None = None
        self.held: str | None = None
        self.table_at: tuple[float, float] | None = None
        self.report = PlanReport()
        self._exhausted = False

    def set_task(self, task: Any, t: int) -> None:
        """A target item to obtain (``task.item``): the plan is made at the next step."""
        self.target = task.item
        self.plan = None
        self.current = None

    def observe(self, obs: Observation, t: int) -> None:
        self.controller.observe(obs, t)

    def act(self, obs: Observation, t: int) -> Decision:
        inventory = self.inventory(obs)
        if self.plan is None:  # the first step: look (the memory keeps the view) and plan
            self.controller.observe(obs, t)
            self._ask(obs, t, inventory, None, None)
            return Decision({}, subgoal="plan")
        state = self._subgoal(obs, t, inventory)
        if state is None and not self._exhausted:  # the plan ran out before the target
            self._ask(obs, t, inventory, None, "the plan is done but the target is not made")
            state = self._subgoal(obs, t, inventory)
        if state is None:  # nothing the planner can still say: watch (the task times out)
            self.controller.observe(obs, t)
            return Decision({}, subgoal="-")
        if state.subgoal.kind == "mine":
            return self._mine(state, obs, t)
        return self._craft(state, obs, t, inventory)

    # -- subgoals -------------------------------------------------------------------------------

    def inventory(self, obs: Observation) -> dict[str, int]:
        counts = obs["inventory"]
        return {item: int(counts[i]) for i, item in enumerate(self._items) if counts[i] > 0}

    def _subgoal(self, obs: Observation, t: int, inventory: dict[str, int]) -> SubgoalState | None:
        """The running subgoal, or the next once it is done (the selector picks among those
        that may come in any order)."""
        state = self.current
        if state is not None and self._done(state, inventory):
            self.report.done.append(str(state.subgoal))
            self.plan.remove(state.subgoal)
            state = self.current = None
        while state is None and self.plan:
            subgoal = self.select(obs, t)
            if subgoal.kind == "mine" and subgoal.item not in self.mining:
                self._fail(SubgoalState(subgoal, t, 0), obs, t, inventory,
                           f"the agent cannot obtain {subgoal.item}")
                continue
            state = self.current = SubgoalState(subgoal, t, inventory.get(subgoal.item, 0))
            if self._done(state, inventory):  # already held
                self.report.done.append(str(subgoal))
                self.plan.remove(subgoal)
                state = self.current = None
        return state

    @staticmethod
    def _done(state: SubgoalState, inventory: dict[str, int]) -> bool:
        have = inventory.get(state.subgoal.item, 0)
        if state.subgoal.kind == "mine":
            return have >= state.subgoal.count
        return have - state.baseline >= state.subgoal.count

    def select(self, obs: Observation, t: int) -> Subgoal:
        """The next subgoal: among the leading ``mine`` subgoals (they may run in any order),
        one drawn with probability proportional to ``exp(-mu)`` (the paper's selector); else the
        plan's next."""
        ready = []
        for subgoal in self.plan:
            if subgoal.kind != "mine":
                break
            ready.append(subgoal)
        if len(ready) < 2:
            return self.plan[0]
        mu = np.array([self.horizon(subgoal, obs, t) for subgoal in ready])
        weights = np.exp(-(mu - mu.min()))
        return ready[int(self._rng.choice(len(ready), p=weights / weights.sum()))]

    def horizon(self, subgoal: Subgoal, obs: Observation, t: int) -> float:
        """``mu(s, g)``: thousands of steps the subgoal is expected to take. Without memory access
        every ``mine`` subgoal is alike (:attr:`explore_horizon`); with it, a remembered resource
        takes the walk there and a little work, one not remembered the exploration horizon."""
        if not self.memory_access or subgoal.item not in self.mining:
            return self.explore_horizon
        prompt = self.mining[subgoal.item].prompts.explore
        sighting = self.controller.sighting(prompt, obs, t)
        if sighting is None:
            return self.explore_horizon
        return min(self.explore_horizon, 0.2 + STEPS_PER_BLOCK * sighting.distance / 1000.0)

    def _mine(self, state: SubgoalState, obs: Observation, t: int) -> Decision:
        instruction = self.mining[state.subgoal.item]
        if instruction.tool is not None and self.held != instruction.tool:
            self.held = instruction.tool
            self.controller.observe(obs, t)
            return Decision({"equip": self._index[instruction.tool] + 1},
                            subgoal=str(state.subgoal))
        if self.told != state.subgoal.item:
            self.controller.set_task(instruction.prompts, t)
            self.told = state.subgoal.item
        decision = Decision.of(self.controller.act(obs, t))
        decision.subgoal = str(state.subgoal)
        return decision

    def _craft(self, state: SubgoalState, obs: Observation, t: int,
               inventory: dict[str, int]) -> Decision:
        """One step of a craft: place a crafting table first when the recipe needs one and none
        stands here, then craft once a step; a craft that made nothing fails the subgoal."""
        self.controller.observe(obs, t)  # the memory keeps what the agent sees meanwhile
        self.told = None
        subgoal = str(state.subgoal)
        item = state.subgoal.item
        recipe = self.recipes.recipe(item)
        here = (float(obs["pose"][0]), float(obs["pose"][2]))
        table_near = self.table_at is not None and math.dist(here, self.table_at) <= TABLE_REACH
        if recipe.needs_table and not table_near:
            return self._place_table(state, obs, t, inventory, here)
        made = inventory.get(item, 0) - state.baseline
        if state.tries and made < state.tries * recipe.count:
            reason = self.recipes.check(item, inventory, table_near) or "it made nothing"
            self._fail(state, obs, t, inventory, reason)
            return Decision({}, subgoal=subgoal)
        state.tries += 1
        return Decision({"craft": item}, subgoal=subgoal)

    def _place_table(self, state: SubgoalState, obs: Observation, t: int,
                     inventory: dict[str, int], here: tuple[float, float]) -> Decision:
        """Hold the crafting table, look down in front, place it (a quarter turn after a miss)."""
        subgoal = str(state.subgoal)
        if inventory.get(TABLE, 0) == 0:
            if state.tries:  # the table left the hand: it stands in front
                self.table_at = here
                state.tries = 0
                return Decision({}, subgoal=subgoal)
            self._fail(state, obs, t, inventory,
                       f"{state.subgoal.item} needs a crafting table and the agent has none")
            return Decision({}, subgoal=subgoal)
        if self.held != TABLE:
            self.held = TABLE
            return Decision({"equip": self._index[TABLE] + 1}, subgoal=subgoal)
        pitch = float(obs["pose"][4])
        if abs(pitch - PLACE_PITCH) > 1.0:
            turn = clamp(PLACE_PITCH - pitch, TURN)
            return Decision({"camera": np.array([turn, 0.0], np.float32)}, subgoal=subgoal)
        if state.tries >= PLACE_TRIES:
            self._fail(state, obs, t, inventory, "no room in front to place the crafting table")
            return Decision({}, subgoal=subgoal)
        turn = 0.0 if state.tries == 0 else 90.0  # the last place missed: another side
        state.tries += 1
        return Decision({"place": 1, "camera": np.array([0.0, turn], np.float32)},
                        subgoal=subgoal)

    # -- planning -------------------------------------------------------------------------------

    def _fail(self, state: SubgoalState, obs: Observation, t: int, inventory: dict[str, int],
              reason: str) -> None:
        """A subgoal could not be done: the planner is told and asked again."""
        self.report.failed.append(f"{state.subgoal}: {reason}")
        self.current = None
        self._ask(obs, t, inventory, state.subgoal, reason)

    def _ask(self, obs: Observation, t: int, inventory: dict[str, int], failed: Subgoal | None,
             reason: str | None) -> None:
        """A plan from the planner: the first (``reason`` ``None``) or a new one after a failure;
        when it gives none, what is left of the last plan stands."""
        memory = self.memory_summary(obs, t) if self.memory_access else None
        if reason is None:
            plan = self.planner.plan(self.target, inventory, memory)
        else:
            self.report.replans += 1
            plan = self.planner.replan(self.target, inventory, memory, failed, reason)
        if plan is None:
            self.report.planner_failures += 1
            plan = [subgoal for subgoal in (self.plan or []) if subgoal != failed]
            self._exhausted = not plan and self.planner.replans >= self.planner.max_replans
        self.plan = list(plan)
        self.report.plans.append([str(subgoal) for subgoal in self.plan])

    def memory_summary(self, obs: Observation, t: int) -> MemorySummary:
        """What the controller's memory holds of each resource the agent mines (what-where-when),
        by explore prompt: ``None`` for one not remembered."""
        prompts = dict.fromkeys(instruction.prompts.explore for instruction in self.mining.values())
        return {prompt: self.controller.sighting(prompt, obs, t) for prompt in prompts}
