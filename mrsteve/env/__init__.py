"""The Gymnasium environment over the embedded world.

``import mrsteve`` registers ``mrsteve/Voxel-v0`` (Gymnasium 1.x no longer loads plugins from
entry points; :mod:`mrsteve.env.registration` does it without importing Gymnasium early)::

    import gymnasium as gym
    import mrsteve  # noqa: F401  (registers the environment)

    env = gym.make("mrsteve/Voxel-v0", world="map1")

``gym.make("mrsteve.env:mrsteve/Voxel-v0", ...)`` does the import itself.
"""

from mrsteve.env.registration import register_envs, register_when_loaded

__all__ = ["register_envs"]

register_when_loaded()
