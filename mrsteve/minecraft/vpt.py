"""VPT (Baker et al., 2022) and the two policies MrSteve builds on it: VPT-Nav and STEVE-1.

The modules mirror ``openai/Video-Pre-Training`` (``lib/policy.py``, ``lib/impala_cnn.py``,
``lib/util.py``, ``lib/masked_attention.py``, ``lib/xf.py``, ``lib/action_head.py``) for the
configuration its released ``.model`` files pickle, so that their ``state_dict`` has the released
``.weights`` keys:

* ``net.img_process.cnn``: the IMPALA CNN (three down-sampling stacks of two residual blocks,
  group norm, then a dense layer to 256), ``net.img_process.linear`` to ``hidsize``;
* ``net.recurrent_layer.blocks.{i}``: residual transformer blocks over a memory of the last
  ``attention_memory_size - timesteps`` steps (clipped causal mask, learned relative bias), each
  with a pointwise MLP;
* ``net.lastlayer``, ``net.final_ln``; ``value_head`` (a linear layer and its EWMA normaliser);
  ``pi_head.buttons`` (8,641 joint button combinations) and ``pi_head.camera`` (11 x 11 bins).

:class:`VptNavPolicyNet` adds VPT-Nav's goal encoder (the authors' ``vpt_nav.py``), top-level
keys beside ``net``: ``goal_embed._mlp``, MineCLIP's ``build_mlp`` without normalisation (linear
layers 6 -> 128 -> 128 -> 128 -> 512, each hidden one followed by a parameter-free identity
"norm" and a ReLU, so the linear layers are keys ``0, 3, 6, 9``) and ``goal_proj``
(512 -> ``hidsize``), whose output is added to the policy and value latents after
``net.final_ln``. :class:`Steve1PolicyNet` adds STEVE-1's
``net.mineclip_embed_linear`` (512 -> ``hidsize``), whose output is added to the image features
(``steve1/embed_conditioned_policy.py``). :class:`TranslatorVAE` is STEVE-1's prior.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import asdict, dataclass
from typing import Any

import torch
from torch import nn
from torch.nn import functional as F

BUTTON_COMBINATIONS = 8641
"""VPT's joint button actions (``CameraHierarchicalMapping.BUTTONS_COMBINATIONS``)."""
CAMERA_BINS = 11
"""Camera bins per axis; the camera head has ``CAMERA_BINS ** 2`` outputs."""
GOAL_FEATURES = 6
"""VPT-Nav's goal input: symlog of the rescaled ``(dx, dz)``, cos and sin of yaw and pitch."""
GOAL_HIDDEN = (128, 128, 128, 512)
"""VPT-Nav's goal MLP widths after its input."""
MINECLIP_DIM = 512
"""STEVE-1's goal embedding size (MineCLIP's)."""
RELATIVE_BASIS = 10
"""Basis functions of the learned relative attention bias (``lib/xf.py``)."""
CNN_OUT = 256
"""The IMPALA CNN's dense output (``MinecraftPolicy``'s ``cnn_outsize``)."""

FIXED_ARGS: dict[str, Any] = {
    "recurrence_type": "transformer",
    "attention_mask_style": "clipped_causal",
    "use_pointwise_layer": True,
    "pointwise_use_activation": False,
    "recurrence_is_residual": True,
    "use_pre_lstm_ln": False,
    "init_norm_kwargs": {"batch_norm": False, "group_norm_groups": 1},
    "impala_kwargs": {"post_pool_groups": 1},
    "diff_mlp_embedding": False,
    "only_img_input": True,
}
"""The policy arguments every released VPT model has, which these modules implement."""


