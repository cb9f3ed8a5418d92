"""Running MrSteve in Minecraft: MineStudio's simulator, VPT's action space and the released
MineCLIP, VPT, VPT-Nav and STEVE-1 weights.

Importing this package imports neither torch nor MineStudio. The VPT action and frame adapter
(:mod:`mrsteve.minecraft.actions`), the simulator side (:mod:`mrsteve.minecraft.sim`) and the
package's world behind MineStudio's interface (:mod:`mrsteve.minecraft.facade`) are numpy; the
model modules need torch (the ``minecraft`` extra), and MineStudio is imported when a Minecraft
run starts.
"""
