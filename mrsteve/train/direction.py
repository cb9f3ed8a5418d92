"""PPO training of Plan4MC's high level, the LSTM direction policy
(:mod:`mrsteve.control.direction_policy`; appendix "Exploration Experiments Details").

The paper: the policy "is trained using PPO to maximize the number of unique grid cells visited"
on an 11 x 11 grid. Plan4MC's release trains it over its DQN low level in Minecraft plains: at
each decision the low level walks toward the neighbouring cell, the reward is 1 per grid cell
entered for the first time and -10 for each decision that ends off the grid, and an episode has
40 decisions. Here each decision moves exactly one cell (a low level that always arrives), so
training runs on the grid alone (:class:`GridWalks`, vectorised over environments) in minutes;
the low level's failures are met only when the policy explores the world. Each rollout is one
whole episode per environment, read by the LSTM from its start in the rollout and in the update
alike (no truncated backpropagation through time).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from mrsteve.control.direction_policy import (
    DIRECTIONS,
    DirectionArchitecture,
    DirectionPolicy,
    DirectionWeights,
)
from mrsteve.train.layers import torch_session
from mrsteve.train.navigator_ppo import advantages, clipped_policy_loss
from mrsteve.train.runs import TrainingRun


@dataclass(frozen=True)
class DirectionTrainingConfig:
    """The recipe of ``mrsteve train direction-policy`` (Plan4MC's values where its release gives
    them; PPO's usual ones elsewhere)."""

    iterations: int = 400
    """PPO iterations (one rollout of ``envs`` whole episodes each); a finished run goes on when
    given more."""
    envs: int = 128
    """Episodes per rollout."""
    decisions: int = 40
    """Decisions per episode (Plan4MC: 40)."""
    grid: int = 11
    """Cells per side of the grid, centred on the start (Plan4MC: 11)."""
    off_grid_penalty: float = 10.0
    """Reward lost for each decision that ends off the grid (Plan4MC: 10)."""
    recurrent: int = 64
    """The LSTM's hidden state size."""
    hidden: int = 64
    """The width of the hidden and policy layers."""
    epochs: int = 4
    """Passes over each rollout."""
    minibatches: int = 4
    """Minibatches (of whole episodes) per pass."""
    learning_rate: float = 3e-4
    """Adam's step size."""
    gamma: float = 0.99
    gae_lambda: float = 0.95
    clip: float = 0.2
    value_weight: float = 0.5
    entropy_weight: float = 0.01
    """Weight of the policy's entropy bonus."""
    validation_episodes: int = 256
    """Episodes the policy is scored on (numpy inference, sampled directions) at the end, at
    ``decisions`` and at three times as many."""
    seed: int = 0
    """Seeds the initial weights, every rollout's directions and the minibatches."""
    threads: int = 1
    """Torch CPU threads."""

    def __post_init__(self) -> None:
        if min(self.iterations, self.envs, self.decisions, self.recurrent, self.hidden,
               self.epochs, self.minibatches) < 1 or self.validation_episodes < 0:
            raise ValueError(f"iterations, envs, decisions, recurrent, hidden, epochs and "
                             f"minibatches must be >= 1 and validation_episodes >= 0, got {self}")
        if self.minibatches > self.envs:
            raise ValueError(f"minibatches split the episodes: at most envs ({self.envs}), got "
                             f"{self.minibatches}")
        if self.grid < 3 or self.grid % 2 == 0:
            raise ValueError(f"grid must be odd and >= 3 (centred on the start), got {self.grid}")
        if self.off_grid_penalty < 0 or self.learning_rate <= 0:
            raise ValueError("off_grid_penalty must be >= 0 and learning_rate > 0")

    def recipe(self) -> dict:
        """The settings as the weights record them (``info["training"]``)."""
        return asdict(self)


class GridWalks:
    """``envs`` walks on a ``grid x grid`` grid of cells centred on the start, one cell per
    decision in the chosen direction of :data:`DIRECTIONS`; a walk may leave the grid (and pays
    for it) and come back."""

    def __init__(self, envs: int, grid: int, off_grid_penalty: float) -> None:
        self.envs, self.grid, self.penalty = envs, grid, off_grid_penalty
        self.reset()

    def reset(self) -> np.ndarray:
        """Every walk back at the start; the positions (cells, relative to the start)."""
        half = self.grid // 2
        self.position = np.zeros((self.envs, 2), np.int64)
        self.visited = np.zeros((self.envs, self.grid, self.grid), bool)
        self.visited[:, half, half] = True
        return self.position.astype(np.float32)

    @property
    def cells(self) -> np.ndarray:
        """Distinct grid cells each walk has visited, the start's included."""
        return self.visited.sum(axis=(1, 2))

    def step(self, actions: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Move each walk one cell; ``(positions, rewards)``: 1 for a cell entered for the first
        time, minus the penalty off the grid, else 0."""
        half = self.grid // 2
        self.position += np.asarray(DIRECTIONS, np.int64)[actions]
        inside = np.all(np.abs(self.position) <= half, axis=1)
        walks = np.flatnonzero(inside)
        x, z = (self.position[walks] + half).T
        new = np.zeros(self.envs, bool)
        new[walks] = ~self.visited[walks, x, z]
        self.visited[walks, x, z] = True
        reward = new.astype(np.float32) - self.penalty * (~inside).astype(np.float32)
        return self.position.astype(np.float32), reward


def grid_cells(weights: DirectionWeights, episodes: int, decisions: int, seed: int,
               off_grid_penalty: float = 10.0) -> np.ndarray:
    """Distinct grid cells (the start's included) each of ``episodes`` walks of ``decisions``
    sampled decisions of the numpy policy visits on the grid it was trained on."""
    rng = np.random.default_rng(seed)
    policy = DirectionPolicy(weights, batch=episodes)
    walks = GridWalks(episodes, weights.architecture.grid, off_grid_penalty)
    positions = walks.reset()
    for _ in range(decisions):
        logits = policy.logits(positions).astype(np.float64)
        probabilities = np.exp(logits - logits.max(axis=1, keepdims=True))
        cumulative = np.cumsum(probabilities, axis=1)
        draws = rng.random(episodes)[:, None] * cumulative[:, -1:]
        actions = np.minimum((cumulative <= draws).sum(axis=1), len(DIRECTIONS) - 1)
        positions, _ = walks.step(actions)
    return walks.cells


def build_direction_model(architecture: DirectionArchitecture):
    """The torch model: an LSTM over positions, a hidden layer, then a policy branch (hidden
    layer, four logits) and a value branch (hidden layer, one value), ReLU after each hidden
    layer (Plan4MC's actor-critic); parameter names match :class:`DirectionArchitecture`'s
    where they are exported."""
    import torch
    from torch import nn

    class DirectionModel(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            r, h = architecture.recurrent, architecture.hidden
            self.lstm = nn.LSTM(2, r, batch_first=True)
            self.hidden = nn.Linear(r, h)
            self.policy_hidden = nn.Linear(h, h)
            self.policy = nn.Linear(h, len(DIRECTIONS))
            self.value_hidden = nn.Linear(h, h)
            self.value = nn.Linear(h, 1)

        def forward(self, positions, state=None):
            """``positions [B, T, 2]`` -> ``(logits [B, T, 4], values [B, T], state)``."""
            core, state = self.lstm(positions, state)
            x = torch.relu(self.hidden(core))
            logits = self.policy(torch.relu(self.policy_hidden(x)))
            values = self.value(torch.relu(self.value_hidden(x))).squeeze(-1)
            return logits, values, state

    return DirectionModel()


def export_weights(model, architecture: DirectionArchitecture, info: dict) -> DirectionWeights:
    """The policy's numpy weights (the LSTM's two biases summed; the value branch left out)."""
    state = {name: value.detach().numpy().astype(np.float32)
             for name, value in model.state_dict().items()}
    parameters = {"lstm.weight_ih": state["lstm.weight_ih_l0"],
                  "lstm.weight_hh": state["lstm.weight_hh_l0"],
                  "lstm.bias": state["lstm.bias_ih_l0"] + state["lstm.bias_hh_l0"],
                  **{name: state[name] for name in architecture.parameter_shapes()
                     if not name.startswith("lstm.")}}
    return DirectionWeights(architecture, parameters, info)


@dataclass(frozen=True)
class DirectionTrainingResult:
    weights: DirectionWeights
    history: list[dict]
    seconds: float


def train_direction_policy(out: Path, config: DirectionTrainingConfig | None = None, *,
                           progress: bool = True,
                           say: Callable[[str], None] = print) -> DirectionTrainingResult:
    """Train the direction policy in run folder ``out`` (resuming its checkpoint) and write
    ``out/direction.npz``, ``out/history.json`` and ``out/curve.png``."""
    config = config or DirectionTrainingConfig()
    with torch_session("the direction policy", config.threads):
        out.mkdir(parents=True, exist_ok=True)
        return _train(out, config, progress, say)


CHECKPOINT_EVERY = 25
"""Iterations between checkpoints."""


def _train(out: Path, config: DirectionTrainingConfig, progress: bool,
           say: Callable[[str], None]) -> DirectionTrainingResult:
    import torch
    from tqdm import tqdm

    run = TrainingRun(out, json.dumps(config.recipe(), sort_keys=True), {"iteration": 0},
                      say=say, extendable=("iterations",))
    architecture = DirectionArchitecture(config.recurrent, config.hidden, config.grid)
    torch.manual_seed(config.seed)
    model = build_direction_model(architecture)
    optimiser = torch.optim.Adam(model.parameters(), lr=config.learning_rate)
    if run.restore(model=model, optimiser=optimiser):
        say(f"resuming after iteration {run.state['iteration']} from "
            f"{out / TrainingRun.CHECKPOINT}")
    walks = GridWalks(config.envs, config.grid, config.off_grid_penalty)
    bar = tqdm(range(run.state["iteration"], config.iterations), disable=not progress,
               unit="iteration", desc="PPO", leave=False)
    for iteration in bar:
        rng = np.random.default_rng([config.seed, iteration])
        torch.manual_seed(int(rng.integers(2**31)))
        positions, actions, rewards = _rollout(model, walks, config.decisions)
        row = _update(model, optimiser, config, rng, positions, actions, rewards)
        row = run.log("ppo", iteration + 1, cells=float(walks.cells.mean()),
                      off_grid=float((rewards < 0).mean()), **row)
        bar.set_postfix(cells=f"{row['cells']:.1f}")
        run.state["iteration"] = iteration + 1
        if (iteration + 1) % CHECKPOINT_EVERY == 0 or iteration + 1 == config.iterations:
            say(f"iteration {iteration + 1}: {row['cells']:.1f} cells per episode of "
                f"{config.decisions} decisions, {row['off_grid']:.1%} of decisions off the grid")
            run.save(model=model, optimiser=optimiser)
    info = {"training": config.recipe(),
            "history": run.history[-1] if run.history else {},
            "data": f"{config.iterations} x {config.envs} episodes on the {config.grid} x "
                    f"{config.grid} grid, seed {config.seed}"}
    weights = export_weights(model.eval(), architecture, info)
    run.state["history"] = [row for row in run.history if row["stage"] == "ppo"]  # a run extended
    if config.validation_episodes:
        for decisions in (config.decisions, 3 * config.decisions):
            cells = grid_cells(weights, config.validation_episodes, decisions,
                               config.seed + 1, config.off_grid_penalty)
            run.log("validation", decisions, cells=float(cells.mean()),
                    cells_sem=float(cells.std(ddof=1) / np.sqrt(len(cells)))
                    if len(cells) > 1 else 0.0)
            say(f"validation, {decisions} decisions: {cells.mean():.1f} of "
                f"{config.grid ** 2} cells")
    run.finish(weights, "direction.npz", plot_curve)
    return DirectionTrainingResult(weights, run.history, run.seconds)


def _rollout(model, walks: GridWalks, decisions: int):
    """One whole episode per walk, directions sampled from ``model``: ``positions [B, T, 2]``
    (what the policy read at each decision), ``actions [B, T]``, ``rewards [B, T]``."""
    import torch

    positions, actions, rewards = [], [], []
    position, state = walks.reset(), None
    with torch.no_grad():
        for _ in range(decisions):
            positions.append(position)
            logits, _, state = model(torch.from_numpy(position)[:, None], state)
            action = torch.distributions.Categorical(logits=logits[:, 0]).sample().numpy()
            position, reward = walks.step(action)
            actions.append(action)
            rewards.append(reward)
    return (np.stack(positions, 1), np.stack(actions, 1).astype(np.int64),
            np.stack(rewards, 1))


def _update(model, optimiser, config: DirectionTrainingConfig, rng: np.random.Generator,
            positions: np.ndarray, actions: np.ndarray, rewards: np.ndarray) -> dict:
    """PPO's clipped update on one rollout of whole episodes; the losses of the last pass."""
    import torch
    from torch import nn

    inputs, taken = torch.from_numpy(positions), torch.from_numpy(actions)
    with torch.no_grad():
        logits, values, _ = model(inputs)
        old = torch.distributions.Categorical(logits=logits).log_prob(taken)
    done = np.zeros_like(rewards)
    done[:, -1] = 1.0
    adv, returns = advantages(rewards, done, values.numpy(), config.gamma, config.gae_lambda)
    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
    adv_t, returns_t = torch.from_numpy(adv), torch.from_numpy(returns.astype(np.float32))
    model.train()
    for _ in range(config.epochs):
        for envs in np.array_split(rng.permutation(config.envs), config.minibatches):
            index = torch.from_numpy(envs)
            logits, values, _ = model(inputs[index])
            distribution = torch.distributions.Categorical(logits=logits)
            policy_loss = clipped_policy_loss(distribution.log_prob(taken[index]), old[index],
                                              adv_t[index], config.clip)
            value_loss = ((values - returns_t[index]) ** 2).mean()
            entropy = distribution.entropy().mean()
            loss = (policy_loss + config.value_weight * value_loss
                    - config.entropy_weight * entropy)
            optimiser.zero_grad()
            loss.backward()
            nn.utils.clip_grad_norm_(model.parameters(), 0.5)
            optimiser.step()
    return {"policy_loss": policy_loss.item(), "value_loss": value_loss.item(),
            "entropy": entropy.item()}


def plot_curve(history: list[dict], path: Path) -> None:
    """Distinct cells per training episode and the policy's entropy, per iteration."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from mrsteve.fileio import atomic_path

    rows = [row for row in history if row["stage"] == "ppo"]
    iterations = [row["epoch"] for row in rows]
    figure, (left, right) = plt.subplots(1, 2, figsize=(9, 3.5))
    left.plot(iterations, [row["cells"] for row in rows])
    left.set(xlabel="PPO iteration", ylabel="distinct cells per episode", title="coverage")
    right.plot(iterations, [row["entropy"] for row in rows], color="C1")
    right.set(xlabel="PPO iteration", ylabel="nats", title="policy entropy")
    figure.tight_layout()
    with atomic_path(path) as tmp:
        figure.savefig(tmp, format="png", dpi=100)
    plt.close(figure)


__all__ = ["DirectionTrainingConfig", "DirectionTrainingResult", "GridWalks",
           "build_direction_model", "export_weights", "grid_cells", "train_direction_policy"]
