"""MrSteve: What-Where-When episodic memory agents for Minecraft-like worlds (Park, Cho, Ahn, ICLR 2025).

Layers, lowest first: ``memory`` and ``world`` (numpy/numba only), ``env`` (Gymnasium),
``perception``, ``control``, ``agent``, ``tasks``, ``eval`` and ``cli``. Lower layers never import
higher ones. Importing the package registers the Gymnasium environment ``mrsteve/Voxel-v0`` (once
Gymnasium loads) and, on a read-only install, points numba's cache at a writable folder.
"""

__version__ = "0.2.0"

from mrsteve.jitcache import configure_numba_cache

configure_numba_cache()  # a read-only install caches compiled kernels elsewhere

from mrsteve.env.registration import register_when_loaded

register_when_loaded()  # gym.make("mrsteve/Voxel-v0") after `import mrsteve`
