"""Where numba keeps the compiled kernels (``cache=True``) when the install is read-only.

numba caches a function beside its source (``__pycache__``) or else in the user's cache directory
(``$XDG_CACHE_HOME/numba`` or ``~/.cache/numba``), and raises ``cannot cache function`` at import
when neither is writable (a read-only install, no writable home). :func:`configure_numba_cache`,
run by ``import mrsteve``, then points ``NUMBA_CACHE_DIR`` at a per-user folder in the temporary
directory. A ``NUMBA_CACHE_DIR`` the user set is left alone. ``os`` only (this runs at every
``import mrsteve``: no numba, no tempfile, no pathlib).
"""

from __future__ import annotations

import os
import sys
from collections.abc import Iterable, Mapping


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


def kernels_cached(source_dirs: Iterable[str] | None = None) -> bool:
    """Whether numba has compiled kernels of the package cached (an index file, ``*.nbi``, in a
    ``__pycache__`` of the package, in ``NUMBA_CACHE_DIR`` or in the user-wide cache): if not, the
    first episode compiles them, which takes a minute or two (the commands say so)."""
    root = os.path.dirname(os.path.abspath(__file__))
    if source_dirs is None:
        source_dirs = [root, *(entry.path for entry in os.scandir(root)
                               if os.path.isfile(os.path.join(entry.path, "__init__.py")))]
    beside = [os.path.join(d, "__pycache__") for d in source_dirs]
    elsewhere = [d for d in (os.environ.get("NUMBA_CACHE_DIR"), user_cache_dir()) if d]
    for folder in beside + elsewhere:
        for path, _, names in os.walk(folder):
            ours = folder in beside or "mrsteve" in path  # a shared cache mirrors source paths
            if ours and any(name.endswith(".nbi") for name in names):
                return True
    return False
