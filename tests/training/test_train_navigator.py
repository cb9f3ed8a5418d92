"""Training the learned navigator (torch): demonstrations from the depth navigator, a tiny run
that lowers the loss and resumes, and numpy inference matching torch."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from mrsteve.control.learned_navigator import (
    BUTTONS,
    CAMERA_BINS,
    CONDITIONING,
    NavigatorArchitecture,
    NavigatorPolicy,
    load_navigator_weights,
    load_shipped_navigator,
)
from mrsteve.train.navigator import (
    NAVIGATOR_WORLDS,
    TRAINING_WORLDS,
    NavigatorTrainingConfig,
    PitchNudges,
    TurnHold,
    annealed_rate,
    build_policy,
    collect,
    collect_segments,
    export_weights,
    kl_to,
    prepare_finetuning,
    train_navigator,
)
from mrsteve.train.navigator_give_up import (
    GOAL_KINDS,
    GiveUpWalks,
    calibrate_give_up_head,
    fit_give_up_head,
    pick_give_up_goal,
    walks_key,
)
from mrsteve.train.navigator_ppo import PPOConfig, advantages

TINY = NavigatorTrainingConfig(segments=12, goals_per_world=6, max_segment_steps=120,
                               foundation_epochs=3, finetune_epochs=2, dagger_rounds=1,
                               dagger_segments=3, dagger_epochs=1, anneal_epochs=1,
                               sequence=16, batch=6, learning_rate=3e-3, workers=1, dim=32,
                               context=4, validation_segments=2, ppo=PPOConfig(iterations=0),
                               give_up_goals=0)


def test_pitch_nudges_turn_the_view_in_place_of_the_teacher_and_keep_its_yaw_and_keys():
    label = {"forward": 1, "jump": 0, "camera": np.array([0.0, 7.0], np.float32)}
    rng = np.random.default_rng(0)
    up = PitchNudges(0.5, 3, 10.0, up_share=1.0)
    taken = [up(label, rng) for _ in range(200)]
    pitches = np.array([float(action["camera"][0]) for action in taken])
    assert set(pitches.tolist()) == {0.0, -10.0} and (pitches < 0).mean() > 0.5  # only up
    assert all(action["forward"] == 1 and action["camera"][1] == 7.0 for action in taken)
    assert label["camera"][0] == 0.0  # the teacher's label is left as it was
    both = [float(PitchNudges(0.5, 3, 10.0)(label, np.random.default_rng(s))["camera"][0])
            for s in range(200)]
    assert {-10.0, 10.0} <= set(both)
    state = rng.bit_generator.state
    assert PitchNudges(0.0, 3, 10.0)(label, rng) is label and rng.bit_generator.state == state
    for bad in ({"rate": 1.0}, {"steps": 0}, {"degrees": 0.0}, {"up_share": 1.5}):
        settings = {"rate": 0.1, "steps": 3, "degrees": 10.0, **bad}
        with pytest.raises(ValueError, match="nudge_rate"):
            PitchNudges(**settings)


def test_nudged_demonstrations_hold_the_depth_navigator_levelling_views_of_the_sky():
    """The navigator's nudges turn the view up only (toward the sky, the views a drifting policy
    cannot steer back from); every step pitched up records the depth navigator turning it back
    down."""
    pitch = {}
    for rate in (0.0, 0.1):
        data = collect_segments(dataclasses.replace(TINY, nudge_rate=rate), seed=5, segments=3)
        pitch[rate] = np.degrees(np.arctan2(data.goal[:, 5], data.goal[:, 4]))
        if rate:
            up = pitch[rate] < -15
            assert up.any() and (data.camera[up, 0] > CAMERA_BINS // 2).all()
    assert pitch[0.0].min() > -15 and pitch[0.1].min() < -40
    assert pitch[0.1].max() < 20  # never pushed down
    # without nudges (the default) the data key and the recorded recipe are those of before
    nudged = dataclasses.replace(TINY, nudge_rate=0.1)
    assert TINY.nudge_rate == 0 and nudged.data_key() != TINY.data_key()
    assert dataclasses.replace(TINY, nudge_steps=3).data_key() == TINY.data_key()
    assert "nudge_rate" not in TINY.recipe() and nudged.recipe()["nudge_rate"] == 0.1


def test_the_expert_maps_each_segment_afresh_when_its_map_lasts_a_segment(monkeypatch):
    """With ``expert_map="segment"`` the depth navigator starts every goal with an empty height
    map (what the policy, whose memory starts afresh at each goal, can know); by default it keeps
    the map of the world's earlier goals."""
    from mrsteve.control.navigation import DepthNavigator

    act = DepthNavigator.act

    def recording_act(self, obs, goal_xz):
        if (id(self), tuple(goal_xz)) not in seen:
            seen[(id(self), tuple(goal_xz))] = self.map is None
        return act(self, obs, goal_xz)

    monkeypatch.setattr(DepthNavigator, "act", recording_act)
    empty_at_start = {}
    for expert_map in ("world", "segment"):
        seen = {}
        config = dataclasses.replace(TINY, expert_map=expert_map)
        data = collect_segments(config, seed=5, segments=3)
        assert len(data.reached) == 3
        empty_at_start[expert_map] = list(seen.values())
    assert empty_at_start == {"world": [True, False, False], "segment": [True, True, True]}
    # the default keeps the data key and the recorded recipe of the weights made before it
    segment = dataclasses.replace(TINY, expert_map="segment")
    assert segment.data_key() != TINY.data_key() and "expert_map" not in TINY.recipe()
    assert segment.recipe()["expert_map"] == "segment"
    with pytest.raises(ValueError, match="expert_map must be one of world, segment"):
        dataclasses.replace(TINY, expert_map="episode")