@dataclass(frozen=True)
class VptConfig:
    """The sizes a VPT ``.model`` file pickles (defaults: ``2x.model``)."""

    hidsize: int = 2048
    impala_width: int = 8
    impala_chans: tuple[int, ...] = (16, 32, 32)
    img_shape: tuple[int, int, int] = (128, 128, 3)
    attention_heads: int = 16
    attention_memory_size: int = 256
    timesteps: int = 128
    n_recurrence_layers: int = 4
    pointwise_ratio: int = 4
    temperature: float = 2.0
    """``pi_head_opts``: the action logits are divided by it."""
    mineclip_embed_dim: int = MINECLIP_DIM
    """STEVE-1's goal embedding size (its ``MinecraftPolicy`` argument; VPT ignores it)."""

    def __post_init__(self) -> None:
        if self.hidsize % self.attention_heads:
            raise ValueError(f"hidsize {self.hidsize} is not a multiple of attention_heads "
                             f"{self.attention_heads}")
        if self.memory < 1:
            raise ValueError("attention_memory_size must exceed timesteps")

    @property
    def memory(self) -> int:
        """Steps the transformer remembers (``maxlen``)."""
        return self.attention_memory_size - self.timesteps

    @property
    def chans(self) -> tuple[int, ...]:
        return tuple(int(self.impala_width * c) for c in self.impala_chans)

    def model_file(self) -> dict[str, Any]:
        """The dict a ``.model`` file pickles (``agent.py``'s ``POLICY_KWARGS`` layout)."""
        args = {k: v for k, v in asdict(self).items() if k != "temperature"}
        args["impala_chans"] = list(self.impala_chans)
        args["img_shape"] = list(self.img_shape)
        net_args = {**FIXED_ARGS, **args}
        return {"model": {"args": {"net": {"args": net_args},
                                   "pi_head_opts": {"temperature": self.temperature}}}}

    @classmethod
    def from_model_file(cls, content: Any) -> VptConfig:
        """The configuration in a ``.model`` file's dict; one that is not VPT's, or asks for a
        variant these modules do not implement, raises ``ValueError`` naming the entry."""
        try:
            args = content["model"]["args"]
            net, head = args["net"]["args"], args["pi_head_opts"]
        except (KeyError, TypeError):
            raise ValueError("not a VPT .model: it has no ['model']['args']['net']['args'] and "
                             "['model']['args']['pi_head_opts']") from None
        for name, value in FIXED_ARGS.items():
            if name in net and net[name] != value:
                raise ValueError(f"VPT .model sets {name}={net[name]!r}; these modules "
                                 f"implement {value!r}")
        sizes = {}
        for name, default in asdict(cls()).items():
            source = head if name == "temperature" else net
            if name in OPTIONAL_ARGS and name not in source:
                continue
            if name not in source:
                raise ValueError(f"VPT .model lacks {name!r}")
            value = source[name]
            sizes[name] = (tuple(int(v) for v in value) if isinstance(default, tuple)
                           else type(default)(value))
        return cls(**sizes)


OPTIONAL_ARGS = ("mineclip_embed_dim",)
"""Arguments a ``.model`` may leave out (VPT's ``2x.model``, which STEVE-1 uses, has no
``mineclip_embed_dim``: STEVE-1's default 512 applies)."""

TINY_VPT = VptConfig(hidsize=64, impala_width=1, attention_heads=2, attention_memory_size=24,
                     timesteps=8, n_recurrence_layers=2, mineclip_embed_dim=32)
"""A small model of the same layout (tests, ``mrsteve weights synth --tiny``)."""


class FanInLayer(nn.Module):
    """``FanInInitReLULayer``: optional norm, then the layer, then ReLU (where ``activation``)."""

    def __init__(self, inchan: int, outchan: int, *, kind: str = "conv",
                 norm: str | None = None, activation: bool = True) -> None:
        super().__init__()
        self.norm = {None: None, "group": lambda: nn.GroupNorm(1, inchan),
                     "layer": lambda: nn.LayerNorm(inchan)}[norm]
        self.norm = self.norm() if self.norm is not None else None
        bias = self.norm is None
        self.layer = (nn.Conv2d(inchan, outchan, 3, padding=1, bias=bias) if kind == "conv"
                      else nn.Linear(inchan, outchan, bias=bias))
        self.activation = activation

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        if self.norm is not None:
            x = self.norm(x)
        x = self.layer(x)
        return F.relu(x) if self.activation else x


class _BasicBlock(nn.Module):
    def __init__(self, chans: int) -> None:
        super().__init__()
        self.conv0 = FanInLayer(chans, chans, norm="group")
        self.conv1 = FanInLayer(chans, chans, norm="group")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x + self.conv1(self.conv0(x))


