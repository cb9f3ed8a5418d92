"""Planners of crafting tasks (paper appendix "LLM-Augmented Agent with MrSteve"): the ground-truth
plan, and DEPS with a language model behind the OpenAI-compatible HTTP API.

A planner gives a :class:`~mrsteve.agent.plans.Subgoal` list for a target item from the
inventory (:meth:`Planner.plan`) and a new one when a subgoal failed (:meth:`Planner.replan`),
or ``None`` when it has none to give (an answer that is not a plan, a server that does not
answer, the replanning budget spent). Both may be shown the controller's memory: a
what-where-when summary (:class:`~mrsteve.protocols.Sighting` per resource prompt).

- :class:`GroundTruthPlanner`: the shortest plan from the recipe graph
  (:func:`~mrsteve.agent.plans.ground_truth_plan`), from the inventory it is shown; the paper's
  second table.
- :class:`DepsPlanner`: DEPS (Wang et al., 2023: describe, explain, plan, select): an initial plan
  from the model; on a failure, a description of what failed, the inventory (and the memory
  summary) goes back to the model, which explains and plans again, at most
  :attr:`PlannerConfig.max_replans` times. Answers are parsed strictly (:func:`parse_plan`);
  every prompt and answer is kept (:attr:`DepsPlanner.transcript`).

:class:`ChatClient` speaks the chat-completions endpoint that vLLM, llama.cpp's server, ollama
and OpenAI serve, with only the standard library: a timeout per request, retries with
exponential backoff on timeouts, refused connections, 429 and 5xx answers.
"""

from __future__ import annotations

import json
import os
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any, Protocol

from mrsteve.agent.plans import SUBGOAL_KINDS, Subgoal, ground_truth_plan
from mrsteve.naming import entry_point
from mrsteve.protocols import Sighting
from mrsteve.registry import Registry
from mrsteve.world.crafting import RecipeBook

MemorySummary = Mapping[str, Sighting | None]
"""What the controller's memory holds of each resource prompt (``None``: not remembered)."""


@dataclass(frozen=True)
class LLMConfig:
    """How to reach a language model: an OpenAI-compatible chat-completions server."""

    url: str = ""
    """The API's base URL, e.g. ``http://localhost:8000/v1`` (requests go to
    ``<url>/chat/completions``)."""
    model: str = ""
    """The model name the server knows."""
    api_key_env: str = "OPENAI_API_KEY"
    """The environment variable holding the API key (unset: no key is sent)."""
    timeout: float = 60.0
    """Seconds to wait for one answer."""
    retries: int = 2
    """Further tries after a timeout, a refused connection, a 429 or a 5xx answer."""
    backoff: float = 1.0
    """Seconds before the first retry, doubled for each next one."""
    temperature: float = 0.0

    def __post_init__(self) -> None:
        if self.url and not self.url.startswith(("http://", "https://")):
            raise ValueError(f"the LLM URL must start with http:// or https://, got {self.url!r} "
                             "(e.g. http://localhost:8000/v1)")
        if not self.timeout > 0 or self.retries < 0 or self.backoff < 0:
            raise ValueError("the LLM timeout must be > 0, retries and backoff >= 0")


@dataclass(frozen=True)
class PlannerConfig:
    """The planner above the controller (paper appendix "LLM-Augmented Agent with MrSteve")."""

    kind: str = "gt"
    """One of :data:`PLANNERS`: ``gt``, the ground-truth plan, or ``deps``, a language model's."""
    memory_access: bool = False
    """Whether the planner reads the controller's memory: the what-where-when summary goes into
    its description of the state and sets the selector's horizon of ``mine`` subgoals (beyond
    the paper, whose planner cannot read it)."""
    max_replans: int = 3
    """Replans after failed subgoals (or answers that were no plan) at most (DEPS's N)."""
    explore_horizon: float = 1.5
    """The selector's ``mu`` (thousands of steps) of a ``mine`` subgoal whose resource is not
    remembered, or of every ``mine`` subgoal without memory access."""
    llm: LLMConfig = field(default_factory=LLMConfig)
    """The language model (``deps`` only)."""

    def __post_init__(self) -> None:
        if PLANNERS.spec(self.kind).needs_llm and not self.llm.url:
            raise ValueError(f"the {self.kind} planner needs a language model: give the base URL "
                             "of an OpenAI-compatible server (--llm-url http://host:8000/v1, "
                             "served by vLLM, llama.cpp's server or ollama) and its --llm-model")
        if isinstance(self.max_replans, bool) or not isinstance(self.max_replans, int) or (
                self.max_replans < 0):
            raise ValueError(f"max_replans must be an int >= 0, got {self.max_replans!r}")
        if not self.explore_horizon > 0:
            raise ValueError(f"explore_horizon must be > 0 (thousands of steps), got "
                             f"{self.explore_horizon!r}")


