"""Settings a sweep cannot run with are refused before the first episode, in one line with exit
code 2, leaving nothing behind: a language model's server that does not answer, a Ray cluster
that is not there, a run folder holding another run, an empty --out, options the planner does not
use; and `mrsteve --version`."""

from __future__ import annotations

import json
import socket
import threading
import time
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from importlib import metadata

import pytest
from typer.testing import CliRunner

from mrsteve.cli import app
from mrsteve.eval.exploration import EXPLORATION
from mrsteve.eval.llm_planner import LLM_PLANNER


def invoke(*args: str):
    return CliRunner().invoke(app, ["eval", *args, "--no-progress"])


def error_lines(output: str) -> list[str]:
    return [line for line in output.splitlines() if line.startswith("error:")]


def must_not_run(spec):
    raise AssertionError("an episode ran")


def free_port() -> int:
    """A port on 127.0.0.1 that nothing listens on."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class ChatServer(BaseHTTPRequestHandler):
    """An OpenAI-compatible server that lists one model and fails every chat request."""

    def do_GET(self):
        if self.path.rstrip("/") != "/v1/models":
            self.send_error(404)
            return
        body = json.dumps({"object": "list", "data": [{"id": "tiny", "object": "model"}]})
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.end_headers()
        self.wfile.write(body.encode())

    def do_POST(self):
        self.send_error(500)

    def log_message(self, *args):
        pass


class PlainServer(BaseHTTPRequestHandler):
    """A web server that is not OpenAI-compatible: 404 on every GET, 501 on POST."""

    def do_GET(self):
        self.send_error(404)

    def log_message(self, *args):
        pass


@contextmanager
def serving(handler):
    """The port of an HTTP server of ``handler`` on 127.0.0.1, stopped on leaving."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield server.server_address[1]
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


@pytest.fixture
def llm_server():
    """The base URL of a :class:`ChatServer` on 127.0.0.1, stopped after the test."""
    with serving(ChatServer) as port:
        yield f"http://127.0.0.1:{port}/v1"


def deps(url: str, *more: str) -> list[str]:
    return ["llm-planner", "--task", "oak-stairs", "--agent", "steve1", "--parts", "stand-in",
            "--episodes", "1", "--planner", "deps", "--llm-url", url, *more]


def test_a_deps_run_whose_server_cannot_be_reached_stops_before_the_first_episode(
        tmp_path, monkeypatch):
    monkeypatch.setattr(LLM_PLANNER, "episode", must_not_run)
    url = f"http://127.0.0.1:{free_port()}/v1"
    result = invoke(*deps(url, "--llm-model", "tiny", "--out", str(tmp_path / "run")))
    assert result.exit_code == 2, result.output
    (line,) = error_lines(result.output)
    assert url in line and "Traceback" not in result.output
    assert not (tmp_path / "run").exists()


def test_a_deps_run_starts_when_its_server_answers(tmp_path, monkeypatch, llm_server):
    ran = []
    monkeypatch.setattr(LLM_PLANNER, "episode", lambda spec: ran.append(spec) or {
        "steps": 1, "success_rate": 0.0, "duration": None, "replans": 1,
        "planner_failures": 1})
    result = invoke(*deps(llm_server, "--llm-model", "tiny", "--out", str(tmp_path / "run")))
    assert result.exit_code == 0, result.output
    assert len(ran) == 1 and (tmp_path / "run" / "manifest.json").is_file()


def test_a_server_that_fails_every_request_after_the_check_fails_the_run_records_kept(
        tmp_path, llm_server):
    out = tmp_path / "run"
    result = invoke(*deps(llm_server, "--llm-model", "tiny", "--max-replans", "1", "--out",
                          str(out)))
    assert result.exit_code == 2, result.output
    (line,) = error_lines(result.output)
    assert "every request to the language model" in line and str(out) in line
    (record,) = [json.loads(line) for line in
                 (out / "summary.episodes.jsonl").read_text().splitlines()]
    assert record["success_rate"] == 0.0 and record["planner_failures"] == 2
    assert "HTTP 500" in record["llm_transcript"][-1]["error"]


def test_a_server_that_is_not_openai_compatible_stops_before_the_first_episode(
        tmp_path, monkeypatch):
    monkeypatch.setattr(LLM_PLANNER, "episode", must_not_run)
    with serving(PlainServer) as port:
        url = f"http://127.0.0.1:{port}/v1"
        started = time.monotonic()
        result = invoke(*deps(url, "--llm-model", "tiny", "--out", str(tmp_path / "run")))
    assert time.monotonic() - started < 30
    assert result.exit_code == 2, result.output
    (line,) = error_lines(result.output)
    assert "lists no models and does not answer a chat completion" in line
    assert "HTTP 501" in line and "Traceback" not in result.output
    assert not (tmp_path / "run").exists()


