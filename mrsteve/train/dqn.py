"""DQN training of Plan4MC's low level (:mod:`mrsteve.control.dqn_navigator`).

The paper: Plan4MC's low level "is trained using DQN", receiving "a goal position and current
observation in pixel". Here: deep Q-learning (Mnih et al. 2015: a replay memory, a target network
copied every ``target_every`` steps, the Huber loss, epsilon-greedy exploration annealed
linearly) in the navigator's training worlds (:data:`~mrsteve.train.navigator.TRAINING_WORLDS`),
walking to goals 10 to 20 blocks away drawn as the navigation experiment draws them, one after
another; the reward is the step's progress toward the goal in blocks and ``success_reward`` on
coming within 3 blocks, which ends the goal (``max_goal_steps`` without arriving end it too, a
time limit the value of the last step bootstraps over).

Training runs in rounds of ``round_steps`` environment steps, each drawing its worlds and goals
from its own seeded generator, and checkpoints after each; a run resumes at the last round done
with an empty replay memory (``warm_up`` steps refill it before learning goes on), so a resumed
run differs from an uninterrupted one. At the end ``validation_goals`` goals of fresh training
worlds are walked by the exported numpy navigator as it acts at run time.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np

from mrsteve.control.dqn_navigator import (
    DQN_ACTIONS,
    DQNArchitecture,
    DQNNavigator,
    DQNWeights,
    dqn_action,
)
from mrsteve.control.learned_navigator import goal_features
from mrsteve.control.navigation import NavigatorConfig
from mrsteve.protocols import Decision
from mrsteve.train.episodes import draw_world
from mrsteve.train.layers import frame_encoder, torch_session
from mrsteve.train.navigator import TRAINING_WORLDS
from mrsteve.train.navigator_ppo import draw_goal
from mrsteve.train.runs import TrainingRun


@dataclass(frozen=True)
class DQNTrainingConfig:
    """The recipe of ``mrsteve train dqn-navigator`` (DQN's usual values where Plan4MC's release
    gives none)."""

    steps: int = 150_000
    """Environment steps in all; a finished run goes on when given more."""
    round_steps: int = 10_000
    """Environment steps per round (a checkpoint after each)."""
    goals_per_world: int = 8
    """Goals walked in one world before the next is drawn."""
    max_goal_steps: int = 300
    """Steps a goal may take."""
    success_reward: float = 10.0
    """Reward for coming within 3 blocks of the goal (besides the progress toward it)."""
    replay: int = 50_000
    """Transitions the replay memory holds."""
    warm_up: int = 5_000
    """Transitions collected (per sitting) before learning starts."""
    batch: int = 64
    learning_rate: float = 2.5e-4
    """Adam's step size."""
    gamma: float = 0.99
    """Discount per step."""
    train_every: int = 4
    """Environment steps per gradient step."""
    target_every: int = 2_000
    """Environment steps between copies of the network to the target network."""
    epsilon_steps: int = 60_000
    """Steps over which epsilon falls from 1 to ``epsilon_end``."""
    epsilon_end: float = 0.05
    """The chance of a random action after ``epsilon_steps`` (Plan4MC acts with 0.05)."""
    validation_goals: int = 60
    """Goals walked by the trained navigator at the end (0: none)."""
    seed: int = 0
    """Seeds the initial weights, every round's worlds, goals and random actions, and the
    minibatches."""
    threads: int = 1
    """Torch CPU threads."""

    def __post_init__(self) -> None:
        counts = (self.steps, self.round_steps, self.goals_per_world, self.max_goal_steps,
                  self.replay, self.batch, self.train_every, self.target_every,
                  self.epsilon_steps)
        if min(counts) < 1 or self.warm_up < 0 or self.validation_goals < 0:
            raise ValueError(f"the counts must be >= 1 (warm_up, validation_goals >= 0), got "
                             f"{self}")
        if self.batch > self.replay or self.warm_up > self.replay:
            raise ValueError(f"batch and warm_up must fit in the replay memory ({self.replay})")
        if not 0.0 <= self.epsilon_end <= 1.0 or not 0.0 < self.gamma <= 1.0:
            raise ValueError("epsilon_end must be from 0 to 1 and gamma in (0, 1]")

    @property
    def rounds(self) -> int:
        return math.ceil(self.steps / self.round_steps)

    def recipe(self) -> dict:
        """The settings as the weights record them (``info["training"]``)."""
        return asdict(self)

    def epsilon(self, step: int) -> float:
        """The chance of a random action at environment step ``step``."""
        return max(self.epsilon_end, 1.0 - (1.0 - self.epsilon_end) * step / self.epsilon_steps)


