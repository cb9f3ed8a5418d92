"""A read-only install without a writable home: numba's cache moves to a writable folder instead
of every import failing with "cannot cache function"."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from mrsteve.jitcache import cache_fallback

KERNEL = """
import numba

@numba.njit(cache=True)
def twice(x):
    return 2 * x
"""

SCRIPT = """
import sys
sys.path[:0] = {paths!r}
{configure}
import kernel
print(kernel.twice(21))
"""


def read_only_setup(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """A source folder whose ``__pycache__`` cannot be made (a file has the name: unwritable even
    for root) and an environment whose home and cache lie below a regular file."""
    source = tmp_path / "install"
    source.mkdir()
    (source / "kernel.py").write_text(KERNEL)
    (source / "__pycache__").write_text("not a folder")
    blocked = tmp_path / "blocked"
    blocked.write_text("x")
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_CACHE_DIR"}
    env |= {"HOME": str(blocked / "home"), "XDG_CACHE_HOME": str(blocked / "cache"),
            "PYTHONDONTWRITEBYTECODE": "1"}
    return source, env


def test_the_fallback_is_taken_only_when_numba_has_nowhere_to_cache(tmp_path):
    source, env = read_only_setup(tmp_path)
    fallback = cache_fallback([source], env)
    assert fallback is not None and os.access(fallback, os.W_OK)
    assert cache_fallback([source], env | {"NUMBA_CACHE_DIR": "/x"}) is None, "the user's choice"
    assert cache_fallback([source], env | {"XDG_CACHE_HOME": str(tmp_path / "c")}) is None
    writable = tmp_path / "writable"
    writable.mkdir()
    assert cache_fallback([writable], env) is None


def test_a_cached_kernel_imports_on_a_read_only_install_with_the_fallback(tmp_path):
    source, env = read_only_setup(tmp_path)
    root = str(Path(__file__).resolve().parents[1])

    def run(configure: str) -> subprocess.CompletedProcess:
        script = SCRIPT.format(paths=[str(source), root], configure=configure)
        return subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                              text=True, timeout=120)

    without = run("")
    assert without.returncode != 0 and "cannot cache function" in without.stderr
    configure = (f"from mrsteve.jitcache import configure_numba_cache; "
                 f"configure_numba_cache([{str(source)!r}])")
    with_fallback = run(configure)
    assert with_fallback.returncode == 0, with_fallback.stderr
    assert with_fallback.stdout.strip() == "42"
