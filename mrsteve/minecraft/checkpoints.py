"""The released checkpoint files: reading them with an exact check, telling them apart, and
writing synthetic ones in the same formats.

Five kinds (:data:`KINDS`):

* ``mineclip``: ``attn.pth`` = ``torch.save({"state_dict": {"model.<key>": tensor}})``;
* ``vpt``: VPT's ``.weights`` (a state dict) with its ``.model`` (a pickled dict of the policy's
  arguments, ``["model"]["args"]["net"]["args"]`` and ``["pi_head_opts"]``);
* ``vpt-nav``: ``vpt_nav.weights``, VPT's keys plus ``goal_embed._mlp`` and ``goal_proj``;
* ``steve1``: ``steve1.weights``, VPT's keys plus ``net.mineclip_embed_linear``;
* ``steve1-prior``: ``steve1_prior.pt``, the state dict of ``TranslatorVAE``.

Upstream loads VPT's weights with ``strict=False``, so a wrong file runs silently; here every file
is checked against the model its configuration builds (on the ``meta`` device: the full sizes are
checked without allocating them), and a file with a missing, unexpected or mis-shaped key is
refused with a :class:`CheckpointError` naming them. MineCLIP's file stores no configuration: it
is read from the tensors' shapes. A VPT-family file's configuration comes from a ``.model`` file
(given, or beside the weights with the same stem) or else from its shapes (the action temperature,
which no tensor shows, is then VPT's 2.0).
"""

from __future__ import annotations

import io
import pickle
import re
import warnings
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, is_dataclass
from pathlib import Path
from typing import Any

import torch
from torch import nn

from mrsteve.minecraft.mineclip import (
    TINY_MINECLIP,
    MineClip,
    MineClipConfig,
    config_from_shapes,
)
from mrsteve.minecraft.registry import CHECKPOINT_KINDS
from mrsteve.minecraft.vpt import (
    RELATIVE_BASIS,
    TINY_PRIOR,
    TINY_VPT,
    PriorConfig,
    Steve1PolicyNet,
    TranslatorVAE,
    VptConfig,
    VptNavPolicyNet,
    VptPolicyNet,
    prior_config_from_shapes,
)

KINDS = CHECKPOINT_KINDS
"""The checkpoint kinds, as ``mrsteve weights synth --kind`` names them."""

DESCRIPTIONS = {
    "mineclip": "MineCLIP checkpoint (attn.pth: {'state_dict': {'model.<key>': tensor}})",
    "vpt": "VPT policy weights (.weights state dict)",
    "vpt-nav": "VPT-Nav policy weights (VPT keys + goal_embed, goal_proj)",
    "steve1": "STEVE-1 policy weights (VPT keys + net.mineclip_embed_linear)",
    "steve1-prior": "STEVE-1 prior (TranslatorVAE state dict)",
    "vpt-model": "VPT .model (pickled policy arguments)",
}
"""What ``mrsteve weights inspect`` calls each format."""

MINECLIP_PREFIX = "model."
VPT_FAMILY = ("vpt", "vpt-nav", "steve1")
NETS: dict[str, Callable[[VptConfig], VptPolicyNet]] = {
    "vpt": VptPolicyNet, "vpt-nav": VptNavPolicyNet, "steve1": Steve1PolicyNet}
SHOWN = 4
"""Keys named per category in an error before ``and N more``."""


class CheckpointError(ValueError):
    """A file that is not the checkpoint asked for; the message is one line naming the keys."""


@dataclass(frozen=True)
class Checkpoint:
    """A checked checkpoint: its kind, configuration, tensors (keys as the model names them:
    MineCLIP's without its ``model.`` prefix) and parameter count (shared tensors once)."""

    kind: str
    config: Any
    state: dict[str, torch.Tensor]
    parameters: int

    def build(self, device: str | torch.device = "cpu") -> nn.Module:
        """The model with these tensors loaded (strict), in evaluation mode."""
        model = build_model(self.kind, self.config, device="meta")
        model.load_state_dict(self.state, strict=True, assign=True)
        return model.to(device).eval()