class ReplayMemory:
    """The last ``capacity`` transitions ``(frame, goal, action, reward, next frame, next goal,
    terminal)``, in a ring."""

    def __init__(self, capacity: int, obs_size: tuple[int, int]) -> None:
        self.capacity, self.size, self.next = capacity, 0, 0
        self.rgb = np.zeros((capacity, *obs_size, 3), np.uint8)
        self.next_rgb = np.zeros_like(self.rgb)
        self.goal = np.zeros((capacity, 6), np.float32)
        self.next_goal = np.zeros_like(self.goal)
        self.action = np.zeros(capacity, np.int64)
        self.reward = np.zeros(capacity, np.float32)
        self.terminal = np.zeros(capacity, np.float32)

    def add(self, rgb, goal, action: int, reward: float, next_rgb, next_goal,
            terminal: bool) -> None:
        i = self.next
        self.rgb[i], self.goal[i], self.action[i], self.reward[i] = rgb, goal, action, reward
        self.next_rgb[i], self.next_goal[i], self.terminal[i] = next_rgb, next_goal, terminal
        self.next = (i + 1) % self.capacity
        self.size = min(self.size + 1, self.capacity)

    def sample(self, rng: np.random.Generator, batch: int) -> dict[str, np.ndarray]:
        index = rng.integers(self.size, size=batch)
        return {name: getattr(self, name)[index] for name in
                ("rgb", "goal", "action", "reward", "next_rgb", "next_goal", "terminal")}


