"""The released models as parts of the package's registries: MineCLIP an encoder, VPT-Nav a
navigator, STEVE-1 with its prior an instruction policy.

The package registers them through its own entry points (``pyproject.toml``: the groups
``mrsteve.encoders``, ``mrsteve.navigators`` and ``mrsteve.instruction_policies``), as any other
package's parts: the registries of the lower layers name nothing of this one. Importing this
module imports neither torch nor MineStudio; each part is built from its released weights files
by :mod:`mrsteve.minecraft.parts` (torch, the ``minecraft`` extra) only when a run chooses it.
"""

from __future__ import annotations

from mrsteve.agent.registry import SKILL_DATA, InstructionPolicySpec
from mrsteve.control.registry import NavigatorSpec
from mrsteve.perception.registry import EncoderSpec

PARTS = "mrsteve.minecraft.parts"
"""The module that builds the parts (torch)."""

CHECKPOINT_KINDS = ("mineclip", "vpt", "vpt-nav", "steve1", "steve1-prior")
"""The kinds of the released checkpoints (:mod:`mrsteve.minecraft.checkpoints` reads them;
named here, where no torch is imported, for the commands' help)."""

MINECLIP = EncoderSpec(
    "mineclip", "MineCLIP over RGB frames, from a released attn.pth",
    f"{PARTS}:mineclip_encoder", f"{PARTS}:mineclip_thresholds",
    ("perception/data/lexicon.toml",), files=("mineclip",), extra="minecraft", reads=("rgb",),
    check_file=f"{PARTS}:checked_file")
"""MineCLIP (``--encoder mineclip --mineclip-weights attn.pth``)."""

VPT_NAV = NavigatorSpec(
    "vpt-nav", "VPT-Nav itself: the released goal-conditioned VPT, from vpt_nav.weights",
    f"{PARTS}:vpt_nav_navigator", files=("vpt-nav",), extra="minecraft",
    paper_row="VPT-Nav (KL = 1e-4)", reads=("rgb", "pose"), check_file=f"{PARTS}:checked_file")
"""VPT-Nav (``--navigator vpt-nav --vpt-nav-weights vpt_nav.weights``)."""

STEVE1 = InstructionPolicySpec(
    "steve1", "STEVE-1 and its prior, from released weights files", f"{PARTS}:steve1_policy",
    SKILL_DATA, files=("steve1", "steve1-prior", "mineclip"), extra="minecraft", reads=("rgb",),
    check_file=f"{PARTS}:checked_file")
"""STEVE-1 (``--instruction-policy steve1`` with its weights, prior and MineCLIP)."""