def build_model(kind: str, config: Any, device: str | torch.device = "cpu") -> nn.Module:
    """The model of ``kind`` for ``config`` (``device="meta"``: shapes only, nothing allocated)."""
    with torch.device(device):
        if kind == "mineclip":
            return MineClip(config)
        if kind == "steve1-prior":
            return TranslatorVAE(config)
        return NETS[kind](config)


def parameter_count(model: nn.Module) -> int:
    """Parameters of ``model``, a tensor shared by several modules counted once."""
    return sum(p.numel() for p in model.parameters())


def _listed(keys: list[str]) -> str:
    shown = ", ".join(keys[:SHOWN])
    return shown + (f" and {len(keys) - SHOWN} more" if len(keys) > SHOWN else "")


def check_state(kind: str, state: Mapping[str, torch.Tensor], config: Any = None,
                source: str = "the file") -> Checkpoint:
    """``state`` checked against the model of ``kind`` (``config``, or read from the shapes):
    every key present, none extra, every shape the model's; else :class:`CheckpointError`."""
    shapes = {key: tuple(value.shape) for key, value in state.items()}
    if config is None:
        config = _config_from_shapes(kind, shapes, source)
    try:
        model = build_model(kind, config, device="meta")
    except ValueError as error:
        raise CheckpointError(f"{source}: {error}") from None
    expected = {key: tuple(value.shape) for key, value in model.state_dict().items()}
    missing = sorted(expected.keys() - shapes.keys())
    unexpected = sorted(shapes.keys() - expected.keys())
    misshaped = [f"{key} {list(shapes[key])} (expected {list(expected[key])})"
                 for key in sorted(expected.keys() & shapes.keys()) if shapes[key] != expected[key]]
    problems = [f"{what} {_listed(keys)}" for what, keys in
                (("missing", missing), ("unexpected", unexpected), ("mis-shaped", misshaped))
                if keys]
    if problems:
        raise CheckpointError(f"{source} is not a {DESCRIPTIONS[kind]} of this configuration: "
                              + "; ".join(problems))
    return Checkpoint(kind, config, dict(state), parameter_count(model))


def _config_from_shapes(kind: str, shapes: Mapping[str, tuple[int, ...]], source: str) -> Any:
    reader = {"mineclip": config_from_shapes, "steve1-prior": prior_config_from_shapes}.get(
        kind, vpt_config_from_shapes)
    try:
        return reader(shapes)
    except KeyError as missing:
        raise CheckpointError(f"{source} is not a {DESCRIPTIONS[kind]}: missing {missing.args[0]}"
                              ) from None
    except (ValueError, IndexError, ZeroDivisionError) as error:
        raise CheckpointError(f"{source} is not a {DESCRIPTIONS[kind]}: {error}") from None


def first_shape(shapes: Mapping[str, tuple[int, ...]], *keys: str) -> tuple[int, ...]:
    """The shape of the first of ``keys`` present (tensors that show the same size), so that a
    file missing one of them is still read and then refused by name; ``KeyError`` if none is."""
    for key in keys:
        if key in shapes:
            return shapes[key]
    raise KeyError(keys[0])


def count_prefixed(shapes: Mapping[str, object], prefix: str) -> int:
    """How many consecutive ``prefix{i}.`` groups of keys there are from ``i = 0``."""
    n = 0
    while any(key.startswith(f"{prefix}{n}.") for key in shapes):
        n += 1
    return n


