"""The LLM-augmented experiment (paper appendix "LLM-Augmented Agent with MrSteve"): crafting tasks
for a planner over MrSteve or STEVE-1.

Each group is one crafting task (:mod:`mrsteve.tasks.crafting`), one controller, one planner
(``gt``: the ground-truth plan, the paper's second table; ``deps``: DEPS with a language model
behind an OpenAI-compatible server, its first table) and one memory-access setting (``on``: the
planner reads the controller's memory, beyond the paper). The raw items are mined as the item
tasks tell them (log, wool, leather: ``data/tasks.toml``). Records hold success (the item in the
inventory), the steps it took, the planner's replans and failures, and with ``deps`` every prompt
and answer.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from dataclasses import dataclass, fields, replace
from typing import Any

from mrsteve.agent.config import HierarchicalAgentConfig
from mrsteve.agent.factory import AGENTS, build_agent, hierarchical_agent_config
from mrsteve.agent.hierarchical import MineInstruction
from mrsteve.agent.planners import PLANNERS, ChatClient, LLMConfig, LLMError, PlannerConfig
from mrsteve.env import make_env
from mrsteve.eval.experiment import AGENT_PARTS, AgentOptions, Experiment, Summaries
from mrsteve.eval.options import SweepOptions
from mrsteve.eval.records import Record
from mrsteve.eval.results import format_metric, format_table
from mrsteve.eval.spec import Group, RunSpec
from mrsteve.naming import choose
from mrsteve.tasks.catalog import load_catalog
from mrsteve.tasks.crafting import CraftingTask, crafting_env_kwargs, find_crafting, run_crafting

MINED = ("log", "wool", "leather")
"""The raw items of the crafting tasks, obtained by the controller as the item tasks say."""

MEMORY_ACCESS = ("off", "on")
"""The ``--memory-access`` settings (comma-separated for both)."""

LLM_OPTIONS = ("llm_url", "llm_model", "llm_key_env", "llm_timeout")
"""The options of the language model, which only the deps planner asks."""

SERVER_CHECK_TIMEOUT = 5.0
"""Seconds a deps run waits for the language model's server to answer before its first
episode."""

PAPER_GT = {"oak-stairs": (80, 83), "sign": (70, 67), "fence": (67, 70), "bed": (37, 60),
            "painting": (60, 73), "carpet": (43, 60), "item-frame": (53, 63),
            "leather-boots": (13, 33), "leather-chestplate": (3, 17),
            "leather-helmet": (20, 20), "leather-leggings": (0, 13)}
"""The appendix's table "Success Rate of two low-level controllers with the Ground-Truth plan":
(STEVE-1, MrSteve) success %."""

PAPER_DEPS = {"oak-stairs": (67, 80), "sign": (53, 60), "fence": (40, 50), "bed": (27, 50)}
"""The appendix's DEPS table (Qwen2.5-72B): (STEVE-1, MrSteve) success %."""

PAPER_CRAFTING = {"gt": (PAPER_GT, "the ground-truth plan"),
                  "deps": (PAPER_DEPS, "DEPS with Qwen2.5-72B")}
"""The appendix's table of each planner, and what it is."""

PAPER_CONTROLLERS = {"steve1": 0, "mrsteve": 1}
"""The column of each controller in the appendix's tables."""

SPARSE = ("bed", "painting", "carpet", "item-frame", "leather-boots", "leather-chestplate",
          "leather-helmet", "leather-leggings")
"""The tasks whose items are sparse (wool, leather: a herd somewhere on the map)."""


