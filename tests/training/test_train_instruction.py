"""Training the learned instruction policy (torch): trajectories of the scripted skills,
STEVE-1's packed hindsight relabelling, a tiny run that lowers the loss and resumes, and numpy
inference matching torch."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from mrsteve.control.instruction import (
    INSTRUCTION_BUTTONS,
    InstructionArchitecture,
    InstructionNet,
    load_instruction_weights,
    load_shipped_instruction_policy,
)
from mrsteve.control.learned_navigator import CAMERA_BINS
from mrsteve.train.instruction import (
    INSTRUCTION_WORLDS,
    InstructionTrainingConfig,
    Trajectories,
    build_instruction_policy,
    collect_episodes,
    export_weights,
    prompts,
    relabel,
    train_instruction_policy,
)

TINY = InstructionTrainingConfig(episodes=10, episode_steps=80, epochs=3, dagger_rounds=1,
                                 dagger_episodes=2, dagger_steps=4, prior_steps=30,
                                 prior_holdout=0.5, validation_episodes=2, validation_steps=60,
                                 validation_guidance=(1.0, 3.0),
                                 validation_camera_guidance=(None,), sequence=16, batch=6,
                                 learning_rate=2e-3, workers=1)


class StartsAfresh(Exception):
    """Raised by :func:`stop_if_afresh`: the run said it would start afresh."""


def stop_if_afresh(line: str) -> None:
    """A ``say`` that stops a training run where it says it starts afresh (before it trains or
    writes anything), so that a test sees the decision without paying for the training."""
    if "another configuration" in line:
        raise StartsAfresh(line)


def test_training_worlds_are_not_evaluation_maps():
    from mrsteve.eval.instruction import InstructionTaskConfig

    assert InstructionTaskConfig().world not in INSTRUCTION_WORLDS
    assert not {"map1", "map2", "map3", "plains"} & set(INSTRUCTION_WORLDS)


def trajectories(lengths: list[int]) -> Trajectories:
    n = sum(lengths)
    return Trajectories(np.zeros((n, 2, 2, 3), np.uint8), np.zeros((n, 4), np.float32),
                        np.zeros((n, len(INSTRUCTION_BUTTONS)), np.uint8),
                        np.zeros((n, 2), np.int8),
                        np.repeat(np.arange(len(lengths)), lengths).astype(np.int32),
                        np.zeros(n, bool), np.zeros(len(lengths), np.int16))


def test_relabelled_goals_lie_ahead_in_the_same_episode_within_the_window():
    data = trajectories([500, 40, 260])
    goal = relabel(data, np.random.default_rng(0), (15, 200))
    steps = np.arange(len(goal))
    assert np.all(data.segment[goal] == data.segment)  # the same trajectory
    assert np.all(goal >= steps)
    ends = {s: np.flatnonzero(data.segment == s).max() for s in range(3)}
    last = np.array([ends[s] for s in data.segment])
    # packed: a goal is 15-200 steps after the first step it serves, or the episode's last step
    first = np.r_[True, goal[1:] != goal[:-1]]
    ahead = goal[first] - steps[first]
    assert np.all(((ahead >= 15) & (ahead <= 200)) | (goal[first] == last[first]))
    assert np.all(goal - steps <= 200)
    assert len(np.unique(goal[data.segment == 0])) >= 3  # several goals along a long episode


def test_relabelled_goals_can_stop_where_the_item_arrived():
    data = trajectories([500, 300])
    data.success[[120, 130, 650]] = True
    plain = relabel(data, np.random.default_rng(0), (15, 200))
    goal = relabel(data, np.random.default_rng(0), (15, 200), success_goals=True)
    assert np.all(data.segment[goal] == data.segment) and np.all(goal >= np.arange(len(goal)))
    for moment in (120, 130, 650):  # each success is the goal of the steps just before it
        assert goal[moment] == moment and goal[moment - 1] == moment
    assert not np.array_equal(plain, goal)  # the plain draw ignores the successes


def test_episodes_are_cloned_up_to_their_last_success_and_failed_ones_whole():
    data = trajectories([10, 6, 8])
    data.success[[3, 7, 19]] = True  # episode 0 succeeds twice, episode 1 never, 2 at its 3rd step
    data.rgb[:, 0, 0, 0] = np.arange(len(data.rgb))  # each step's frame marks the step
    kept = data.until_last_success()
    assert kept.rgb[:, 0, 0, 0].tolist() == [*range(8), *range(10, 16), *range(16, 20)]
    assert kept.segment.tolist() == [0] * 8 + [1] * 6 + [2] * 4
    assert kept.success.sum() == 3 and kept.success[-1]  # every success is kept
    assert np.array_equal(kept.prompt, data.prompt)
    assert np.array_equal(kept.episode_success(), data.episode_success())


def test_trajectories_are_the_scripted_skills_steps_and_their_successes():
    data = collect_episodes(TINY, seed=1, episodes=3, first=0)
    assert data.rgb.shape == (3 * TINY.episode_steps, 40, 64, 3)
    assert data.embedding.shape == (len(data.rgb), 128)
    np.testing.assert_allclose(np.linalg.norm(data.embedding, axis=1), 1.0, atol=1e-4)
    assert data.segment.tolist() == sorted(data.segment.tolist())
    assert data.buttons.shape[1] == len(INSTRUCTION_BUTTONS) and data.buttons.max() <= 1
    assert [prompts()[p] for p in data.prompt] == ["cut a tree", "break leaves",
                                                   "get water bucket"]  # the item rotation
    assert data.buttons[:, INSTRUCTION_BUTTONS.index("attack")].any()


def test_dagger_rounds_train_their_steps_under_the_goal_their_policy_was_given():
    """After a DAgger round, a batch's sequences from the round carry their prompt's goal (the
    prior's, what the policy acted with) or none (dropped), and the cloned ones the relabelled
    clip of a later step of their own episode; the share of each is the configured one."""
    from mrsteve.train.instruction import _dagger_round

    class Recorder(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.scale = torch.nn.Parameter(torch.ones(1))
            self.batches = []

        def forward(self, rgb, goal, segment):
            self.batches.append((rgb.numpy().copy(), goal.numpy().copy()))
            batch, length = rgb.shape[:2]
            return (self.scale * torch.zeros(batch, length, len(INSTRUCTION_BUTTONS)),
                    self.scale * torch.zeros(batch, length, 2, CAMERA_BINS))

    cloned = trajectories([300, 250])
    cloned.embedding = np.random.default_rng(0).normal(size=(550, 4)).astype(np.float32)
    walked = trajectories([40, 70, 30])
    walked.prompt = np.array([2, 0, 5], np.int16)
    walked.rgb[:, 0, 0, 0] = 1  # the round's frames are marked
    walked.rgb[:, 0, 0, 1] = walked.segment
    goals = np.arange(1, 1 + len(prompts()) * 4, dtype=np.float32).reshape(-1, 4)
    config = dataclasses.replace(TINY, dagger_steps=30, batch=8, dagger_share=0.25)
    model = Recorder()
    _dagger_round(model, torch.optim.SGD(model.parameters(), lr=0.1), cloned, [walked], goals,
                  config, 1, progress=False)
    dropped = 0
    for rgb, goal in model.batches:
        own = rgb[:, 0, 0, 0, 0] == 1
        assert own.sum() == 2  # a quarter of 8
        for row in np.flatnonzero(own):
            episodes = rgb[row, :, 0, 0, 1]
            expected = goals[walked.prompt[episodes]]
            dropped += not goal[row].any()
            assert not goal[row].any() or np.array_equal(goal[row], expected)
        for row in np.flatnonzero(~own):
            for vector in goal[row]:
                if vector.any():  # a clip of the cloned steps
                    assert (cloned.embedding == vector).all(axis=1).any()
    assert 0 < dropped < 30  # the goal is dropped now and then, as in the cloning


def test_dagger_episodes_are_the_policys_own_labelled_and_end_at_the_first_success():
    config = dataclasses.replace(TINY, near_share=1.0, episode_steps=200)
    data = collect_episodes(config, seed=3, episodes=3, first=8,  # seeds, dirt, logs
                            weights=load_shipped_instruction_policy(), guidance=1.0)
    assert data.embedding.shape == (len(data.rgb), 0)  # their goal is their prompt's
    lengths = np.bincount(data.segment)
    for episode, length in enumerate(lengths):
        steps = np.flatnonzero(data.segment == episode)
        successes = np.flatnonzero(data.success[steps])
        assert successes.tolist() in ([], [length - 1])  # over at the first success
        assert successes.size or length == config.episode_steps
    assert data.episode_success().any()


def test_nudges_push_the_view_off_and_record_the_skills_levelling_it_again():
    """DART-style nudges: the camera's pitch is pushed off for a few steps while the skills'
    own labels are recorded, so the data holds their corrections; the data's key tells the
    runs apart, and a run without nudges keeps the key it had before nudges existed."""
    plain = dataclasses.replace(TINY, nudge_rate=0.0)
    nudged = dataclasses.replace(TINY, nudge_rate=0.25)
    level = CAMERA_BINS // 2
    turned = [np.mean(collect_episodes(config, seed=1, episodes=2, first=0).camera[:, 0] != level)
              for config in (plain, nudged)]
    assert turned[1] > turned[0] + 0.05
    assert plain.data_key() != nudged.data_key() != TINY.data_key()
    assert dataclasses.replace(plain, nudge_steps=3).data_key() == plain.data_key()
    with pytest.raises(ValueError, match="nudge_rate"):
        InstructionTrainingConfig(nudge_rate=1.0)


def test_a_tiny_run_lowers_the_loss_writes_weights_and_resumes(tmp_path):
    result = train_instruction_policy(tmp_path, TINY, progress=False, say=lambda line: None)
    losses = [row["loss"] for row in result.history if row["stage"] == "cloning"]
    assert len(losses) == TINY.epochs and losses[-1] < losses[0]
    assert any(row["stage"] == "dagger-1" for row in result.history)
    weights = load_instruction_weights(tmp_path / "instruction.npz")
    assert weights.sha256 == result.weights.sha256
    assert set(weights.info["prior"]) >= {"cosine_same_prompt", "cosine_other_prompts"}
    assert set(weights.info["validation"]) == {"1.0", "3.0"}
    assert weights.info["guidance"] in (1.0, 3.0)  # the validated scale is the default
    assert weights.info["camera_guidance"] is None  # every head alike unless a camera scale won
    assert (tmp_path / "curve.png").stat().st_size > 0
    assert json.loads((tmp_path / "history.json").read_text()) == result.history
    again = train_instruction_policy(tmp_path, TINY, progress=False, say=lambda line: None)
    assert again.weights.sha256 == result.weights.sha256  # resumed at the end: nothing redone
    assert again.seconds >= result.history[-1]["seconds"]  # time summed over the resumed runs
    revalidated = dataclasses.replace(TINY, threads=1, validation_guidance=(3.0,),
                                      validation_camera_guidance=(None, 1.0))
    lines = []
    third = train_instruction_policy(tmp_path, revalidated, progress=False, say=lines.append)
    assert not any("another configuration" in line for line in lines)  # not trained again
    assert any(line.startswith("validation, guidance 3, camera 1") for line in lines)
    assert set(third.weights.info["validation"]) == {"3.0", "3.0, camera 1.0"}
    assert third.weights.info["training"] == revalidated.recipe()
    for name, value in result.weights.parameters.items():
        np.testing.assert_array_equal(third.weights.parameters[name], value)
    assert [row["stage"] for row in third.history].count("validation") == 1
    more = dataclasses.replace(TINY, dagger_rounds=2)  # a finished run goes on with more rounds
    lines = []
    extended = train_instruction_policy(tmp_path, more, progress=False, say=lines.append)
    assert not any("another configuration" in line for line in lines)
    assert [line.split(":")[0] for line in lines if line.startswith("DAgger")] == [
        "DAgger round 2", "DAgger round 2"]  # the policy's episodes, then the training
    assert [row["stage"] for row in extended.history].count("validation") == 1
    assert extended.history[-1]["stage"] == "validation"  # validated again, after round 2
    assert extended.weights.sha256 != result.weights.sha256
    fresh = train_instruction_policy(tmp_path / "fresh", more, progress=False, say=lambda _: None)
    for name, value in fresh.weights.parameters.items():  # as if it had had them from the start
        np.testing.assert_array_equal(extended.weights.parameters[name], value)
    for other in (dataclasses.replace(TINY, dagger_rounds=0),  # rounds are never undone
                  dataclasses.replace(TINY, epochs=4)):
        with pytest.raises(StartsAfresh):  # stopped as it says so, before it trains
            train_instruction_policy(tmp_path, other, progress=False, say=stop_if_afresh)


def test_the_image_encoder_and_core_start_from_the_foundation(tmp_path):
    from mrsteve.control.learned_navigator import load_shipped_navigator
    from mrsteve.train.instruction import foundation_weights

    foundation = foundation_weights(TINY)
    assert foundation.sha256 == load_shipped_navigator().sha256
    model = build_instruction_policy(InstructionArchitecture())
    state = {k: torch.from_numpy(v) for k, v in foundation.parameters.items()
             if k.startswith(("image.", "core."))}
    missing = model.load_state_dict(state, strict=False).missing_keys
    assert missing and all(name.startswith(("goal.", "head.", "prior.")) for name in missing)


def test_numpy_inference_matches_torch():
    architecture = InstructionArchitecture(channels=(4, 8), strides=(2, 2), dim=32, context=4,
                                           heads=4, mlp_dim=48, goal_dim=8, text_dim=8,
                                           prior_hidden=16)
    torch.manual_seed(0)
    model = build_instruction_policy(architecture)
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.add_(torch.randn_like(parameter) * 0.2)
    rng = np.random.default_rng(0)
    steps = 9  # more than the context: the ring wraps
    rgb = rng.integers(0, 256, (1, steps, 40, 64, 3), dtype=np.uint8)
    goal = np.repeat(rng.normal(size=(1, 1, 8)).astype(np.float32), steps, axis=1)
    text = rng.normal(size=8).astype(np.float32)
    with torch.no_grad():
        buttons, camera = model(torch.from_numpy(rgb), torch.from_numpy(goal),
                                torch.zeros(1, steps, dtype=torch.int32))
        prior = torch.nn.functional.normalize(model.prior(torch.from_numpy(text)), dim=-1)
    net = InstructionNet(export_weights(model, architecture, {}))
    for t in range(steps):
        step_buttons, step_camera = net.step(rgb[0, t], goal[0, t], 1.0)
        np.testing.assert_allclose(step_buttons, buttons[0, t].numpy(), atol=1e-4)
        np.testing.assert_allclose(step_camera, camera[0, t].numpy(), atol=1e-4)
    np.testing.assert_allclose(net.prior(text), prior.numpy(), atol=1e-5)


def test_bad_settings_are_refused_with_the_accepted_values():
    with pytest.raises(ValueError, match="goal_offsets"):
        InstructionTrainingConfig(goal_offsets=(20, 10))
    with pytest.raises(ValueError, match="episodes must be at least 1"):
        InstructionTrainingConfig(episodes=0)
    with pytest.raises(ValueError, match="goal_dropout"):
        InstructionTrainingConfig(goal_dropout=1.0)
    with pytest.raises(ValueError, match="camera scales: >= 0 or None"):
        InstructionTrainingConfig(validation_camera_guidance=(None, -1.0))
    with pytest.raises(ValueError, match="far_share <= 1 - near_share"):
        InstructionTrainingConfig(near_share=0.75, far_share=0.5)
    with pytest.raises(ValueError, match="far_distance"):
        InstructionTrainingConfig(far_share=0.25, far_distance=(40.0, 20.0))


def test_search_and_jitter_settings_enter_the_recipe_only_when_used():
    """Weights trained before the far starts and the colour jitter existed keep the recipe
    they recorded; a recipe with far starts renders other data, one with jitter does not."""
    assert not {"far_share", "far_distance", "dagger_far_share", "colour_jitter"} & set(
        TINY.recipe())
    searching = dataclasses.replace(TINY, far_share=0.25, dagger_far_share=0.5,
                                    colour_jitter=0.35)
    assert searching.recipe()["far_share"] == 0.25 and searching.recipe()["colour_jitter"] == 0.35
    assert searching.data_key() != TINY.data_key()
    assert dataclasses.replace(TINY, dagger_far_share=0.5,
                               colour_jitter=0.35).data_key() == TINY.data_key()


def test_colour_jitter_scales_each_sequences_channels_alike_over_its_frames():
    from mrsteve.train.layers import jitter_colours

    rgb = np.random.default_rng(0).integers(20, 100, (4, 3, 5, 6, 3), dtype=np.uint8)
    assert jitter_colours(rgb, np.random.default_rng(1), 0.0) is rgb
    jittered = jitter_colours(rgb, np.random.default_rng(1), 0.35)
    assert jittered.dtype == np.uint8 and jittered.shape == rgb.shape
    gains = jittered.astype(float) / rgb
    per_sequence = gains.reshape(4, -1, 3)
    assert np.ptp(per_sequence, axis=1).max() < 0.06  # one gain per channel (uint8 rounding)
    assert np.ptp(per_sequence.mean(axis=1), axis=0).max() > 0.05  # sequences differ
    assert 0.49 < gains.min() and gains.max() < 2.02  # exp(-0.7) .. exp(0.7)
    np.testing.assert_array_equal(jitter_colours(rgb, np.random.default_rng(1), 0.35), jittered)


def two_episodes(got: bool) -> Trajectories:
    """Two one-step episodes of the first two prompts, the first getting its item if ``got``:
    what a faked :func:`collect` returns to :func:`validate`."""
    return Trajectories(np.zeros((2, 1, 1, 3), np.uint8), np.zeros((2, 1), np.float32),
                        np.zeros((2, 7), np.uint8), np.zeros((2, 2), np.int8),
                        np.array([0, 1], np.int32), np.array([got, False], bool),
                        np.arange(2, dtype=np.int16))


def test_validation_starts_near_a_target_and_runs_the_validation_steps(monkeypatch):
    """The guidance scale is picked the way MrSteve's Execute mode calls the policy: episodes
    started near a target, on seeds the training did not render."""
    import mrsteve.train.instruction as training

    calls = []

    def fake_collect(config, seed, episodes, weights=None, guidance=None, camera_guidance=None):
        calls.append((config, seed, episodes, guidance))
        return two_episodes(got=guidance == 3.0)

    monkeypatch.setattr(training, "collect", fake_collect)
    lines = []
    success = training.validate(TINY, weights=None, say=lines.append)
    assert success == {"1.0": 0.0, "3.0": 0.5}
    first, second = prompts()[:2]  # each line gives the share per prompt too
    assert lines[1].endswith(f"({first} 100%, {second} 0%)")
    assert [guidance for *_, guidance in calls] == list(TINY.validation_guidance)
    for config, seed, episodes, _ in calls:
        assert config.near_share == 1.0 and config.episode_steps == TINY.validation_steps
        assert seed != TINY.seed and episodes == TINY.validation_episodes


def test_validation_tries_each_camera_scale_at_each_scale_and_ships_the_best(monkeypatch):
    """The camera head's scale is picked as the keys' is, on the same fresh-seed episodes, and
    stored with the weights (``None``: the keys' scale)."""
    import mrsteve.train.instruction as training

    config = dataclasses.replace(TINY, validation_camera_guidance=(None, 1.0))
    calls = []

    def fake_collect(config, seed, episodes, weights=None, guidance=None, camera_guidance=None):
        calls.append((seed, guidance, camera_guidance))
        return two_episodes(got=(guidance, camera_guidance) == (3.0, 1.0))

    monkeypatch.setattr(training, "collect", fake_collect)
    success = training.validate(config, weights=None, say=lambda line: None)
    # camera 1 at keys 1 is every head alike: run once
    assert success == {"1.0": 0.0, "3.0": 0.0, "3.0, camera 1.0": 0.5}
    assert [(g, c) for _, g, c in calls] == [(1.0, None), (3.0, None), (3.0, 1.0)]
    assert len({seed for seed, *_ in calls}) == 1  # the same episodes for every set-up
    assert [name for name, *_ in training.validation_setups(config)] == list(success)
    assert training.best_setup(config, success) == (3.0, 1.0)
    assert training.best_setup(config, {**success, "1.0": 0.5}) == (1.0, None)  # ties: lower
    assert training.best_setup(TINY, {}) == (TINY.guidance, None)  # none validated
    alike = dataclasses.replace(TINY, validation_guidance=(1.0,), validation_camera_guidance=(1.0,))
    assert training.validation_setups(alike) == [("1.0", 1.0, None)]
    assert config.recipe()["validation_camera_guidance"] == (None, 1.0)
    assert "validation_camera_guidance" not in TINY.recipe()  # as weights before it recorded



def test_log_episodes_can_start_at_cut_trees_and_the_recipe_says_so_only_then():
    """With cut_tree_share 1 every log episode's world has its trees cut (the skills still get
    the log: they are the teacher); other items' episodes and recipes without it are as before."""
    longer = dataclasses.replace(TINY, episode_steps=300)
    cutting = dataclasses.replace(longer, cut_tree_share=1.0)
    assert "cut_tree_share" not in longer.recipe() and cutting.recipe()["cut_tree_share"] == 1.0
    assert cutting.data_key() != longer.data_key()
    whole = collect_episodes(longer, seed=1, episodes=2, first=0)
    cut = collect_episodes(cutting, seed=1, episodes=2, first=0)
    assert [prompts()[p] for p in cut.prompt] == ["cut a tree", "break leaves"]
    first = cut.segment == cut.segment[0]
    assert not np.array_equal(cut.rgb[first][0], whole.rgb[whole.segment == whole.segment[0]][0])
    np.testing.assert_array_equal(cut.rgb[~first], whole.rgb[whole.segment != whole.segment[0]])
    assert cut.episode_success()[0] and whole.episode_success()[0]
    with pytest.raises(ValueError, match="cut_tree_share must be in"):
        InstructionTrainingConfig(cut_tree_share=1.5)
