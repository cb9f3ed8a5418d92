"""The Gymnasium environment over the embedded world."""


def register_envs() -> None:
    """Register ``mrsteve/Voxel-v0`` with Gymnasium (called through the ``gymnasium.envs`` entry point)."""
    from gymnasium.envs.registration import register, registry

    if "mrsteve/Voxel-v0" not in registry:
        register(id="mrsteve/Voxel-v0", entry_point="mrsteve.env.voxel_env:VoxelEnv")