class Planner(Protocol):
    """What the hierarchical agent asks (module docstring)."""

    replans: int
    """Replans given in this episode."""
    max_replans: int

    def plan(self, target: str, inventory: Mapping[str, int],
             memory: MemorySummary | None) -> list[Subgoal] | None: ...

    def replan(self, target: str, inventory: Mapping[str, int], memory: MemorySummary | None,
               failed: Subgoal | None, reason: str) -> list[Subgoal] | None: ...


def describe_memory(memory: MemorySummary) -> str:
    """The memory summary as the planner's description says it, one resource a line."""
    return "\n".join(f"- {sighting.describe()}" if sighting is not None
                     else f"- {prompt}: not remembered" for prompt, sighting in memory.items())


def describe_inventory(inventory: Mapping[str, int]) -> str:
    return ", ".join(f"{count} {item}" for item, count in sorted(inventory.items())) or "nothing"


class GroundTruthPlanner:
    """The shortest plan from the recipe graph, from the inventory shown (the paper's second
    table); it reads no memory summary (its plan is already the shortest) and replans from the
    inventory on a failure, :attr:`PlannerConfig.max_replans` times at most."""

    def __init__(self, recipes: RecipeBook, max_replans: int = 3) -> None:
        self.recipes = recipes
        self.max_replans = max_replans
        self.replans = 0

    def plan(self, target, inventory, memory=None):
        self.replans = 0
        return ground_truth_plan(target, self.recipes, dict(inventory))

    def replan(self, target, inventory, memory, failed, reason):
        if self.replans >= self.max_replans:
            return None
        self.replans += 1
        return ground_truth_plan(target, self.recipes, dict(inventory))


class LLMError(RuntimeError):
    """The language model gave no answer (after the retries) or one that is not a plan."""


class ChatClient:
    """A chat-completions client for an OpenAI-compatible server (module docstring)."""

    def __init__(self, config: LLMConfig, sleep=time.sleep) -> None:
        self.config = config
        self._sleep = sleep
        self.endpoint = config.url.rstrip("/") + "/chat/completions"

    def _headers(self) -> dict[str, str]:
        headers = {"Content-Type": "application/json"}
        key = os.environ.get(self.config.api_key_env)
        if key:
            headers["Authorization"] = f"Bearer {key}"
        return headers

    def served_models(self, timeout: float = 5.0) -> list[str] | None:
        """The models the server lists (``GET <url>/models``, once, within ``timeout`` seconds):
        their names, or ``None`` when it answers without the list (a server may not offer it);
        :class:`LLMError` naming the URL when nothing answers there."""
        url = self.config.url.rstrip("/") + "/models"
        request = urllib.request.Request(url, headers=self._headers())
        try:
            with urllib.request.urlopen(request, timeout=min(timeout, self.config.timeout)) as (
                    response):
                listed = json.load(response)
            return [str(model["id"]) for model in listed["data"]]
        except urllib.error.HTTPError:
            return None  # it answered: the server is there
        except (urllib.error.URLError, TimeoutError, ConnectionError) as error:
            reason = getattr(error, "reason", error)
            if isinstance(reason, OSError) and reason.strerror:
                reason = reason.strerror.lower()
            raise LLMError(f"nothing answers at {self.config.url} ({reason})") from None
        except (ValueError, KeyError, IndexError, TypeError):
            return None

    def complete(self, messages: list[dict[str, str]], max_tokens: int | None = None) -> str:
        """The model's answer to ``messages`` (at most ``max_tokens`` tokens, where given);
        :class:`LLMError` when none came."""
        config = self.config
        request_body: dict[str, Any] = {"model": config.model, "messages": messages,
                                        "temperature": config.temperature}
        if max_tokens is not None:
            request_body["max_tokens"] = int(max_tokens)
        body = json.dumps(request_body).encode()
        headers = self._headers()
        problem = ""
        for attempt in range(config.retries + 1):
            if attempt:
                self._sleep(config.backoff * 2 ** (attempt - 1))
            request = urllib.request.Request(self.endpoint, body, headers, method="POST")
            try:
                with urllib.request.urlopen(request, timeout=config.timeout) as response:
                    answer = json.load(response)
                return str(answer["choices"][0]["message"]["content"])
            except urllib.error.HTTPError as error:
                problem = f"HTTP {error.code} from {self.endpoint}"
                if error.code != 429 and error.code < 500:
                    break  # the request itself is wrong: trying again will not help
            except (urllib.error.URLError, TimeoutError, ConnectionError) as error:
                reason = getattr(error, "reason", error)
                problem = f"no answer from {self.endpoint} ({reason})"
            except (ValueError, KeyError, IndexError, TypeError):
                problem = f"{self.endpoint} did not answer in the chat-completions form"
                break
        raise LLMError(problem)