@dataclass(frozen=True)
class LLMPlannerConfig(AgentOptions):
    """A sweep of crafting tasks (the paper's settings)."""

    task: str = "all"
    """Crafting task(s): oak-stairs, sign, fence, bed, painting, carpet, item-frame,
    leather-boots, leather-chestplate, leather-helmet, leather-leggings (comma-separated, or
    'all')."""
    agent: str = "mrsteve,steve1"
    """The controller(s) under the planner: mrsteve, steve1, or a variant (comma-separated)."""
    planner: str = "gt"
    """gt (the ground-truth plan from the recipes) or deps (DEPS: a language model plans and
    replans; needs --llm-url)."""
    memory_access: str = "off"
    """Whether the planner reads the controller's memory (beyond the paper); on,off runs
    both."""
    llm_url: str = ""
    """The base URL of an OpenAI-compatible chat-completions server (vLLM, llama.cpp's server,
    ollama), e.g. http://localhost:8000/v1 (deps only)."""
    llm_model: str = ""
    """The model name the server serves (deps only, required)."""
    llm_key_env: str = "OPENAI_API_KEY"
    """The environment variable holding the server's API key (unset: none sent)."""
    llm_timeout: float = 60.0
    """Seconds to wait for one answer of the language model."""
    max_replans: int = 3
    """Replans after a failed subgoal at most (DEPS's N)."""

    def __post_init__(self) -> None:
        choose(self.agent, list(AGENTS), "agent")
        find_crafting(self.task)
        asks_llm = PLANNERS.spec(self.planner).needs_llm
        for access in self.accesses:
            self.planner_config(access)  # its checks, its messages (deps without --llm-url)
        if asks_llm and not self.llm_model.strip():
            raise ValueError(f"--planner {self.planner} needs --llm-model: the name of the model "
                             f"the server at {self.llm_url} serves (e.g. Qwen2.5-72B-Instruct)")
        given = [f"--{field.name.replace('_', '-')}" for field in fields(self)
                 if field.name in LLM_OPTIONS and getattr(self, field.name) != field.default]
        if not asks_llm and given:
            one = len(given) == 1
            takers = " or ".join(f"--planner {name}" for name, spec in PLANNERS.items()
                                 if spec.needs_llm)
            raise ValueError(f"{', '.join(given)} {'is' if one else 'are'} for {takers} (the "
                             f"{self.planner} planner asks no language model): drop "
                             f"{'it' if one else 'them'} or give {takers}")
        super().__post_init__()

    @property
    def accesses(self) -> list[bool]:
        return [value == "on" for value in choose(self.memory_access, MEMORY_ACCESS,
                                                  "memory access", allow_all=False)]

    def check_server(self, timeout: float = SERVER_CHECK_TIMEOUT) -> None:
        """A ``ValueError`` naming the problem unless the language model can be asked: the
        variable --llm-key-env names is set (when it is not the default, which may be unset for
        a server that needs no key), the server at --llm-url answers within ``timeout`` seconds,
        lists --llm-model among its models, or, where it lists none, answers a one-token chat
        completion (a server that fails later is counted in the records: the planner's
        failures)."""
        llm = self.planner_config(False).llm
        default_key = next(field.default for field in fields(self) if field.name == "llm_key_env")
        if self.llm_key_env != default_key and not os.environ.get(self.llm_key_env):
            raise ValueError(f"--llm-key-env {self.llm_key_env}: the environment variable "
                             f"{self.llm_key_env} is not set; export it with the server's API "
                             "key, or leave --llm-key-env out when the server needs none")
        client = ChatClient(llm)
        try:
            served = client.served_models(timeout)
        except LLMError as error:
            raise ValueError(f"cannot reach the language model's server: {error}; start it, or "
                             "give the URL it serves (--llm-url)") from None
        if served and not {self.llm_model, f"{self.llm_model}:latest"} & set(served):  # ollama
            raise ValueError(f"the server at {self.llm_url} does not serve --llm-model "
                             f"{self.llm_model!r}; it serves: {', '.join(served)}")
        if served:
            return
        probe = ChatClient(replace(llm, retries=0, timeout=min(timeout, llm.timeout)))
        try:
            probe.complete([{"role": "user", "content": "Answer with one word: ready?"}],
                           max_tokens=1)
        except LLMError as error:
            raise ValueError(f"the server at {self.llm_url} lists no models and does not answer "
                             f"a chat completion ({error}): give the base URL of an "
                             "OpenAI-compatible server (POST <url>/chat/completions)") from None

    def planner_config(self, memory_access: bool) -> PlannerConfig:
        llm = LLMConfig(self.llm_url, self.llm_model, self.llm_key_env, self.llm_timeout)
        return PlannerConfig(self.planner, memory_access, self.max_replans, llm=llm)


def every_ask_failed(summary: dict[str, dict[str, float]]) -> bool:
    """Whether every request to the planner in a group's episodes failed (``summary``: the
    group's metric summaries): its failures are its first plan plus every replan, in each
    episode, so in the means."""
    failures, replans = summary.get("planner_failures"), summary.get("replans")
    if not failures or not replans or failures.get("mean") is None:
        return False
    return failures["mean"] > 0 and abs(failures["mean"] - 1.0 - replans["mean"]) < 1e-9


def mining_instructions() -> tuple[MineInstruction, ...]:
    """How the controller obtains each raw item: the item tasks' prompts and tools."""
    catalog = load_catalog()
    return tuple(MineInstruction(catalog.prompts(item), catalog.item(item).tool)
                 for item in MINED)


def crafting_tree(agent: str, task: CraftingTask, planner: PlannerConfig,
                  options: AgentOptions | None = None) -> HierarchicalAgentConfig:
    """The tree of ``planner`` over the agent called ``agent`` (its settings from ``options``)
    for ``task``: the controller mines as the item tasks say (:func:`mining_instructions`)."""
    controller = (options or AgentOptions()).agent_tree(agent, task.world, None)
    return hierarchical_agent_config(controller, planner, mining_instructions())


