"""docs/plugins.md as a user follows it: the example memory package outside ``mrsteve/`` is
pip-installed, registers its memory and an agent through entry points, and runs ABA-Sparse and
Long-Instruction beside Place Event Memory without a line of mrsteve changed; a plug-in that
breaks the memory protocol is refused with one line."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from mrsteve.memory import MEMORY_VARIANTS, memory_variant

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "affordance-memory"


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """The example package pip-installed into a folder of its own (its entry points with it)."""
    pytest.importorskip("setuptools", reason="building the example package needs setuptools")
    target = tmp_path_factory.mktemp("site")
    subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "--no-deps",
                    "--no-build-isolation", "--target", str(target), str(EXAMPLE)],
                   check=True, capture_output=True, text=True)
    assert list(target.glob("affordance_memory-*.dist-info/entry_points.txt"))
    return target


def mrsteve(site: Path, *args: str) -> subprocess.CompletedProcess:
    """``mrsteve ARGS`` in a fresh process that sees the packages in ``site``."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), str(ROOT)])}
    return subprocess.run([sys.executable, "-m", "mrsteve", *args], env=env,
                          capture_output=True, text=True, timeout=600)


def summaries(out: Path) -> dict[str, dict]:
    return {path.stem.removeprefix("summary."): json.loads(path.read_text())
            for path in out.glob("summary.*.json")}


@pytest.mark.parametrize("experiment", [
    ["aba-sparse", "--task", "water-log-water"],
    ["long-instruction", "--steps", "3000", "--task-limit", "1000"],
])
def test_the_plugin_memory_runs_beside_place_event_memory(installed, tmp_path, experiment):
    out = tmp_path / "run"
    result = mrsteve(installed, "eval", *experiment, "--agent", "mrsteve,affordance",
                     "--parts", "stand-in", "--episodes", "1", "--workers", "2",
                     "--no-progress", "--out", str(out))
    assert result.returncode == 0, result.stderr
    found = summaries(out)
    ours = next(value for key, value in found.items() if key.endswith("affordance"))
    theirs = next(value for key, value in found.items() if key.endswith("mrsteve"))
    assert ours["config"]["agent"]["memory"]["kind"] == "affordance", "named in the run spec"
    assert ours["agent"] == "affordance" and "affordance" in result.stdout, "and in the table"
    # it reads as Place Event Memory does: the same episode, the same numbers
    assert ours["metrics"] == theirs["metrics"]


def test_the_plugin_is_listed_and_its_memory_keeps_affordances(installed):
    listing = mrsteve(installed, "eval", "memory-tasks", "--help")
    assert listing.returncode == 0 and "affordance" in listing.stdout
    code = textwrap.dedent("""
        import numpy as np
        from mrsteve.memory import memory_variant
        memory = memory_variant("affordance").build(dim=4)
        for t in range(30):
            memory.write(np.array([1.0, 0, 0, 0], np.float32), (float(t), 0.0, 0.0, 0.0, 0.0), t)
        assert len(memory.read(np.array([1.0, 0, 0, 0], np.float32), 0.9))
        print(sorted(memory.affordances()))
    """)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(installed), str(ROOT)])}
    result = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().startswith("[(0, 0)")


BROKEN = '''
import numpy as np
from mrsteve.memory import MemoryVariant, PlaceEventMemory


class ForgetfulMemory(PlaceEventMemory):
    """Reads frames under the threshold: it breaks the Memory protocol."""

    def read(self, query, threshold, **options):
        return super().read(query, -1.0, **options)


MEMORY = MemoryVariant("forgetful", "Forgetful", ForgetfulMemory)
'''


def test_a_plugin_that_breaks_the_memory_protocol_is_refused_with_one_line(tmp_path, capsys,
                                                                          monkeypatch):
    (tmp_path / "forgetful_memory.py").write_text(BROKEN)
    info = tmp_path / "forgetful_memory-0.1.dist-info"
    info.mkdir()
    (info / "METADATA").write_text("Metadata-Version: 2.1\nName: forgetful-memory\n"
                                   "Version: 0.1\n")
    (info / "entry_points.txt").write_text("[mrsteve.memories]\n"
                                           "forgetful = forgetful_memory:MEMORY\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    MEMORY_VARIANTS.reload_plugins()
    try:
        assert "forgetful" not in MEMORY_VARIANTS
        error = capsys.readouterr().err.strip().splitlines()
        assert len(error) == 1 and "memory plug-in 'forgetful'" in error[0]
        assert "scoring under the threshold" in error[0]
        with pytest.raises(ValueError, match="memory 'forgetful' was refused: .*under the"):
            memory_variant("forgetful")
    finally:
        monkeypatch.undo()
        MEMORY_VARIANTS.reload_plugins()
    assert "forgetful" not in MEMORY_VARIANTS and not MEMORY_VARIANTS.refused


def test_the_tutorial_shows_the_example_package_as_it_is():
    """docs/plugins.md quotes the example's module and project file whole."""
    tutorial = (ROOT / "docs" / "plugins.md").read_text()
    for name in ("affordance_memory.py", "pyproject.toml"):
        assert (EXAMPLE / name).read_text().rstrip() in tutorial, name
