"""The encoders an agent can use, by name: the one registry the agent's tree, its factory and the
command line read (:data:`ENCODERS`).

==============  ===========================================================================
``semantic``    :class:`~mrsteve.perception.SemanticEncoder`, the stand-in over the renderer's
                semantic frame
``pixels``      :class:`~mrsteve.perception.pixels.PixelEncoder`, the video-text model over RGB
                frames with the shipped weights
``mineclip``    MineCLIP over RGB frames, a released ``attn.pth`` (``--mineclip-weights``;
                :mod:`mrsteve.minecraft`, the ``minecraft`` extra)
==============  ===========================================================================

Each entry holds what builds the encoder, its calibrated thresholds, its shipped weights and the
data files it loads, so that a new encoder is one entry. An entry may name its builder as
``"package.module:function"``, imported when the encoder is chosen
(:func:`~mrsteve.naming.entry_point`): an optional dependency costs nothing until then.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from mrsteve.digests import WeightsFile, check_files
from mrsteve.naming import entry_point, lookup
from mrsteve.nn import Weights
from mrsteve.perception.encoder import Encoder
from mrsteve.perception.thresholds import EncoderThresholds


@dataclass(frozen=True)
class EncoderSpec:
    """One encoder: its name, what builds it and the data files it loads."""

    name: str
    description: str
    """What it is, in one line."""
    build: Callable[..., Encoder] | str
    """A fresh encoder with the shipped weights and thresholds: ``build(*files)``, given the
    weights files of :attr:`files` (or the ``"module:function"`` that is it)."""
    thresholds: Callable[[], EncoderThresholds] | str
    """Its calibrated thresholds, read from its data file without building the encoder."""
    data: tuple[str, ...]
    """The data files (paths below ``mrsteve/``) it loads: its prompts, its calibrated
    thresholds, its weights."""
    weights: Callable[[], Weights] | None = None
    """Its shipped weights (``None``: it has none)."""
    files: tuple[str, ...] = ()
    """The kinds of the weights files it is built from that the package does not ship (a
    released checkpoint each, given on the command line as ``--<kind>-weights``)."""
    extra: str | None = None
    """The package extra that installs what it needs beyond the core (``None``: nothing)."""

    def make(self, files: tuple[WeightsFile, ...] = ()) -> Encoder:
        """A fresh encoder, built from the weights ``files`` of :attr:`files` (in their order)."""
        check_files(files, self.files, f"the {self.name} encoder")
        return self._resolve(self.build)(*files)

    def read_thresholds(self) -> EncoderThresholds:
        return self._resolve(self.thresholds)()

    def _resolve(self, target):
        return entry_point(target, f"the {self.name} encoder", self.extra)


def _semantic() -> Encoder:
    from mrsteve.perception.semantic import SemanticEncoder

    return SemanticEncoder()


def _semantic_thresholds() -> EncoderThresholds:
    from mrsteve.perception.semantic import load_shipped_thresholds

    return load_shipped_thresholds()


def _pixels() -> Encoder:
    from mrsteve.perception.pixels import PixelEncoder, load_shipped_weights

    return PixelEncoder(load_shipped_weights())


def _pixel_thresholds() -> EncoderThresholds:
    from mrsteve.perception.pixels import load_shipped_pixel_thresholds

    return load_shipped_pixel_thresholds()


def _pixel_weights() -> Weights:
    from mrsteve.perception.pixels import load_shipped_weights

    return load_shipped_weights()


ENCODERS: dict[str, EncoderSpec] = {
    spec.name: spec
    for spec in (
        EncoderSpec("semantic", "the renderer's semantic frame", _semantic,
                    _semantic_thresholds,
                    ("perception/data/lexicon.toml", "perception/data/salience.toml",
                     "perception/data/thresholds.toml")),
        EncoderSpec("pixels", "the learned encoder over RGB frames", _pixels, _pixel_thresholds,
                    ("perception/data/lexicon.toml", "perception/data/pixels.npz",
                     "perception/data/pixels_thresholds.toml"), _pixel_weights),
        EncoderSpec("mineclip", "MineCLIP over RGB frames, from a released attn.pth",
                    "mrsteve.minecraft.parts:mineclip_encoder",
                    "mrsteve.minecraft.parts:mineclip_thresholds",
                    ("perception/data/lexicon.toml",), files=("mineclip",), extra="minecraft"),
    )
}
"""Every encoder by name (module docstring)."""


def encoder_spec(kind: str) -> EncoderSpec:
    """The entry of the encoder called ``kind`` (an unknown name lists the known ones)."""
    return lookup(ENCODERS, kind, "encoder")


def make_encoder(kind: str = "semantic", files: tuple[WeightsFile, ...] = ()) -> Encoder:
    """A fresh encoder of ``kind`` (one of :data:`ENCODERS`) with its shipped thresholds (built
    from the weights ``files`` its entry takes)."""
    return encoder_spec(kind).make(files)


def encoder_weights(kind: str) -> str | None:
    """SHA-256 of the weights an encoder of ``kind`` ships with (``None``: it has none)."""
    weights = encoder_spec(kind).weights
    return None if weights is None else weights().sha256


def encoder_thresholds(kind: str) -> EncoderThresholds:
    """The calibrated thresholds an encoder of ``kind`` ships with (read from its data file,
    without building the encoder)."""
    return encoder_spec(kind).read_thresholds()


def encoder_data(kind: str) -> tuple[str, ...]:
    """The data files (paths below ``mrsteve/``) an encoder of ``kind`` loads."""
    return encoder_spec(kind).data

