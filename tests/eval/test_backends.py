"""The local backend: an episode whose worker dies is run again, exactly once on the records; an
episode's own error reaches the driver; workers die with a driver killed by SIGKILL."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sweep_faults import attempts, dies_once, raises, steps, toy_group, toy_specs

from mrsteve.eval.backends import check_cluster, cluster_address, run_jobs
from mrsteve.eval.options import SweepOptions
from mrsteve.eval.records import read_records
from mrsteve.eval.sweep import run_episodes, run_sweep


def test_a_worker_killed_mid_episode_is_replaced_and_the_episode_runs_again(tmp_path):
    options = SweepOptions(episodes=4, seed=3, workers=2, progress=False, out=tmp_path / "run")
    summaries = run_sweep([toy_group(folder=str(tmp_path), kill=1)], ["value"], options,
                          job=dies_once, echo=lambda _: None)
    assert summaries["g"]["value"]["mean"] == (9 + 16 + 25 + 36) / 4
    assert attempts(tmp_path, 1) == 2, "the killed episode ran a second time"
    assert [attempts(tmp_path, i) for i in (0, 2, 3)] == [1, 1, 1]
    written = read_records(tmp_path / "run" / "summary.episodes.jsonl")
    assert sorted(r["episode"] for r in written) == [0, 1, 2, 3], "every episode exactly once"


def test_an_episode_that_kills_every_worker_stops_the_sweep_with_a_clear_error(tmp_path):
    specs = toy_specs(episodes=2, folder=str(tmp_path), kill=0)
    with pytest.raises(RuntimeError, match="worker died 2 times"):
        list(run_jobs(dies_once_always, specs, workers=2, max_retries=1))


def dies_once_always(spec):
    os.kill(os.getpid(), signal.SIGKILL)


def test_an_episodes_own_error_reaches_the_driver(tmp_path):
    with pytest.raises(ValueError, match="no such task"):
        run_episodes(raises, toy_specs(episodes=2), workers=2)


DRIVER = """
import sys
sys.path[:0] = {paths!r}
from sweep_faults import sleeps, toy_specs
from mrsteve.eval.sweep import run_episodes
run_episodes(sleeps, toy_specs(episodes=2, folder={folder!r}, seconds=120), workers=2)
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="SIGKILL of the driver: Linux")
@pytest.mark.parametrize("workers", [1, 2])
def test_running_episodes_report_their_steps_to_the_driver(workers):
    """Each running episode's steps reach ``on_steps`` with its worker's number and where its
    run ends (the first report at once, the next a second later at most)."""
    told = []
    specs = toy_specs(("a", "b"), size=600)
    records = list(run_jobs(steps, specs, workers=workers,
                            on_steps=lambda *report: told.append(report)))
    assert [record["steps"] for record in records] == [600, 600]
    assert told and {steps_ for _, steps_, _ in told} <= {256, 512}
    assert {end for _, _, end in told} == {600}
    assert {worker for worker, _, _ in told} == set(range(workers)), "one episode on each"


def test_without_a_watcher_an_episode_reports_nothing():
    assert [record["steps"] for record in run_jobs(steps, toy_specs(("a",), size=600),
                                                   workers=2, isolated=True)] == [600]
    from mrsteve import progress

    assert progress._watcher is None


def test_workers_die_when_their_driver_is_killed(tmp_path):
    tests = str(Path(__file__).resolve().parents[1])
    root = str(Path(__file__).resolve().parents[2])
    script = DRIVER.format(paths=[tests, root], folder=str(tmp_path))
    driver = subprocess.Popen([sys.executable, "-c", script])
    try:
        deadline = time.monotonic() + 60
        while len(list(tmp_path.glob("worker-*"))) < 2 and time.monotonic() < deadline:
            time.sleep(0.1)
        pids = [int(p.name.split("-")[1]) for p in tmp_path.glob("worker-*")]
        assert len(pids) == 2, "the workers did not start"
        driver.send_signal(signal.SIGKILL)  # as the out-of-memory killer does
        driver.wait(10)
        deadline = time.monotonic() + 10
        while any(_alive(pid) for pid in pids) and time.monotonic() < deadline:
            time.sleep(0.1)
        assert not any(_alive(pid) for pid in pids), "workers outlived their driver"
    finally:
        if driver.poll() is None:
            driver.kill()


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as handle:
            return handle.read().split(")")[-1].split()[0] != "Z"  # a zombie has ended
    except FileNotFoundError:
        return False