def build_q_network(architecture: DQNArchitecture):
    """The torch Q-network (parameter names as :class:`DQNArchitecture` gives them)."""
    import torch
    from torch import nn

    class QNetwork(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.image = frame_encoder(architecture.obs_size, architecture.channels,
                                       architecture.strides, architecture.frame_dim)
            self.goal = nn.Linear(6, architecture.goal_dim)
            self.hidden = nn.Linear(architecture.frame_dim + architecture.goal_dim,
                                    architecture.hidden)
            self.q = nn.Linear(architecture.hidden, architecture.actions)

        def forward(self, rgb, goal):
            x = torch.cat([self.image(rgb), torch.relu(self.goal(goal))], dim=1)
            return self.q(torch.relu(self.hidden(x)))

    return QNetwork()


def export_weights(model, architecture: DQNArchitecture, info: dict) -> DQNWeights:
    """The numpy weights of the torch Q-network."""
    return DQNWeights(architecture, {name: value.detach().numpy().astype(np.float32)
                                     for name, value in model.state_dict().items()}, info)


class GoalWalker:
    """Walks to goals in training worlds drawn from ``rng``, one world after another; each step's
    action comes from ``choose(rgb, goal_features, step)`` and each transition goes to
    ``record`` (the reward of the progress toward the goal, ``success_reward`` on arrival)."""

    def __init__(self, config: DQNTrainingConfig, rng: np.random.Generator,
                 choose: Callable[[np.ndarray, np.ndarray, int], int],
                 record: Callable[..., None] = lambda *transition: None) -> None:
        self.config, self.rng, self.choose, self.record = config, rng, choose, record
        self.navigation = NavigatorConfig()
        self.steps = self.goals = self.reached = 0

    def walk(self, steps: int) -> None:
        """Walk until ``steps`` more environment steps are taken."""
        end = self.steps + steps
        self._walk(lambda: self.steps >= end, end)

    def walk_goals(self, goals: int) -> None:
        """Walk ``goals`` more goals (the validation's walks)."""
        end = self.goals + goals
        self._walk(lambda: self.goals >= end, None)

    def _walk(self, done: Callable[[], bool], end: int | None) -> None:
        """Goals in world after world until ``done()``; ``end``: the step a goal stops at."""
        while not done():
            driver, _ = draw_world(TRAINING_WORLDS, self.rng)
            with driver.env:
                for _ in range(self.config.goals_per_world):
                    if done() or not self._goal(driver, end):
                        break

    def _goal(self, driver, end: int | None) -> bool:
        """Walk to one new goal; ``False`` when the world is done (no goal there, or the
        episode ended)."""
        config = self.config
        goal = draw_goal(driver.env.unwrapped.world.blocks, driver.position, self.rng,
                         (10.0, 20.0), 0.0)
        if goal is None:
            return False
        goal = driver.frame.from_world(*goal)
        previous: list = []  # the last step's (rgb, goal features, action, distance)

        def step(view, t):
            x, _, z, yaw, pitch = (float(v) for v in view["pose"][:5])
            distance = math.hypot(goal[0] - x, goal[1] - z)
            features = goal_features(goal[0] - x, goal[1] - z, yaw, pitch)
            arrived = distance <= self.navigation.success_radius
            if previous:
                rgb, before, action, was = previous.pop()
                self.record(rgb, before, action, was - distance
                            + (config.success_reward if arrived else 0.0), view["rgb"],
                            features, arrived)
            if arrived or len(taken) >= config.max_goal_steps or (
                    end is not None and self.steps >= end):
                return None
            action = self.choose(view["rgb"], features, self.steps)
            previous.append((view["rgb"], features, action, distance))
            taken.append(action)
            self.steps += 1
            return Decision(dqn_action(action, pitch, self.navigation), goal=goal)

        taken: list[int] = []
        # the step after the last one records it (bootstrapping unless the goal was reached);
        # an episode ended by the world (the player drowned, say) drops its last step
        last = driver.run(step, steps=config.max_goal_steps + 1)
        ended = last is not None and (last.terminated or last.truncated)
        self.goals += 1
        x, z = (float(v) for v in driver.view["pose"][[0, 2]])
        self.reached += int(math.hypot(goal[0] - x, goal[1] - z)
                            <= self.navigation.success_radius)
        return not ended


@dataclass(frozen=True)
class DQNTrainingResult:
    weights: DQNWeights
    history: list[dict]
    seconds: float


def train_dqn_navigator(out: Path, config: DQNTrainingConfig | None = None, *,
                        progress: bool = True,
                        say: Callable[[str], None] = print) -> DQNTrainingResult:
    """Train the DQN navigator in run folder ``out`` (resuming its checkpoint) and write
    ``out/dqn_navigator.npz``, ``out/history.json`` and ``out/curve.png``."""
    config = config or DQNTrainingConfig()
    with torch_session("the DQN navigator", config.threads):
        out.mkdir(parents=True, exist_ok=True)
        return _train(out, config, progress, say)


def _train(out: Path, config: DQNTrainingConfig, progress: bool,
           say: Callable[[str], None]) -> DQNTrainingResult:
    import torch
    from torch import nn
    from tqdm import tqdm

    run = TrainingRun(out, json.dumps(config.recipe(), sort_keys=True), {"round": 0},
                      say=say, extendable=("steps",))
    architecture = DQNArchitecture()
    torch.manual_seed(config.seed)
    model, target = build_q_network(architecture), build_q_network(architecture)
    optimiser = torch.optim.Adam(model.parameters(), lr=config.learning_rate)
    if run.restore(model=model, target=target, optimiser=optimiser):
        say(f"resuming after round {run.state['round']} from {out / TrainingRun.CHECKPOINT} "
            f"(the replay memory refills first)")
    else:
        target.load_state_dict(model.state_dict())
    memory = ReplayMemory(config.replay, architecture.obs_size)
    losses: list[float] = []
    done_before = run.state["round"] * config.round_steps

    def learn(rng: np.random.Generator) -> None:
        data = {name: torch.from_numpy(value) for name, value in
                memory.sample(rng, config.batch).items()}
        q = model(data["rgb"], data["goal"]).gather(1, data["action"][:, None])[:, 0]
        with torch.no_grad():
            following = target(data["next_rgb"], data["next_goal"]).max(dim=1).values
        wanted = data["reward"] + config.gamma * (1.0 - data["terminal"]) * following
        loss = nn.functional.smooth_l1_loss(q, wanted)
        optimiser.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 10.0)
        optimiser.step()
        losses.append(loss.item())

    bar = tqdm(total=config.rounds * config.round_steps, initial=done_before,
               disable=not progress, unit="step", desc="DQN", leave=False)
    for round_index in range(run.state["round"], config.rounds):
        rng = np.random.default_rng([config.seed, round_index])
        torch.manual_seed(int(rng.integers(2**31)))
        collected = 0

        def choose(rgb, goal, step, rng=rng, start=done_before):
            if rng.random() < config.epsilon(start + step):
                return int(rng.integers(len(DQN_ACTIONS)))
            with torch.no_grad():
                q = model(torch.from_numpy(rgb[None]), torch.from_numpy(goal[None]))
            return int(q.argmax())

        def record(*transition, rng=rng, start=done_before):
            nonlocal collected
            memory.add(*transition)
            collected += 1
            bar.update()
            step = start + collected
            if memory.size >= max(config.warm_up, config.batch) and \
                    collected % config.train_every == 0:
                learn(rng)
            if step % config.target_every == 0:
                target.load_state_dict(model.state_dict())

        walker = GoalWalker(config, rng, choose, record)
        walker.walk(config.round_steps)
        done_before += walker.steps
        row = run.log("dqn", round_index + 1, steps=done_before,
                      epsilon=config.epsilon(done_before),
                      reached=walker.reached / max(walker.goals, 1), goals=walker.goals,
                      loss=float(np.mean(losses[-500:])) if losses else float("nan"))
        say(f"round {round_index + 1}/{config.rounds}: {row['steps']:,} steps, epsilon "
            f"{row['epsilon']:.2f}, {row['reached']:.0%} of {walker.goals} goals reached, loss "
            f"{row['loss']:.4f}")
        run.state["round"] = round_index + 1
        run.save(model=model, target=target, optimiser=optimiser)
    bar.close()
    info = {"training": config.recipe(), "history": run.history[-1] if run.history else {},
            "data": f"{done_before:,} steps walking to goals in {', '.join(TRAINING_WORLDS)}, "
                    f"seed {config.seed}"}
    weights = export_weights(model.eval(), architecture, info)
    run.state["history"] = [row for row in run.history if row["stage"] == "dqn"]
    if config.validation_goals:
        reached = validate(weights, config)
        run.log("validation", config.validation_goals, reached=reached)
        say(f"validation: {reached:.0%} of {config.validation_goals} goals reached")
    run.finish(weights, "dqn_navigator.npz", plot_curve)
    return DQNTrainingResult(weights, run.history, run.seconds)


