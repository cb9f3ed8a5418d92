"""Torch layers shared by the learned policies' training (the twins of :mod:`mrsteve.nn`'s
numpy inference; parameter names match what the numpy side reads)."""

from __future__ import annotations

import math
from collections.abc import Iterator
from contextlib import contextmanager

import numpy as np

from mrsteve.nn import feature_map


@contextmanager
def torch_session(what: str, threads: int) -> Iterator[None]:
    """Run a training with ``threads`` torch CPU threads and deterministic kernels, restoring
    both after (they are process-wide); ``ImportError`` naming the extra when torch is
    missing (``what``: what is trained)."""
    try:
        import torch
    except ImportError:
        raise ImportError(f"training {what} needs torch: pip install 'mrsteve[train]'") from None
    saved = torch.get_num_threads(), torch.are_deterministic_algorithms_enabled()
    torch.set_num_threads(threads)
    torch.use_deterministic_algorithms(True)
    try:
        yield
    finally:
        torch.set_num_threads(saved[0])
        torch.use_deterministic_algorithms(saved[1])


def frame_encoder(obs_size: tuple[int, int], channels: tuple[int, ...], strides: tuple[int, ...],
                  dim: int):
    """``3 x 3`` convolutions with ReLU and a linear layer with ReLU: ``uint8[N, H, W, 3]`` ->
    ``[N, dim]`` (:class:`mrsteve.nn.FrameEncoder`; parameters ``convs.<i>``, ``frame``)."""
    import torch
    from torch import nn

    class FrameEncoder(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            ins = (3, *channels[:-1])
            self.convs = nn.ModuleList(nn.Conv2d(i, o, 3, s, 1) for i, o, s in
                                       zip(ins, channels, strides, strict=True))
            self.frame = nn.Linear(int(np.prod(feature_map(obs_size, channels, strides))), dim)

        def forward(self, rgb):
            x = rgb.permute(0, 3, 1, 2).float() / 255 - 0.5
            for conv in self.convs:
                x = torch.relu(conv(x))
            return torch.relu(self.frame(x.flatten(1)))

    return FrameEncoder()


def causal_core(dim: int, heads: int, context: int, mlp_dim: int):
    """One pre-norm causal transformer block over sequences ``[B, L, dim]``: each step attends
    to itself and the ``context - 1`` steps before it within its segment (``segment [B, L]``),
    with a learned bias per head and offset (:class:`mrsteve.nn.CausalCore`)."""
    import torch
    from torch import nn

    class CausalCore(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.norm1, self.norm2 = nn.LayerNorm(dim), nn.LayerNorm(dim)
            self.qkv, self.out = nn.Linear(dim, 3 * dim), nn.Linear(dim, dim)
            self.mlp = nn.Sequential(nn.Linear(dim, mlp_dim), nn.ReLU(), nn.Linear(mlp_dim, dim))
            self.position = nn.Parameter(torch.zeros(heads, context))

        def forward(self, x, segment):
            batch, length, _ = x.shape
            head_dim = dim // heads
            q, k, v = self.qkv(self.norm1(x)).view(batch, length, 3, heads, head_dim).unbind(2)
            scores = torch.einsum("bihd,bjhd->bhij", q, k) / math.sqrt(head_dim)
            steps = torch.arange(length)
            offset = steps[:, None] - steps[None, :]
            allowed = ((offset >= 0) & (offset < context))[None] & (
                segment[:, :, None] == segment[:, None, :])
            scores = scores + self.position[:, offset.clamp(0, context - 1)][None]
            scores = scores.masked_fill(~allowed[:, None], float("-inf"))
            attended = torch.einsum("bhij,bjhd->bihd", scores.softmax(-1), v)
            x = x + self.out(attended.reshape(batch, length, dim))
            return x + self.mlp(self.norm2(x))

    return CausalCore()


def action_head(dim: int, buttons: int, camera_bins: int):
    """Layer norm, then a logit per key and ``camera_bins`` logits per camera axis (pitch, yaw):
    ``[B, L, dim]`` -> ``([B, L, buttons], [B, L, 2, camera_bins])`` (parameters ``norm``,
    ``buttons``, ``camera``)."""
    from torch import nn

    class ActionHead(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.norm = nn.LayerNorm(dim)
            self.buttons = nn.Linear(dim, buttons)
            self.camera = nn.Linear(dim, 2 * camera_bins)

        def forward(self, x):
            y = self.norm(x)
            return self.buttons(y), self.camera(y).unflatten(-1, (2, camera_bins))

    return ActionHead()


def jitter_colours(rgb: np.ndarray, rng: np.random.Generator, strength: float) -> np.ndarray:
    """Photometric augmentation of a batch of frame sequences ``uint8[B, L, H, W, 3]``: each
    sequence's channels are scaled by ``exp(u_c + v)``, ``u_c`` and ``v`` drawn uniformly from
    ``[-strength, strength]`` (a tint and a brightness, the same over the sequence, as light
    changes little within an episode), clipped to 0-255; ``strength`` 0 returns ``rgb``."""
    if not strength:
        return rgb
    batch = rgb.shape[0]
    gains = np.exp(rng.uniform(-strength, strength, (batch, 3))
                   + rng.uniform(-strength, strength, (batch, 1)))
    shape = (batch,) + (1,) * (rgb.ndim - 2) + (3,)
    return np.clip(rgb * gains.reshape(shape).astype(np.float32), 0, 255).astype(np.uint8)


def check_jitter(strength: float) -> None:
    """Raise ``ValueError`` unless ``strength`` is a colour-jitter strength, 0 to 1."""
    if not 0.0 <= strength <= 1.0:
        raise ValueError(f"colour_jitter must be from 0 to 1 (channel gains up to exp(2 x "
                         f"colour_jitter)), got {strength}")


def optimise(optimiser, loss, losses: list[float], bar) -> None:
    """One gradient step of ``optimiser`` on ``loss``; the loss is appended to ``losses`` and the
    mean of the last 20 shown on ``bar`` (a tqdm progress bar)."""
    optimiser.zero_grad()
    loss.backward()
    optimiser.step()
    losses.append(float(loss.detach()))
    bar.set_postfix(loss=f"{np.mean(losses[-20:]):.3f}")