def test_training_worlds_are_not_the_navigation_terrains():
    from mrsteve.eval.navigation import TERRAINS

    assert set(TRAINING_WORLDS) < set(NAVIGATOR_WORLDS)
    assert not set(NAVIGATOR_WORLDS) & set(TERRAINS.values())


def test_the_worlds_chosen_are_where_it_learns_and_the_default_is_not_recorded(monkeypatch):
    """Demonstrations come from the chosen worlds alone; the shipped recipe's worlds stay out of
    the recipe and the data key, so the runs made before keep theirs."""
    from mrsteve.train import episodes

    drawn, make_env = [], episodes.make_env
    monkeypatch.setattr(episodes, "make_env",
                        lambda world, **kw: drawn.append(world) or make_env(world=world, **kw))
    forest = dataclasses.replace(TINY, worlds="nav_forest")
    assert "worlds" not in TINY.recipe() and forest.recipe()["worlds"] == "nav_forest"
    assert forest.data_key() != TINY.data_key()
    collect_segments(forest, seed=5, segments=2)
    assert drawn and set(drawn) == {"nav_forest"}
    with pytest.raises(ValueError, match="unknown training world 'flat'; known: nav_meadow, "
                                         "nav_crags, nav_stream, nav_forest, nav_desert"):
        dataclasses.replace(TINY, worlds="flat")
    with pytest.raises(ValueError, match="'nav_forest' is given twice"):
        dataclasses.replace(TINY, worlds="nav_forest,nav_forest")


