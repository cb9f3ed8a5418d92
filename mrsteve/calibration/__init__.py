"""Calibration: fitting an encoder's thresholds on labelled clips of the embedded world.

An offline tool (like :mod:`mrsteve.bench`), run by ``mrsteve calibrate``. It reads the world
(poses in procedural calibration worlds and, held out, in the paper's maps; labels from the
renderer's ground truth), which the agent's parts may not, so it lives above
:mod:`mrsteve.perception` rather than in it.

* :mod:`mrsteve.calibration.clips`: labelled clips of the world and pairs of clips at one place;
  the calibration worlds and the held-out worlds (the evaluation maps).
* :mod:`mrsteve.calibration.thresholds`: the cut rules, :func:`calibrate` on clips,
  :func:`calibrate_on_world` (what ``mrsteve/perception/data/thresholds.toml`` comes from) and the
  world-free :func:`estimate_thresholds`.
"""

from mrsteve.calibration.clips import (
    CALIBRATION_WORLDS,
    HELD_OUT_WORLDS,
    ClipConfig,
    LabelledClip,
    collect_clips,
    collect_event_pairs,
)
from mrsteve.calibration.thresholds import (
    MERGE_MARGIN,
    Calibration,
    EventFit,
    Measurement,
    PromptFit,
    WorldCalibration,
    calibrate,
    calibrate_on_world,
    estimate_thresholds,
    f1_threshold,
    format_world_calibration,
    measure,
    reference_view,
    threshold_between,
)

__all__ = [
    "CALIBRATION_WORLDS",
    "HELD_OUT_WORLDS",
    "MERGE_MARGIN",
    "Calibration",
    "ClipConfig",
    "EventFit",
    "LabelledClip",
    "Measurement",
    "PromptFit",
    "WorldCalibration",
    "calibrate",
    "calibrate_on_world",
    "collect_clips",
    "collect_event_pairs",
    "estimate_thresholds",
    "f1_threshold",
    "format_world_calibration",
    "measure",
    "reference_view",
    "threshold_between",
]
