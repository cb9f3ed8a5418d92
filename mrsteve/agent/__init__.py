"""The MrSteve agent (mode selector and loop) and its baselines."""