def test_world_weights_set_how_often_each_world_is_drawn_and_only_when_given(monkeypatch):
    """``world_weights`` draws the worlds in proportion, and reach the draws of the segments
    (demonstrations, DAgger walks and validation alike); without them the draws are the uniform
    ones made before weights existed, and neither the recipe nor the data key records them.
    Weights that are not one positive number per world are refused with the accepted form."""
    from mrsteve.train import episodes, navigator

    weighted = dataclasses.replace(TINY, worlds="nav_meadow,nav_stream", world_weights="1,3")
    assert weighted.world_shares == (0.25, 0.75)
    assert weighted.recipe()["world_weights"] == "1,3"
    assert weighted.data_key() != dataclasses.replace(weighted, world_weights="").data_key()
    assert TINY.world_shares is None and "world_weights" not in TINY.recipe()

    class Drawn(Exception):
        """Ends a draw before its world is built."""

    drawn = []

    def record(world, **_):
        drawn.append(world)
        raise Drawn

    def draws(worlds, rng, shares, count):
        drawn.clear()
        for _ in range(count):
            with pytest.raises(Drawn):
                episodes.draw_world(worlds, rng, shares=shares)
        return list(drawn)

    def worlds_of_segments(worlds, rng, *, callbacks, shares):
        drawn.append(shares)
        raise Drawn

    monkeypatch.setattr(navigator, "training_worlds", worlds_of_segments)
    drawn.clear()
    with pytest.raises(Drawn):
        collect_segments(weighted, seed=5, segments=1)
    assert drawn == [(0.25, 0.75)]

    monkeypatch.setattr(episodes, "make_env", record)
    for shares, expected in ((weighted.world_shares, 0.75), (None, 0.5)):
        names = draws(weighted.world_names, np.random.default_rng(0), shares, 400)
        assert abs(names.count("nav_stream") / 400 - expected) < 0.07
    uniform = np.random.default_rng(0)
    assert draws(TRAINING_WORLDS, np.random.default_rng(0), None, 1) == [
        TRAINING_WORLDS[int(uniform.integers(len(TRAINING_WORLDS)))]]

    for bad in ("1", "1,2,3", "1,0", "1,-2", "1,x", "1,inf"):
        with pytest.raises(ValueError, match=r"world_weights takes one positive number per "
                                             r"training world, comma-separated in their order "
                                             r"\(nav_meadow, nav_stream\); got"):
            dataclasses.replace(weighted, world_weights=bad)


