"""The Gymnasium environment over the embedded world.

``import mrsteve`` registers ``mrsteve/Voxel-v0`` (:data:`ENV_ID`; Gymnasium 1.x no longer loads
plugins from entry points, and :mod:`mrsteve.env.registration` does it without importing
Gymnasium early); :func:`make_env` makes one::

    from mrsteve.env import make_env

    env = make_env(world="map1")          # gymnasium.make("mrsteve/Voxel-v0", world="map1")

``gym.make("mrsteve.env:mrsteve/Voxel-v0", ...)`` does the import itself.
"""

from __future__ import annotations

from typing import Any

from mrsteve.env.registration import ENV_ID, register_envs, register_when_loaded

__all__ = ["ENV_ID", "make_env", "register_envs"]

register_when_loaded()


def make_env(**kwargs: Any):
    """``gymnasium.make(ENV_ID, **kwargs)``: the embedded world's environment, wrapped as
    Gymnasium wraps it (``world``, ``obs_size``, ``noop_steps``, ...: the arguments of
    :class:`~mrsteve.env.voxel_env.VoxelEnv`)."""
    import gymnasium

    register_envs()
    return gymnasium.make(ENV_ID, **kwargs)
