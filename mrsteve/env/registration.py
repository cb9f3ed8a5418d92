"""Registering ``mrsteve/Voxel-v0`` with Gymnasium without importing it first.

``import mrsteve`` calls :func:`register_when_loaded`: if Gymnasium is loaded, the environment is
registered at once; otherwise a one-time import hook registers it as soon as Gymnasium's registry
module loads, so ``import mrsteve`` stays cheap (Gymnasium and numpy take ~150 ms) and
``gym.make("mrsteve/Voxel-v0")`` works in any process that imported ``mrsteve``, spawned workers
of vector environments included (they re-import the main module).
"""

from __future__ import annotations

import sys

ENV_ID = "mrsteve/Voxel-v0"
_REGISTRY = "gymnasium.envs.registration"


def register_envs() -> None:
    """Register ``mrsteve/Voxel-v0`` with Gymnasium (idempotent)."""
    from gymnasium.envs.registration import register, registry

    if ENV_ID not in registry:
        register(id=ENV_ID, entry_point="mrsteve.env.voxel_env:VoxelEnv")


class _RegisterOnLoad:
    """A meta path finder that finds nothing itself; when Gymnasium's registry module is about to
    load, wraps its loader so that the environment is registered right after it runs, then
    removes itself. (Not an ``importlib.abc`` subclass: that import alone costs ~15 ms.)"""

    def find_spec(self, name, path, target=None):
        if name != _REGISTRY:
            return None
        if self in sys.meta_path:
            sys.meta_path.remove(self)
        from importlib.util import find_spec

        spec = find_spec(name)
        if spec is None or spec.loader is None or not hasattr(spec.loader, "exec_module"):
            return spec
        run = spec.loader.exec_module

        def exec_module(module):
            run(module)
            register_envs()

        spec.loader.exec_module = exec_module
        return spec


def register_when_loaded() -> None:
    """Register now if Gymnasium is loaded, else as soon as it is."""
    if _REGISTRY in sys.modules:
        register_envs()
    elif not any(isinstance(finder, _RegisterOnLoad) for finder in sys.meta_path):
        sys.meta_path.insert(0, _RegisterOnLoad())