def test_an_unset_key_variable_is_named_before_the_first_episode(tmp_path, monkeypatch,
                                                                 llm_server):
    monkeypatch.setattr(LLM_PLANNER, "episode", must_not_run)
    monkeypatch.delenv("MRSTEVE_TEST_UNSET_KEY", raising=False)
    result = invoke(*deps(llm_server, "--llm-model", "tiny", "--llm-key-env",
                          "MRSTEVE_TEST_UNSET_KEY", "--out", str(tmp_path / "run")))
    assert result.exit_code == 2, result.output
    (line,) = error_lines(result.output)
    assert "MRSTEVE_TEST_UNSET_KEY is not set" in line
    assert not (tmp_path / "run").exists()


def test_a_model_the_server_does_not_serve_is_refused_naming_those_it_does(
        tmp_path, monkeypatch, llm_server):
    monkeypatch.setattr(LLM_PLANNER, "episode", must_not_run)
    result = invoke(*deps(llm_server, "--llm-model", "huge", "--out", str(tmp_path / "run")))
    assert result.exit_code == 2
    (line,) = error_lines(result.output)
    assert "'huge'" in line and "tiny" in line
    assert not (tmp_path / "run").exists()


def test_deps_without_a_model_name_is_refused(tmp_path, monkeypatch, llm_server):
    monkeypatch.setattr(LLM_PLANNER, "episode", must_not_run)
    result = invoke(*deps(llm_server, "--out", str(tmp_path / "run")))
    assert result.exit_code == 2
    (line,) = error_lines(result.output)
    assert "--llm-model" in line
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize("given", [["--llm-url", "http://localhost:8000/v1"],
                                   ["--llm-model", "tiny"], ["--llm-timeout", "5"]])
def test_language_model_options_without_the_deps_planner_are_refused(given, tmp_path,
                                                                     monkeypatch):
    monkeypatch.setattr(LLM_PLANNER, "episode", must_not_run)
    result = invoke("llm-planner", "--planner", "gt", *given, "--out", str(tmp_path / "run"))
    assert result.exit_code == 2
    (line,) = error_lines(result.output)
    assert given[0] in line and "--planner deps" in line
    assert not (tmp_path / "run").exists()


def ray_cluster_running() -> bool:
    """Whether a Ray cluster runs on this machine (``--address auto`` would find it)."""
    ray_services = pytest.importorskip("ray._private.services")
    return bool(ray_services.find_gcs_addresses())


def test_address_auto_without_a_cluster_says_none_was_found(tmp_path, monkeypatch):
    if ray_cluster_running():
        pytest.skip("a Ray cluster runs on this machine")
    monkeypatch.delenv("RAY_ADDRESS", raising=False)
    monkeypatch.setattr(EXPLORATION, "episode", must_not_run)
    result = invoke("exploration", "--episodes", "1", "--backend", "ray", "--address", "auto",
                    "--out", str(tmp_path / "run"))
    assert result.exit_code == 2, result.output
    (line,) = error_lines(result.output)
    assert "no Ray cluster found at --address auto" in line and "ray start --head" in line
    assert "free the space" not in result.output
    assert not (tmp_path / "run").exists()


def test_an_address_where_no_cluster_listens_fails_within_seconds(tmp_path, monkeypatch):
    pytest.importorskip("ray")
    monkeypatch.setattr(EXPLORATION, "episode", must_not_run)
    address = f"127.0.0.1:{free_port()}"
    started = time.monotonic()
    result = invoke("exploration", "--episodes", "1", "--backend", "ray", "--address", address,
                    "--out", str(tmp_path / "run"))
    assert time.monotonic() - started < 30
    assert result.exit_code == 2, result.output
    (line,) = error_lines(result.output)
    assert f"no Ray cluster found at --address {address}" in line
    assert "recorded" not in result.output
    assert not (tmp_path / "run").exists()


def test_an_address_where_a_web_server_listens_fails_within_seconds(tmp_path, monkeypatch):
    """A port that accepts TCP but is not Ray (here an HTTP server) is refused by the gRPC
    check, not after Ray's minutes of retries."""
    pytest.importorskip("ray")
    monkeypatch.setattr(EXPLORATION, "episode", must_not_run)
    with serving(PlainServer) as port:
        address = f"127.0.0.1:{port}"
        started = time.monotonic()
        result = invoke("exploration", "--episodes", "1", "--backend", "ray", "--address",
                        address, "--out", str(tmp_path / "run"))
    assert time.monotonic() - started < 30
    assert result.exit_code == 2, result.output
    (line,) = error_lines(result.output)
    assert f"no Ray cluster found at --address {address}" in line and "gRPC" in line
    assert not (tmp_path / "run").exists()


