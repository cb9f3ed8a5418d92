"""MineCLIP (Fan et al., 2022): the video-text model whose embeddings MrSteve's memory stores.

The modules mirror ``MineDojo/MineCLIP`` (``mineclip/mineclip/*.py`` with ``conf.yaml``'s
``vit_base_p16_fz.v2.t2``, ``mlp_adapter_spec: v0-2.t0``, ``pool_type: attn.d2.nh8.glusw``,
``resolution: [160, 256]``) so that their ``state_dict`` has the released ``attn.pth`` keys (after
its ``model.`` prefix), shared modules included under each of their names as torch saves them:

* ``image_encoder`` (= ``clip_model.vision_model``): ViT-B/16, width 768, 12 layers, 12 heads,
  a 512-d projection, position embedding ``161 x 768`` for ``160 x 256`` frames;
* ``temporal_encoder.attn.model``: x-transformers 0.27.1's ``ContinuousTransformerWrapper`` over an
  ``Encoder(dim=512, depth=2, heads=8, ff_glu=True, ff_swish=True)``, then the mean over time;
* ``clip_model.text_model``: the GPT-style text encoder, width 512, 12 layers, 8 heads, 49,408
  tokens, context 77, causal, read at the end-of-text token;
* ``reward_head``: a 2-layer video adapter mixed with its input by
  ``sigmoid(video_residual_weight)``, and CLIP's ``logit_scale``.

:class:`MineClipConfig` holds the sizes; :func:`config_from_shapes` reads them back from a state
dict (the file stores no configuration).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Mapping
from dataclasses import dataclass

import torch
from torch import nn
from torch.nn import functional as F

IMAGE_MEAN = (0.3331, 0.3245, 0.3051)
IMAGE_STD = (0.2439, 0.2493, 0.2873)
"""MineCLIP's frame normalisation (21K clips of its YouTube data)."""

HEAD_WIDTH = 64
"""Channels per attention head: CLIP's ``width // 64`` heads, x-transformers' ``dim_head``."""
GRID_ASPECT = (5, 8)
"""Patch rows to columns of MineCLIP's ``160 x 256`` frames (``10 x 16`` patches of 16)."""


