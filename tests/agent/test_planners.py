"""The crafting planners (paper appendix "LLM-Augmented Agent with MrSteve"): plans parsed
strictly, the chat client against a real HTTP server on the loopback interface (answers,
retries, timeouts, errors), DEPS repairing a plan that omits the crafting table by replanning,
failures counted and never a crash, and the memory summary saying only what the memory holds."""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Self

import numpy as np
import pytest

from mrsteve.agent.factory import agent_config, build_agent, hierarchical_agent_config
from mrsteve.agent.planners import (
    ChatClient,
    DepsPlanner,
    GroundTruthPlanner,
    LLMConfig,
    LLMError,
    PlannerConfig,
    describe_memory,
    parse_plan,
)
from mrsteve.agent.plans import Subgoal, ground_truth_plan
from mrsteve.env import make_env
from mrsteve.eval.llm_planner import crafting_episode, mining_instructions
from mrsteve.eval.spec import RunSpec
from mrsteve.tasks.crafting import find_crafting
from mrsteve.world.crafting import load_recipes

RECIPES = load_recipes()
MINEABLE = ("log", "wool", "leather")


def answer(plan: list[dict], explanation: str = "") -> str:
    return json.dumps({"explanation": explanation, "plan": plan})


SIGN_WITHOUT_TABLE = answer([
    {"kind": "mine", "item": "log", "count": 2},
    {"kind": "craft", "item": "planks", "count": 8},
    {"kind": "craft", "item": "stick", "count": 4},
    {"kind": "craft", "item": "sign", "count": 3},
])
SIGN_WITH_TABLE = answer([
    {"kind": "mine", "item": "log", "count": 3},
    {"kind": "craft", "item": "planks", "count": 12},
    {"kind": "craft", "item": "crafting_table", "count": 1},
    {"kind": "craft", "item": "stick", "count": 4},
    {"kind": "craft", "item": "sign", "count": 3},
], "a sign needs the 3x3 grid of a crafting table")


class ScriptedServer:
    """An OpenAI-compatible chat-completions server on 127.0.0.1 answering from a script: each
    entry is a reply (a string: the model's answer) or a callable that handles the request. It
    lists no models, so a run first asks it a one-token completion: that probe is answered
    "ready" outside the script and kept in :attr:`probes`."""

    def __init__(self, script: list[str | Callable]) -> None:
        self.script = list(script)
        self.requests: list[dict] = []
        self.headers: list[dict] = []
        self.probes: list[dict] = []
        server = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = json.loads(self.rfile.read(int(self.headers["Content-Length"])))
                if body.get("max_tokens") == 1:
                    server.probes.append(body)
                    step = "ready"
                else:
                    server.requests.append(body)
                    server.headers.append(dict(self.headers))
                    step = server.script.pop(0) if len(server.script) > 1 else server.script[0]
                if callable(step):
                    step(self)
                    return
                reply = json.dumps({"choices": [{"message": {"role": "assistant",
                                                             "content": step}}]}).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(reply)))
                self.end_headers()
                self.wfile.write(reply)

            def log_message(self, *args):
                pass

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}/v1"
        self.thread = threading.Thread(target=self.httpd.serve_forever, daemon=True)

    def __enter__(self) -> Self:
        self.thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
        self.thread.join()


def status(code: int):
    def reply(handler):
        handler.send_response(code)
        handler.send_header("Content-Length", "0")
        handler.end_headers()
    return reply


def stall(seconds: float):
    def reply(handler):
        time.sleep(seconds)
        status(200)(handler)
    return reply


def client(server: ScriptedServer, **config) -> ChatClient:
    return ChatClient(LLMConfig(server.url, "scripted", **{"backoff": 0.0, **config}),
                      sleep=lambda seconds: None)


# -- parsing ----------------------------------------------------------------------------------

