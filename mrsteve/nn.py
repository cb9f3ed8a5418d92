"""Inference layers and weights files shared by the learned parts (no torch at run time).

The learned parts (the pixel encoder, the navigator, the instruction policy) are trained with
torch (:mod:`mrsteve.train`) and run here with numpy and numba: convolutions as one compiled
im2col pass and a BLAS product, linear layers compiled with zero inputs skipped (most of them,
after a ReLU), a transformer step in one compiled call. Parameters keep torch's
layouts (convolutions ``[out, in, k, k]``, linear layers ``[out, in]``); frames run
channel-last.

A weights file is an ``.npz`` of float32 parameters plus a ``meta`` entry (JSON bytes: ``format``,
``version``, ``architecture``, ``info``). :func:`save_weights` writes one atomically;
:func:`read_weights` reads one back and raises a ``ValueError`` that names what is wrong for
anything else (another format or version, missing or extra parameters, wrong shapes, NaN);
:class:`Weights` is a learned part's weights with both.
"""

from __future__ import annotations

import errno
import hashlib
import json
import math
import zipfile
from collections.abc import Callable, Mapping
from dataclasses import asdict, dataclass, field
from functools import cached_property
from pathlib import Path
from typing import Any, ClassVar, Self

import numba as nb
import numpy as np

KERNEL = 3
"""Side of every convolution kernel (padding 1)."""


# ------------------------------------------------------------------------------------- layers


def conv3x3_relu(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, stride: int) -> np.ndarray:
    """ReLU of a ``3 x 3`` convolution with padding 1 of channel-last ``x[N, H, W, C]``: one
    compiled im2col pass and one matrix product. ``weight`` is ``[(ky, kx, in), out]``
    (:func:`conv_weight` reorders torch's)."""
    x = np.ascontiguousarray(x, dtype=np.float32)  # the im2col copies rows of contiguous frames
    n, height, width = x.shape[:3]
    rows, cols = (height - 1) // stride + 1, (width - 1) // stride + 1
    columns = np.empty((n * rows * cols, weight.shape[0]), dtype=np.float32)
    _im2col(x, stride, rows, cols, columns)
    out = columns @ weight
    _add_bias_relu(out, bias)
    return out.reshape(n, rows, cols, -1)


def dense(x: np.ndarray, weight: np.ndarray, bias: np.ndarray, relu: bool = False) -> np.ndarray:
    """``x @ weight + bias`` (with ``relu``, its ReLU) of a float32 vector or rows ``x``, an
    ``[in, out]`` ``weight``: compiled (:func:`_dense`), a zero input skipped."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    out = np.empty(x.shape[:-1] + (weight.shape[1],), np.float32)
    _dense(x.reshape(-1, x.shape[-1]), weight, bias, relu, out.reshape(-1, weight.shape[1]))
    return out


@nb.njit(cache=True, nogil=True, fastmath={"contract"})
def _dense(x, weight, bias, relu, out):
    for n in range(x.shape[0]):
        _dense_row(x[n], weight, bias, relu, out[n])


@nb.njit(cache=True, nogil=True, fastmath={"contract"}, inline="always")
def _dense_row(x, weight, bias, relu, out):
    out[:] = bias
    for i in range(x.shape[0]):
        value = x[i]
        if value != 0.0:
            for o in range(out.shape[0]):
                out[o] += value * weight[i, o]
    if relu:
        for o in range(out.shape[0]):
            out[o] = max(out[o], np.float32(0.0))


def conv_weight(torch_weight: np.ndarray) -> np.ndarray:
    """Torch's ``[out, in, k, k]`` convolution weight as :func:`conv3x3_relu` takes it."""
    return torch_weight.transpose(2, 3, 1, 0).reshape(-1, torch_weight.shape[0]).copy()


def channel_last_linear(torch_weight: np.ndarray, feature_map: tuple[int, int, int]) -> np.ndarray:
    """A linear layer over torch's flattened ``(C, H, W)`` map as ``[(H, W, C), out]``, for a
    channel-last map flattened in numpy."""
    height, width, channels = feature_map
    weight = torch_weight.reshape(-1, channels, height, width)
    return weight.transpose(0, 2, 3, 1).reshape(len(weight), -1).T.copy()