def vpt_config_from_shapes(shapes: Mapping[str, tuple[int, ...]]) -> VptConfig:
    """A VPT-family state dict's configuration from its shapes (square frames, VPT's
    ``timesteps`` 128 and temperature 2.0: no tensor shows them)."""
    net = "net.img_process.cnn."
    hidsize = first_shape(shapes, "net.final_ln.weight", "net.final_ln.bias",
                          "net.lastlayer.layer.weight")[0]
    chans = [first_shape(shapes, f"{net}stacks.{i}.n.weight", f"{net}stacks.{i}.n.bias",
                         f"{net}stacks.{i}.firstconv.layer.weight")[0]
             for i in range(count_prefixed(shapes, f"{net}stacks."))]
    if not chans:
        raise KeyError(f"{net}stacks.0.firstconv.layer.weight")
    width = max(chans[0] // 16, 1)
    flat = first_shape(shapes, f"{net}dense.norm.weight", f"{net}dense.norm.bias")[0]
    side = round((flat / chans[-1]) ** 0.5)
    blocks = count_prefixed(shapes, "net.recurrent_layer.blocks.")
    within = [f"net.recurrent_layer.blocks.{i}." for i in range(blocks)]
    heads = first_shape(shapes, *(f"{b}r.orc_block.r_layer.{p}" for b in within
                                  for p in ("weight", "bias")))[0] // RELATIVE_BASIS
    memory = first_shape(shapes, *(f"{b}r.orc_block.b_nd" for b in within))[1]
    pointwise = (first_shape(shapes, *(f"{b}mlp0.layer.weight" for b in within))[0]
                 if any(f"{b}mlp0.layer.weight" in shapes for b in within)
                 else first_shape(shapes, *(f"{b}mlp1.layer.weight" for b in within))[1])
    timesteps = VptConfig().timesteps
    image = side * 2 ** len(chans)
    goal = shapes.get("net.mineclip_embed_linear.weight", (0, VptConfig().mineclip_embed_dim))
    return VptConfig(hidsize=hidsize, impala_width=width,
                     impala_chans=tuple(c // width for c in chans), img_shape=(image, image, 3),
                     attention_heads=heads, attention_memory_size=timesteps + memory,
                     timesteps=timesteps, n_recurrence_layers=blocks,
                     pointwise_ratio=pointwise // hidsize, mineclip_embed_dim=goal[1])


SAFE_GLOBALS = {("collections", "OrderedDict"), *(("builtins", name) for name in (
    "dict", "list", "tuple", "set", "frozenset", "int", "float", "bool", "str", "complex"))}
"""The only Python objects a ``.model`` may name: containers and scalars."""


class _PlainUnpickler(pickle.Unpickler):
    """Unpickles plain values only: a pickle that names any other Python object is refused
    (unpickling one could run code)."""

    def find_class(self, module: str, name: str) -> Any:
        if (module, name) in SAFE_GLOBALS:
            return super().find_class(module, name)
        raise pickle.UnpicklingError(f"it refers to the Python object {module}.{name}")


def _plain_pickle(path: Path) -> Any:
    """The plain values pickled in ``path``."""
    try:
        return _PlainUnpickler(io.BytesIO(path.read_bytes())).load()
    except Exception as error:  # noqa: BLE001 -- arbitrary bytes fail in arbitrary ways
        raise CheckpointError(f"{path} is not a VPT .model (a pickled dict of plain values): "
                              f"{error}") from None


def _model_config(content: Any, path: Path) -> VptConfig:
    try:
        return VptConfig.from_model_file(content)
    except ValueError as error:
        raise CheckpointError(f"{path}: {error}") from None


def read_model_file(path: str | Path) -> VptConfig:
    """The configuration in a VPT ``.model`` file."""
    return _model_config(_plain_pickle(Path(path)), Path(path))


def _torch_load(path: Path) -> Any:
    """A torch file's content, tensors memory-mapped (a zip archive) or read (torch's legacy
    format); only tensors and plain containers are unpickled."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # torch's note on pickle protocols
            return torch.load(path, map_location="cpu", weights_only=True, mmap=_is_zip(path))
    except Exception as error:  # noqa: BLE001 -- arbitrary bytes fail in arbitrary ways
        text = str(error)
        named = re.search(r"Unsupported global: GLOBAL ([\w.]+)", text)
        if named:
            raise CheckpointError(f"{path} holds the Python object {named.group(1)} besides "
                                  "tensors; it is not unpickled, as that could run code") from None
        raise CheckpointError(f"{path} is neither a torch checkpoint nor a VPT .model "
                              f"({torch_load_reason(text, error)})") from None


def torch_load_reason(text: str, error: Exception) -> str:
    """Why ``torch.load(weights_only=True)`` refused a file, in a few words: the last line of
    its message that names a cause, without its advice to load the file unsafely."""
    lines = [line.strip() for line in text.strip().splitlines() if line.strip()]
    causes = [line for line in lines
              if not line.startswith(("Weights only load failed", "Check the documentation",
                                      "(1)", "(2)"))
              and "weights_only" not in line]  # torch's advice names weights_only
    cause = causes[-1].rstrip(".") if causes else type(error).__name__
    return f"not readable as tensors: {cause}"


def _state_of(kind: str, content: Any, source: str) -> dict[str, torch.Tensor]:
    """The state dict inside a loaded file of ``kind`` (MineCLIP's without its prefix)."""
    if kind == "mineclip":
        if not (isinstance(content, dict) and isinstance(content.get("state_dict"), dict)):
            raise CheckpointError(f"{source} is not a {DESCRIPTIONS[kind]}: it has no "
                                  "'state_dict' entry")
        content = content["state_dict"]
        unprefixed = sorted(k for k in content if not k.startswith(MINECLIP_PREFIX))
        if unprefixed:
            raise CheckpointError(f"{source} is not a {DESCRIPTIONS[kind]}: unexpected "
                                  f"{_listed(unprefixed)} (every key starts with 'model.')")
        content = {k[len(MINECLIP_PREFIX):]: v for k, v in content.items()}
    if not (isinstance(content, dict)
            and all(isinstance(v, torch.Tensor) for v in content.values())):
        raise CheckpointError(f"{source} is not a {DESCRIPTIONS[kind]}: not a dict of tensors")
    return content


def read_checkpoint(path: str | Path, kind: str, model_file: str | Path | None = None
                    ) -> Checkpoint:
    """The checked checkpoint of ``kind`` in ``path`` (tensors memory-mapped, not read yet);
    ``model_file``: a VPT-family file's ``.model`` (default: the one beside it, if any)."""
    path = Path(path)
    if kind not in KINDS:
        raise CheckpointError(f"unknown checkpoint kind {kind!r}; known: {', '.join(KINDS)}")
    if not path.is_file():
        raise CheckpointError(f"{path} is not a file")
    config = None
    if kind in VPT_FAMILY:
        beside = path.with_suffix(".model")
        model_file = model_file or (beside if beside.is_file() and beside != path else None)
        if model_file is not None:
            config = read_model_file(model_file)
    state = _state_of(kind, _torch_load(path), str(path))
    return check_state(kind, state, config, source=str(path))


def detect_kind(content: Any) -> str | None:
    """Which kind a loaded file's content looks like (before the exact check), or ``None``."""
    if isinstance(content, dict) and isinstance(content.get("state_dict"), dict):
        return "mineclip"
    if not isinstance(content, dict):
        return None
    keys = [k for k in content if isinstance(k, str)]
    if any(k.startswith(("encoder.", "decoder.")) for k in keys):
        return "steve1-prior"
    if any(k.startswith("net.mineclip_embed_linear.") for k in keys):
        return "steve1"
    if any(k.startswith(("goal_embed.", "goal_proj.")) for k in keys):
        return "vpt-nav"
    if any(k.startswith(("net.", "pi_head.", "value_head.")) for k in keys):
        return "vpt"
    return None


@dataclass(frozen=True)
class Inspection:
    """What ``mrsteve weights inspect`` reports about a file."""

    format: str
    """A key of :data:`DESCRIPTIONS`."""
    config: Any
    parameters: int
    """Parameters of the model the file fills (a ``.model``: of the VPT it describes)."""

    def lines(self) -> list[str]:
        config = asdict(self.config) if is_dataclass(self.config) else self.config
        settings = " ".join(f"{k}={_plain(v)}" for k, v in config.items())
        return [f"format: {self.format} -- {DESCRIPTIONS[self.format]}",
                f"configuration: {settings}", f"parameters: {self.parameters:,}"]


def _plain(value: Any) -> str:
    if isinstance(value, tuple):
        return "x".join(map(str, value))
    return str(value)


def inspect_file(path: str | Path, model_file: str | Path | None = None) -> Inspection:
    """The format, configuration and parameter count of a checkpoint file; anything else raises
    :class:`CheckpointError`."""
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"{path} is not a file")
    if not _is_zip(path):
        try:
            content = _plain_pickle(path)
        except CheckpointError:
            pass  # perhaps torch's legacy format
        else:
            config = _model_config(content, path)
            return Inspection("vpt-model", config,
                              parameter_count(build_model("vpt", config, device="meta")))
    kind = detect_kind(_torch_load(path))
    if kind is None:
        raise CheckpointError(f"{path} is none of: {', '.join(DESCRIPTIONS[k] for k in KINDS)}")
    checkpoint = read_checkpoint(path, kind, model_file)
    return Inspection(kind, checkpoint.config, checkpoint.parameters)


def _is_zip(path: Path) -> bool:
    """torch's file format (a zip archive), as opposed to a plain pickle (a ``.model``)."""
    with open(path, "rb") as handle:
        return handle.read(4) == b"PK\x03\x04"


def synthetic_state(kind: str, config: Any, seed: int = 0,
                    device: str | torch.device = "cpu") -> dict[str, torch.Tensor]:
    """Random tensors in the layout of ``kind`` (``device="meta"``: shapes only): normal with
    standard deviation 0.02, norm scales around 1."""
    model = build_model(kind, config, device=device)
    if str(device) != "meta":
        generator = torch.Generator().manual_seed(seed)
        with torch.no_grad():
            for module in model.modules():
                for name, tensor in module.named_parameters(recurse=False):
                    noise = torch.randn(tensor.shape, generator=generator) * 0.02
                    scale = isinstance(module, (nn.LayerNorm, nn.GroupNorm)) and name == "weight"
                    tensor.copy_(noise + 1.0 if scale else noise)
    return dict(model.state_dict())


FULL = {"mineclip": MineClipConfig(), "vpt": VptConfig(), "vpt-nav": VptConfig(),
        "steve1": VptConfig(), "steve1-prior": PriorConfig()}
TINY = {"mineclip": TINY_MINECLIP, "vpt": TINY_VPT, "vpt-nav": TINY_VPT, "steve1": TINY_VPT,
        "steve1-prior": TINY_PRIOR}
"""The released sizes and the small ones of ``--tiny``."""


def synthetic_outputs(kind: str, out: str | Path) -> list[Path]:
    """The files :func:`write_synthetic` writes for ``out``: a VPT-family file's ``.model``
    beside its weights."""
    out = Path(out)
    if kind in VPT_FAMILY:
        if out.suffix == ".model":
            raise CheckpointError(f"{out}: name the .weights file; its .model is written beside "
                                  "it with the same stem")
        return [out, out.with_suffix(".model")]
    return [out]


def write_synthetic(kind: str, out: str | Path, tiny: bool = False, seed: int = 0) -> Checkpoint:
    """Write a checkpoint of ``kind`` with random values in the released format (``tiny``: the
    small configuration) to ``out`` (and its ``.model``); the files replace any there."""
    from mrsteve.fileio import atomic_path

    config = (TINY if tiny else FULL)[kind]
    state = synthetic_state(kind, config, seed)
    paths = synthetic_outputs(kind, out)
    content = ({"state_dict": {MINECLIP_PREFIX + k: v for k, v in state.items()}}
               if kind == "mineclip" else state)
    with atomic_path(paths[0]) as tmp:
        torch.save(content, tmp)
    if kind in VPT_FAMILY:
        with atomic_path(paths[1]) as tmp:
            tmp.write_bytes(pickle.dumps(config.model_file(), protocol=4))
    return check_state(kind, state, config, source=str(out))


__all__ = ["KINDS", "Checkpoint", "CheckpointError", "Inspection",
           "build_model", "check_state", "detect_kind", "inspect_file", "read_checkpoint",
           "read_model_file", "synthetic_outputs", "synthetic_state", "write_synthetic"]
