"""Perception: the Encoder interface and the embedded world's encoders (MineCLIP's role).

``SemanticEncoder`` embeds clips of semantic frames and text prompts into one space; its thresholds
are calibrated on the embedded world by the offline tool :mod:`mrsteve.calibration` (``mrsteve
calibrate``) and ship in ``data/thresholds.toml``. ``PixelEncoder`` (:mod:`.pixels`) is a learned
video-text model that sees only RGB frames, with shipped weights and thresholds; the registry
:data:`ENCODERS` names both, and ``make_encoder`` builds either by name. ``TaskPrompts`` is what
a task tells the agent (its explore / execute / place prompts; the tasks hold them,
:mod:`mrsteve.tasks`).
"""

from mrsteve.perception.encoder import Encoder, Observation
from mrsteve.perception.lexicon import Lexicon, PromptMeaning, load_lexicon
from mrsteve.perception.prompts import TaskPrompts
from mrsteve.perception.registry import (
    ENCODERS,
    EncoderSpec,
    encoder_data,
    encoder_spec,
    encoder_thresholds,
    encoder_weights,
    make_encoder,
)
from mrsteve.perception.semantic import SemanticEncoder, SemanticEncoderConfig
from mrsteve.perception.thresholds import EncoderThresholds

__all__ = [
    "ENCODERS",
    "Encoder",
    "EncoderSpec",
    "EncoderThresholds",
    "Lexicon",
    "Observation",
    "PromptMeaning",
    "SemanticEncoder",
    "SemanticEncoderConfig",
    "TaskPrompts",
    "encoder_data",
    "encoder_spec",
    "encoder_thresholds",
    "encoder_weights",
    "load_lexicon",
    "make_encoder",
]