@nb.njit(cache=True, nogil=True)
def _im2col(x, stride, rows, cols, columns):
    """``columns[(n, r, c), (ky, kx, ch)] = x[n, r * stride + ky - 1, c * stride + kx - 1, ch]``,
    zero outside the frame (padding 1). A kernel row's three pixels are ``3 * channels``
    adjacent values of a channel-last frame row: copied as one run (unrolled for RGB frames)."""
    n_frames, height, _, channels = x.shape
    run = KERNEL * channels
    i = 0
    for n in range(n_frames):
        for r in range(rows):
            for ky in range(KERNEL):
                y = r * stride + ky - 1
                base = ky * run
                if y < 0 or y >= height:
                    columns[i:i + cols, base:base + run] = 0.0
                    continue
                line = x[n, y].reshape(-1)
                for c in range(cols):
                    start = (c * stride - 1) * channels
                    if start >= 0 and start + run <= line.shape[0]:
                        if run == 9:
                            for j in range(9):
                                columns[i + c, base + j] = line[start + j]
                        else:
                            columns[i + c, base:base + run] = line[start:start + run]
                    else:  # the frame's left or right edge
                        for j in range(run):
                            p = start + j
                            columns[i + c, base + j] = line[p] if 0 <= p < line.shape[0] else 0.0
            i += cols


@nb.njit(cache=True, nogil=True)
def _add_bias_relu(out, bias):
    """``out = max(out + bias, 0)`` in place, row by row."""
    for row in range(out.shape[0]):
        for o in range(out.shape[1]):
            out[row, o] = max(out[row, o] + bias[o], np.float32(0.0))


def feature_map(obs_size: tuple[int, int], channels: tuple[int, ...],
                strides: tuple[int, ...]) -> tuple[int, int, int]:
    """Height, width and channels after the ``3 x 3`` convolutions (padding 1) of ``strides``."""
    height, width = obs_size
    for stride in strides:
        height, width = (height - 1) // stride + 1, (width - 1) // stride + 1
    return height, width, channels[-1]


def layer_norm(x: np.ndarray, weight: np.ndarray, bias: np.ndarray,
               eps: float = 1e-5) -> np.ndarray:
    """Layer normalisation over the last axis (torch's ``nn.LayerNorm``), compiled."""
    x = np.ascontiguousarray(x, dtype=np.float32)
    out = np.empty_like(x)
    _layer_norm(x.reshape(-1, x.shape[-1]), weight, bias, eps, out.reshape(-1, x.shape[-1]))
    return out


@nb.njit(cache=True, nogil=True)
def _layer_norm(x, weight, bias, eps, out):
    for n in range(x.shape[0]):
        _layer_norm_row(x[n], weight, bias, eps, out[n])


@nb.njit(cache=True, nogil=True, inline="always")
def _layer_norm_row(x, weight, bias, eps, out):
    """Mean and variance summed in float64, the rest in float32."""
    size = x.shape[0]
    total = 0.0
    for i in range(size):
        total += x[i]
    mean = np.float32(total / size)
    squares = 0.0
    for i in range(size):
        centred = x[i] - mean
        squares += centred * centred
    scale = np.float32(1.0 / np.sqrt(squares / size + eps))
    for i in range(size):
        out[i] = (x[i] - mean) * scale * weight[i] + bias[i]


def logit(probability: float) -> float:
    """The log-odds of ``probability`` (in (0, 1)): where a logistic output reaches it."""
    return math.log(probability / (1.0 - probability))


def symlog(x: np.ndarray) -> np.ndarray:
    """``sign(x) log(1 + |x|)`` (DreamerV3's squashing)."""
    return np.sign(x) * np.log1p(np.abs(x))


def convolution_shapes(channels: tuple[int, ...], strides: tuple[int, ...]
                       ) -> dict[str, tuple[int, ...]]:
    """Parameter shapes (torch's layouts) of an image encoder's convolutions (``image.convs.*``)
    over RGB frames; a ``ValueError`` where ``channels`` and ``strides`` do not pair up."""
    if len(channels) != len(strides) or not channels:
        raise ValueError(f"channels and strides must be non-empty and of one length, got "
                         f"{channels} and {strides}")
    shapes: dict[str, tuple[int, ...]] = {}
    for i, (previous, out) in enumerate(zip((3, *channels), channels, strict=False)):
        shapes[f"image.convs.{i}.weight"] = (out, previous, KERNEL, KERNEL)
        shapes[f"image.convs.{i}.bias"] = (out,)
    return shapes


