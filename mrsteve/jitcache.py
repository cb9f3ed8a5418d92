"""Where numba keeps the compiled kernels (``cache=True``), and noticing when it compiles them.

numba caches a function beside its source (``__pycache__``) or else in the user's cache directory
(``$XDG_CACHE_HOME/numba`` or ``~/.cache/numba``), and raises ``cannot cache function`` at import
when neither is writable (a read-only install, no writable home). :func:`configure_numba_cache`,
run by ``import mrsteve``, then points ``NUMBA_CACHE_DIR`` at a per-user folder in the temporary
directory. A ``NUMBA_CACHE_DIR`` the user set is left alone. ``os``, ``sys`` and ``time`` only at
import (this runs at every ``import mrsteve``: no numba, no tempfile, no pathlib).

A kernel numba has not cached compiles on its first call, for seconds to a minute; the commands
watch for that (:class:`CompileWatch`) to say so and to keep it out of their progress bars' rates.
A cached kernel still loads on its first call in each process; a driver about to fork more
worker processes than there are cores loads them all first (:func:`load_cached_kernels`), once
for every worker.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Iterable, Mapping


def writable_dir(path: str) -> bool:
    """Whether ``path`` is (or can be made) a directory this process can create files in (numba's
    own test: make it, then create a file in it)."""
    probe = os.path.join(path, f".mrsteve-probe-{os.getpid()}")
    try:
        os.makedirs(path, exist_ok=True)
        os.close(os.open(probe, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
        os.unlink(probe)
    except OSError:
        return False
    return True


def user_cache_dir(env: Mapping[str, str] = os.environ) -> str | None:
    """numba's user-wide cache directory (its ``appdirs`` rule), or ``None`` where unknown."""
    home = env.get("HOME") or os.path.expanduser("~")
    if sys.platform == "darwin":
        return os.path.join(home, "Library", "Caches", "numba")
    if sys.platform.startswith(("linux", "freebsd")):
        return os.path.join(env.get("XDG_CACHE_HOME") or os.path.join(home, ".cache"), "numba")
    return None


def cache_fallback(source_dirs: Iterable[str], env: Mapping[str, str] = os.environ) -> str | None:
    """The cache directory to set for numba, or ``None`` when its own choice works: a
    ``NUMBA_CACHE_DIR`` is set, every source folder's ``__pycache__`` is writable, or the
    user-wide cache is. Otherwise a per-user folder in the temporary directory (``None`` if even
    that cannot be written)."""
    if env.get("NUMBA_CACHE_DIR"):
        return None
    if all(writable_dir(os.path.join(d, "__pycache__")) for d in source_dirs):
        return None
    user = user_cache_dir(env)
    if user is None or writable_dir(user):
        return None
    import tempfile

    try:
        uid = os.getuid() if hasattr(os, "getuid") else os.getlogin()
        fallback = os.path.join(tempfile.gettempdir(), f"mrsteve-numba-cache-{uid}")
    except OSError:
        return None
    return fallback if writable_dir(fallback) else None


def configure_numba_cache(source_dirs: Iterable[str] | None = None) -> str | None:
    """Set ``NUMBA_CACHE_DIR`` (and numba's config, if numba is loaded) to the fallback for the
    package's folders, when one is needed; returns it."""
    if source_dirs is None:
        root = os.path.dirname(os.path.abspath(__file__))
        source_dirs = [root, *(entry.path for entry in os.scandir(root)
                               if os.path.isfile(os.path.join(entry.path, "__init__.py")))]
    fallback = cache_fallback(source_dirs)
    if fallback is not None:
        os.environ["NUMBA_CACHE_DIR"] = fallback
        config = sys.modules.get("numba.core.config")
        if config is not None:
            config.CACHE_DIR = fallback
    return fallback


