"""The Gymnasium environment over the embedded world.

Importing this package registers ``mrsteve/Voxel-v0`` (Gymnasium 1.x no longer loads plugins from
entry points)::

    import gymnasium as gym
    import mrsteve.env  # noqa: F401  (registers the environment)

    env = gym.make("mrsteve/Voxel-v0", world="map1")

``gym.make("mrsteve.env:mrsteve/Voxel-v0", ...)`` does the import itself.
"""


def register_envs() -> None:
    """Register ``mrsteve/Voxel-v0`` with Gymnasium (idempotent)."""
    from gymnasium.envs.registration import register, registry

    if "mrsteve/Voxel-v0" not in registry:
        register(id="mrsteve/Voxel-v0", entry_point="mrsteve.env.voxel_env:VoxelEnv")


register_envs()