class _DownStack(nn.Module):
    def __init__(self, inchan: int, outchan: int, first_norm: bool) -> None:
        super().__init__()
        self.firstconv = FanInLayer(inchan, outchan, norm="group" if first_norm else None)
        self.n = nn.GroupNorm(1, outchan)
        self.blocks = nn.ModuleList([_BasicBlock(outchan) for _ in range(2)])

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.n(F.max_pool2d(self.firstconv(x), kernel_size=3, stride=2, padding=1))
        for block in self.blocks:
            x = block(x)
        return x


class ImpalaCnn(nn.Module):
    def __init__(self, config: VptConfig) -> None:
        super().__init__()
        h, w, c = config.img_shape
        self.stacks = nn.ModuleList()
        for i, outchan in enumerate(config.chans):
            self.stacks.append(_DownStack(c, outchan, first_norm=i > 0))
            c, h, w = outchan, (h + 1) // 2, (w + 1) // 2
        self.dense = FanInLayer(c * h * w, CNN_OUT, kind="linear", norm="layer")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``[N, C, H, W]`` scaled frames to ``[N, 256]``."""
        for stack in self.stacks:
            x = stack(x)
        return self.dense(x.flatten(1))


class ImgObsProcess(nn.Module):
    def __init__(self, config: VptConfig) -> None:
        super().__init__()
        self.cnn = ImpalaCnn(config)
        self.linear = FanInLayer(CNN_OUT, config.hidsize, kind="linear", norm="layer")

    def forward(self, frames: torch.Tensor) -> torch.Tensor:
        """``uint8[N, H, W, 3]`` to ``[N, hidsize]``."""
        return self.linear(self.cnn(frames.permute(0, 3, 1, 2).float() / 255.0))


def _banded(b_nd: torch.Tensor, t: int, total: int) -> torch.Tensor:
    """``lib/util.py``'s ``bandify``: ``[nbasis, t, total]`` with entry ``[n, i, j]`` the bias
    basis ``n`` at offset ``(i + total - t) - j`` (zero beyond the band)."""
    nbasis, band = b_nd.shape
    flipped = b_nd.flip(1)
    if band >= total:
        row = flipped[:, -total:]
    else:
        row = torch.cat([flipped.new_zeros(nbasis, total - band), flipped], dim=1)
    padded = torch.cat([row, row.new_zeros(nbasis, t - 1)], dim=1)
    return padded.unfold(1, total, 1).flip(1)


State = tuple[torch.Tensor, torch.Tensor, torch.Tensor]
"""One block's memory: ``(valid bool[B, maxlen], keys [B, maxlen, E], values [B, maxlen, E])``."""


