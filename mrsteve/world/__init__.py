"""The embedded voxel world: blocks and items, voxel grid, world generation, mobs, physics, renderer."""

from mrsteve.world.content import Block, Content, Item, Mob, load_content
from mrsteve.world.interaction import InteractionConfig, WorldEvent
from mrsteve.world.layout import MobSpawn, ScheduledEvent, WorldLayout
from mrsteve.world.mobs import MobConfig
from mrsteve.world.recipes import WORLD_RECIPES, WorldRecipe, build_layout
from mrsteve.world.render import RenderedFrame, Renderer
from mrsteve.world.topdown import save_top_down, top_down_image
from mrsteve.world.world import Controls, World, WorldConfig

__all__ = [
    "WORLD_RECIPES",
    "Block",
    "Content",
    "Controls",
    "InteractionConfig",
    "Item",
    "Mob",
    "MobConfig",
    "MobSpawn",
    "RenderedFrame",
    "Renderer",
    "ScheduledEvent",
    "World",
    "WorldConfig",
    "WorldEvent",
    "WorldLayout",
    "WorldRecipe",
    "build_layout",
    "load_content",
    "save_top_down",
    "top_down_image",
]