@dataclass(frozen=True)
class PolicyArchitecture:
    """The shape of the image encoder (:class:`FrameEncoder`) and causal core
    (:class:`CausalCore`) every learned policy shares (the foundation policy's); a policy's
    architecture adds its own fields after these."""

    obs_size: tuple[int, int] = (40, 64)
    """Frame height and width (the environment's default)."""
    channels: tuple[int, ...] = (16, 32, 64)
    """Output channels of the convolutions."""
    strides: tuple[int, ...] = (2, 2, 2)
    """Stride of each convolution."""
    dim: int = 256
    """Width of the frame embedding and the core."""
    context: int = 16
    """Frames the core attends to (this one and the previous ``context - 1``)."""
    heads: int = 4
    """Attention heads."""
    mlp_dim: int = 512
    """Hidden width of the core's MLP."""

    def __post_init__(self) -> None:
        convolution_shapes(self.channels, self.strides)
        if min(self.obs_size) < 1 or self.context < 1 or self.dim % self.heads:
            raise ValueError(f"need a positive obs_size and context, and dim divisible by heads, "
                             f"got {self}")

    @property
    def feature_map(self) -> tuple[int, int, int]:
        return feature_map(self.obs_size, self.channels, self.strides)

    def policy_shapes(self, buttons: int, camera: int) -> dict[str, tuple[int, ...]]:
        """Parameter shapes (torch's layouts) of the image encoder (``image.*``), the core
        (``core.*``) and an action head (``head.*``: a layer norm, ``buttons`` key logits and
        ``camera`` camera logits)."""
        dim = self.dim
        shapes = convolution_shapes(self.channels, self.strides)
        linears = {"image.frame": (dim, int(np.prod(self.feature_map))),
                   "core.qkv": (3 * dim, dim), "core.out": (dim, dim),
                   "core.mlp.0": (self.mlp_dim, dim), "core.mlp.2": (dim, self.mlp_dim),
                   "head.buttons": (buttons, dim), "head.camera": (camera, dim)}
        for name, shape in linears.items():
            shapes[f"{name}.weight"] = shape
            shapes[f"{name}.bias"] = shape[:1]
        for norm in ("core.norm1", "core.norm2", "head.norm"):
            shapes[f"{norm}.weight"] = (dim,)
            shapes[f"{norm}.bias"] = (dim,)
        shapes["core.position"] = (self.heads, self.context)
        return shapes


class FrameEncoder:
    """Inference of an image encoder: ``3 x 3`` convolutions with ReLU, then a linear
    layer with ReLU over the flattened map (torch parameters ``<prefix>.convs.<i>.*`` and
    ``<prefix>.frame.*``, the learned parts' shared image tower)."""

    def __init__(self, parameters: Mapping[str, np.ndarray], obs_size: tuple[int, int],
                 channels: tuple[int, ...], strides: tuple[int, ...],
                 prefix: str = "image") -> None:
        self.strides = strides
        # im2col columns are ordered (kernel row, kernel column, channel): reorder torch's
        # [out, in, k, k] weights to match
        self.convs = [(conv_weight(parameters[f"{prefix}.convs.{i}.weight"]),
                       parameters[f"{prefix}.convs.{i}.bias"]) for i in range(len(channels))]
        # frames run channel-last here: reorder the flattened map from torch's (C, H, W)
        self.frame = (channel_last_linear(parameters[f"{prefix}.frame.weight"],
                                          feature_map(obs_size, channels, strides)),
                      parameters[f"{prefix}.frame.bias"])

    def __call__(self, rgb: np.ndarray) -> np.ndarray:
        """``float32[N, dim]`` of ``uint8[N, H, W, 3]`` frames."""
        x = rgb.astype(np.float32)
        x *= 1 / 255
        x -= 0.5
        for (weight, bias), stride in zip(self.convs, self.strides, strict=True):
            x = conv3x3_relu(x, weight, bias, stride)
        return dense(x.reshape(len(x), -1), *self.frame, relu=True)