def parse_plan(text: str, mineable: tuple[str, ...], recipes: RecipeBook) -> list[Subgoal]:
    """The plan in a model's answer: one JSON object ``{"explanation": ..., "plan": [{"kind":
    "mine"|"craft", "item": ..., "count": n}, ...]}`` (one Markdown code fence around it is
    allowed). Anything else raises :class:`LLMError` saying what is wrong."""
    body = text.strip()
    if body.startswith("```"):
        body = body.split("\n", 1)[1] if "\n" in body else ""
        body = body.rsplit("```", 1)[0]
    try:
        answer = json.loads(body)
    except json.JSONDecodeError as error:
        raise LLMError(f"the answer is not JSON ({error.msg})") from None
    if not isinstance(answer, dict) or not isinstance(answer.get("plan"), list) or not answer[
            "plan"]:
        raise LLMError('the answer has no "plan" list of subgoals')
    plan = []
    for n, step in enumerate(answer["plan"]):
        if not isinstance(step, dict) or set(step) - {"kind", "item", "count"}:
            raise LLMError(f"subgoal {n} is not an object with kind, item and count")
        kind, item, count = step.get("kind"), step.get("item"), step.get("count", 1)
        if kind not in SUBGOAL_KINDS:
            raise LLMError(f"subgoal {n}: kind must be one of {', '.join(SUBGOAL_KINDS)}, "
                           f"got {kind!r}")
        known = mineable if kind == "mine" else recipes.names
        if item not in known:
            raise LLMError(f"subgoal {n}: cannot {kind} {item!r}; {kind} one of "
                           f"{', '.join(known)}")
        if isinstance(count, bool) or not isinstance(count, int) or count < 1:
            raise LLMError(f"subgoal {n}: count must be an int >= 1, got {count!r}")
        plan.append(Subgoal(kind, item, count))
    return plan


SYSTEM_PROMPT = """You plan for an agent in Minecraft 1.11. Its actions are subgoals:
- mine: obtain raw items from the world, one of: {mineable}; "count" is how many it must hold;
- craft: make an item with the crafting action, one of: {craftable}; "count" is how many to make.
A recipe larger than the 2x2 inventory grid needs a crafting table: craft one first (the agent
places it by itself). Answer with one JSON object and nothing else:
{{"explanation": "<why the last plan failed, or your reasoning>",
  "plan": [{{"kind": "mine", "item": "log", "count": 2}}, {{"kind": "craft", "item": "planks", "count": 8}}]}}"""


