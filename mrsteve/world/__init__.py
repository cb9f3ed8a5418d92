"""The embedded voxel world: blocks and items, voxel grid, world generation, mobs, physics, renderer."""

from mrsteve.world.content import Block, Content, Item, Mob, load_content

__all__ = ["Block", "Content", "Item", "Mob", "load_content"]