class _SelfAttention(nn.Module):
    """``xf.SelfAttentionLayer`` with ``relattn=True`` and no norm (``orc_block``)."""

    def __init__(self, config: VptConfig) -> None:
        super().__init__()
        e, heads = config.hidsize, config.attention_heads
        self.heads = heads
        self.q_layer = nn.Linear(e, e)
        self.k_layer = nn.Linear(e, e, bias=False)
        self.v_layer = nn.Linear(e, e, bias=False)
        self.proj_layer = nn.Linear(e, e)
        self.r_layer = nn.Linear(e, RELATIVE_BASIS * heads)
        self.b_nd = nn.Parameter(torch.zeros(RELATIVE_BASIS, config.memory))

    def _split(self, x: torch.Tensor) -> torch.Tensor:
        b, t, e = x.shape
        return x.view(b, t, self.heads, e // self.heads).transpose(1, 2).reshape(
            b * self.heads, t, e // self.heads)

    def forward(self, x: torch.Tensor, first: torch.Tensor, state: State
                ) -> tuple[torch.Tensor, State]:
        """``x [B, t, E]``, ``first bool[B]`` (the batch starts an episode), the memory; the
        residual output and the new memory (``MaskedAttention`` with ``clipped_causal``)."""
        valid, keys, values = state
        b, t, e = x.shape
        maxlen = keys.shape[1]
        total = t + maxlen
        q = self.q_layer(x)
        k = torch.cat([keys, self.k_layer(x)], dim=1)
        v = torch.cat([values, self.v_layer(x)], dim=1)
        # clipped causal: step i sees the maxlen steps up to and including itself, and of the
        # memory only what came after the last episode start
        i = torch.arange(t, device=x.device)[:, None]
        j = torch.arange(total, device=x.device)[None]
        band = (j <= i + maxlen) & (j > i)
        past_ok = valid & ~first[:, None]
        mask = band[None].expand(b, t, total).clone()
        mask[:, :, :maxlen] &= past_ok[:, None, :]
        bias = (~mask).float().repeat_interleave(self.heads, dim=0) * -1e9
        relative = self._split(self.r_layer(x))
        bias = bias + torch.einsum("btn,ntp->btp", relative, _banded(self.b_nd, t, total))
        head_dim = e // self.heads
        logits = torch.baddbmm(bias, self._split(q), self._split(k).transpose(1, 2),
                               alpha=1.0 / head_dim)
        attended = torch.softmax(logits, dim=2) @ self._split(v)
        attended = attended.view(b, self.heads, t, head_dim).transpose(1, 2).reshape(b, t, e)
        new_valid = torch.cat([past_ok, valid.new_ones(b, t)], dim=1)[:, -maxlen:]
        return x + self.proj_layer(attended), (new_valid, k[:, -maxlen:], v[:, -maxlen:])


class _MaskedAttention(nn.Module):
    def __init__(self, config: VptConfig) -> None:
        super().__init__()
        self.orc_block = _SelfAttention(config)


class _RecurrentBlock(nn.Module):
    def __init__(self, config: VptConfig) -> None:
        super().__init__()
        e = config.hidsize
        self.mlp0 = FanInLayer(e, e * config.pointwise_ratio, kind="linear", norm="layer")
        self.mlp1 = FanInLayer(e * config.pointwise_ratio, e, kind="linear", activation=False)
        self.pre_r_ln = nn.LayerNorm(e)
        self.r = _MaskedAttention(config)

    def forward(self, x: torch.Tensor, first: torch.Tensor, state: State
                ) -> tuple[torch.Tensor, State]:
        x, state = self.r.orc_block(self.pre_r_ln(x), first, state)
        return x + self.mlp1(self.mlp0(x)), state


class _RecurrentBlocks(nn.Module):
    def __init__(self, config: VptConfig) -> None:
        super().__init__()
        self.blocks = nn.ModuleList([_RecurrentBlock(config)
                                     for _ in range(config.n_recurrence_layers)])


class MinecraftPolicy(nn.Module):
    """VPT's ``net``: image features, the transformer memory, the last layer."""

    def __init__(self, config: VptConfig) -> None:
        super().__init__()
        self.img_process = ImgObsProcess(config)
        self.recurrent_layer = _RecurrentBlocks(config)
        self.lastlayer = FanInLayer(config.hidsize, config.hidsize, kind="linear", norm="layer")
        self.final_ln = nn.LayerNorm(config.hidsize)

    def forward(self, features: torch.Tensor, first: torch.Tensor, state: list[State]
                ) -> tuple[torch.Tensor, list[State]]:
        """``features [B, t, hidsize]`` (the image features, plus any conditioning) to the
        latent ``[B, t, hidsize]`` and the new memory."""
        x, new_state = features, []
        for block, block_state in zip(self.recurrent_layer.blocks, state, strict=True):
            x, block_state = block(x, first, block_state)
            new_state.append(block_state)
        return self.final_ln(self.lastlayer(F.relu(x))), new_state


class _EwmaNormaliser(nn.Module):
    """``NormalizeEwma``'s parameters (the value head's target statistics)."""

    def __init__(self) -> None:
        super().__init__()
        self.running_mean = nn.Parameter(torch.zeros(1), requires_grad=False)
        self.running_mean_sq = nn.Parameter(torch.zeros(1), requires_grad=False)
        self.debiasing_term = nn.Parameter(torch.zeros(()), requires_grad=False)

    def denormalise(self, x: torch.Tensor, epsilon: float = 1e-5) -> torch.Tensor:
        scale = self.debiasing_term.clamp(min=epsilon)
        mean = self.running_mean / scale
        var = (self.running_mean_sq / scale - mean**2).clamp(min=1e-2)
        return x * var.sqrt() + mean


class _ValueHead(nn.Module):
    def __init__(self, hidsize: int) -> None:
        super().__init__()
        self.linear = nn.Linear(hidsize, 1)
        self.normalizer = _EwmaNormaliser()

    def forward(self, latent: torch.Tensor) -> torch.Tensor:
        return self.normalizer.denormalise(self.linear(latent))[..., 0]


class _CategoricalHead(nn.Module):
    def __init__(self, hidsize: int, n: int) -> None:
        super().__init__()
        self.linear_layer = nn.Linear(hidsize, n)


@dataclass
class PolicyOutput:
    """One forward pass: log-probabilities of the actions, the value, the new memory."""

    buttons: torch.Tensor
    """``[B, t, 8641]`` log-probabilities of the joint button actions."""
    camera: torch.Tensor
    """``[B, t, 121]`` log-probabilities of the camera bins (pitch-major, 11 x 11)."""
    value: torch.Tensor
    """``[B, t]`` the value head's prediction."""
    state: list[State]


class VptPolicyNet(nn.Module):
    """``MinecraftAgentPolicy``: ``net``, ``value_head``, ``pi_head``."""

    def __init__(self, config: VptConfig = VptConfig()) -> None:
        super().__init__()
        self.config = config
        self.net = MinecraftPolicy(config)
        self.value_head = _ValueHead(config.hidsize)
        self.pi_head = nn.ModuleDict({
            "buttons": _CategoricalHead(config.hidsize, BUTTON_COMBINATIONS),
            "camera": _CategoricalHead(config.hidsize, CAMERA_BINS**2)})

    def initial_state(self, batch: int, device: torch.device | str = "cpu") -> list[State]:
        """An empty memory (nothing valid) for ``batch`` episodes."""
        shape = (batch, self.config.memory, self.config.hidsize)
        return [(torch.zeros(batch, self.config.memory, dtype=torch.bool, device=device),
                 torch.zeros(shape, device=device), torch.zeros(shape, device=device))
                for _ in range(self.config.n_recurrence_layers)]

    def image_features(self, frames: torch.Tensor) -> torch.Tensor:
        """``uint8[B, t, H, W, 3]`` to ``[B, t, hidsize]``."""
        b, t = frames.shape[:2]
        return self.net.img_process(frames.flatten(0, 1)).view(b, t, -1)

    def heads(self, pi_latent: torch.Tensor, value_latent: torch.Tensor, state: list[State]
              ) -> PolicyOutput:
        logits = {name: head.linear_layer(pi_latent) / self.config.temperature
                  for name, head in self.pi_head.items()}
        return PolicyOutput(F.log_softmax(logits["buttons"], dim=-1),
                            F.log_softmax(logits["camera"], dim=-1),
                            self.value_head(value_latent), state)

    def forward(self, frames: torch.Tensor, first: torch.Tensor, state: list[State]
                ) -> PolicyOutput:
        latent, state = self.net(self.image_features(frames), first, state)
        return self.heads(latent, latent, state)


class _GoalEmbed(nn.Module):
    """VPT-Nav's goal MLP: ``Linear, Identity, ReLU`` per hidden layer, then a ``Linear``; the
    identities stand where MineCLIP's ``build_mlp`` puts its (here absent) norm layers, so that
    the linear layers sit at the released indices ``0, 3, 6, 9``."""

    def __init__(self) -> None:
        super().__init__()
        widths = (GOAL_FEATURES, *GOAL_HIDDEN)
        layers: list[nn.Module] = []
        for a, b in itertools.pairwise(widths):
            layers += [nn.Linear(a, b), nn.Identity(), nn.ReLU()]
        self._mlp = nn.Sequential(*layers[:-2])

    def forward(self, goal: torch.Tensor) -> torch.Tensor:
        return self._mlp(goal)


class VptNavPolicyNet(VptPolicyNet):
    """VPT-Nav: VPT with a goal embedding added to the policy and value latents."""

    def __init__(self, config: VptConfig = VptConfig()) -> None:
        super().__init__(config)
        self.goal_embed = _GoalEmbed()
        self.goal_proj = nn.Linear(GOAL_HIDDEN[-1], config.hidsize)

    def forward(self, frames: torch.Tensor, first: torch.Tensor, state: list[State],
                goal: torch.Tensor | None = None) -> PolicyOutput:
        """``goal [B, t, 6]``: :func:`mrsteve.control.learned_navigator.goal_features` of each step."""
        if goal is None:
            raise ValueError("VPT-Nav needs goal features [B, t, 6]")
        latent, state = self.net(self.image_features(frames), first, state)
        conditioned = latent + self.goal_proj(self.goal_embed(goal))
        return self.heads(conditioned, conditioned, state)


class Steve1PolicyNet(VptPolicyNet):
    """STEVE-1: VPT with a projected MineCLIP goal embedding added to the image features."""

    def __init__(self, config: VptConfig = VptConfig()) -> None:
        super().__init__(config)
        self.net.mineclip_embed_linear = nn.Linear(config.mineclip_embed_dim, config.hidsize)

    def forward(self, frames: torch.Tensor, first: torch.Tensor, state: list[State],
                goal: torch.Tensor | None = None) -> PolicyOutput:
        """``goal [B, t, mineclip_embed_dim]``: the MineCLIP (visual) goal embedding of each
        step."""
        if goal is None:
            raise ValueError("STEVE-1 needs goal embeddings [B, t, mineclip_embed_dim]")
        features = self.image_features(frames) + self.net.mineclip_embed_linear(goal)
        latent, state = self.net(features, first, state)
        return self.heads(latent, latent, state)


@dataclass(frozen=True)
class PriorConfig:
    """``TranslatorVAE``'s sizes (defaults: ``steve1_prior.pt``, ``PRIOR_INFO``)."""

    input_dim: int = 512
    hidden_dim: int = 512
    latent_dim: int = 512


TINY_PRIOR = PriorConfig(input_dim=32, hidden_dim=16, latent_dim=8)
"""A small prior of the same layout (its input matches :data:`TINY_MINECLIP`'s embedding)."""


def _mlp3(inputs: int, hidden: int, out: int) -> nn.Sequential:
    return nn.Sequential(nn.Linear(inputs, hidden), nn.LayerNorm(hidden), nn.ReLU(),
                         nn.Linear(hidden, hidden), nn.LayerNorm(hidden), nn.ReLU(),
                         nn.Linear(hidden, out))


class TranslatorVAE(nn.Module):
    """STEVE-1's prior: a conditional VAE from a MineCLIP text embedding to a visual one."""

    def __init__(self, config: PriorConfig = PriorConfig()) -> None:
        super().__init__()
        self.config = config
        self.encoder = _mlp3(2 * config.input_dim, config.hidden_dim, 2 * config.latent_dim)
        self.decoder = _mlp3(config.latent_dim + config.input_dim, config.hidden_dim,
                             config.input_dim)

    def forward(self, text: torch.Tensor, generator: torch.Generator | None = None
                ) -> torch.Tensor:
        """``[B, input_dim]`` text embeddings to visual ones, the latent drawn from the prior
        ``N(0, I)`` (with ``generator``) or its mean (``generator=None``)."""
        latent = text.new_zeros(text.shape[0], self.config.latent_dim)
        if generator is not None:
            latent = torch.randn(latent.shape, generator=generator, device=text.device)
        return self.decoder(torch.cat([latent, text], dim=1))


def prior_config_from_shapes(shapes: Mapping[str, tuple[int, ...]]) -> PriorConfig:
    """The configuration of a prior state dict, from its tensors' shapes."""
    if "decoder.6.weight" in shapes:
        input_dim = shapes["decoder.6.weight"][0]
    else:
        input_dim = shapes["encoder.0.weight"][1] // 2
    hidden = next((shapes[k][0] for k in ("encoder.0.weight", "encoder.1.weight",
                                           "decoder.0.weight") if k in shapes), None)
    if hidden is None:
        raise KeyError("encoder.0.weight")
    if "encoder.6.weight" in shapes:
        latent = shapes["encoder.6.weight"][0] // 2
    else:
        latent = shapes["decoder.0.weight"][1] - input_dim
    return PriorConfig(input_dim=input_dim, hidden_dim=hidden, latent_dim=latent)
