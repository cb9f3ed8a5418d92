"""A read-only install without a writable home: numba's cache moves to a writable folder instead
of every import failing with "cannot cache function"."""

from __future__ import annotations

import io
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


WATCHED = """
from mrsteve.jitcache import CompileWatch
with CompileWatch(print):
    {code}
"""

BOUNDED = "from mrsteve.world.raycast import dda_axis; dda_axis(0.5, 1.0, 0)"
UNBOUNDED = "from mrsteve.world.chunks import ChunkGenerator; ChunkGenerator(3).chunk(0, 1)"


def test_the_notice_comes_when_the_kernels_that_run_are_not_cached(tmp_path):
    """The unbounded world's kernels compile on its first run even when a bounded world's are
    cached: the notice comes then, and not when they load from the cache."""
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba")}

    def notices(code: str) -> int:
        run = subprocess.run([sys.executable, "-c", WATCHED.format(code=code)], env=env,
                             capture_output=True, text=True, timeout=120)
        assert run.returncode == 0, run.stderr
        return run.stdout.count("compiling")

    assert notices(BOUNDED) == 1
    assert notices(BOUNDED) == 0, "loaded from the cache"
    assert notices(UNBOUNDED) == 1, "the unbounded world's kernels are not cached yet"
    assert notices(UNBOUNDED) == 0


def test_the_notice_comes_once_across_forked_workers_and_compiling_is_timed(tmp_path):
    import multiprocessing

    import numba

    from mrsteve.jitcache import CompileWatch

    said = tmp_path / "said"

    def say(line: str) -> None:
        with open(said, "a") as file:
            file.write(line + "\n")

    def compile_one() -> None:
        numba.njit(lambda x: x * 3)(1)  # a fresh kernel: compiled, never cached

    with CompileWatch(say) as watch:
        worker = multiprocessing.get_context("fork").Process(target=compile_one)
        worker.start()
        worker.join(60)
        assert worker.exitcode == 0
        assert said.read_text().count("compiling") == 1, "the worker said it"
        compile_one()
    assert said.read_text().count("compiling") == 1, "and only the worker"
    assert watch.seconds > 0
    compile_one()  # no longer watched
    assert said.read_text().count("compiling") == 1


def test_progress_bars_leave_compiling_out_of_their_rate():
    """A bar of 12,000 steps updated after 20 steps that took a compilation: its rate is the
    steps', not 20 over the compiling (which made a first run's demo expect hours)."""
    import numba
    from tqdm import tqdm

    from mrsteve.jitcache import CompileWatch

    bar = tqdm(total=12000, mininterval=0, disable=False, file=io.StringIO())
    with CompileWatch(lambda line: None) as watch:
        numba.njit(lambda x: x - 1)(1)  # a fresh kernel: compiled
    bar.update(20)
    rate = bar.format_dict["rate"]
    bar.close()
    assert watch.seconds > 0.02
    assert rate > 2 * 20 / watch.seconds, (rate, watch.seconds)