@dataclass(frozen=True)
class MineClipConfig:
    """Sizes of a MineCLIP model (defaults: the released ``attn.pth``)."""

    image_width: int = 768
    image_layers: int = 12
    patch: int = 16
    resolution: tuple[int, int] = (160, 256)
    embed_dim: int = 512
    text_width: int = 512
    text_layers: int = 12
    vocab_size: int = 49408
    context_length: int = 77
    temporal_layers: int = 2
    temporal_heads: int = 8
    max_frames: int = 32
    """Length of the temporal encoder's position table (MineCLIP's ``VIDEO_SEQ_LEN``)."""

    def __post_init__(self) -> None:
        if self.image_width % HEAD_WIDTH or self.text_width % HEAD_WIDTH:
            raise ValueError(f"widths must be multiples of {HEAD_WIDTH} (one head per "
                             f"{HEAD_WIDTH} channels), got {self.image_width}, {self.text_width}")
        if any(r % self.patch for r in self.resolution):
            raise ValueError(f"resolution {self.resolution} is not a multiple of the patch "
                             f"{self.patch}")

    @property
    def patches(self) -> int:
        return (self.resolution[0] // self.patch) * (self.resolution[1] // self.patch)


TINY_MINECLIP = MineClipConfig(image_width=64, image_layers=2, patch=16, resolution=(80, 128),
                               embed_dim=32, text_width=64, text_layers=2, temporal_layers=1,
                               temporal_heads=2)
"""A small model of the same layout (tests, ``mrsteve weights synth --tiny``); it keeps the
vocabulary and context so the real tokenizer drives it."""


class QuickGELU(nn.Module):
    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x * torch.sigmoid(1.702 * x)


class ResidualAttentionBlock(nn.Module):
    """CLIP's pre-norm transformer block (sequence-first, as ``nn.MultiheadAttention`` wants)."""

    def __init__(self, width: int, causal_context: int | None = None) -> None:
        super().__init__()
        self.attn = nn.MultiheadAttention(width, width // HEAD_WIDTH)
        self.ln_1 = nn.LayerNorm(width)
        self.mlp = nn.Sequential(OrderedDict([("c_fc", nn.Linear(width, 4 * width)),
                                              ("gelu", QuickGELU()),
                                              ("c_proj", nn.Linear(4 * width, width))]))
        self.ln_2 = nn.LayerNorm(width)
        self.causal_context = causal_context

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        mask = None
        if self.causal_context is not None:
            n = x.shape[0]
            mask = torch.full((n, n), float("-inf"), device=x.device).triu_(1)
        y = self.ln_1(x)
        x = x + self.attn(y, y, y, need_weights=False, attn_mask=mask)[0]
        return x + self.mlp(self.ln_2(x))


class VisionTransformer(nn.Module):
    def __init__(self, config: MineClipConfig) -> None:
        super().__init__()
        width = config.image_width
        self.conv1 = nn.Conv2d(3, width, config.patch, config.patch, bias=False)
        self.cls_token = nn.Parameter(torch.zeros(width))
        self.pos_embed = nn.Parameter(torch.zeros(config.patches + 1, width))
        self.ln_pre = nn.LayerNorm(width)
        self.blocks = nn.Sequential(*[ResidualAttentionBlock(width)
                                      for _ in range(config.image_layers)])
        self.ln_post = nn.LayerNorm(width)
        self.projection = nn.Parameter(torch.zeros(width, config.embed_dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``[B, 3, H, W]`` normalised frames to ``[B, embed_dim]``."""
        x = self.conv1(x).flatten(2).transpose(1, 2)
        x = torch.cat([self.cls_token.expand(x.shape[0], 1, -1), x], dim=1) + self.pos_embed
        x = self.blocks(self.ln_pre(x).transpose(0, 1)).transpose(0, 1)
        return self.ln_post(x[:, 0]) @ self.projection


class TextTransformer(nn.Module):
    """MineCLIP's ``GPT``: token and position embeddings, causal blocks, the end token's state."""

    def __init__(self, config: MineClipConfig) -> None:
        super().__init__()
        width = config.text_width
        self.token_embedding = nn.Embedding(config.vocab_size, width)
        self.pos_embed = nn.Parameter(torch.zeros(config.context_length, width))
        self.blocks = nn.Sequential(*[ResidualAttentionBlock(width, config.context_length)
                                      for _ in range(config.text_layers)])
        self.ln_final = nn.LayerNorm(width)
        self.projection = nn.Parameter(torch.zeros(width, config.embed_dim))

    def forward(self, tokens: torch.Tensor) -> torch.Tensor:
        """``int64[B, context]`` (end token the largest id of a row) to ``[B, embed_dim]``."""
        x = self.token_embedding(tokens) + self.pos_embed
        x = self.ln_final(self.blocks(x.transpose(0, 1)).transpose(0, 1))
        return x[torch.arange(x.shape[0]), tokens.argmax(dim=-1)] @ self.projection


class Clip(nn.Module):
    def __init__(self, config: MineClipConfig) -> None:
        super().__init__()
        self.vision_model = VisionTransformer(config)
        self.text_model = TextTransformer(config)
        self.logit_scale = nn.Parameter(torch.zeros(()))


class _TokenTable(nn.Module):
    """x-transformers' ``AbsolutePositionalEmbedding``: a table scaled by ``dim ** -0.5``."""

    def __init__(self, dim: int, length: int) -> None:
        super().__init__()
        self.emb = nn.Embedding(length, dim)

    def forward(self, n: int) -> torch.Tensor:
        return self.emb.weight[:n] * self.emb.weight.shape[1] ** -0.5


class _Attention(nn.Module):
    """x-transformers 0.27.1 ``Attention`` (no biases, ``dim_head`` 64, full attention)."""

    def __init__(self, dim: int, heads: int) -> None:
        super().__init__()
        inner = heads * HEAD_WIDTH
        self.heads = heads
        self.to_q = nn.Linear(dim, inner, bias=False)
        self.to_k = nn.Linear(dim, inner, bias=False)
        self.to_v = nn.Linear(dim, inner, bias=False)
        self.to_out = nn.Linear(inner, dim, bias=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, n, _ = x.shape
        q, k, v = (layer(x).view(b, n, self.heads, HEAD_WIDTH).transpose(1, 2)
                   for layer in (self.to_q, self.to_k, self.to_v))
        weights = torch.softmax(q @ k.transpose(-1, -2) * HEAD_WIDTH ** -0.5, dim=-1)
        return self.to_out((weights @ v).transpose(1, 2).reshape(b, n, -1))


class _GLU(nn.Module):
    def __init__(self, dim: int, inner: int) -> None:
        super().__init__()
        self.proj = nn.Linear(dim, 2 * inner)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x, gate = self.proj(x).chunk(2, dim=-1)
        return x * F.silu(gate)


class _FeedForward(nn.Module):
    """x-transformers' ``FeedForward(glu=True, swish=True)``: ``net.0`` GLU, ``net.3`` out."""

    def __init__(self, dim: int) -> None:
        super().__init__()
        self.net = nn.Sequential(_GLU(dim, 4 * dim), nn.Identity(), nn.Dropout(0.0),
                                 nn.Linear(4 * dim, dim))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.net(x)


class _AttentionLayers(nn.Module):
    """x-transformers' ``Encoder``: pre-norm ``('a', 'f')`` pairs; each layer is
    ``[norms (pre-branch LayerNorm, None, None), block, residual]``."""

    def __init__(self, dim: int, depth: int, heads: int) -> None:
        super().__init__()
        self.layers = nn.ModuleList()
        for _ in range(depth):
            for block in (_Attention(dim, heads), _FeedForward(dim)):
                norms = nn.ModuleList([nn.LayerNorm(dim), None, None])
                self.layers.append(nn.ModuleList([norms, block, nn.Identity()]))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        for norms, block, _ in self.layers:
            x = x + block(norms[0](x))
        return x


class _ContinuousTransformer(nn.Module):
    def __init__(self, dim: int, depth: int, heads: int, max_frames: int) -> None:
        super().__init__()
        self.pos_emb = _TokenTable(dim, max_frames)
        self.project_in = nn.Identity()
        self.attn_layers = _AttentionLayers(dim, depth, heads)
        self.norm = nn.LayerNorm(dim)
        self.project_out = nn.Identity()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.pos_emb(x.shape[1])
        return self.norm(self.attn_layers(x))


class _TemporalTransformer(nn.Module):
    def __init__(self, config: MineClipConfig) -> None:
        super().__init__()
        self.model = _ContinuousTransformer(config.embed_dim, config.temporal_layers,
                                            config.temporal_heads, config.max_frames)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.model(x).mean(dim=1)


class TemporalPooling(nn.Module):
    """``pool_type = attn...`` with no MLP before pooling (``v0``)."""

    def __init__(self, config: MineClipConfig) -> None:
        super().__init__()
        self.mlp_before_pool = nn.Identity()
        self.attn = _TemporalTransformer(config)

    def forward(self, features: torch.Tensor) -> torch.Tensor:
        """``[B, L, D]`` frame features (``L <= max_frames``) to ``[B, D]``."""
        return self.attn(features)


class ScoreHead(nn.Module):
    """``CLIPScoreHead`` with a 2-layer video adapter and no text adapter (``-2.t0``)."""

    def __init__(self, clip_model: Clip, dim: int) -> None:
        super().__init__()
        self.clip_model = clip_model
        self.video_adapter = nn.Sequential(nn.Linear(dim, dim), nn.Identity(), nn.ReLU(),
                                           nn.Linear(dim, dim))
        self.text_adapter = nn.Identity()
        self.video_residual_weight = nn.Parameter(torch.zeros(()))

    def adapt_video(self, video: torch.Tensor) -> torch.Tensor:
        mix = torch.sigmoid(self.video_residual_weight)
        return mix * video + (1.0 - mix) * self.video_adapter(video)


class MineClip(nn.Module):
    """MineCLIP with the released checkpoint's module names."""

    def __init__(self, config: MineClipConfig = MineClipConfig()) -> None:
        super().__init__()
        self.config = config
        clip = Clip(config)
        self.image_encoder = clip.vision_model
        self.temporal_encoder = TemporalPooling(config)
        self.reward_head = ScoreHead(clip, config.embed_dim)
        self.clip_model = clip

    def encode_images(self, frames: torch.Tensor) -> torch.Tensor:
        """``uint8[N, H, W, 3]`` frames at the configured resolution to ``[N, embed_dim]``."""
        x = frames.permute(0, 3, 1, 2).float() / 255.0
        mean = torch.tensor(IMAGE_MEAN, device=x.device).view(1, 3, 1, 1)
        std = torch.tensor(IMAGE_STD, device=x.device).view(1, 3, 1, 1)
        return self.image_encoder((x - mean) / std)

    def encode_video(self, features: torch.Tensor) -> torch.Tensor:
        """``[B, L, D]`` frame features to the video embedding ``[B, D]`` (what STEVE-1 is
        conditioned on: MineCLIP's ``encode_video``, before the reward head's adapter)."""
        return self.temporal_encoder(features)

    def encode_text(self, tokens: torch.Tensor) -> torch.Tensor:
        """``int64[B, context]`` token rows to ``[B, D]``."""
        return self.clip_model.text_model(tokens)

    def scores(self, video: torch.Tensor, text: torch.Tensor) -> torch.Tensor:
        """The reward head's logits ``[B_video, B_text]``: ``exp(logit_scale)`` times the cosine
        of the adapted video embedding and the text embedding."""
        v = F.normalize(self.reward_head.adapt_video(video), dim=-1)
        t = F.normalize(text, dim=-1)
        return self.clip_model.logit_scale.exp() * v @ t.T


VISION = ("image_encoder.", "clip_model.vision_model.", "reward_head.clip_model.vision_model.")
TEXT = ("clip_model.text_model.", "reward_head.clip_model.text_model.")
TEMPORAL = "temporal_encoder.attn.model."
"""Where each tower's tensors are (the vision and text towers under each of their names)."""


def _shape(shapes: Mapping[str, tuple[int, ...]], prefixes: tuple[str, ...],
           *names: str) -> tuple[int, ...]:
    """The shape of the first of ``names`` under any of ``prefixes`` (copies of one tensor, or
    tensors that show the same size); ``KeyError`` naming the first if none is present."""
    for name in names:
        for prefix in prefixes:
            if prefix + name in shapes:
                return shapes[prefix + name]
    raise KeyError(prefixes[0] + names[0])


def _layers(shapes: Mapping[str, object], prefixes: tuple[str, ...]) -> int:
    """How many consecutive ``{prefix}{i}.`` groups there are under any of ``prefixes``."""
    n = 0
    while any(key.startswith(f"{p}{n}.") for key in shapes for p in prefixes):
        n += 1
    return n


def config_from_shapes(shapes: Mapping[str, tuple[int, ...]]) -> MineClipConfig:
    """The configuration a MineCLIP state dict (prefix stripped) was made with, read from the
    shapes of its tensors; a state dict that lacks every tensor a size is read from raises
    ``KeyError`` naming one, shapes that fit no configuration ``ValueError``."""
    width, _, patch, _ = _shape(shapes, VISION, "conv1.weight")
    patches = _shape(shapes, VISION, "pos_embed")[0] - 1
    rows_per_unit, cols_per_unit = GRID_ASPECT
    unit = round((patches / (rows_per_unit * cols_per_unit)) ** 0.5)
    if unit < 1 or rows_per_unit * cols_per_unit * unit * unit != patches:
        raise ValueError(f"image_encoder.pos_embed has {patches + 1} rows: not 1 + the patches "
                         f"of a frame of MineCLIP's aspect (5k x 8k patches)")
    vocab, text_width = _shape(shapes, TEXT, "token_embedding.weight")
    attention = (f"{TEMPORAL}attn_layers.layers.0.1.",)
    return MineClipConfig(
        image_width=width, patch=patch, resolution=(5 * unit * patch, 8 * unit * patch),
        image_layers=_layers(shapes, tuple(p + "blocks." for p in VISION)),
        embed_dim=_shape(shapes, VISION, "projection")[1],
        text_width=text_width, vocab_size=vocab,
        context_length=_shape(shapes, TEXT, "pos_embed")[0],
        text_layers=_layers(shapes, tuple(p + "blocks." for p in TEXT)),
        temporal_layers=(_layers(shapes, (f"{TEMPORAL}attn_layers.layers.",)) + 1) // 2,
        temporal_heads=_shape(shapes, attention, "to_q.weight", "to_k.weight",
                              "to_v.weight")[0] // HEAD_WIDTH,
        max_frames=shapes.get(f"{TEMPORAL}pos_emb.emb.weight", (MineClipConfig.max_frames,))[0])
