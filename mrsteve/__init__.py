"""MrSteve: What-Where-When episodic memory agents for Minecraft-like worlds (Park, Cho, Ahn, ICLR 2025).

Layers, lowest first: ``memory`` and ``world`` (numpy/numba only), ``env`` (Gymnasium),
``perception``, ``control``, ``agent``, ``tasks``, ``eval`` and ``cli``. Lower layers never import
higher ones.
"""

__version__ = "0.1.0"