def test_a_plan_is_parsed_into_subgoals():
    plan = parse_plan(SIGN_WITH_TABLE, MINEABLE, RECIPES)
    assert plan[0] == Subgoal("mine", "log", 3)
    assert plan[2] == Subgoal("craft", "crafting_table", 1)
    fenced = f"```json\n{SIGN_WITH_TABLE}\n```"
    assert parse_plan(fenced, MINEABLE, RECIPES) == plan


@pytest.mark.parametrize(("text", "says"), [
    ("first mine a log, then craft planks", "not JSON"),
    (json.dumps({"explanation": "x"}), '"plan"'),
    (json.dumps({"plan": []}), '"plan"'),
    (answer([{"kind": "build", "item": "log", "count": 1}]), "kind must be one of mine, craft"),
    (answer([{"kind": "mine", "item": "diamond", "count": 1}]), "cannot mine 'diamond'"),
    (answer([{"kind": "craft", "item": "log", "count": 1}]), "cannot craft 'log'"),
    (answer([{"kind": "craft", "item": "planks", "count": 0}]), "count must be an int >= 1"),
    (answer([{"kind": "craft", "item": "planks", "count": "4"}]), "count must be an int >= 1"),
    (answer([{"kind": "craft", "item": "planks", "count": 4, "tool": "axe"}]), "not an object"),
])
def test_anything_but_a_plan_is_refused_saying_why(text, says):
    with pytest.raises(LLMError, match=says):
        parse_plan(text, MINEABLE, RECIPES)


def test_deps_without_a_server_is_refused_saying_how_to_point_it_at_one():
    with pytest.raises(ValueError, match="--llm-url http://"):
        PlannerConfig("deps")
    with pytest.raises(ValueError, match="http:// or https://"):
        LLMConfig("localhost:8000/v1")
    with pytest.raises(ValueError, match="planner"):
        PlannerConfig("gpt")


def test_the_ground_truth_planner_plans_from_the_inventory():
    planner = GroundTruthPlanner(RECIPES, max_replans=1)
    assert planner.plan("bed", {}) == ground_truth_plan("bed", RECIPES)
    have = {"log": 2, "wool": 3}
    assert planner.replan("bed", have, None, None, "x") == ground_truth_plan("bed", RECIPES, have)
    assert planner.replan("bed", have, None, None, "x") is None  # the budget is spent


# -- the chat client --------------------------------------------------------------------------

def test_the_client_speaks_chat_completions_and_sends_the_key(monkeypatch):
    monkeypatch.setenv("MRSTEVE_TEST_KEY", "secret")
    with ScriptedServer([SIGN_WITH_TABLE]) as server:
        text = client(server, api_key_env="MRSTEVE_TEST_KEY").complete(
            [{"role": "user", "content": "plan"}])
    assert text == SIGN_WITH_TABLE
    assert server.requests[0]["model"] == "scripted"
    assert server.requests[0]["messages"] == [{"role": "user", "content": "plan"}]
    assert server.headers[0]["Authorization"] == "Bearer secret"


def test_server_errors_are_retried_and_a_bad_request_is_not():
    with ScriptedServer([status(500), status(503), SIGN_WITH_TABLE]) as server:
        assert client(server, retries=2).complete([]) == SIGN_WITH_TABLE
    assert len(server.requests) == 3
    with ScriptedServer([status(500)]) as server, pytest.raises(LLMError, match="HTTP 500"):
        client(server, retries=2).complete([])
    assert len(server.requests) == 3
    with ScriptedServer([status(400)]) as server, pytest.raises(LLMError, match="HTTP 400"):
        client(server, retries=2).complete([])
    assert len(server.requests) == 1


def test_a_server_that_does_not_answer_in_time_is_an_error():
    with ScriptedServer([stall(1.0)]) as server, pytest.raises(LLMError, match="no answer"):
        client(server, timeout=0.2, retries=1).complete([])
    assert len(server.requests) == 2


