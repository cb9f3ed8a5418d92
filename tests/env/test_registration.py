"""`import mrsteve` registers mrsteve/Voxel-v0 without importing Gymnasium, and spawned workers of
a vector environment find it too."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def python(code: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          timeout=180, cwd=cwd, env=None)


def test_import_mrsteve_registers_the_env_and_stays_light():
    result = python(
        "import sys; sys.path.insert(0, %r)\n"
        "import mrsteve\n"
        "print(sorted(m for m in ('gymnasium', 'numpy', 'numba') if m in sys.modules))\n"
        "import gymnasium as gym\n"
        "print('mrsteve/Voxel-v0' in gym.registry)" % str(ROOT)
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert result.stdout.split("\n")[:2] == ["[]", "True"]


def test_import_after_gymnasium_registers_at_once():
    result = python("import sys; sys.path.insert(0, %r)\nimport gymnasium as gym\nimport mrsteve\n"
                    "print('mrsteve/Voxel-v0' in gym.registry)" % str(ROOT))
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "True"


VECTOR = """
import sys
sys.path.insert(0, {root!r})
from functools import partial

import gymnasium as gym
from gymnasium.vector import AsyncVectorEnv

import mrsteve  # noqa: F401

if __name__ == "__main__":
    make = partial(gym.make, "mrsteve/Voxel-v0", world="flat", obs_size=(8, 8))
    envs = AsyncVectorEnv([make, make], context="spawn")
    obs, info = envs.reset(seed=0)
    print(obs["rgb"].shape)
    envs.close()
"""


def test_spawned_vector_env_workers_find_the_env(tmp_path):
    script = tmp_path / "vector.py"
    script.write_text(VECTOR.format(root=str(ROOT)))
    result = subprocess.run([sys.executable, str(script)], capture_output=True, text=True,
                            timeout=180)
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.strip() == "(2, 8, 8, 3)"
