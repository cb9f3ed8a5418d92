"""Where a sweep's episodes run: worker processes on this machine (``local``) or Ray tasks on a
cluster (``ray``).

Both take a picklable *job* (``spec -> record``) and the specs to run, and yield each record as
its episode ends, in any order. An episode whose worker process dies (killed by the OOM killer, a
crashed node) is run again, up to ``max_retries`` times, so every episode gives exactly one
record; an exception raised by the episode itself is not retried and is raised in the driver.
Local workers die with the driver: each asks the kernel for ``SIGKILL`` when its parent exits
(``prctl(PR_SET_PDEATHSIG)`` on Linux) and also polls its parent's pid elsewhere. Before it
forks several the driver does, once, what each would do at its first episode (``warm``, for a
sweep :func:`warm_workers`): they start with it in shared copy-on-write memory. A sweep
connects to its backend (:func:`connected`) before it writes anything: a Ray cluster that is not
there is one ``ValueError`` within seconds, leaving nothing behind.
"""

from __future__ import annotations

import os
import signal
import socket
import sys
import threading
import time
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from multiprocessing import get_context
from multiprocessing.connection import wait
from typing import Any

from mrsteve import progress
from mrsteve.jitcache import load_cached_kernels
from mrsteve.workers import one_blas_thread, usable_cores

BACKENDS = ("local", "ray")
"""The backends ``--backend`` accepts."""

MAX_RETRIES = 3
"""Times an episode whose worker died is run again before the sweep gives up."""

CONNECT_TIMEOUT = 5.0
"""Seconds to wait for a Ray cluster's address to accept a connection before the sweep is
refused (Ray itself would keep trying for minutes)."""

Job = Callable[[Any], dict]


def check_backend(backend: str, *, available: bool = False) -> str:
    """``backend`` if it is one of :data:`BACKENDS` (and, with ``available``, usable here: Ray
    installed); else a ``ValueError`` saying what is accepted or how to install it."""
    from mrsteve.naming import check_name

    check_name(backend, BACKENDS, "backend")
    if available and backend == "ray":
        import_ray()
    return backend


def connected(backend: str, *, address: str | None = None,
              workers: int = 1) -> AbstractContextManager:
    """``backend`` made ready for a sweep, before it writes anything (a context manager): for
    ``ray``, Ray connected to the cluster at ``address`` (or started locally) and shut down at the
    end (:func:`ray_session`); nothing to do for ``local``."""
    check_backend(backend)
    return ray_session(address, workers) if backend == "ray" else nullcontext()


StepsWatcher = Callable[[int, int, "int | None"], None]
"""Told ``(worker, steps, end)``: the episode running on local worker ``worker`` (0 in this
process) has taken ``steps`` steps, its current run ending at step ``end`` (:mod:`mrsteve.progress`)."""


def watching_steps(on_steps: StepsWatcher | None,
                   worker: int) -> AbstractContextManager[None]:
    """Within the block, this process's running episode is reported to ``on_steps`` as local
    worker ``worker``'s (nothing when ``on_steps`` is ``None``)."""
    if on_steps is None:
        return nullcontext()
    return progress.watching(lambda steps, end: on_steps(worker, steps, end))


def run_jobs(job: Job, specs: Iterable[Any], *, workers: int = 1, backend: str = "local",
             address: str | None = None, max_retries: int = MAX_RETRIES,
             isolated: bool = False, warm: Callable[[list, int], Any] | None = None,
             on_steps: StepsWatcher | None = None) -> Iterator[dict]:
    """Records of ``job(spec)`` for every spec, as they finish, on ``backend`` (specs are handed
    out in the order given; ``isolated``: in worker processes even with one worker; ``warm``:
    called with the specs and the number of workers before several local workers are forked;
    ``on_steps``: told how far each running episode is, about once a second, on the local
    backend)."""
    specs = list(specs)
    check_backend(backend)
    if backend == "ray":
        return run_ray(job, specs, workers=workers, address=address, max_retries=max_retries)
    return run_local(job, specs, workers=workers, max_retries=max_retries, isolated=isolated,
                     warm=warm, on_steps=on_steps)


# -- local: worker processes ------------------------------------------------------------------