def validate(weights: DQNWeights, config: DQNTrainingConfig) -> float:
    """The share of ``config.validation_goals`` goals in fresh training worlds (a generator of
    their own) the numpy navigator reaches, acting as at run time."""
    rng = np.random.default_rng([config.seed, 1_000_003])
    navigator = DQNNavigator(weights=weights)
    navigator.reset(rng, None)
    walker = GoalWalker(config, rng, lambda rgb, goal, step: navigator.choose(rgb, goal))
    walker.walk_goals(config.validation_goals)
    return walker.reached / max(walker.goals, 1)


def plot_curve(history: list[dict], path: Path) -> None:
    """Goals reached and the loss per round."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from mrsteve.fileio import atomic_path

    rows = [row for row in history if row["stage"] == "dqn"]
    steps = [row["steps"] for row in rows]
    figure, (left, right) = plt.subplots(1, 2, figsize=(9, 3.5))
    left.plot(steps, [row["reached"] for row in rows])
    left.set(xlabel="environment steps", ylabel="share of goals reached",
             title="goals reached (epsilon-greedy)", ylim=(0, 1))
    right.plot(steps, [row["loss"] for row in rows], color="C1")
    right.set(xlabel="environment steps", ylabel="Huber loss", title="TD loss")
    figure.tight_layout()
    with atomic_path(path) as tmp:
        figure.savefig(tmp, format="png", dpi=100)
    plt.close(figure)


__all__ = ["DQNTrainingConfig", "DQNTrainingResult", "GoalWalker", "ReplayMemory",
           "build_q_network", "export_weights", "train_dqn_navigator", "validate"]
