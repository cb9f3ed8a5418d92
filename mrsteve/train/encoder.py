"""Training the pixel encoder (:class:`mrsteve.perception.pixels.PixelEncoder`) with torch.

The recipe is MineCLIP's at the embedded world's scale: a video-text dual encoder trained with a
contrastive loss on clips and their captions.

* Data: clips of 16 RGB frames rendered in the procedural calibration worlds
  (:data:`mrsteve.calibration.clips.CALIBRATION_WORLDS`; never an evaluation map), from the poses
  and motions calibration uses. A clip's captions are the lexicon prompts true in it by the
  renderer's ground truth (:class:`~mrsteve.calibration.clips.PromptLabeller`: "near cow" when a
  cow near the eye fills enough of the view), each drawn from a few rephrasings per batch; prompts
  neither true nor false ("ambiguous") are left out of the loss for that clip.
* Loss: multi-positive InfoNCE in both directions over a batch of clips and the lexicon's prompts:
  a clip's probability mass on its true prompts, and a prompt's mass on the clips it is true of,
  with ambiguous pairs masked out; a learned temperature, as CLIP's. Plus, weighted by
  ``TrainingConfig.pairwise``, SigLIP's pairwise sigmoid loss (Zhai et al., 2023): each known
  (clip, prompt) pair on its own side of one learned boundary. InfoNCE only ranks, and a false
  clip far below a true one costs it nothing whatever its score; the agent compares scores with
  one threshold per prompt over thousands of frames, so the absolute score of the false ones is
  what sends it to the wrong place.
* Hard negatives (``TrainingConfig.hard_negatives``; off for the shipped weights): bootstrapped
  mining as Dalal and Triggs (2005) did for detectors. The installed encoder scores a pool of
  fresh clips of random poses and exploring views of the calibration worlds, and the clips whose
  false prompts it scores furthest above its thresholds join the training set: the views an
  agent stores by the thousand, where a rare false match sends it to the wrong place.
* Each step averages a random subset of each clip's frames (the last one always among them); the
  image tower's mean pooling makes that an unbiased estimate of the full clip's pooled feature, at a
  fraction of the cost. Validation embeds whole clips.

Everything is seeded (``TrainingConfig.seed``): the clips, the batches, the frame subsets and the
initial weights; ``torch.use_deterministic_algorithms`` holds for the CPU kernels used. The run
folder keeps the rendered clips (``clips.npz``), a checkpoint after every epoch (a run resumes from
it), the training curve (``curve.png``, ``history.json``) and the exported weights (``pixels.npz``).
"""

from __future__ import annotations

import hashlib
import json
import math
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from mrsteve.calibration.clips import CALIBRATION_WORLDS, ClipConfig, collect_clips
from mrsteve.calibration.thresholds import average_precision
from mrsteve.perception.lexicon import Lexicon, load_lexicon
from mrsteve.perception.pixels import PixelArchitecture, PixelWeights, tokens
from mrsteve.train.layers import check_jitter, jitter_colours, optimise, torch_session
from mrsteve.train.runs import TrainingRun

REPHRASINGS = ("near {}", "{} nearby", "close to {}", "next to {}", "a view of {}")
"""Caption templates of a ``near X`` prompt; other prompts (``cut a tree``) are also captioned
``{}``, ``i want to {}`` and ``time to {}``."""


def caption_variants(prompt: str) -> tuple[str, ...]:
    """The rephrasings a prompt is captioned with (the prompt itself first)."""
    if prompt.startswith("near "):
        thing = prompt.removeprefix("near ")
        return tuple(template.format(thing) for template in REPHRASINGS)
    return (prompt, f"i want to {prompt}", f"time to {prompt}")


def vocabulary(lexicon: Lexicon) -> tuple[str, ...]:
    """Every word of every caption variant of the lexicon, sorted."""
    return tuple(sorted({word for prompt in lexicon.texts for variant in caption_variants(prompt)
                         for word in tokens(variant)}))