class CausalCore:
    """Inference of one pre-norm causal transformer block, one step at a time: attention
    over the last ``context`` steps with a learned bias per head and offset, then an MLP (torch
    parameters ``<prefix>.norm1``, ``.qkv``, ``.out``, ``.norm2``, ``.mlp.0``, ``.mlp.2``,
    ``.position``). The keys and values of the steps seen sit in a ring; :meth:`reset` forgets
    them."""

    def __init__(self, parameters: Mapping[str, np.ndarray], heads: int, context: int,
                 prefix: str = "core") -> None:
        def linear(name):
            return parameters[f"{prefix}.{name}.weight"].T.copy(), parameters[f"{prefix}.{name}.bias"]

        self.qkv, self.out = linear("qkv"), linear("out")
        self.mlp = (linear("mlp.0"), linear("mlp.2"))
        self.norm1 = (parameters[f"{prefix}.norm1.weight"], parameters[f"{prefix}.norm1.bias"])
        self.norm2 = (parameters[f"{prefix}.norm2.weight"], parameters[f"{prefix}.norm2.bias"])
        self.position = parameters[f"{prefix}.position"]
        self.heads, self.context = heads, context
        dim = self.out[0].shape[0]
        self.head_dim = dim // heads
        self._scale = np.float32(1.0 / np.sqrt(self.head_dim))
        self._keys = np.zeros((context, heads, self.head_dim), np.float32)
        self._values = np.zeros_like(self._keys)
        self.reset()

    def reset(self) -> None:
        """Forget the steps seen so far."""
        self._filled = 0
        self._slot = 0

    def step(self, x: np.ndarray) -> np.ndarray:
        """The block's output ``float32[dim]`` for this step's input ``float32[dim]``
        (compiled: :func:`_causal_step`)."""
        out = np.empty(x.shape[0], np.float32)
        _causal_step(np.ascontiguousarray(x, dtype=np.float32), self._slot, self._filled,
                     self._scale, self.norm1, self.qkv, self.out, self.norm2, self.mlp[0],
                     self.mlp[1], self.position, self._keys, self._values, out)
        self._filled = min(self._filled + 1, self.context)
        self._slot = (self._slot + 1) % self.context
        return out


@nb.njit(cache=True, nogil=True, fastmath={"contract"})
def _causal_step(x, slot, filled, scale, norm1, qkv, out_layer, norm2, hidden_layer,
                 output_layer, position, keys, values, out):
    """One step of :class:`CausalCore`: this step's key and value written to ring ``slot``,
    attention over the ring slots from ``slot`` back (``filled + 1`` of them, at most the
    context), then the MLP; the block's output in ``out``."""
    context, heads, head_dim = keys.shape
    dim = x.shape[0]
    normed = np.empty(dim, np.float32)
    _layer_norm_row(x, norm1[0], norm1[1], 1e-5, normed)
    projected = np.empty(3 * dim, np.float32)
    _dense_row(normed, qkv[0], qkv[1], False, projected)
    for h in range(heads):
        for d in range(head_dim):
            keys[slot, h, d] = projected[dim + h * head_dim + d]
            values[slot, h, d] = projected[2 * dim + h * head_dim + d]
    seen = min(filled + 1, context)
    attended = np.zeros(dim, np.float32)
    weights = np.empty(seen, np.float32)
    for h in range(heads):
        largest = -np.inf
        for offset in range(seen):
            ring = (slot - offset) % context
            total = np.float32(0.0)
            for d in range(head_dim):
                total += projected[h * head_dim + d] * keys[ring, h, d]
            weights[offset] = total * scale + position[h, offset]
            largest = max(largest, weights[offset])
        norm = np.float32(0.0)
        for offset in range(seen):
            weights[offset] = np.exp(weights[offset] - largest)
            norm += weights[offset]
        for offset in range(seen):
            ring = (slot - offset) % context
            weight = weights[offset] / norm
            for d in range(head_dim):
                attended[h * head_dim + d] += weight * values[ring, h, d]
    _dense_row(attended, out_layer[0], out_layer[1], False, out)
    for i in range(dim):
        out[i] += x[i]
    _layer_norm_row(out, norm2[0], norm2[1], 1e-5, normed)
    hidden = np.empty(hidden_layer[0].shape[1], np.float32)
    _dense_row(normed, hidden_layer[0], hidden_layer[1], True, hidden)
    residual = np.empty(dim, np.float32)
    _dense_row(hidden, output_layer[0], output_layer[1], False, residual)
    for i in range(dim):
        out[i] += residual[i]


def mlp(layers: list[tuple[np.ndarray, np.ndarray]], x: np.ndarray) -> np.ndarray:
    """A stack of linear layers (``[in, out]`` weights) with ReLU between them."""
    for i, (weight, bias) in enumerate(layers):
        x = dense(x, weight, bias, relu=i < len(layers) - 1)
    return x


def press_probability(logits: np.ndarray) -> np.ndarray:
    """The logistic of button ``logits``: the chance each is pressed. A logit below about -88
    overflows ``exp`` in float32 and gives the limit, 0, without a warning."""
    with np.errstate(over="ignore"):
        return 1.0 / (1.0 + np.exp(-logits))