def crafting_episode(spec: RunSpec) -> Record:
    """One crafting episode: success, steps, and what the planner did."""
    task: CraftingTask = spec.task
    agent = build_agent(spec.agent)
    with make_env(**crafting_env_kwargs(task)) as env:
        result = run_crafting(env, agent, task, seed=spec.seed)
    report = agent.report
    record: dict[str, Any] = {
        "steps": result.steps,
        "success_rate": 100.0 if result.success else 0.0,
        "duration": result.steps if result.success else None,
        "replans": report.replans,
        "planner_failures": report.planner_failures,
        "subgoals_done": report.done,
        "subgoals_failed": report.failed,
        "plans": report.plans,
    }
    transcript = getattr(agent.planner, "transcript", None)
    if transcript is not None:
        record["llm_transcript"] = transcript
    return record


class LLMPlanner(Experiment):
    """Crafting with a planner (paper appendix "LLM-Augmented Agent"): success per task.

    A planner over MrSteve or STEVE-1: the ground-truth plan (gt) or DEPS with a language model
    (deps); the planner may read the controller's memory (--memory-access on, beyond the paper).
    Success: the item in the inventory within 3,000 steps (oak-stairs, sign, fence) or 6,000 (the
    rest), on the procedural plains.
    """

    name = "llm-planner"
    config_type = LLMPlannerConfig
    choices = {"memory_access": MEMORY_ACCESS}
    options = ("task", "agent", "planner", "memory_access", "llm_url", "llm_model",
               "llm_key_env", "llm_timeout", "max_replans", *AGENT_PARTS)
    default_episodes = 30
    episode = staticmethod(crafting_episode)
    examples = ("--task bed --agent mrsteve,steve1 --episodes 10",
                "--task all --memory-access on,off --workers 2 --out runs/crafting",
                ("--task oak-stairs,sign,fence,bed --planner deps "
                 "--llm-url http://localhost:8000/v1 --llm-model Qwen2.5-72B-Instruct"))

    def run(self, config: LLMPlannerConfig, sweep: SweepOptions,
            echo: Callable[[str], Any] = print) -> Summaries:
        """The sweep (:meth:`Experiment.run`), once the language model's server answers (deps):
        an unreachable server stops the run before its first episode, nothing written."""
        if not PLANNERS.spec(config.planner).needs_llm:
            return super().run(config, sweep, echo)
        config.check_server()
        summaries = super().run(config, sweep, echo)
        if summaries and all(every_ask_failed(summary) for summary in summaries.values()):
            where = sweep.out or sweep.json_path
            raise ValueError(f"every request to the language model at {config.llm_url} failed "
                             f"(planner_failures in the records{f' at {where}' if where else ''}"
                             "): no episode ran a plan of the model's")
        return summaries

    def groups(self, config: LLMPlannerConfig) -> list[Group]:
        groups = []
        for task in find_crafting(config.task):
            for agent in choose(config.agent, list(AGENTS), "agent"):
                for access in config.accesses:
                    if access and AGENTS[agent].memory is None and False in config.accesses:
                        continue  # no memory to read: the flag changes nothing
                    tree = crafting_tree(agent, task, config.planner_config(access), config)
                    label = f"{task.name}.{agent}" + (".memory" if access else "")
                    spec = RunSpec(self.name, label, task.key, task, tree)
                    groups.append(Group(spec, cost=task.max_steps))
        return groups

    def metrics(self, config: LLMPlannerConfig) -> tuple[str, ...]:
        return ("success_rate", "duration", "replans", "planner_failures")

    def table(self, config: LLMPlannerConfig, groups, summaries) -> str:
        paper, which = PAPER_CRAFTING.get(config.planner, ({}, None))
        rows = []
        for group in groups:
            summary = summaries[group.label]
            task = group.spec.task.name
            controller = group.spec.agent.controller.name
            side = PAPER_CONTROLLERS.get(controller)
            cited = paper.get(task)
            rows.append([task, controller, "on" if group.spec.agent.planner.memory_access
                         else "off", format_metric(summary["success_rate"], 1),
                         format_metric(summary["duration"], 0),
                         format_metric(summary["replans"], 2),
                         "-" if cited is None or side is None else f"{cited[side]}"])
        headers = ["task", "controller", "memory access", "success %", "steps",
                   "replans", "paper %"]
        cited = ("paper %: none for this planner" if which is None else
                 f"paper %: the appendix's table for {which} (MineDojo, 30 episodes)")
        return (format_table(headers, rows) + "\nsteps: mean steps of the successful episodes; "
                + cited)


LLM_PLANNER = LLMPlanner()