def warm_workers(specs: Iterable[Any], processes: int) -> None:
    """What every one of ``processes`` local workers would otherwise do at its first episode,
    done once in the driver before it forks them: the world's tables parsed and each distinct
    agent of the specs built once (its modules imported, its weights read through
    :func:`mrsteve.nn.read_once`); with more workers than cores, also every kernel numba has
    cached loaded (:func:`mrsteve.jitcache.load_cached_kernels`), which the workers would
    otherwise load in turn. With a core each they load their own sooner, in parallel and only
    those their episodes call (the 8-group ABA-Sparse sweep on 2 cores: 0.3 s sooner with 2
    workers, 0.5 s later with 4). Agents on released weights files are not built (their torch
    must not start threads in a process about to fork), nor any that cannot be: its episodes
    report why, with their group."""
    import mrsteve.env  # noqa: F401  (the environment's and the world's kernels)
    from mrsteve.agent.factory import build_agent
    from mrsteve.world.content import load_content
    from mrsteve.world.crafting import load_recipes
    from mrsteve.world.recipes import load_world_recipes

    load_content(), load_recipes(), load_world_recipes()
    built = []
    for spec in specs:
        tree = getattr(spec, "agent", None)
        if tree is None or tree in built or getattr(tree, "weights_files", ()):
            continue
        built.append(tree)
        try:
            build_agent(tree)
        except Exception:  # noqa: BLE001, S112  (the episode raises it, naming its group)
            continue
    if processes > usable_cores():
        load_cached_kernels()


def die_with_parent(parent: int) -> None:
    """Make this process end when ``parent`` does (it cannot clean up after a SIGKILL)."""
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            libc = ctypes.CDLL(None, use_errno=True)
            libc.prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
        except (OSError, AttributeError):
            pass
    if os.getppid() != parent:  # the parent died before the request took effect
        os._exit(1)

    def watch() -> None:  # elsewhere (and as a second guard): poll the parent's pid
        while os.getppid() == parent:
            time.sleep(1.0)
        os._exit(1)

    threading.Thread(target=watch, daemon=True).start()


def _worker(job: Job, conn, parent: int, report_steps: bool = False) -> None:
    """A local worker: run the specs the driver sends, one at a time, until told to stop (with
    one BLAS thread: :mod:`mrsteve.workers`); with ``report_steps``, the running episode's steps
    go to the driver as ``("steps", steps, end)`` about once a second."""
    die_with_parent(parent)
    one_blas_thread()

    def report(steps: int, end: int | None) -> None:
        try:
            conn.send(("steps", steps, end))
        except OSError:
            pass

    with progress.watching(report) if report_steps else nullcontext():
        _serve(job, conn)


def _serve(job: Job, conn) -> None:
    """Run the specs ``conn`` sends until it sends ``None`` or closes, sending each record (or
    the error that stopped it) back."""
    while True:
        try:
            spec = conn.recv()
        except EOFError:
            return
        if spec is None:
            return
        try:
            reply = ("ok", job(spec))
        except BaseException as error:
            reply = ("error", error)
        try:
            conn.send(reply)
        except Exception as error:  # an unpicklable exception or record
            conn.send(("error", RuntimeError(f"episode {spec}: {reply[1]!r} ({error})")))


class _Worker:
    def __init__(self, context, job: Job, report_steps: bool = False):
        self.conn, child = context.Pipe()
        self.process = context.Process(target=_worker,
                                       args=(job, child, os.getpid(), report_steps), daemon=True)
        self.process.start()
        child.close()
        self.spec: Any = None

    def stop(self) -> None:
        if self.process.is_alive():
            self.process.kill()
        self.process.join(5)
        self.conn.close()


def start_method() -> str:
    """How local workers start: forked on Linux (they begin with the driver's imported modules
    and compiled kernels instead of importing them again, which costs a short episode's time),
    spawned elsewhere (fork is unsafe on macOS)."""
    return "fork" if sys.platform.startswith("linux") else "spawn"