def test_a_server_that_is_not_there_is_an_error():
    with ScriptedServer([SIGN_WITH_TABLE]) as server:
        url = server.url
    with pytest.raises(LLMError, match="no answer"):
        ChatClient(LLMConfig(url, "m", retries=0)).complete([])


# -- DEPS over the agents ---------------------------------------------------------------------

def deps_spec(url: str, controller: str = "mrsteve", task: str = "sign", seed: int = 42,
              memory_access: bool = False) -> RunSpec:
    crafting = find_crafting(task)[0]
    planner = PlannerConfig("deps", memory_access, max_replans=3,
                            llm=LLMConfig(url, "scripted", timeout=2.0, retries=1, backoff=0.0))
    tree = hierarchical_agent_config(agent_config(controller, parts="stand-in", patch_size=19.0),
                                     planner, mining_instructions())
    return RunSpec("llm-planner", f"{task}.{controller}", crafting.key, crafting, tree,
                   seed=seed)


def test_deps_repairs_a_plan_without_the_crafting_table_by_replanning():
    with ScriptedServer([SIGN_WITHOUT_TABLE, SIGN_WITH_TABLE]) as server:
        record = crafting_episode(deps_spec(server.url))
    assert record["success_rate"] == 100.0
    assert record["replans"] == 1 and record["planner_failures"] == 0
    assert record["subgoals_failed"] == [
        "craft sign x3: sign needs a crafting table and the agent has none"]
    asked = server.requests[1]["messages"][-1]["content"]
    assert 'The subgoal "craft sign x3" failed' in asked and "Inventory:" in asked
    transcript = record["llm_transcript"]
    assert "system" in transcript[0] and transcript[2]["plan"][2] == "craft crafting_table x1"


@pytest.mark.parametrize("failure", ["malformed", "timeout", "500"])
def test_a_failed_answer_is_counted_and_the_episode_goes_on(failure):
    bad = {"malformed": "Sure! Here is the plan: mine logs, craft planks.",
           "timeout": stall(3.0), "500": status(500)}[failure]
    script = [bad, bad] if failure != "malformed" else [bad]  # the client tries twice
    with ScriptedServer([*script, SIGN_WITH_TABLE]) as server:
        record = crafting_episode(deps_spec(server.url))
    assert record["planner_failures"] == 1
    assert record["success_rate"] == 100.0  # asked again, it got a plan
    assert "error" in record["llm_transcript"][1]


def test_a_planner_that_never_answers_leaves_the_agent_waiting_until_the_task_ends():
    with ScriptedServer([status(500)]) as server:
        record = crafting_episode(deps_spec(server.url, task="oak-stairs"))
    assert record["success_rate"] == 0.0 and record["steps"] == 3000
    assert record["planner_failures"] == 4  # the first plan and the three replans allowed
    assert len(server.requests) == 8  # each tried twice


# -- the memory summary -----------------------------------------------------------------------

def test_the_memory_summary_says_only_what_the_memory_holds():
    """A FIFO memory of 30 frames sees the cows, then 60 frames of trees (a frame's embedding is
    of the 16-frame clip ending there): the cows are forgotten, and neither the summary nor the
    planner's prompt says it saw them."""
    tree = hierarchical_agent_config(agent_config("fm", parts="stand-in", patch_size=15.0,
                                                  capacity=30),
                                     PlannerConfig(memory_access=True), mining_instructions())
    agent = build_agent(tree)
    cows = {"teleport": {"x": 70.5, "z": 32.5, "yaw": -90.0, "pitch": 10.0}}
    with make_env(world="map2") as env:
        obs, info = env.reset(seed=0, options=cows)
        agent.reset(obs, np.random.default_rng(0), info["camera"])
        for t in range(10):
            agent.observe(obs, t)
        summary = agent.memory_summary(obs, 10)
        assert summary["near cow"] is not None
        assert summary["near cow"].distance < 20 and summary["near cow"].steps_ago <= 10
        env.unwrapped.apply_commands({"teleport": {"x": 20.5, "z": 50.5, "yaw": 90.0}})
        obs = env.step({})[0]
        for t in range(10, 70):
            agent.observe(obs, t)
        summary = agent.memory_summary(obs, 70)
    assert summary["near cow"] is None
    text = describe_memory(summary)
    assert "near cow: not remembered" in text and "near cow: seen" not in text
    prompt_planner = DepsPlanner(None, RECIPES, MINEABLE)
    assert "near cow: seen" not in prompt_planner._state({}, summary)