@dataclass(frozen=True)
class TrainingConfig:
    """How the pixel encoder is trained; the defaults make the shipped weights."""

    clips: int = 12000
    """Training clips rendered in the calibration worlds."""
    validation_clips: int = 800
    """Clips for the validation curve (calibration worlds, another seed stream)."""
    epochs: int = 12
    """Passes over the clips."""
    batch: int = 64
    """Clips per step."""
    frames_per_clip: int = 6
    """Frames of each clip a step averages (the last one and a random subset of the others)."""
    learning_rate: float = 2e-3
    weight_decay: float = 1e-4
    seed: int = 0
    """Seed of the clips, batches and initial weights."""
    threads: int = 2
    """torch CPU threads."""
    facing_wall: float = 0.15
    """Share of clips facing the wall ring (:class:`~mrsteve.calibration.clips.ClipConfig`): an
    exploring agent sees the walls often, the other poses seldom."""
    explored: float = 0.3
    """Share of clips from the view of an exploring agent (:class:`~mrsteve.calibration.clips.
    ClipConfig`): the slopes, hollows and walls it walks past up close."""
    any_pitch: float = 0.25
    """Share of the posed clips pitched anywhere from the sky to the feet (:class:`~mrsteve.
    calibration.clips.ClipConfig`): the learned navigator and instruction policy turn the view
    there, and an encoder that never saw the sky scores it as anything (above water's threshold,
    with only pitches of 0-20 degrees)."""
    pairwise: float = 1.0
    """Weight of the pairwise sigmoid loss (:func:`pairwise_sigmoid_loss`) added to InfoNCE."""
    hard_negatives: int = 0
    """Clips mined into the training set (:func:`mine_hard_negatives`): those of
    ``hard_negative_pool`` fresh clips whose false prompts the installed encoder scores furthest
    above its thresholds. 0 mines none (the shipped weights)."""
    hard_negative_pool: int = 20000
    """Fresh clips the mining scores (random poses and exploring views, another seed stream)."""
    colour_jitter: float = 0.0
    """Photometric augmentation of the training clips (:func:`~mrsteve.train.layers.
    jitter_colours`: each clip's channels scaled by up to ``exp(2 x colour_jitter)``; 0: none,
    the shipped recipe), so the encoder is not bound to the training worlds' light."""
    channels: tuple[int, ...] = (16, 32, 64)
    strides: tuple[int, ...] = (2, 2, 2)
    frame_dim: int = 256
    dim: int = 128

    def __post_init__(self) -> None:
        for name in ("clips", "validation_clips", "epochs", "batch", "frames_per_clip",
                     "threads"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        if not 0 < self.learning_rate < 1:
            raise ValueError(f"learning_rate must be in (0, 1), got {self.learning_rate}")
        if not 0 <= self.pairwise:
            raise ValueError(f"pairwise is a loss weight (>= 0), got {self.pairwise}")
        if not 0 <= self.hard_negatives <= self.hard_negative_pool:
            raise ValueError(f"hard_negatives must be in [0, hard_negative_pool = "
                             f"{self.hard_negative_pool}], got {self.hard_negatives}")
        check_jitter(self.colour_jitter)

    def recipe(self) -> dict:
        """The settings as the weights record them (``info["training"]``): all of them, the
        mining's and the colour jitter only when on, so weights and run folders made before
        they existed keep the recipe they recorded."""
        settings = asdict(self)
        if not self.hard_negatives:
            del settings["hard_negatives"], settings["hard_negative_pool"]
        if not self.colour_jitter:
            del settings["colour_jitter"]
        return settings

    def data_key(self) -> str:
        """Hash of what decides the rendered clips (a run folder's cache is reused on a match)."""
        # ``explored``, ``any_pitch`` and the mining join the key only when set, so caches
        # rendered before they existed stay valid
        return hashlib.sha256(json.dumps(
            [self.clips, self.validation_clips, self.seed, self.facing_wall]
            + ([self.explored] if self.explored else [])
            + ([{"any_pitch": self.any_pitch}] if self.any_pitch else [])
            + ([{"hard_negatives": [self.hard_negatives, self.hard_negative_pool,
                                    miner_sha256()]}]
               if self.hard_negatives else []),
            sort_keys=True).encode()).hexdigest()[:16]


# ------------------------------------------------------------------------------------- data


@dataclass
class ClipSet:
    """Rendered clips and their labels."""

    rgb: np.ndarray
    """``uint8[clips, window, H, W, 3]``."""
    labels: np.ndarray
    """``int8[clips, prompts]``: 1 true, 0 false, -1 ambiguous."""


def render_clips(count: int, rng: np.random.Generator, lexicon: Lexicon,
                 facing_wall: float = 0.0, explored: float = 0.0,
                 any_pitch: float = 0.0, aimed: float = ClipConfig.aimed) -> ClipSet:
    """``count`` labelled RGB clips of the calibration worlds (the shares as
    :class:`~mrsteve.calibration.clips.ClipConfig`'s)."""
    config = ClipConfig(worlds=CALIBRATION_WORLDS, frame_keys=("rgb",), facing_wall=facing_wall,
                        explored=explored, any_pitch=any_pitch, aimed=aimed)
    clips = collect_clips(count, rng, config, lexicon)
    rgb = np.stack([np.stack([frame["rgb"] for frame in clip.frames]) for clip in clips])
    labels = np.zeros((count, len(lexicon.texts)), dtype=np.int8)
    for i, clip in enumerate(clips):
        for p, text in enumerate(lexicon.texts):
            labels[i, p] = 1 if text in clip.prompts else (-1 if text in clip.ambiguous else 0)
    return ClipSet(rgb, labels)


def miner_sha256() -> str:
    """SHA-256 of the weights that mine hard negatives: the installed pixel encoder's."""
    from mrsteve.perception.pixels import load_shipped_weights

    return load_shipped_weights().sha256


def false_match_margins(scores: np.ndarray, labels: np.ndarray,
                        thresholds: np.ndarray) -> np.ndarray:
    """Per clip, the largest ``score - threshold`` over its false prompts (``-inf`` without one):
    ``scores [clips, prompts]``, ``labels`` 1 / 0 / -1, ``thresholds [prompts]``."""
    return np.where(labels == 0, scores - thresholds, -np.inf).max(axis=1)


def hard_negative_order(margins: np.ndarray) -> np.ndarray:
    """Clips with a false prompt, hardest first (by :func:`false_match_margins`); ties keep the
    clips' order."""
    order = np.argsort(-margins, kind="stable")
    return order[np.isfinite(margins[order])]


def mine_hard_negatives(config: TrainingConfig, lexicon: Lexicon, rng: np.random.Generator,
                        say: Callable[[str], None] = print, chunk: int = 1000) -> ClipSet:
    """The ``config.hard_negatives`` clips, of ``config.hard_negative_pool`` fresh clips of the
    calibration worlds (random poses, and exploring views in ``config.explored``'s share), whose
    false prompts the installed encoder scores furthest above its thresholds; rendered ``chunk``
    clips at a time, keeping the hardest so far with their margins."""
    from mrsteve.perception.pixels import PixelEncoder

    encoder = PixelEncoder()
    texts = np.stack([encoder.encode_text(text) for text in lexicon.texts])
    thresholds = np.array([encoder.task_threshold(text) for text in lexicon.texts])
    kept, kept_margins = None, np.empty(0)
    for start in range(0, config.hard_negative_pool, chunk):
        pool = render_clips(min(chunk, config.hard_negative_pool - start), rng, lexicon,
                            explored=config.explored, any_pitch=config.any_pitch, aimed=0.0)
        scores = np.stack([encoder.encode_frames([{"rgb": frame} for frame in clip])
                           for clip in pool.rgb]) @ texts.T
        margins = false_match_margins(scores, pool.labels, thresholds)
        if kept is not None:
            pool = ClipSet(np.concatenate([kept.rgb, pool.rgb]),
                           np.concatenate([kept.labels, pool.labels]))
            margins = np.concatenate([kept_margins, margins])
        hardest = hard_negative_order(margins)[:config.hard_negatives]
        kept, kept_margins = ClipSet(pool.rgb[hardest], pool.labels[hardest]), margins[hardest]
        say(f"mined {start + len(scores)} of {config.hard_negative_pool} clips")
    return kept


def load_or_render(folder: Path, config: TrainingConfig, lexicon: Lexicon,
                   say: Callable[[str], None]) -> tuple[ClipSet, ClipSet]:
    """The training and validation clips, from ``folder/clips.npz`` when it was rendered for this
    configuration, else rendered (and saved there)."""
    from mrsteve.fileio import atomic_path

    path = folder / "clips.npz"
    key = config.data_key()
    if path.exists():
        with np.load(path, allow_pickle=False) as saved:
            if str(saved["key"]) == key and tuple(saved["prompts"]) == lexicon.texts:
                return (ClipSet(saved["train_rgb"], saved["train_labels"]),
                        ClipSet(saved["val_rgb"], saved["val_labels"]))
        say(f"{path} was rendered for another configuration; rendering again")
    train_stream, val_stream, mining_stream = np.random.SeedSequence(config.seed).spawn(3)
    say(f"rendering {config.clips} training clips in {', '.join(CALIBRATION_WORLDS)}")
    train = render_clips(config.clips, np.random.default_rng(train_stream), lexicon,
                         config.facing_wall, config.explored, config.any_pitch)
    say(f"rendering {config.validation_clips} validation clips")
    val = render_clips(config.validation_clips, np.random.default_rng(val_stream), lexicon,
                       config.facing_wall, config.explored, config.any_pitch)
    if config.hard_negatives:
        say(f"mining {config.hard_negatives} hard negatives from {config.hard_negative_pool} "
            f"fresh clips")
        mined = mine_hard_negatives(config, lexicon, np.random.default_rng(mining_stream), say)
        train = ClipSet(np.concatenate([train.rgb, mined.rgb]),
                        np.concatenate([train.labels, mined.labels]))
    with atomic_path(path) as tmp, open(tmp, "wb") as handle:
        np.savez(handle, key=key, prompts=np.array(lexicon.texts), train_rgb=train.rgb,
                 train_labels=train.labels, val_rgb=val.rgb, val_labels=val.labels)
    return train, val


# ------------------------------------------------------------------------------------- model


def build_model(architecture: PixelArchitecture):
    """The torch dual encoder of ``architecture`` (parameter names as
    :meth:`PixelArchitecture.parameter_shapes`, plus the temperature ``logit_scale``)."""
    import torch
    from torch import nn

    class ImageTower(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            channels = (3, *architecture.channels)
            self.convs = nn.ModuleList(
                nn.Conv2d(a, b, 3, stride=s, padding=1)
                for a, b, s in zip(channels, channels[1:], architecture.strides, strict=False))
            self.frame = nn.Linear(int(np.prod(architecture.feature_map)), architecture.frame_dim)
            self.head = nn.Sequential(nn.Linear(architecture.frame_dim, architecture.frame_dim),
                                      nn.ReLU(), nn.Linear(architecture.frame_dim,
                                                           architecture.dim))

        def forward(self, rgb: torch.Tensor) -> torch.Tensor:
            """``uint8[B, F, H, W, 3]`` -> normalised ``[B, dim]`` (mean over the F frames)."""
            b, f = rgb.shape[:2]
            x = rgb.reshape(b * f, *rgb.shape[2:]).permute(0, 3, 1, 2).float() / 255 - 0.5
            for conv in self.convs:
                x = torch.relu(conv(x))
            features = torch.relu(self.frame(x.flatten(1))).reshape(b, f, -1).mean(dim=1)
            return nn.functional.normalize(self.head(features), dim=-1)

    class TextTower(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.words = nn.EmbeddingBag(len(architecture.vocabulary), architecture.word_dim,
                                         mode="mean")
            self.head = nn.Sequential(nn.Linear(architecture.word_dim, architecture.frame_dim),
                                      nn.ReLU(), nn.Linear(architecture.frame_dim,
                                                           architecture.dim))

        def forward(self, words: torch.Tensor, offsets: torch.Tensor) -> torch.Tensor:
            return nn.functional.normalize(self.head(self.words(words, offsets)), dim=-1)

    class DualEncoder(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.image = ImageTower()
            self.text = TextTower()
            self.logit_scale = nn.Parameter(torch.tensor(math.log(10.0)))
            # the pairwise loss's scale and boundary (SigLIP: cosine 1 -> logit 0 at the start)
            self.pair_scale = nn.Parameter(torch.tensor(math.log(10.0)))
            self.pair_bias = nn.Parameter(torch.tensor(-10.0))

    return DualEncoder()


LOSS_PARAMETERS = ("logit_scale", "pair_scale", "pair_bias")
"""Parameters of the losses only (temperatures and the pairwise boundary): not exported."""


def export_weights(model, architecture: PixelArchitecture, info: dict) -> PixelWeights:
    """The numpy weights of a trained model (everything but the losses' parameters)."""
    parameters = {name: value.detach().cpu().numpy().astype(np.float32)
                  for name, value in model.state_dict().items() if name not in LOSS_PARAMETERS}
    return PixelWeights(architecture, parameters, info)


def multi_positive_loss(logits, labels):
    """Multi-positive InfoNCE both ways: ``logits [clips, texts]``, ``labels`` 1 / 0 / -1
    (ambiguous pairs are masked out); rows and columns without a positive are skipped."""
    import torch

    known = labels >= 0
    positive = labels == 1
    masked = logits.masked_fill(~known, -torch.inf)

    def one_way(scores, positives):
        has = positives.any(dim=1)
        if not has.any():
            return scores.new_zeros(())
        scores, positives = scores[has], positives[has]
        return (torch.logsumexp(scores, dim=1)
                - torch.logsumexp(scores.masked_fill(~positives, -torch.inf), dim=1)).mean()

    return (one_way(masked, positive) + one_way(masked.T, positive.T)) / 2


def pairwise_sigmoid_loss(logits, labels):
    """SigLIP's loss over the known pairs: ``logits [clips, texts]`` (scale x cosine + bias),
    ``labels`` 1 / 0 / -1 (ambiguous pairs are left out); the mean binary cross-entropy of each
    pair being true."""
    import torch

    known = labels >= 0
    if not known.any():
        return logits.new_zeros(())
    return torch.nn.functional.binary_cross_entropy_with_logits(
        logits[known], (labels[known] == 1).to(logits.dtype))


def mean_average_precision(clip_embeddings: np.ndarray, text_embeddings: np.ndarray,
                           labels: np.ndarray) -> tuple[float, list[float | None]]:
    """Mean over prompts (with true and false clips) of the average precision of ranking clips by
    their score, and each prompt's (``None`` without both)."""
    scores = clip_embeddings @ text_embeddings.T
    per_prompt: list[float | None] = []
    for p in range(labels.shape[1]):
        positives, negatives = scores[labels[:, p] == 1, p], scores[labels[:, p] == 0, p]
        per_prompt.append(average_precision(positives, negatives)
                          if positives.size and negatives.size else None)
    known = [ap for ap in per_prompt if ap is not None]
    return (float(np.mean(known)) if known else float("nan")), per_prompt


# ------------------------------------------------------------------------------------- training


@dataclass
class TrainingResult:
    weights: PixelWeights
    history: list[dict]
    seconds: float


def train_encoder(out: Path, config: TrainingConfig | None = None, *,
                  lexicon: Lexicon | None = None, progress: bool = True,
                  say: Callable[[str], None] = print) -> TrainingResult:
    """Train the pixel encoder in run folder ``out`` (resuming its checkpoint) and write
    ``out/pixels.npz``, ``out/history.json`` and ``out/curve.png``."""
    config = config or TrainingConfig()
    lexicon = lexicon or load_lexicon()
    with torch_session("the pixel encoder", config.threads):
        out.mkdir(parents=True, exist_ok=True)
        return _train(out, config, lexicon, progress, say)


def _train(out: Path, config: TrainingConfig, lexicon: Lexicon, progress: bool,
           say: Callable[[str], None]) -> TrainingResult:
    import torch
    from tqdm import tqdm


    run = TrainingRun(out, json.dumps(config.recipe(), sort_keys=True), {"epoch": 0}, say=say)
    train, val = load_or_render(out, config, lexicon, say)
    architecture = PixelArchitecture(
        vocabulary=vocabulary(lexicon), obs_size=train.rgb.shape[2:4], window=train.rgb.shape[1],
        channels=config.channels, strides=config.strides, frame_dim=config.frame_dim,
        dim=config.dim)
    torch.manual_seed(config.seed)
    model = build_model(architecture)
    optimiser = torch.optim.AdamW(model.parameters(), lr=config.learning_rate,
                                  weight_decay=config.weight_decay)
    steps_per_epoch = math.ceil(len(train.rgb) / config.batch)
    schedule = torch.optim.lr_scheduler.OneCycleLR(
        optimiser, max_lr=config.learning_rate, total_steps=config.epochs * steps_per_epoch,
        pct_start=0.1)
    if run.restore(model=model, optimiser=optimiser, schedule=schedule):
        say(f"resuming after epoch {run.state['epoch']} from {out / TrainingRun.CHECKPOINT}")
    variants = [caption_variants(text) for text in lexicon.texts]
    word_index = {word: i for i, word in enumerate(architecture.vocabulary)}
    window = train.rgb.shape[1]
    for epoch in range(run.state["epoch"], config.epochs):
        rng = np.random.default_rng([config.seed, epoch])
        model.train()
        order = rng.permutation(len(train.rgb))
        losses = []
        bar = tqdm(range(steps_per_epoch), disable=not progress, unit="step",
                   desc=f"epoch {epoch + 1}/{config.epochs}", leave=False)
        for step in bar:
            batch = order[step * config.batch:(step + 1) * config.batch]
            frames = _frame_subsets(rng, len(batch), window, config.frames_per_clip)
            rgb = torch.from_numpy(jitter_colours(train.rgb[batch[:, None], frames], rng,
                                                  config.colour_jitter))
            captions = [v[rng.integers(len(v))] for v in variants]
            words, offsets = _word_batch(captions, word_index)
            loss = _loss(model, config, model.image(rgb) @ model.text(words, offsets).T,
                         torch.from_numpy(train.labels[batch]))
            optimise(optimiser, loss, losses, bar)
            schedule.step()
        row = run.log("training", epoch + 1, train_loss=float(np.mean(losses)),
                      **_validate(model, config, val, lexicon, word_index))
        run.state["epoch"] = epoch + 1
        say(f"epoch {row['epoch']}: train loss {row['train_loss']:.3f}, validation loss "
            f"{row['val_loss']:.3f}, validation mAP {row['val_map']:.3f}")
        run.save(model=model, optimiser=optimiser, schedule=schedule)
    info = {"training": config.recipe(), "history": run.history[-1] if run.history else {},
            "data": f"{config.clips} clips of {', '.join(CALIBRATION_WORLDS)}, seed {config.seed}"
                    + (f", {config.hard_negatives} hard negatives mined from "
                       f"{config.hard_negative_pool} by weights {miner_sha256()}"
                       if config.hard_negatives else "")}
    weights = export_weights(model, architecture, info)
    run.finish(weights, "pixels.npz", plot_curve)
    return TrainingResult(weights, run.history, run.seconds)


def _frame_subsets(rng: np.random.Generator, clips: int, window: int, count: int) -> np.ndarray:
    """``int[clips, count]`` frame indices per clip: the last frame and ``count - 1`` others."""
    count = min(count, window)
    others = rng.random((clips, window - 1)).argsort(axis=1)[:, :count - 1]
    return np.sort(np.concatenate([others, np.full((clips, 1), window - 1)], axis=1), axis=1)


def _word_batch(captions: list[str], word_index: dict[str, int]):
    import torch

    ids = [[word_index[w] for w in tokens(caption)] for caption in captions]
    offsets = np.cumsum([0] + [len(i) for i in ids[:-1]])
    return (torch.tensor([w for i in ids for w in i], dtype=torch.long),
            torch.tensor(offsets, dtype=torch.long))


def _loss(model, config: TrainingConfig, cosines, labels):
    """The training loss of ``cosines [clips, texts]``: InfoNCE, plus the pairwise sigmoid loss
    weighted by ``config.pairwise``."""
    loss = multi_positive_loss(model.logit_scale.exp().clamp(max=100) * cosines, labels)
    if config.pairwise:
        loss = loss + config.pairwise * pairwise_sigmoid_loss(
            model.pair_scale.exp().clamp(max=100) * cosines + model.pair_bias, labels)
    return loss


def _validate(model, config: TrainingConfig, val: ClipSet, lexicon: Lexicon,
              word_index: dict[str, int]) -> dict:
    """Validation loss and mAP on whole clips (the lexicon's own prompt texts)."""
    import torch

    model.eval()
    with torch.no_grad():
        clips = torch.cat([model.image(torch.from_numpy(val.rgb[i:i + 64]))
                           for i in range(0, len(val.rgb), 64)])
        texts = model.text(*_word_batch(list(lexicon.texts), word_index))
        loss = float(_loss(model, config, clips @ texts.T, torch.from_numpy(val.labels)))
    score, _ = mean_average_precision(clips.numpy(), texts.numpy(), val.labels)
    return {"val_loss": loss, "val_map": score}


def plot_curve(history: list[dict], path: Path) -> None:
    """Training and validation loss, and validation mAP, per epoch."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from mrsteve.fileio import atomic_path

    epochs = [row["epoch"] for row in history]
    figure, (left, right) = plt.subplots(1, 2, figsize=(9, 3.5))
    left.plot(epochs, [row["train_loss"] for row in history], label="train")
    left.plot(epochs, [row["val_loss"] for row in history], label="validation")
    left.set(xlabel="epoch", ylabel="InfoNCE (+ pairwise sigmoid)", title="loss")
    left.legend()
    right.plot(epochs, [row["val_map"] for row in history], color="C2")
    right.set(xlabel="epoch", ylabel="mAP over the lexicon", title="validation mAP", ylim=(0, 1))
    figure.tight_layout()
    with atomic_path(path) as tmp:
        figure.savefig(tmp, format="png", dpi=100)
    plt.close(figure)


__all__ = [
    "REPHRASINGS",
    "ClipSet",
    "TrainingConfig",
    "TrainingResult",
    "build_model",
    "caption_variants",
    "export_weights",
    "false_match_margins",
    "hard_negative_order",
    "mean_average_precision",
    "mine_hard_negatives",
    "multi_positive_loss",
    "pairwise_sigmoid_loss",
    "render_clips",
    "train_encoder",
    "vocabulary",
]
