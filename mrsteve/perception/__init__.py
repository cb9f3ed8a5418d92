"""Perception: the Encoder interface and the embedded world's semantic encoder (MineCLIP stand-in)."""
