"""PPO fine-tuning of the learned navigator with a KL term to the foundation policy (appendix
"Goal-Conditioned VPT Navigator Details"): the reward is the decrease of the distance to the
goal each step plus ``success_reward`` on coming within 3 blocks; a value head (a linear layer,
randomly initialised, not exported) is trained beside the policy; the KL coefficient decays by
``kl_decay`` per iteration, as in the paper's hyper-parameter table.

Rollouts run ``envs`` environments in the navigator training worlds, each walking to goals one
after another (a goal reached or ``max_goal_steps`` spent ends its segment), acting with the
numpy policy of the current weights; each iteration's steps are one sequence per environment,
and the policy's memory starts afresh at each iteration (in the rollout and in the update alike,
so the log-probabilities of both agree).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from mrsteve.control.learned_navigator import BUTTONS, camera_bins, goal_features
from mrsteve.protocols import Decision
from mrsteve.tasks.driver import EpisodeCallback, Step
from mrsteve.train.episodes import draw_world


@dataclass(frozen=True)
class PPOConfig:
    """PPO's settings (the paper's where it gives them)."""

    iterations: int = 0
    """PPO iterations after behaviour cloning (reward: progress to the goal, 100 on reaching
    it; 0: none, the shipped recipe)."""
    # The shipped recipe's six DAgger rounds walked the training worlds' validation goals better
    # than three with 0, 40 or 150 PPO iterations (results/navigation-learned/NOTES.md).
    envs: int = 8
    """Environments per rollout (the paper: 4 vectorised environments)."""
    steps: int = 128
    """Steps per environment and iteration."""
    epochs: int = 4
    """Passes over each rollout (the paper: 5)."""
    minibatches: int = 2
    learning_rate: float = 1e-4
    """The paper: 1e-4."""
    gamma: float = 0.99
    gae_lambda: float = 0.95
    """The paper: 0.95."""
    clip: float = 0.2
    """The paper: 0.2."""
    value_weight: float = 0.5
    entropy_weight: float = 1e-3
    kl_decay: float = 0.999
    """The KL coefficient is multiplied by this every iteration (the paper: 0.999)."""
    success_reward: float = 100.0
    """Reward for reaching the goal (the paper: 100)."""
    reward_scale: float = 0.1
    """Rewards are multiplied by this for the value head's sake (advantages are normalised)."""
    max_goal_steps: int = 300
    min_distance: float = 10.0
    max_distance: float = 20.0
    """Goals lie 10-20 blocks away, as in the navigation experiment."""

    def __post_init__(self) -> None:
        if self.iterations < 0 or min(self.envs, self.steps, self.epochs, self.minibatches,
                                      self.max_goal_steps) < 1:
            raise ValueError(f"PPO's counts must be positive (iterations >= 0), got {self}")
        if self.minibatches > self.envs:
            raise ValueError("minibatches split the environments: at most envs of them")


def draw_goal(blocks: np.ndarray, start: tuple[float, float], rng: np.random.Generator,
              distance: tuple[float, float], across_water: float) -> tuple[float, float] | None:
    """A training goal ``distance`` blocks from ``start`` (world ``(x, z)``), drawn as the
    navigation experiment draws its goals (:func:`mrsteve.tasks.navigation.pick_goal`): across
    water with chance ``across_water`` where water separates the ground, else anywhere the
    player can walk; ``None`` where no goal lies that far."""
    from mrsteve.control.path_planning import WorldGround
    from mrsteve.tasks.navigation import GoalRange, pick_goal

    goals = GoalRange(*distance)
    wet = rng.random() < across_water
    try:
        return pick_goal(WorldGround(blocks), start, rng, goals, across_water=wet).goal
    except ValueError:
        try:
            return pick_goal(WorldGround(blocks), start, rng, goals).goal
        except ValueError:
            return None