def load_cached_kernels(prefix: str = __package__) -> int:
    """Load into this process, without compiling, every kernel of the loaded modules named
    ``prefix`` or ``prefix.*`` that numba has cached for this machine and this source (the entries
    of its cache index whose key it would compute itself); returns how many it loaded. A worker
    forked afterwards starts with them and their machine code in copy-on-write pages: it would
    otherwise load each one its first episode calls (a few milliseconds each, after numba's own
    set-up: 0.4 s for the 29 of an ABA-Sparse episode). Kernels that are not cached, or not
    module-level, are left to their first call; so is a kernel whose cache index cannot be read
    here (another numba's layout, a damaged file)."""
    import pickle

    from numba.core.dispatcher import Dispatcher

    modules = [module for name, module in list(sys.modules.items())
               if module is not None and (name == prefix or name.startswith(prefix + "."))]
    loaded = 0
    for module in modules:
        for kernel in list(vars(module).values()):
            if not isinstance(kernel, Dispatcher) or kernel.__module__ != module.__name__:
                continue
            try:
                cache = kernel._cache
                index = cache._cache_file._load_index() if hasattr(cache, "_cache_file") else {}
                codegen = kernel.targetctx.codegen()
                signatures = [key[0] for key in index if key == cache._index_key(key[0], codegen)]
            except (AttributeError, TypeError, OSError, ValueError, EOFError,
                    pickle.UnpicklingError):
                continue
            for signature in signatures:
                if tuple(signature) not in kernel.overloads:
                    kernel.compile(signature)  # numba's own path: the cached entry loads
                    loaded += 1
    return loaded


COMPILING_NOTICE = ("compiling kernels this run needs (once: numba caches them for later runs; "
                    "up to a minute or two)...")
"""What a command says when numba starts compiling a kernel it has not cached."""


def say_above_bars(line: str) -> None:
    """Write ``line`` to stderr, above any progress bar drawn there (through tqdm when loaded)."""
    tqdm = sys.modules.get("tqdm")
    if tqdm is not None:
        tqdm.tqdm.write(line, file=sys.stderr)
    else:
        print(line, file=sys.stderr, flush=True)


def leave_out_of_bars(seconds: float) -> None:
    """Move the last update of every progress bar of this process ``seconds`` later (never past
    now): tqdm's rate is the count over the time between updates, so time spent on something
    else (compiling) stays out of the rate and of the time it expects to need."""
    tqdm = sys.modules.get("tqdm")
    if tqdm is None:
        return
    now = time.time()  # tqdm's clock
    for bar in list(tqdm.tqdm._instances):
        if hasattr(bar, "last_print_t"):  # a bar being made has none yet
            bar.last_print_t = min(bar.last_print_t + seconds, now)


class CompileWatch:
    """numba compiling, seen as it happens (a context manager over numba's ``numba:compile``
    event, which fires on a cache miss only, never when a cached kernel loads): ``say`` gets
    :data:`COMPILING_NOTICE` when the first kernel starts compiling, once in all (the worker
    processes forked meanwhile share the flag); :attr:`seconds` adds up the time this process
    spent compiling, which its progress bars leave out of their rates (a first run's compiling
    in the first steps made a 12,000-step bar expect hours). Whether the kernels a run uses are
    cached depends on the world, the agent and what the episode meets; watching the compiler
    answers for every one of them."""

    def __init__(self, say: Callable[[str], object] = say_above_bars,
                 notice: str = COMPILING_NOTICE) -> None:
        self.say, self.notice = say, notice
        self.seconds = 0.0
        """Seconds spent compiling in this process while watched (nested compilations once)."""
        self._depth, self._started = 0, 0.0

    def _on_start(self) -> None:
        self._depth += 1
        if self._depth > 1:
            return
        self._started = time.perf_counter()
        if not self._said.value:
            self._said.value = True
            self.say(self.notice)

    def _on_end(self) -> None:
        self._depth -= 1
        if self._depth == 0:
            spent = time.perf_counter() - self._started
            self.seconds += spent
            leave_out_of_bars(spent)

    def __enter__(self) -> CompileWatch:
        import multiprocessing

        from numba.core import event

        watch = self

        class Listener(event.Listener):
            def on_start(self, ev: object) -> None:
                watch._on_start()

            def on_end(self, ev: object) -> None:
                watch._on_end()

        self._said = multiprocessing.RawValue("b", False)  # shared: forked workers see it
        self._listener = Listener()
        event.register("numba:compile", self._listener)
        return self

    def __exit__(self, *exc: object) -> None:
        from numba.core import event

        event.unregister("numba:compile", self._listener)