def _standing_policy(yaw_bin: int = CAMERA_BINS // 2) -> object:
    """Untrained weights whose policy presses nothing and keeps its view's pitch, its yaw
    turning by camera bin ``yaw_bin`` every step (by default still)."""
    architecture = NavigatorArchitecture(channels=(4, 8), strides=(2, 2), dim=32, context=4,
                                         heads=4, mlp_dim=48, goal_hidden=16)
    torch.manual_seed(0)
    weights = export_weights(build_policy(architecture), architecture, {})
    camera_bias = np.full((2, CAMERA_BINS), -20.0, np.float32)
    camera_bias[0, CAMERA_BINS // 2] = camera_bias[1, yaw_bin] = 20.0
    return dataclasses.replace(weights, parameters={
        **weights.parameters, "head.buttons.bias": np.full(len(BUTTONS), -20.0, np.float32),
        "head.camera.bias": camera_bias.ravel()})


def test_a_turn_hold_labels_a_long_turn_the_way_the_last_largest_turn_went():
    label = {"forward": 0, "jump": 1, "camera": np.array([2.0, -10.0], np.float32)}
    hold = TurnHold(45.0)
    assert hold(label, heading_error=-120.0) is label  # no turn taken yet
    hold.taken({"camera": np.array([0.0, 10.0], np.float32)})  # the largest step, positive
    held = hold(label, heading_error=-120.0)
    assert held["camera"].tolist() == [2.0, 10.0] and held["jump"] == 1 and held["forward"] == 0
    assert hold(label, heading_error=-40.0) is label  # within the held angle: the teacher's
    hold.taken({"camera": np.array([0.0, 6.0], np.float32)})  # not the largest step
    assert hold(label, heading_error=-120.0) is label
    hold.taken({"camera": np.array([0.0, -10.0], np.float32)})
    assert hold({**label, "camera": np.array([0.0, 10.0], np.float32)},
                heading_error=170.0)["camera"].tolist() == [0.0, -10.0]
    assert TurnHold(45.0)(label, heading_error=-120.0) is label  # a new hold: no turn yet
    off = TurnHold(0.0)
    off.taken({"camera": np.array([0.0, 10.0], np.float32)})
    assert off(label, heading_error=-179.0) is label
    for bad in (-1.0, 181.0):
        with pytest.raises(ValueError, match="turn_hold is an angle in degrees, from above 0 to "
                                             "180 .0: off.; got"):
            NavigatorTrainingConfig(turn_hold=bad)


def test_a_turn_hold_changes_only_the_labels_of_a_policys_long_turns():
    """A policy that always turns by the largest step one way walks the same steps with the
    hold on; labels differ only where the teacher turned the largest step the other way, and
    those now turn the policy's way. Recorded in the recipe only when on."""
    spinning = _standing_policy(yaw_bin=CAMERA_BINS - 1)
    plain = collect_segments(TINY, seed=5, segments=2, weights=spinning)
    held = collect_segments(dataclasses.replace(TINY, turn_hold=45.0), seed=5, segments=2,
                            weights=spinning)
    assert np.array_equal(plain.rgb, held.rgb) and np.array_equal(plain.buttons, held.buttons)
    assert np.array_equal(plain.camera[:, 0], held.camera[:, 0])
    changed = plain.camera[:, 1] != held.camera[:, 1]
    assert changed.any()
    assert (plain.camera[changed, 1] == 0).all()  # the teacher's largest turn the other way
    assert (held.camera[changed, 1] == CAMERA_BINS - 1).all()  # now the policy's way
    assert "turn_hold" not in TINY.recipe()
    assert dataclasses.replace(TINY, turn_hold=45.0).recipe()["turn_hold"] == 45.0


def test_dagger_mixing_hands_steps_to_the_teacher_in_a_shrinking_share():
    """Ross et al.'s beta: with the teacher's share at 1 the depth navigator walks (and reaches
    goals) where the policy alone stands still; the labels are the teacher's either way, the
    first goal is the same (the mixing draws from its own stream), and round i's share is
    beta ** i, recorded only when mixing is on."""
    weights = _standing_policy()
    alone = collect_segments(TINY, seed=5, segments=3, weights=weights)
    mixed = collect_segments(TINY, seed=5, segments=3, weights=weights, teacher_share=1.0)
    assert not alone.reached.any()
    assert mixed.reached[0]  # the same first goal, reached when the teacher acts
    assert np.array_equal(alone.rgb[0], mixed.rgb[0])
    assert np.array_equal(alone.goal[0], mixed.goal[0])
    forward = BUTTONS.index("forward")
    assert alone.buttons[:, forward].any()  # the labels are the teacher's, not the policy's
    beta = dataclasses.replace(TINY, dagger_beta=0.5)
    assert [beta.teacher_share(i) for i in (1, 2, 3)] == [0.5, 0.25, 0.125]
    assert TINY.teacher_share(1) == 0.0
    assert "dagger_beta" not in TINY.recipe() and beta.recipe()["dagger_beta"] == 0.5
    assert beta.data_key() == TINY.data_key()  # the demonstrations are the same


def test_demonstrations_are_the_depth_navigators_steps_toward_each_goal():
    data = collect_segments(TINY, seed=5, segments=3)
    assert len(data.reached) == 3 and data.reached.any()
    assert data.rgb.shape[1:] == (40, 64, 3) and data.rgb.dtype == np.uint8
    assert len(data.rgb) == len(data.goal) == len(data.buttons) == len(data.camera)
    assert data.segment.tolist() == sorted(data.segment.tolist())
    assert set(data.segment.tolist()) == {0, 1, 2}
    assert data.camera.min() >= 0 and data.camera.max() < CAMERA_BINS
    assert data.buttons[:, BUTTONS.index("forward")].mean() > 0.5  # it walks
    # the goal's rescaled distance shrinks along a segment (symlog keeps the order)
    first = data.segment == 0
    distance = np.hypot(np.expm1(np.abs(data.goal[first, 0])),
                        np.expm1(np.abs(data.goal[first, 1])))
    assert distance[-1] < distance[0] - 2
    again = collect_segments(TINY, seed=5, segments=3)
    assert np.array_equal(again.rgb, data.rgb) and np.array_equal(again.buttons, data.buttons)


def test_the_rendered_data_does_not_depend_on_the_processes_rendering_it():
    """A rendering is drawn in fixed seeded streams: one process or two, the same steps."""
    alone, split = (collect(dataclasses.replace(TINY, workers=workers), seed=5, segments=3)
                    for workers in (1, 2))
    assert len(alone.reached) == 3
    for name in ("rgb", "goal", "buttons", "camera", "segment", "reached"):
        assert np.array_equal(getattr(alone, name), getattr(split, name)), name


def test_a_tiny_run_lowers_the_loss_writes_weights_and_resumes(tmp_path):
    result = train_navigator(tmp_path, TINY, progress=False, say=lambda line: None)
    foundation = [row["loss"] for row in result.history if row["stage"] == "foundation"]
    assert len(foundation) == 3 and foundation[-1] < foundation[0]
    stages = [row["stage"] for row in result.history]
    assert "finetune-0" in stages and "dagger-1" in stages and "finetune-1" in stages
    assert stages.index("anneal") > stages.index("finetune-1")  # after the last round
    weights = load_navigator_weights(tmp_path / "navigator.npz")
    assert weights.sha256 == result.weights.sha256
    assert weights.architecture.conditioning == "head"
    assert load_navigator_weights(tmp_path / "foundation.npz").architecture.conditioning == "none"
    assert (tmp_path / "curve.png").stat().st_size > 0
    assert json.loads((tmp_path / "history.json").read_text()) == result.history
    said = []
    again = train_navigator(tmp_path, TINY, progress=False, say=said.append)
    assert any("resuming" in line for line in said)
    assert again.weights.sha256 == result.weights.sha256
    # other speed or validation settings resume the run (validating it again), not retrain it
    faster = dataclasses.replace(TINY, threads=1, workers=2, validation_segments=3)
    said = []
    revalidated = train_navigator(tmp_path, faster, progress=False, say=said.append)
    assert not any("another configuration" in line for line in said)
    assert any(line.startswith("validation:") and "of 3 goals" in line for line in said)
    assert [row.get("goals") for row in revalidated.history
            if row["stage"] == "validation"] == [3]
    for name, value in result.weights.parameters.items():
        np.testing.assert_array_equal(revalidated.weights.parameters[name], value)

    # PPO starts from the behaviour-cloned policy; without it, that policy comes back
    ppo = dataclasses.replace(TINY, ppo=PPOConfig(iterations=2, envs=2, steps=12,
                                                  minibatches=1, max_goal_steps=8))
    said = []
    tuned = train_navigator(tmp_path, ppo, progress=False, say=said.append)
    assert any("resuming" in line for line in said) and any("PPO" in line for line in said)
    assert [row["epoch"] for row in tuned.history if row["stage"] == "ppo"] == [1, 2]
    assert tuned.weights.sha256 != result.weights.sha256
    assert train_navigator(tmp_path, TINY, progress=False,
                           say=said.append).weights.sha256 == result.weights.sha256

    # a give-up head resumes the run too, fitted last with the policy frozen
    said = []
    headed = train_navigator(tmp_path, dataclasses.replace(TINY, give_up_goals=3),
                             progress=False, say=said.append)
    assert any("resuming" in line for line in said) and any("give-up head" in line
                                                            for line in said)
    assert headed.weights.architecture.give_up
    assert load_navigator_weights(tmp_path / "navigator.npz").sha256 == headed.weights.sha256
    for name, value in result.weights.parameters.items():
        np.testing.assert_array_equal(headed.weights.parameters[name], value)
    scores = [row for row in headed.history if row["stage"] == "give-up"]
    assert len(scores) == 1 and scores[0]["steps"] > 0


def test_gae_does_not_reach_across_a_segment_end():
    reward = np.array([[1.0, 0.0, 5.0]], np.float32)
    done = np.array([[True, False, False]])
    value = np.array([[0.5, 0.2, 0.1]], np.float32)
    adv, returns = advantages(reward, done, value, gamma=0.9, lam=1.0)
    assert adv[0, 0] == pytest.approx(1.0 - 0.5)  # terminal: no value after it
    assert returns[0, 2] == pytest.approx(5.0 + 0.9 * 0.1)  # the rollout's end bootstraps
    assert adv[0, 1] == pytest.approx(0.0 + 0.9 * 0.1 - 0.2 + 0.9 * (5.0 + 0.9 * 0.1 - 0.1))


@pytest.mark.parametrize("conditioning", CONDITIONING)
@pytest.mark.parametrize("finetune", ["full", "adapter"])
def test_numpy_inference_matches_torch(conditioning, finetune):
    architecture = NavigatorArchitecture(channels=(4, 8), strides=(2, 2), dim=32, context=4,
                                         heads=4, mlp_dim=48, goal_hidden=16,
                                         conditioning=conditioning)
    torch.manual_seed(0)
    model = build_policy(architecture)
    prepare_finetuning(model, finetune, rank=2)
    with torch.no_grad():
        for parameter in model.parameters():
            parameter.add_(torch.randn_like(parameter) * 0.2)
    rng = np.random.default_rng(0)
    steps = 9  # more than the context: the ring wraps
    rgb = rng.integers(0, 256, (1, steps, 40, 64, 3), dtype=np.uint8)
    goal = rng.normal(size=(1, steps, 6)).astype(np.float32)
    with torch.no_grad():
        buttons, camera = model(torch.from_numpy(rgb), torch.from_numpy(goal),
                                torch.zeros(1, steps, dtype=torch.int32))
    policy = NavigatorPolicy(export_weights(model, architecture, {}))
    for t in range(steps):
        step_buttons, step_camera = policy.step(rgb[0, t], goal[0, t])
        np.testing.assert_allclose(step_buttons, buttons[0, t].numpy(), atol=1e-4)
        np.testing.assert_allclose(step_camera, camera[0, t].numpy(), atol=1e-4)


def test_attention_never_crosses_a_segment_border():
    architecture = NavigatorArchitecture(channels=(4,), strides=(4,), dim=16, context=8,
                                         heads=2, mlp_dim=16, goal_hidden=8)
    torch.manual_seed(1)
    model = build_policy(architecture).eval()
    rng = np.random.default_rng(1)
    rgb = torch.from_numpy(rng.integers(0, 256, (2, 6, 40, 64, 3), dtype=np.uint8))
    goal = torch.from_numpy(rng.normal(size=(2, 6, 6)).astype(np.float32))
    rgb[1, 3:] = rgb[0, 3:]
    goal[1, 3:] = goal[0, 3:]
    segment = torch.tensor([[0, 0, 0, 1, 1, 1], [0, 0, 0, 1, 1, 1]])
    with torch.no_grad():
        buttons, _ = model(rgb, goal, segment)
    # different steps before the border, the same after it: the same outputs after it
    torch.testing.assert_close(buttons[0, 3:], buttons[1, 3:])
    assert not torch.allclose(buttons[0, :3], buttons[1, :3])


def test_the_kl_term_is_zero_against_itself_and_positive_otherwise():
    buttons, camera = torch.randn(5, 3), torch.randn(5, 2, CAMERA_BINS)
    assert float(kl_to(buttons, camera, buttons, camera)) == pytest.approx(0.0, abs=1e-5)
    assert float(kl_to(buttons, camera, buttons + 1, camera.flip(-1))) > 0.1


def test_bad_settings_are_refused_with_the_accepted_values():
    with pytest.raises(ValueError, match="conditioning must be one of trxl, head, dual"):
        NavigatorTrainingConfig(conditioning="none")
    with pytest.raises(ValueError, match="finetune must be one of full, adapter, head"):
        NavigatorTrainingConfig(finetune="lora")
    with pytest.raises(ValueError, match="across_water is a share of goals, from 0 to 1; got 2"):
        NavigatorTrainingConfig(across_water=2)
    with pytest.raises(ValueError, match="0 < min_distance <= max_distance, got 30.0 and 10.0"):
        NavigatorTrainingConfig(min_distance=30.0, max_distance=10.0)
    with pytest.raises(ValueError, match="kl must be >= 0, got -1"):
        NavigatorTrainingConfig(kl=-1)
    with pytest.raises(ValueError, match="anneal_epochs must be at least 0, got -1"):
        NavigatorTrainingConfig(anneal_epochs=-1)
    with pytest.raises(ValueError, match="colour_jitter must be from 0 to 1"):
        NavigatorTrainingConfig(colour_jitter=1.5)
    for beta in (1.0, -0.1):
        with pytest.raises(ValueError, match="dagger_beta .* from 0 .* to below 1; got"):
            NavigatorTrainingConfig(dagger_beta=beta)


def test_colour_jitter_is_in_the_recipe_only_when_on_and_leaves_the_data_alone(tmp_path):
    """The shipped recipe records no jitter; a jittered run reuses the same demonstrations and
    trains (the tiny recipe, its foundation and fine-tuning batches jittered)."""
    assert "colour_jitter" not in TINY.recipe()
    jittered = dataclasses.replace(TINY, colour_jitter=0.35, dagger_rounds=0, anneal_epochs=0,
                                   foundation_epochs=1, finetune_epochs=1,
                                   validation_segments=0)
    assert jittered.recipe()["colour_jitter"] == 0.35
    assert jittered.data_key() == dataclasses.replace(jittered, colour_jitter=0.0).data_key()
    result = train_navigator(tmp_path / "run", jittered, progress=False, say=lambda line: None)
    assert result.weights.info["training"]["colour_jitter"] == 0.35


def test_the_annealing_rate_falls_linearly_to_zero_and_old_recipes_have_none():
    config = NavigatorTrainingConfig(anneal_epochs=2, finetune_learning_rate=4e-4)
    rates = [annealed_rate(config, done) for done in (0.0, 0.5, 1.0, 1.5, 2.0)]
    np.testing.assert_allclose(rates, [4e-4, 3e-4, 2e-4, 1e-4, 0.0])
    assert config.recipe()["anneal_epochs"] == 2
    assert "anneal_epochs" not in NavigatorTrainingConfig(anneal_epochs=0).recipe()


def test_give_up_goals_lie_beyond_inside_or_away_from_the_wall_ring():
    size, rng = (96, 64, 96), np.random.default_rng(0)
    seen = set()
    for _ in range(300):
        x, z = rng.uniform(10, 86, 2)
        picked = pick_give_up_goal(rng, x, z, size)
        if picked is None:
            continue
        kind, gx, gz = picked
        seen.add(GOAL_KINDS[kind])
        assert 8.0 <= np.hypot(gx - x, gz - z) <= 45.0
        to_ring = min(gx - 1, gz - 1, 95 - gx, 95 - gz)  # < 0: beyond the ring
        if GOAL_KINDS[kind] == "beyond":
            assert to_ring < 0.0
        elif GOAL_KINDS[kind] == "inside":
            assert 0.0 < to_ring <= 6.0
        else:
            assert to_ring >= 6.0 - 1e-9
    assert seen == set(GOAL_KINDS)


def test_the_give_up_head_separates_the_verdicts_and_needs_both():
    rng = np.random.default_rng(0)
    out = rng.random(400) < 0.2
    features = rng.normal(0, 1, (400, 8)).astype(np.float32)
    features[:, 0] += np.where(out, 2.5, -2.5)
    walks = GiveUpWalks(features, out, np.zeros(400, np.int8))
    weight, bias = fit_give_up_head(walks, seed=0)
    assert weight.shape == (1, 8) and bias.shape == (1,)
    flagged = features @ weight[0] + bias[0] > 0
    assert flagged[out].mean() > 0.9 and flagged[~out].mean() < 0.1
    with pytest.raises(ValueError, match="both out of reach and within reach"):
        fit_give_up_head(GiveUpWalks(features, np.zeros(400, bool), walks.kind), seed=0)


def test_calibration_ties_the_run_time_threshold_to_a_false_alarm_rate_inside_the_walls():
    rng = np.random.default_rng(1)
    n = 4000
    kind = rng.integers(0, len(GOAL_KINDS), n).astype(np.int8)
    out = (kind == GOAL_KINDS.index("beyond")) & (rng.random(n) < 0.8)
    features = rng.normal(0, 1, (n, 4)).astype(np.float32)
    features[:, 0] += np.where(out, 1.5, -1.5)
    walks = GiveUpWalks(features, out, kind)
    weight, bias = fit_give_up_head(walks, seed=0)
    for target in (0.01, 0.05):
        shifted = calibrate_give_up_head(walks, weight, bias, 0.9, target)
        flagged = features @ weight[0] + shifted[0] >= np.log(9.0)
        within = ~out & (kind != GOAL_KINDS.index("beyond"))
        assert flagged[within].mean() == pytest.approx(target, abs=0.003)
    looser = calibrate_give_up_head(walks, weight, bias, 0.9, 0.05)
    assert looser[0] > calibrate_give_up_head(walks, weight, bias, 0.9, 0.01)[0]
    with pytest.raises(ValueError, match="false_alarms"):
        calibrate_give_up_head(walks, weight, bias, 0.9, 0.0)



def test_the_walks_are_rendered_afresh_when_the_policy_the_goals_or_the_walk_rules_change(
        monkeypatch):
    from mrsteve.control.navigation import NavigatorConfig
    from mrsteve.train import navigator_give_up

    weights = load_shipped_navigator()
    key = walks_key("data", 640, weights)
    assert key == walks_key("data", 640, weights, NavigatorConfig())
    changed = [walks_key("other data", 640, weights), walks_key("data", 320, weights),
               walks_key("data", 640, dataclasses.replace(weights, parameters={
                   **weights.parameters, "head.give_up.bias": np.ones(1, np.float32)})),
               walks_key("data", 640, weights, NavigatorConfig(idle_steps=10))]
    monkeypatch.setattr(navigator_give_up, "WALKS_RECIPE", navigator_give_up.WALKS_RECIPE + 1)
    changed.append(walks_key("data", 640, weights))
    assert len({key, *changed}) == len(changed) + 1


def test_without_goal_conditioned_cloning_the_run_starts_from_the_foundation(tmp_path):
    """The paper's path (finetune_epochs 0, no DAgger, no annealing): before PPO the navigator is
    the foundation policy with its goal encoder added at zero, so the goal changes nothing."""
    with pytest.raises(ValueError, match="finetune_epochs must be at least 0, got -1"):
        dataclasses.replace(TINY, finetune_epochs=-1)
    plain = dataclasses.replace(TINY, finetune_epochs=0, dagger_rounds=0, anneal_epochs=0,
                                validation_segments=0)
    result = train_navigator(tmp_path, plain, progress=False, say=lambda line: None)
    assert not [row for row in result.history if row["stage"].startswith("finetune")]
    policy = NavigatorPolicy(result.weights)
    foundation = NavigatorPolicy(load_navigator_weights(tmp_path / "foundation.npz"))
    rgb = np.random.default_rng(0).integers(0, 256, (40, 64, 3), dtype=np.uint8)
    near, far = (np.array([x, 0.0, 1.0, 0.0, 1.0, 0.0], np.float32) for x in (1.0, -3.0))
    for goal in (near, far):
        policy.reset()
        foundation.reset()
        for got, expected in zip(policy.step(rgb, goal), foundation.step(rgb, None),
                                 strict=True):
            np.testing.assert_allclose(got, expected, atol=1e-5)