class RolloutRecorder(EpisodeCallback):
    """What a rollout keeps of each step of one environment (a callback of its driver): the
    frame, the goal's features from the pose then, the action taken (keys, camera bins), the
    segment and the reward, the progress toward the goal (plus ``success_reward`` on arrival)
    scaled by ``reward_scale``; :meth:`begin` points it at a walk's rows of a rollout."""

    def __init__(self, walks: GoalWalks, ppo: PPOConfig) -> None:
        self.walks, self.ppo = walks, ppo
        self.out: dict[str, np.ndarray] | None = None
        self.i = self.t = self.segment = 0
        self.state: dict | None = None
        self.reached = False

    def begin(self, out: dict[str, np.ndarray], i: int, t: int, segment: int,
              state: dict) -> None:
        """The next steps are environment ``i``'s, rows ``t, t + 1, ...`` of ``out``."""
        self.out, self.i, self.t, self.segment, self.state = out, i, t, segment, state
        self.reached = False

    def on_step(self, step: Step) -> None:
        if self.out is None:
            return
        out, i, t, state, ppo = self.out, self.i, self.t, self.state, self.ppo
        view, goal, action = step.view, step.decision.goal, step.decision
        x, _, z, yaw, pitch = view["pose"][:5]
        out["rgb"][i, t] = view["rgb"]
        out["goal"][i, t] = goal_features(goal[0] - x, goal[1] - z, yaw, pitch)
        out["buttons"][i, t] = [int(action.get(name, 0)) for name in BUTTONS]
        out["camera"][i, t] = camera_bins(action["camera"])
        out["segment"][i, t] = self.segment
        distance = self.walks.distance(state)
        self.reached = distance <= 3.0
        reward = state["distance"] - distance + (ppo.success_reward if self.reached else 0.0)
        state["distance"] = distance
        state["goal_steps"] += 1
        out["reward"][i, t] = reward * ppo.reward_scale
        self.t = t + 1


class GoalWalks:
    """``envs`` environments walking to goals in the training worlds
    (:func:`~mrsteve.train.episodes.draw_world`, with ``shares``), each stepped by a driver whose
    :class:`RolloutRecorder` keeps its steps and rewards."""

    def __init__(self, worlds: tuple[str, ...], ppo: PPOConfig, goals_per_world: int,
                 rng: np.random.Generator, across_water: float = 0.0,
                 shares: tuple[float, ...] | None = None) -> None:
        self.worlds, self.ppo, self.goals_per_world, self.rng = worlds, ppo, goals_per_world, rng
        self.across_water, self.shares = across_water, shares
        self.state = [self._new_world() for _ in range(ppo.envs)]
        self.successes = 0
        self.ended = 0

    def _new_world(self) -> dict:
        recorder = RolloutRecorder(self, self.ppo)
        driver, info = draw_world(self.worlds, self.rng, callbacks=[recorder],
                                  shares=self.shares)
        state = {"driver": driver, "recorder": recorder, "camera": info["camera"], "goals": 0}
        self._new_goal(state)
        return state

    def _new_goal(self, state: dict) -> bool:
        driver = state["driver"]
        goal = draw_goal(driver.env.unwrapped.world.blocks, driver.position, self.rng,
                         (self.ppo.min_distance, self.ppo.max_distance), self.across_water)
        if goal is None:
            return False
        state["goal"] = driver.frame.from_world(*goal)
        state["goal_steps"] = 0
        state["goals"] += 1
        state["distance"] = self.distance(state)
        return True

    @staticmethod
    def distance(state: dict) -> float:
        """Blocks from the player to the goal of the environment of ``state``."""
        x, z = state["driver"].view["pose"][[0, 2]]
        return math.hypot(state["goal"][0] - x, state["goal"][1] - z)

    def _end_goal(self, i: int) -> None:
        state = self.state[i]
        self.ended += 1
        if state["goals"] >= self.goals_per_world or not self._new_goal(state):
            state["driver"].env.close()
            self.state[i] = self._new_world()

    def rollout(self, weights) -> dict[str, np.ndarray]:
        """One iteration's steps of every environment, acting with ``weights``' policy: each
        goal's walk is one run of the environment's driver, its recorder keeping the policy's
        steps and their rewards."""
        from mrsteve.control.learned_navigator import LearnedNavigator

        ppo, envs, steps = self.ppo, len(self.state), self.ppo.steps
        out = {"rgb": np.zeros((envs, steps, 40, 64, 3), np.uint8),
               "goal": np.zeros((envs, steps, 6), np.float32),
               "buttons": np.zeros((envs, steps, len(BUTTONS)), np.uint8),
               "camera": np.zeros((envs, steps, 2), np.int64),
               "segment": np.zeros((envs, steps), np.int64),
               "reward": np.zeros((envs, steps), np.float32),
               "done": np.zeros((envs, steps), bool)}
        for i in range(envs):
            actor = LearnedNavigator(weights=weights)
            actor.reset(self.rng, self.state[i]["camera"])
            segment = t = 0
            while t < steps:
                state = self.state[i]
                taken, reached = self._walk(state, actor, out, i, t, segment)
                t += taken
                if reached or state["goal_steps"] >= ppo.max_goal_steps:
                    out["done"][i, t - 1] = True
                    self.successes += int(reached)
                    self._end_goal(i)
                    segment += 1
                    if self.state[i] is not state:  # a new world: a new camera
                        actor.reset(self.rng, self.state[i]["camera"])
        return out

    def _walk(self, state: dict, actor, out: dict[str, np.ndarray], i: int, first: int,
              segment: int) -> tuple[int, bool]:
        """Walk toward the goal of environment ``i`` from its rollout step ``first`` until it is
        reached, the goal's steps are spent or the rollout's: its recorder keeps the policy's
        steps in ``out`` (rows ``first, first + 1, ...``) with their rewards. Returns the steps
        taken and whether the goal was reached."""
        goal, recorder = state["goal"], state["recorder"]
        recorder.begin(out, i, first, segment, state)
        state["driver"].run(lambda view, _: Decision(actor.act(view, goal), goal=goal),
                            until=lambda _: recorder.reached, steps=min(
                                self.ppo.steps - first,
                                self.ppo.max_goal_steps - state["goal_steps"]))
        return recorder.t - first, state["distance"] <= 3.0

    def close(self) -> None:
        for state in self.state:
            state["driver"].env.close()