class DepsPlanner:
    """DEPS over the controller (module docstring): describe, explain, plan."""

    def __init__(self, client: ChatClient, recipes: RecipeBook, mineable: tuple[str, ...],
                 max_replans: int = 3) -> None:
        self.client = client
        self.recipes = recipes
        self.mineable = tuple(mineable)
        self.max_replans = max_replans
        self.replans = 0
        self.transcript: list[dict[str, Any]] = []
        """Every exchange: the messages sent, the answer, the plan or the error."""
        self._messages: list[dict[str, str]] = []

    def plan(self, target, inventory, memory=None):
        self.replans = 0
        system = SYSTEM_PROMPT.format(mineable=", ".join(self.mineable),
                                      craftable=", ".join(self.recipes.names))
        self._messages = [{"role": "system", "content": system}]
        self.transcript.append({"system": system})
        return self._ask(f"Goal: obtain 1 {target}.\n{self._state(inventory, memory)}\n"
                         "Give the plan from this state.")

    def replan(self, target, inventory, memory, failed, reason):
        if self.replans >= self.max_replans:
            return None
        self.replans += 1
        what = f'The subgoal "{failed}" failed: {reason}.' if failed is not None else (
            f"There is no plan to follow: {reason}.")
        return self._ask(f"{what}\nGoal: obtain 1 {target}.\n{self._state(inventory, memory)}\n"
                         "Explain what went wrong, then give a new plan from this state.")

    def _state(self, inventory: Mapping[str, int], memory: MemorySummary | None) -> str:
        text = f"Inventory: {describe_inventory(inventory)}."
        if memory is not None:
            text += f"\nThe agent's memory (what it saw, where and when):\n{describe_memory(memory)}"
        return text

    def _ask(self, prompt: str) -> list[Subgoal] | None:
        self._messages.append({"role": "user", "content": prompt})
        entry: dict[str, Any] = {"prompt": prompt}
        try:
            answer = self.client.complete(self._messages)
            entry["answer"] = answer
            self._messages.append({"role": "assistant", "content": answer})
            plan = parse_plan(answer, self.mineable, self.recipes)
        except LLMError as error:
            entry["error"] = str(error)
            self.transcript.append(entry)
            return None
        entry["plan"] = [str(subgoal) for subgoal in plan]
        self.transcript.append(entry)
        return plan


@dataclass(frozen=True)
class PlannerSpec:
    """One planner: its name, what builds it, and whether it asks a language model."""

    name: str
    description: str
    build: Callable[[PlannerConfig, RecipeBook, tuple[str, ...]], Planner] | str
    """``build(config, recipes, mineable)``: a new planner (or the ``"module:function"`` that is
    it)."""
    needs_llm: bool = False
    """Whether it needs :attr:`PlannerConfig.llm` (``--llm-url`` and ``--llm-model``)."""

    def make(self, config: PlannerConfig, recipes: RecipeBook, mineable: tuple[str, ...]
             ) -> Planner:
        return entry_point(self.build, f"the {self.name} planner")(config, recipes, mineable)


def _ground_truth(config: PlannerConfig, recipes: RecipeBook, mineable: tuple[str, ...]):
    return GroundTruthPlanner(recipes, config.max_replans)


def _deps(config: PlannerConfig, recipes: RecipeBook, mineable: tuple[str, ...]):
    return DepsPlanner(ChatClient(config.llm), recipes, mineable, config.max_replans)


def check_planner_spec(spec: PlannerSpec) -> None:
    """Raise ``ValueError`` (one line) unless ``spec`` is a :class:`PlannerSpec`."""
    if not isinstance(spec, PlannerSpec):
        raise ValueError(f"a planner plug-in gives a PlannerSpec, not a {type(spec).__name__}")


PLANNERS: Registry[PlannerSpec] = Registry("planner", "mrsteve.planners", (
    PlannerSpec("gt", "the ground-truth plan from the recipe graph", _ground_truth),
    PlannerSpec("deps", "DEPS: a language model plans and replans", _deps, needs_llm=True),
), check=check_planner_spec)
"""The planners by name (:attr:`PlannerConfig.kind`); other packages add planners through the
entry-point group ``mrsteve.planners``."""


def make_planner(config: PlannerConfig, recipes: RecipeBook, mineable: tuple[str, ...]
                 ) -> Planner:
    """The planner ``config`` describes; ``mineable``: the raw items the controller can obtain."""
    return PLANNERS.make(config.kind, config, recipes, mineable)
