"""The embedded voxel world: blocks and items, voxel grid, world generation, mobs, physics, renderer."""

from mrsteve.world.content import Block, Content, Item, Mob, load_content
from mrsteve.world.interaction import InteractionConfig, WorldEvent
from mrsteve.world.mobs import MobConfig
from mrsteve.world.world import Controls, World, WorldConfig

__all__ = [
    "Block",
    "Content",
    "Controls",
    "InteractionConfig",
    "Item",
    "Mob",
    "MobConfig",
    "World",
    "WorldConfig",
    "WorldEvent",
    "load_content",
]
