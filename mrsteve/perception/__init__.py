"""Perception: the Encoder interface and the embedded world's semantic encoder (MineCLIP stand-in).

``SemanticEncoder`` embeds clips of semantic frames and text prompts into one space; its thresholds
are calibrated on the embedded world by the offline tool :mod:`mrsteve.calibration` (``mrsteve
calibrate``) and ship in ``data/thresholds.toml``. ``TaskPrompts`` is what a task tells the agent
(its explore / execute / place prompts; the tasks hold them, :mod:`mrsteve.tasks`).
"""

from mrsteve.perception.encoder import Encoder, Observation
from mrsteve.perception.lexicon import Lexicon, PromptMeaning, load_lexicon
from mrsteve.perception.prompts import TaskPrompts
from mrsteve.perception.semantic import SemanticEncoder, SemanticEncoderConfig
from mrsteve.perception.thresholds import EncoderThresholds

__all__ = [
    "Encoder",
    "EncoderThresholds",
    "Lexicon",
    "Observation",
    "PromptMeaning",
    "SemanticEncoder",
    "SemanticEncoderConfig",
    "TaskPrompts",
    "load_lexicon",
]