@nb.njit(cache=True, nogil=True)
def sample_category(logits: np.ndarray, draw: float) -> int:
    """The category whose cumulative softmax probability first exceeds ``draw`` in [0, 1): the
    softmax's weights ``exp(logit - max)`` summed in float64, in order."""
    largest = np.float64(logits.max())
    weights = np.empty(logits.shape[0])
    total = 0.0
    for index in range(logits.shape[0]):
        total += np.exp(np.float64(logits[index]) - largest)
        weights[index] = total
    bar = draw * total
    for index in range(logits.shape[0]):
        if weights[index] > bar:
            return index
    return logits.shape[0] - 1


# ------------------------------------------------------------------------------- weights files


def weights_sha256(architecture: Mapping[str, Any], parameters: Mapping[str, np.ndarray]) -> str:
    """Hash of an architecture (as JSON) and every parameter's float32 bytes, by name."""
    digest = hashlib.sha256(json.dumps(dict(architecture), sort_keys=True).encode())
    for name in sorted(parameters):
        digest.update(name.encode())
        digest.update(np.ascontiguousarray(parameters[name], dtype="<f4").tobytes())
    return digest.hexdigest()


def save_weights(path: str | Path, fmt: str, version: int, architecture: Mapping[str, Any],
                 parameters: Mapping[str, np.ndarray], info: Mapping[str, Any]) -> None:
    """Write a weights file (module docstring) atomically; only a regular file is replaced."""
    from mrsteve.fileio import atomic_path

    meta = {"format": fmt, "version": version, "architecture": dict(architecture),
            "info": dict(info)}
    arrays = {name: np.asarray(value, dtype=np.float32) for name, value in parameters.items()}
    arrays["meta"] = np.frombuffer(json.dumps(meta).encode(), dtype=np.uint8)
    with atomic_path(Path(path)) as tmp, open(tmp, "wb") as handle:
        np.savez(handle, **arrays)


class MissingWeightsFile(FileNotFoundError, ValueError):
    """A weights file that is not there: a ``ValueError`` for whoever checks a user's input (the
    commands print its message), a ``FileNotFoundError`` for whoever falls back when a file a
    run was given is gone (``mrsteve report``)."""

    def __str__(self) -> str:
        return f"{self.strerror}: {self.filename}"


def unreadable_npz(error: Exception) -> str:
    """Why ``numpy.load`` could not read a file as an ``.npz`` archive, in words of its own
    (numpy's message for a file that is neither ``.npy`` nor ``.npz`` advises loading it as a
    pickle, which a weights file never is)."""
    if isinstance(error, zipfile.BadZipFile):
        return f"a damaged .npz archive ({error})"
    if isinstance(error, EOFError) or "pickled" in str(error):
        return "not a NumPy .npz archive"
    return f"unreadable as a NumPy .npz archive ({error})"


def read_weights(
    path: str | Path,
    fmt: str,
    version: int,
    what: str,
    shapes: Callable[[dict[str, Any]], tuple[Any, Mapping[str, tuple[int, ...]]]],
) -> tuple[Any, dict[str, np.ndarray], dict[str, Any]]:
    """Read a weights file of format ``fmt`` (``what`` names it in errors): ``(architecture,
    parameters, info)``, where ``shapes(raw_architecture)`` builds the architecture from its
    JSON and gives the parameter shapes it expects (raising ``ValueError`` or ``TypeError`` on a
    bad one). Anything else raises a ``ValueError`` naming the problem."""
    path = Path(path)
    try:
        with np.load(path, allow_pickle=False) as archive:
            arrays = {name: archive[name] for name in archive.files}
    except FileNotFoundError:
        raise MissingWeightsFile(errno.ENOENT, f"no {what} weights file", str(path)) from None
    except (OSError, ValueError, zipfile.BadZipFile, EOFError) as error:
        raise ValueError(f"{path} is not a {what} weights file: {unreadable_npz(error)}"
                         ) from None
    try:
        meta = json.loads(arrays.pop("meta").tobytes().decode())
        if meta["format"] != fmt:
            raise ValueError(f"format is {meta['format']!r}, not {fmt!r}")
        if meta["version"] != version:
            raise ValueError(f"version {meta['version']} (this code reads version {version})")
        architecture, expected = shapes(meta["architecture"])
    except (KeyError, TypeError, UnicodeDecodeError, json.JSONDecodeError) as error:
        raise ValueError(f"{path} is not a {what} weights file: bad metadata "
                         f"({type(error).__name__}: {error})") from None
    except ValueError as error:
        raise ValueError(f"{path}: {error}") from None
    missing, extra = sorted(set(expected) - set(arrays)), sorted(set(arrays) - set(expected))
    if missing or extra:
        raise ValueError(f"{path}: parameters do not match the architecture: missing {missing}, "
                         f"unexpected {extra}")
    wrong = {name: (arrays[name].shape, shape) for name, shape in expected.items()
             if arrays[name].shape != tuple(shape)}
    if wrong:
        raise ValueError(f"{path}: parameter shapes (found, expected) differ: {wrong}")
    bad = [name for name, value in arrays.items() if not np.all(np.isfinite(value))]
    if bad:
        raise ValueError(f"{path}: parameters hold NaN or infinity: {bad}")
    parameters = {name: np.asarray(value, np.float32) for name, value in arrays.items()}
    return architecture, parameters, meta.get("info", {})