def run_local(job: Job, specs: list, *, workers: int = 1, max_retries: int = MAX_RETRIES,
              isolated: bool = False, warm: Callable[[list, int], Any] | None = None,
              on_steps: StepsWatcher | None = None) -> Iterator[dict]:
    """Run ``specs`` in this process (one worker, unless ``isolated``) or in ``workers`` worker
    processes that each take the next spec as they free up (forked, on Linux, after
    ``warm(specs, workers)`` when there are several to share it); ``on_steps`` is told how far
    each running episode is (:data:`StepsWatcher`)."""
    if not isolated and (workers == 1 or len(specs) <= 1):
        for spec in specs:
            with watching_steps(on_steps, 0):
                record = job(spec)
            yield record
        return
    processes = min(workers, len(specs))
    if warm is not None and processes > 1 and start_method() == "fork":
        warm(specs, processes)
    context = get_context(start_method())
    queue = deque(specs)
    deaths: dict[int, int] = {}
    reporting = on_steps is not None
    pool = [_Worker(context, job, reporting) for _ in range(processes)]

    def feed(worker: _Worker) -> None:
        """Hand ``worker`` the next spec, if any (before the driver handles a record, so workers
        never wait on the driver's writes and plots)."""
        if worker.spec is None and queue:
            worker.spec = queue.popleft()
            worker.conn.send(worker.spec)

    try:
        while queue or any(w.spec is not None for w in pool):
            for worker in pool:
                feed(worker)
            busy = [w for w in pool if w.spec is not None]
            ready = wait([w.conn for w in busy] + [w.process.sentinel for w in busy])
            for index, worker in enumerate(pool):
                if worker.spec is None:
                    continue
                if worker.conn in ready or worker.conn.poll():
                    try:
                        status, value, *rest = worker.conn.recv()
                    except (EOFError, OSError):
                        status, value = "died", None
                    if status == "steps":
                        if on_steps is not None:
                            on_steps(index, value, rest[0])
                        continue
                elif worker.process.sentinel in ready:
                    status, value = "died", None
                else:
                    continue
                spec, worker.spec = worker.spec, None
                if status == "ok":
                    feed(worker)
                    yield value
                elif status == "error":
                    raise value
                else:
                    worker.process.join(5)
                    code = worker.process.exitcode
                    deaths[id(spec)] = deaths.get(id(spec), 0) + 1
                    if deaths[id(spec)] > max_retries:
                        raise RuntimeError(
                            f"episode {spec}: its worker died {deaths[id(spec)]} times (exit code "
                            f"{code}; -9 is SIGKILL, as the out-of-memory killer sends); giving up"
                        )  # fmt: skip
                    worker.stop()
                    queue.appendleft(spec)  # run it again, before the others
                    pool[index] = _Worker(context, job, reporting)
    finally:
        for worker in pool:
            if worker.spec is None and worker.process.is_alive():
                try:
                    worker.conn.send(None)
                except OSError:
                    pass
            worker.stop()


# -- Ray: one task per episode ----------------------------------------------------------------


def import_ray():
    """The ``ray`` module, or an error saying how to install it."""
    try:
        import ray
    except ImportError:
        raise ValueError("--backend ray needs Ray: pip install 'mrsteve[ray]'") from None
    return ray


def _run_job(job: Job, spec: Any) -> dict:
    """A Ray task: ``job(spec)`` with one BLAS thread, with the id of the node that ran it under
    ``node``."""
    import ray

    one_blas_thread()
    record = job(spec)
    record["node"] = ray.get_runtime_context().get_node_id()
    return record


def cluster_address(address: str) -> tuple[str, int] | None:
    """The host and port a Ray address names (``host:port``, ``ray://host:port``; ``auto``: the
    ``RAY_ADDRESS`` variable when set), or ``None`` when Ray looks it up itself."""
    if address == "auto":
        address = os.environ.get("RAY_ADDRESS", "")
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        return None
    return host.strip("[]"), int(port)


def check_cluster(address: str, timeout: float = CONNECT_TIMEOUT) -> None:
    """A ``ValueError`` naming ``address`` unless something there accepts a connection and
    speaks gRPC, as Ray's control store (and its client server) does, within ``timeout`` seconds
    each: a bounded check before Ray's own, which retries for minutes."""
    where = cluster_address(address)
    if where is None:
        return
    try:
        with socket.create_connection(where, timeout=timeout):
            pass
    except OSError as error:
        reason = (f"no answer within {timeout:g} s" if isinstance(error, TimeoutError)
                  else (error.strerror or str(error)).lower())
        raise no_cluster(address, reason) from None
    if not speaks_http2(where, timeout):
        raise no_cluster(address, "something listens there but does not answer as Ray's gRPC "
                                  f"services do (HTTP/2) within {timeout:g} s")