def log_prob(buttons, camera, taken_buttons, taken_camera):
    """Log-probability of the taken action (buttons' Bernoullis and camera axes' categoricals)."""
    from torch.nn import functional

    pressed = taken_buttons.float()
    button_logp = -functional.binary_cross_entropy_with_logits(buttons, pressed,
                                                               reduction="none").sum(-1)
    camera_logp = functional.log_softmax(camera, -1).gather(
        -1, taken_camera.unsqueeze(-1)).squeeze(-1).sum(-1)
    return button_logp + camera_logp


def kl_to(buttons, camera, reference_buttons, reference_camera):
    """Mean KL divergence of the policy's action distribution from the reference's (summed over
    the buttons' Bernoullis and the camera axes' categoricals)."""
    import torch
    from torch.nn import functional

    p, q = torch.sigmoid(buttons), torch.sigmoid(reference_buttons)
    eps = 1e-6
    bernoulli = (p * (torch.log(p + eps) - torch.log(q + eps))
                 + (1 - p) * (torch.log(1 - p + eps) - torch.log(1 - q + eps))).sum(-1)
    log_p, log_q = functional.log_softmax(camera, -1), functional.log_softmax(reference_camera, -1)
    categorical = (log_p.exp() * (log_p - log_q)).sum((-1, -2))
    return (bernoulli + categorical).mean()


def entropy(buttons, camera):
    import torch
    from torch.nn import functional

    p = torch.sigmoid(buttons)
    button = -(p * functional.logsigmoid(buttons) + (1 - p) * functional.logsigmoid(-buttons))
    log_q = functional.log_softmax(camera, -1)
    return button.sum(-1) + -(log_q.exp() * log_q).sum((-1, -2))


def advantages(reward: np.ndarray, done: np.ndarray, value: np.ndarray, gamma: float,
               lam: float) -> tuple[np.ndarray, np.ndarray]:
    """GAE advantages and returns per environment (``[envs, steps]``); a segment's end is
    terminal, the rollout's end bootstraps from the last value."""
    adv = np.zeros_like(reward)
    running = np.zeros(reward.shape[0], np.float32)
    for t in reversed(range(reward.shape[1])):
        following = value[:, t + 1] if t + 1 < reward.shape[1] else value[:, t]
        live = 1.0 - done[:, t]
        delta = reward[:, t] + gamma * following * live - value[:, t]
        running = delta + gamma * lam * live * running
        adv[:, t] = running
    return adv, adv + value