def test_an_interrupt_before_the_first_episode_says_nothing_was_written(tmp_path, monkeypatch):
    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr("mrsteve.eval.sweep.connected", interrupted)
    result = invoke("exploration", "--episodes", "1", "--out", str(tmp_path / "run"))
    assert result.exit_code == 130
    assert "nothing was written" in result.output and "recorded" not in result.output
    assert not (tmp_path / "run").exists()


def fake_exploration(spec):
    return {"map_coverage": 1.0, "revisit_count": 0.0, "trajectory": [[0.0, 0.0]], "goals": []}


def test_a_run_folder_holding_other_groups_is_refused_naming_them(tmp_path, monkeypatch):
    monkeypatch.setattr(EXPLORATION, "episode", fake_exploration)
    out = tmp_path / "run"
    first = invoke("exploration", "--agent", "count-based,plan4mc", "--episodes", "1",
                   "--steps", "30", "--out", str(out))
    assert first.exit_code == 0, first.output
    before = {path.name: path.read_bytes() for path in out.iterdir() if path.is_file()}
    monkeypatch.setattr(EXPLORATION, "episode", must_not_run)
    result = invoke("exploration", "--agent", "go-explore", "--episodes", "1", "--steps", "30",
                    "--out", str(out))
    assert result.exit_code == 2
    (line,) = error_lines(result.output)
    assert "count-based" in line and "plan4mc" in line and "--out" in line
    after = {path.name: path.read_bytes() for path in out.iterdir() if path.is_file()}
    assert after == before, "the other run's files are kept as they were"


def test_an_empty_out_is_refused_and_nothing_is_written_here(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(EXPLORATION, "episode", must_not_run)
    result = invoke("exploration", "--episodes", "1", "--out", "")
    assert result.exit_code == 2
    (line,) = error_lines(result.output)
    assert "--out" in line
    assert list(tmp_path.iterdir()) == []


def test_all_with_other_names_is_refused_without_calling_all_unknown():
    result = invoke("llm-planner", "--task", "all,bed")
    assert result.exit_code == 2
    (line,) = error_lines(result.output)
    assert "unknown" not in line and "'all' alone" in line


def test_memory_access_errors_list_the_values_its_help_lists():
    help_text = " ".join(CliRunner().invoke(app, ["eval", "llm-planner", "--help"],
                                            env={"COLUMNS": "300"}).output.split())
    listed = help_text.split("Known: ", 1)[1].split(" (comma-separated)")[0]
    result = invoke("llm-planner", "--memory-access", "all")
    assert result.exit_code == 2
    (line,) = error_lines(result.output)
    assert line.endswith(f"known: {listed}")


def test_version_prints_the_installed_version():
    result = CliRunner().invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.output.strip() == f"mrsteve {metadata.version('mrsteve')}"


@pytest.mark.parametrize("content", [b"not weights at all", bytes(range(256)) * 2,
                                     b"PK\x03\x04 a torn archive"])
def test_a_garbage_weights_file_is_refused_in_our_words(content, tmp_path, monkeypatch):
    """numpy's own message for a file that is no archive advises loading it as a pickle."""
    garbage = tmp_path / "garbage.npz"
    garbage.write_bytes(content)
    monkeypatch.setattr(EXPLORATION, "episode", must_not_run)
    result = invoke("exploration", "--navigator", "learned", "--navigator-weights", str(garbage),
                    "--episodes", "1", "--out", str(tmp_path / "run"))
    assert result.exit_code == 2
    (line,) = error_lines(result.output)
    assert f"{garbage} is not a navigator weights file" in line
    assert "pickle" not in line and "unsafe" not in line
    assert not (tmp_path / "run").exists()


@pytest.mark.parametrize(("given", "message"), [
    (["--agent", "mrsteve,,steve1"], "has an empty name between its commas"),
    (["--json", ""], "--json '.' names no file or folder of its own"),
    (["--plots", ""], "--plots '.' names no file or folder of its own"),
])
def test_empty_names_and_paths_are_refused_before_any_work(given, message, tmp_path,
                                                           monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = invoke("aba-sparse", "--episodes", "1", *given)
    assert result.exit_code == 2, result.output
    (line,) = error_lines(result.output)
    assert message in line
    assert not list(tmp_path.iterdir()), "nothing written"


@pytest.mark.parametrize("command", [[], ["eval"], ["eval", "aba-sparse"], ["bench", "memory"]])
def test_h_is_help(command):
    result = CliRunner().invoke(app, [*command, "-h"])
    assert result.exit_code == 0 and "Usage:" in result.output
