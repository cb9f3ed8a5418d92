"""The released models as registry entries: what the encoder, navigator and instruction-policy
registries name (``"mrsteve.minecraft.parts:..."``) for ``--encoder mineclip``, ``--navigator
vpt-nav`` and ``--instruction-policy steve1``, resolved only when one is chosen.

A configuration tree names each weights file by its absolute path and SHA-256
(:class:`~mrsteve.digests.WeightsFile`: :func:`checked_file` makes it, checking the file key by
key first); a worker reads each file once (:func:`read_file`: kept by its resolved path, its
identity on disk and its hash) and builds the part from it.
"""

from __future__ import annotations

from pathlib import Path

from mrsteve.control.instruction import InstructionPolicyConfig
from mrsteve.control.navigation import NavigatorConfig
from mrsteve.control.skills import SkillConfig
from mrsteve.digests import WeightsFile, file_sha256
from mrsteve.minecraft.checkpoints import Checkpoint, CheckpointError, read_checkpoint
from mrsteve.minecraft.policies import (
    STEVE1_GUIDANCE,
    MineClipEncoder,
    Steve1Policy,
    VptNavNavigator,
    release_thresholds,
)
from mrsteve.perception.thresholds import EncoderThresholds

FILES_KEPT = 8
"""Weights files a process keeps read (:func:`read_file`), the least recently used dropped."""

_read: dict[tuple[str, str, int, int, int], tuple[str, Checkpoint]] = {}


def _read_once(kind: str, path: str | Path) -> tuple[str, Checkpoint]:
    """``(sha256, checkpoint)`` of the file at ``path``, read and hashed once per process: kept by
    the resolved path and the file's identity (inode, size, modification time), so a file
    replaced since is read again."""
    resolved = Path(path).resolve()
    if not resolved.is_file():
        raise CheckpointError(f"{path} is not a file")
    stat = resolved.stat()
    key = (kind, str(resolved), stat.st_ino, stat.st_size, stat.st_mtime_ns)
    entry = _read.pop(key, None)
    if entry is None:
        entry = file_sha256(resolved), read_checkpoint(resolved, kind)
        while len(_read) >= FILES_KEPT:
            del _read[next(iter(_read))]
    _read[key] = entry  # the most recently used last
    return entry


def checked_file(kind: str, path: str | Path) -> WeightsFile:
    """The tree's record of the ``kind`` checkpoint at ``path``, checked key by key (a wrong file
    is a one-line :class:`~mrsteve.minecraft.checkpoints.CheckpointError`)."""
    sha256, _ = _read_once(kind, path)
    return WeightsFile(kind, str(Path(path).resolve()), sha256)


def read_file(file: WeightsFile) -> Checkpoint:
    """The checkpoint a tree names, read once per process and checked against its hash (a file
    changed since the tree was made is a ``ValueError`` naming both hashes)."""
    sha256, checkpoint = _read_once(file.kind, file.path)
    if sha256 != file.sha256:
        raise ValueError(f"{file.path} holds other weights ({sha256}) than the configuration "
                         f"names ({file.sha256})")
    return checkpoint


def mineclip_encoder(mineclip: WeightsFile) -> MineClipEncoder:
    """``--encoder mineclip``: MineCLIP of ``attn.pth`` with the release's thresholds."""
    return MineClipEncoder(read_file(mineclip).build())


def mineclip_thresholds() -> EncoderThresholds:
    """MineCLIP's thresholds (the paper's and the release's, not calibrated here)."""
    return release_thresholds()


def vpt_nav_navigator(config: NavigatorConfig, vpt_nav: WeightsFile) -> VptNavNavigator:
    """``--navigator vpt-nav``: VPT-Nav of ``vpt_nav.weights``."""
    return VptNavNavigator(read_file(vpt_nav).build(), config)


def steve1_policy(skills: SkillConfig | None, config: InstructionPolicyConfig | None,
                  steve1: WeightsFile, prior: WeightsFile, mineclip: WeightsFile
                  ) -> Steve1Policy:
    """``--instruction-policy steve1``: STEVE-1 of ``steve1.weights`` with the prior of
    ``steve1_prior.pt`` over MineCLIP's text tower (``attn.pth``), sampling as ``config`` says,
    with its guidance scale g (``(g cond - (g - 1) uncond)``: STEVE-1's l = g - 1; default the
    release's l)."""
    config = config or InstructionPolicyConfig()
    text = MineClipEncoder(read_file(mineclip).build())
    guidance = STEVE1_GUIDANCE if config.guidance is None else config.guidance - 1
    return Steve1Policy(read_file(steve1).build(), read_file(prior).build(), text.text_features,
                        guidance=guidance, sample=config.sample)