HTTP2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])
"""An HTTP/2 client's connection preface and an empty SETTINGS frame (RFC 9113, 3.4)."""


def speaks_http2(where: tuple[str, int], timeout: float) -> bool:
    """Whether the server at ``where`` answers an HTTP/2 connection preface with its own (a
    SETTINGS frame on stream 0) within ``timeout`` seconds, as the gRPC servers of Ray's control
    store and client do; an HTTP/1 server answers with a status line instead, or not at all."""
    try:
        with socket.create_connection(where, timeout=timeout) as connection:
            connection.sendall(HTTP2_PREFACE)
            header = b""
            while len(header) < 9:
                chunk = connection.recv(9 - len(header))
                if not chunk:
                    return False
                header += chunk
    except OSError:
        return False
    return header[3] == 4 and header[5:9] == bytes(4)


def no_cluster(address: str, reason: str) -> ValueError:
    """The error for a Ray cluster not found at ``address``: how to start one, or go without."""
    return ValueError(f"no Ray cluster found at --address {address} ({reason}): start one with "
                      "`ray start --head` and give the address it prints, or drop --address to "
                      "run on a Ray started for this run")


@contextmanager
def ray_session(address: str | None = None, workers: int = 1) -> Iterator[Any]:
    """Ray connected to the cluster at ``address`` (after :func:`check_cluster`), or else a local
    Ray with ``workers`` CPUs started for the run, shut down at the end; a Ray already initialised
    in this process is used as it is (and left running)."""
    ray = import_ray()
    if ray.is_initialized():
        yield ray
        return
    try:
        if address:
            check_cluster(address)
            ray.init(address=address, log_to_driver=False)
        else:
            ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
    except ConnectionError as error:  # Ray found no cluster (``auto`` with none running)
        reason = str(error).split(". ")[0]
        raise no_cluster(address or "", reason[:1].lower() + reason[1:]) from None
    try:
        yield ray
    finally:
        ray.shutdown()


def run_ray(job: Job, specs: list, *, workers: int = 1, address: str | None = None,
            max_retries: int = MAX_RETRIES, window: int | None = None) -> Iterator[dict]:
    """Ray tasks for ``specs`` on the cluster at ``address`` (or a Ray already initialised in
    this process, or else a local one with ``workers`` CPUs started for the run:
    :func:`ray_session`), records back as tasks finish (``ray.wait``), each saying which node ran
    it. At most ``window`` tasks are in flight (default: twice the cluster's CPUs), the next
    submitted as one finishes, so the cluster stays full without flooding it. A task whose
    worker dies is retried by Ray."""
    with ray_session(address, workers) as ray:
        if window is None:
            window = 2 * max(1, int(ray.cluster_resources().get("CPU", workers)))
        remote = ray.remote(num_cpus=1, max_retries=max_retries)(_run_job)
        job_ref = ray.put(job)
        queue = deque(specs)
        pending: dict[Any, Any] = {}

        def submit() -> None:
            while queue and len(pending) < window:
                spec = queue.popleft()
                pending[remote.remote(job_ref, spec)] = spec

        try:
            while queue or pending:
                submit()
                ready, _ = ray.wait(list(pending), num_returns=1)
                for ref in ready:
                    spec = pending.pop(ref)
                    submit()  # before the driver handles the record
                    try:
                        record = ray.get(ref)
                    except ray.exceptions.RayTaskError as error:  # the episode raised
                        cause = getattr(error, "cause", None)
                        raise (cause if isinstance(cause, Exception) else error) from None
                    except ray.exceptions.RayError as error:  # its worker died every time
                        raise RuntimeError(f"episode {spec}: {type(error).__name__} after "
                                           f"{max_retries} retries: {error}") from None
                    yield record
        finally:
            for ref in pending:
                ray.cancel(ref, force=True)