def test_steve1_remembers_nothing_so_memory_access_changes_nothing():
    records = []
    for access in (False, True):
        crafting = find_crafting("bed")[0]
        tree = hierarchical_agent_config(agent_config("steve1", parts="stand-in", patch_size=19.0),
                                         PlannerConfig("gt", access), mining_instructions())
        records.append(crafting_episode(RunSpec("llm-planner", "bed", crafting.key, crafting,
                                                tree, seed=43)))
    assert records[0] == records[1]


class FakeController:
    """A controller whose memory holds what ``seen`` says (prompt -> blocks away)."""

    name = "fake"

    def __init__(self, seen: dict[str, float]) -> None:
        self.seen = seen

    def sighting(self, prompt, obs, t):
        from mrsteve.protocols import Sighting

        distance = self.seen.get(prompt)
        return None if distance is None else Sighting(prompt, distance, 0.0, 5)


@pytest.mark.parametrize("memory_access", [False, True])
def test_the_selector_prefers_what_the_memory_holds_near_only_with_access(memory_access):
    """The paper's selector, softmax over -mu: with access a remembered, near resource is
    estimated quick (mu 0.2K steps against 1.5K), so it is drawn about 79 % of the time."""
    from mrsteve.agent.hierarchical import HierarchicalAgent

    mining = {m.item: m for m in mining_instructions()}
    agent = HierarchicalAgent(FakeController({"near sheep": 0.0}), GroundTruthPlanner(RECIPES),
                              mining, RECIPES, memory_access=memory_access)
    agent._rng = np.random.default_rng(0)
    agent.plan = ground_truth_plan("bed", RECIPES)  # mine log x2 and wool x3 lead
    picks = [agent.select({}, 0).item for _ in range(2000)]
    share = picks.count("wool") / len(picks)
    expected = 1 / (1 + np.exp(-1.3)) if memory_access else 0.5
    assert abs(share - expected) < 0.04
    assert set(picks) == {"log", "wool"}  # only the leading mine subgoals are drawn


def test_the_deps_experiment_keeps_every_prompt_and_answer_in_the_run_folder(tmp_path):
    from typer.testing import CliRunner

    from mrsteve.cli import app

    out = tmp_path / "run"
    with ScriptedServer([SIGN_WITHOUT_TABLE, SIGN_WITH_TABLE]) as server:
        result = CliRunner().invoke(app, [
            "eval", "llm-planner", "--task", "sign", "--agent", "steve1", "--parts", "stand-in",
            "--planner", "deps",
            "--llm-url", server.url, "--llm-model", "scripted", "--episodes", "1",
            "--out", str(out), "--no-progress"])
    assert result.exit_code == 0, result.output
    assert len(server.probes) == 1, "checked with one token before the first episode"
    records = [json.loads(line) for line in (out / "summary.episodes.jsonl")  # one group
               .read_text().splitlines()]
    assert records[0]["success_rate"] == 100.0 and records[0]["replans"] == 1
    transcript = records[0]["llm_transcript"]
    assert [("prompt" in entry, "answer" in entry) for entry in transcript[1:]] == [
        (True, True), (True, True)]
    assert transcript[1]["answer"] == SIGN_WITHOUT_TABLE
    assert "DEPS with Qwen2.5-72B" in result.output  # the paper's DEPS table beside ours