def tuples(raw: Mapping[str, Any]) -> dict[str, Any]:
    """A dataclass's fields read back from JSON: lists as tuples."""
    return {key: tuple(value) if isinstance(value, list) else value for key, value in raw.items()}


@dataclass(frozen=True)
class Weights:
    """A learned part's parameters (float32, torch layouts) and architecture (a frozen dataclass
    with ``parameter_shapes()``). Subclasses name their file format (``FORMAT``, ``VERSION``),
    what they are (``WHAT``, for errors) and their architecture type (``ARCHITECTURE``)."""

    FORMAT: ClassVar[str]
    VERSION: ClassVar[int]
    WHAT: ClassVar[str]
    ARCHITECTURE: ClassVar[type]

    architecture: Any
    parameters: Mapping[str, np.ndarray]
    info: Mapping[str, object] = field(default_factory=dict)
    """How the weights were made (training command, seed, data, final losses)."""

    @cached_property
    def sha256(self) -> str:
        """Hash of the architecture and every parameter's bytes (computed once: treat the
        parameters as read-only)."""
        return weights_sha256(self.architecture_record(), self.parameters)

    def architecture_record(self) -> dict[str, Any]:
        """The architecture's fields as the file records and the digest hashes them."""
        return asdict(self.architecture)

    def save(self, path: str | Path) -> None:
        """Write the weights as an ``.npz`` file (atomically; only a regular file is replaced)."""
        save_weights(path, self.FORMAT, self.VERSION, self.architecture_record(),
                     self.parameters, self.info)

    @classmethod
    def load(cls, path: str | Path) -> Self:
        """Weights from an ``.npz`` file :meth:`save` wrote; anything else raises a
        ``ValueError`` that names what is wrong."""

        def shapes(raw):
            architecture = cls.ARCHITECTURE(**tuples(raw))
            return architecture, architecture.parameter_shapes()

        architecture, parameters, info = read_weights(path, cls.FORMAT, cls.VERSION, cls.WHAT,
                                                      shapes)
        return cls(architecture, parameters, info)

    @classmethod
    def read(cls, path: str | Path, sha256: str | None = None) -> Self:
        """The weights of the file at ``path``, read once per process (:func:`read_once`);
        ``sha256``: the hash the weights must have (a file changed since its configuration was
        made raises a ``ValueError`` naming both hashes)."""
        weights = read_once(cls, path)
        if sha256 is not None and weights.sha256 != sha256:
            raise ValueError(f"{path} holds other weights ({weights.sha256}) than the "
                             f"configuration names ({sha256})")
        return weights


WEIGHTS_KEPT = 8
"""Weights files a process keeps read (:func:`read_once`), the least recently used dropped."""

_read: dict[tuple[type, str, int, int, int], Weights] = {}


def read_once(kind: type[Weights], path: str | Path) -> Weights:
    """The weights of ``kind`` in the file at ``path``, read from disk once per process: kept by
    the resolved path and the file's identity (inode, size, modification time), so a file
    replaced since is read again and every episode of a worker shares one copy."""
    resolved = Path(path).resolve()
    try:
        stat = resolved.stat()
    except FileNotFoundError:
        return kind.load(path)  # its error names the missing file
    key = (kind, str(resolved), stat.st_ino, stat.st_size, stat.st_mtime_ns)
    weights = _read.pop(key, None)
    if weights is None:
        weights = kind.load(path)
        while len(_read) >= WEIGHTS_KEPT:
            del _read[next(iter(_read))]
    _read[key] = weights  # the most recently used last
    return weights