def clipped_policy_loss(logp, old_logp, advantage, clip: float):
    """PPO's clipped surrogate objective, negated (a loss), over a minibatch of steps."""
    ratio = (logp - old_logp).exp()
    return -(ratio * advantage).minimum(ratio.clamp(1 - clip, 1 + clip) * advantage).mean()


def ppo_finetune(model, foundation, trainable, architecture, kl: float, ppo: PPOConfig,
                 worlds: tuple[str, ...], goals_per_world: int, across_water: float, seed: int,
                 export: Callable, say: Callable[[str], None], history: list[dict],
                 progress: bool = True, shares: tuple[float, ...] | None = None) -> None:
    """Run ``ppo.iterations`` PPO iterations on ``model`` (in place), the ``worlds`` drawn with
    ``shares`` (:func:`~mrsteve.train.episodes.draw_world`)."""
    import torch
    from torch import nn
    from tqdm import tqdm

    torch.manual_seed(seed)
    value_head = nn.Linear(architecture.dim, 1)
    optimiser = torch.optim.Adam([*trainable, *value_head.parameters()], lr=ppo.learning_rate)
    walks = GoalWalks(worlds, ppo, goals_per_world, np.random.default_rng([seed, 7]),
                      across_water, shares)
    coefficient = kl
    try:
        for iteration in tqdm(range(ppo.iterations), disable=not progress, unit="iteration",
                              leave=False, desc="PPO"):
            model.eval()
            data = walks.rollout(export(model))
            tensors = {name: torch.from_numpy(value) for name, value in data.items()}
            inputs = (tensors["rgb"], tensors["goal"], tensors["segment"])
            with torch.no_grad():
                x = model.trunk(*inputs)
                old_logp = log_prob(*model.head(x), tensors["buttons"], tensors["camera"])
                value = value_head(model.head.norm(x)).squeeze(-1).numpy()
                reference = foundation(*inputs) if coefficient > 0 else None
            adv, returns = advantages(data["reward"], data["done"], value, ppo.gamma,
                                      ppo.gae_lambda)
            adv = (adv - adv.mean()) / (adv.std() + 1e-8)
            adv_t, returns_t = torch.from_numpy(adv), torch.from_numpy(returns)
            model.train()
            rng = np.random.default_rng([seed, iteration])
            for _ in range(ppo.epochs):
                for envs in np.array_split(rng.permutation(ppo.envs), ppo.minibatches):
                    index = torch.from_numpy(envs)
                    x = model.trunk(*(t[index] for t in inputs))
                    buttons, camera = model.head(x)
                    logp = log_prob(buttons, camera, tensors["buttons"][index],
                                    tensors["camera"][index])
                    policy_loss = clipped_policy_loss(logp, old_logp[index], adv_t[index],
                                                      ppo.clip)
                    value_loss = ((value_head(model.head.norm(x)).squeeze(-1)
                                   - returns_t[index]) ** 2).mean()
                    loss = (policy_loss + ppo.value_weight * value_loss
                            - ppo.entropy_weight * entropy(buttons, camera).mean())
                    if reference is not None:
                        loss = loss + coefficient * kl_to(buttons, camera, reference[0][index],
                                                          reference[1][index])
                    optimiser.zero_grad()
                    loss.backward()
                    nn.utils.clip_grad_norm_([*trainable, *value_head.parameters()], 0.5)
                    optimiser.step()
            coefficient *= ppo.kl_decay
            row = {"stage": "ppo", "epoch": iteration + 1,
                   "reward": float(data["reward"].sum() / ppo.envs),
                   "reached": walks.successes / max(walks.ended, 1)}
            history.append(row)
            if (iteration + 1) % 10 == 0 or iteration + 1 == ppo.iterations:
                say(f"PPO iteration {iteration + 1}: reward per environment "
                    f"{row['reward']:.1f}, goals reached so far {row['reached']:.0%}")
    finally:
        walks.close()


__all__ = ["GoalWalks", "PPOConfig", "advantages", "clipped_policy_loss", "entropy", "kl_to",
           "log_prob", "ppo_finetune"]
