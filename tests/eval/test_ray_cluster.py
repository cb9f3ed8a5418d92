"""A sweep on a Ray cluster of two nodes (two ``ray start`` on this machine, one CPU each), as a
user runs it (``mrsteve eval ... --backend ray --address``): its episodes run on both nodes, and
each record names the node that ran it. Skipped without the ray extra."""

from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")

from mrsteve.eval.records import read_records


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def ray_command(command: str, *arguments: str, env: dict) -> None:
    done = subprocess.run([command, *arguments], env=env, capture_output=True, text=True,
                          timeout=180)
    if done.returncode != 0:
        raise RuntimeError(f"ray {' '.join(arguments)} failed:\n{done.stdout}\n{done.stderr}")


@pytest.fixture
def two_nodes():
    """A Ray cluster of two nodes of one CPU each on this machine (``ray start --head`` and a
    second ``ray start --address``), stopped after the test. Its session folder is short: Ray's
    sockets live there, and a socket's path may not exceed 107 bytes. The nodes and this driver
    share a token (Ray's token authentication, the default for local clusters)."""
    command = shutil.which("ray", path=str(Path(sys.executable).parent)) or shutil.which("ray")
    if command is None:
        pytest.skip("the ray command is not installed")
    port = free_port()
    folder = tempfile.mkdtemp(prefix="ray", dir="/tmp" if os.path.isdir("/tmp") else None)
    env = {**os.environ, "RAY_TMPDIR": folder, "RAY_AUTH_MODE": "token",
           "RAY_AUTH_TOKEN": secrets.token_hex(32)}
    address = f"127.0.0.1:{port}"
    start = ["start", "--num-cpus", "1", "--disable-usage-stats", "--node-ip-address",
             "127.0.0.1", "--object-store-memory", str(100 * 2**20)]
    try:
        ray_command(command, *start, "--head", "--port", str(port), "--include-dashboard",
                    "false", env=env)
        ray_command(command, *start, "--address", address, env=env)
        yield address, env
    finally:
        subprocess.run([command, "stop", "--force"], env=env, capture_output=True, timeout=180)
        shutil.rmtree(folder, ignore_errors=True)


def test_a_sweep_runs_on_both_nodes_of_a_cluster_and_records_say_which(tmp_path, two_nodes):
    address, env = two_nodes
    out = tmp_path / "run"
    done = subprocess.run(
        [sys.executable, "-m", "mrsteve", "eval", "exploration", "--agent",
         "count-based,go-explore", "--parts", "stand-in", "--steps", "400", "--episodes", "2", "--backend", "ray",
         "--address", address, "--out", str(out), "--no-progress"],
        env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout + done.stderr
    records = [record for path in sorted(out.glob("*.episodes.jsonl"))
               for record in read_records(path)]
    assert len(records) == 4
    assert len({record["node"] for record in records}) == 2, "both nodes ran episodes"