def test_an_address_where_nothing_listens_is_refused_within_seconds():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # closed again: nobody listens there
    started = time.monotonic()
    with pytest.raises(ValueError, match=rf"no Ray cluster found at --address 127.0.0.1:{port} "
                                         r"\(connection refused\): start one with `ray start"):
        check_cluster(f"127.0.0.1:{port}", timeout=2.0)
    assert time.monotonic() - started < 2.5


@pytest.mark.parametrize(("address", "environment", "host_port"), [
    ("10.0.0.1:6379", None, ("10.0.0.1", 6379)),
    ("ray://head:10001", None, ("head", 10001)),
    ("auto", "127.0.0.1:6380", ("127.0.0.1", 6380)),
    ("auto", None, None),  # Ray looks for a cluster on this machine itself
])
def test_the_address_checked_is_the_one_ray_connects_to(address, environment, host_port,
                                                         monkeypatch):
    if environment is None:
        monkeypatch.delenv("RAY_ADDRESS", raising=False)
    else:
        monkeypatch.setenv("RAY_ADDRESS", environment)
    assert cluster_address(address) == host_port


WARMED: list[int] = []
"""What the driver's warm-up left for the workers it forks afterwards (module state)."""


def warm_once(specs, processes) -> None:
    WARMED.append((len(specs), processes))


def warmed_seen(spec) -> dict:
    return {"warmed": list(WARMED), "worker": os.getpid()}


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="forked workers: Linux")
def test_the_driver_warms_up_once_before_forking_its_workers():
    WARMED.clear()
    records = list(run_jobs(warmed_seen, toy_specs(episodes=4), workers=2, warm=warm_once))
    assert [r["warmed"] for r in records] == [[(4, 2)]] * 4, "once, before the workers started"
    assert {r["worker"] for r in records} != {os.getpid()}
    WARMED.clear()
    in_process = list(run_jobs(warmed_seen, toy_specs(episodes=2), workers=1, warm=warm_once))
    assert [r["warmed"] for r in in_process] == [[], []], "no worker to warm up for"
    alone = list(run_jobs(warmed_seen, toy_specs(episodes=2), workers=1, isolated=True,
                          warm=warm_once))
    assert [r["warmed"] for r in alone] == [[], []], "one worker: nothing to share"


def test_warmed_workers_give_the_records_of_an_unwarmed_process():
    from mrsteve.eval.registry import EXPERIMENTS

    experiment = EXPERIMENTS["aba-sparse"]
    config = experiment.config_type(task="water-log-water", agent="mrsteve", parts="stand-in",
                                    encoder="pixels")
    specs = experiment.groups(config)[0].episodes(2, 42)  # the shipped encoder weights read
    alone = run_episodes(experiment.episode, specs)  # in this process, nothing warmed
    assert run_episodes(experiment.episode, specs, workers=2) == alone


@pytest.mark.parametrize(("processes", "cores", "loads"), [(2, 2, False), (4, 2, True)])
def test_the_driver_loads_the_kernels_only_for_more_workers_than_cores(processes, cores, loads,
                                                                       monkeypatch):
    from mrsteve.eval import backends

    loaded = []
    monkeypatch.setattr(backends, "usable_cores", lambda: cores)
    monkeypatch.setattr(backends, "load_cached_kernels", lambda: loaded.append(True))
    backends.warm_workers(toy_specs(episodes=2), processes)
    assert bool(loaded) == loads


def test_the_driver_reads_the_agents_weights_for_its_workers(monkeypatch):
    from mrsteve import nn
    from mrsteve.eval.backends import warm_workers
    from mrsteve.eval.registry import EXPERIMENTS

    experiment = EXPERIMENTS["aba-sparse"]
    config = experiment.config_type(task="water-log-water", agent="mrsteve", parts="stand-in",
                                    encoder="pixels")
    monkeypatch.setattr(nn, "_read", {})
    warm_workers(experiment.groups(config)[0].episodes(2, 42), 2)
    assert [kind.__name__ for kind, *_ in nn._read] == ["PixelWeights"]
