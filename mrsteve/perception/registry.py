"""The encoders an agent can use, by name: ``semantic`` (ground-truth semantic frames) and
``pixels`` (the learned RGB encoder)."""

from __future__ import annotations

from mrsteve.naming import check_name
from mrsteve.perception.encoder import Encoder
from mrsteve.perception.thresholds import EncoderThresholds

ENCODERS = ("semantic", "pixels")
"""``semantic``: :class:`~mrsteve.perception.SemanticEncoder`, the stand-in over the renderer's
semantic frame; ``pixels``: :class:`~mrsteve.perception.pixels.PixelEncoder`, the video-text model
over RGB frames with the shipped weights."""


def make_encoder(kind: str = "semantic") -> Encoder:
    """A fresh encoder of ``kind`` (one of :data:`ENCODERS`) with its shipped thresholds."""
    check_name(kind, ENCODERS, "encoder")
    if kind == "pixels":
        from mrsteve.perception.pixels import PixelEncoder

        return PixelEncoder()
    from mrsteve.perception.semantic import SemanticEncoder

    return SemanticEncoder()


def encoder_weights(kind: str) -> str | None:
    """SHA-256 of the weights an encoder of ``kind`` ships with (``None``: it has none)."""
    check_name(kind, ENCODERS, "encoder")
    if kind != "pixels":
        return None
    from mrsteve.perception.pixels import load_shipped_weights

    return load_shipped_weights().sha256


def encoder_thresholds(kind: str) -> EncoderThresholds:
    """The calibrated thresholds an encoder of ``kind`` ships with (read from its data file,
    without building the encoder)."""
    check_name(kind, ENCODERS, "encoder")
    if kind == "pixels":
        from mrsteve.perception.pixels import load_shipped_pixel_thresholds

        return load_shipped_pixel_thresholds()
    from mrsteve.perception.semantic import load_shipped_thresholds

    return load_shipped_thresholds()


ENCODER_DATA = {
    "semantic": ("perception/data/lexicon.toml", "perception/data/salience.toml",
                 "perception/data/thresholds.toml"),
    "pixels": ("perception/data/lexicon.toml", "perception/data/pixels.npz",
               "perception/data/pixels_thresholds.toml"),
}
"""The data files (paths below ``mrsteve/``) each encoder loads: its prompts, its calibrated
thresholds, its weights."""
