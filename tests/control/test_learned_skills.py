"""The learned instruction policy (STEVE-1's role): classifier-free guidance, the weights file,
the prior, the shipped weights acting, and what it reads of an observation."""

from __future__ import annotations

from dataclasses import replace

import numpy as np
import pytest

from mrsteve.agent.factory import make_agent, make_instruction_policy
from mrsteve.control.instruction import (
    INSTRUCTION_BUTTONS,
    InstructionArchitecture,
    InstructionNet,
    InstructionPolicyConfig,
    InstructionWeights,
    LearnedSkills,
    load_instruction_weights,
    load_shipped_instruction_policy,
)
from mrsteve.control.learned_navigator import CAMERA_BINS
from mrsteve.env import make_env
from mrsteve.spaces import AgentFrame
from tests.control.test_learned_navigator import ReadSpy


def small_weights(seed: int = 0, goal_encoder: str = "test") -> InstructionWeights:
    architecture = InstructionArchitecture(channels=(4, 8), strides=(2, 2), dim=16, context=4,
                                           heads=2, mlp_dim=24, goal_dim=8, text_dim=8,
                                           prior_hidden=8, goal_encoder=goal_encoder)
    rng = np.random.default_rng(seed)
    parameters = {name: rng.normal(0.0, 0.3, shape).astype(np.float32)
                  for name, shape in architecture.parameter_shapes().items()}
    return InstructionWeights(architecture, parameters, {"made by": "the test"})


def frames(count: int, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (count, 40, 64, 3), dtype=np.uint8)


def test_guidance_mixes_the_conditioned_and_unconditioned_logits():
    weights = small_weights()
    goal = np.random.default_rng(1).normal(size=8).astype(np.float32)
    zero = np.zeros(8, np.float32)
    runs = {scale: InstructionNet(weights) for scale in (0.0, 1.0, 3.0)}
    conditioned, unconditioned = InstructionNet(weights), InstructionNet(weights)
    for rgb in frames(7):  # past the context of 4: both rings wrap
        c = conditioned.step(rgb, goal, 1.0)
        u = unconditioned.step(rgb, zero, 1.0)  # a zero goal is the unconditioned policy
        for scale, net in runs.items():
            buttons, camera = net.step(rgb, goal, scale)
            assert buttons.shape == (len(INSTRUCTION_BUTTONS),)
            assert camera.shape == (2, CAMERA_BINS)
            np.testing.assert_allclose(buttons, u[0] + scale * (c[0] - u[0]), atol=1e-5)
            np.testing.assert_allclose(camera, u[1] + scale * (c[1] - u[1]), atol=1e-5)
    with pytest.raises(ValueError, match="guidance must be"):
        InstructionPolicyConfig(guidance=-1.0)


@pytest.mark.parametrize("keys, camera", [(3.0, 1.0), (7.0, 0.0), (1.0, 3.0), (0.0, 1.0)])
def test_the_camera_head_takes_its_own_guidance_scale(keys, camera):
    weights = small_weights()
    goal = np.random.default_rng(1).normal(size=8).astype(np.float32)
    mixed, conditioned, unconditioned = (InstructionNet(weights) for _ in range(3))
    for rgb in frames(6):
        c = conditioned.step(rgb, goal, 1.0)
        u = unconditioned.step(rgb, goal, 0.0)
        buttons, camera_logits = mixed.step(rgb, goal, keys, camera_guidance=camera)
        np.testing.assert_allclose(buttons, u[0] + keys * (c[0] - u[0]), atol=1e-5)
        np.testing.assert_allclose(camera_logits, u[1] + camera * (c[1] - u[1]), atol=1e-5)
    policy = LearnedSkills(lambda text: np.ones(8, np.float32), "test",
                           InstructionPolicyConfig(guidance=keys, camera_guidance=camera),
                           weights=weights)
    assert (policy.guidance, policy.camera_guidance) == (keys, camera)
    with pytest.raises(ValueError, match="camera_guidance must be"):
        InstructionPolicyConfig(camera_guidance=float("nan"))


def test_weights_round_trip_and_bad_files_are_refused_with_the_reason(tmp_path):
    weights = small_weights()
    weights.save(tmp_path / "inst.npz")
    loaded = load_instruction_weights(tmp_path / "inst.npz")
    assert loaded.sha256 == weights.sha256 and loaded.architecture == weights.architecture
    from mrsteve.control.learned_navigator import load_shipped_navigator

    load_shipped_navigator().save(tmp_path / "nav.npz")
    with pytest.raises(ValueError, match="format is 'mrsteve-navigator'"):
        load_instruction_weights(tmp_path / "nav.npz")
    parameters = dict(weights.parameters)
    del parameters["prior.4.bias"]
    replace(weights, parameters=parameters).save(tmp_path / "missing.npz")
    with pytest.raises(ValueError, match="missing.*prior.4.bias"):
        load_instruction_weights(tmp_path / "missing.npz")
    with pytest.raises(ValueError, match="trained on the goals of pixel encoder test"):
        LearnedSkills(lambda text: np.zeros(8, np.float32), "another", weights=weights)


def test_an_unknown_prompt_lists_the_known_ones():
    policy = LearnedSkills(lambda text: np.ones(8, np.float32), "test", weights=small_weights())
    policy.reset(np.random.default_rng(0), None)
    with pytest.raises(ValueError, match="'cut a tree'"):
        policy.act({"rgb": frames(1)[0]}, "bake a cake")


def test_frames_of_another_size_are_refused():
    policy = LearnedSkills(lambda text: np.ones(8, np.float32), "test", weights=small_weights())
    policy.reset(np.random.default_rng(0), None)
    with pytest.raises(ValueError, match=r"frames of \(40, 64, 3\)"):
        policy.act({"rgb": np.zeros((24, 40, 3), np.uint8)}, "cut a tree")


def test_the_prior_gives_one_unit_goal_per_prompt_and_aliases_share_it():
    texts = {}

    def embed(text):
        texts[text] = np.random.default_rng(len(text)).normal(size=8).astype(np.float32)
        return texts[text]

    policy = LearnedSkills(embed, "test", weights=small_weights())
    goal = policy.goal("break leaves")
    assert np.linalg.norm(goal) == pytest.approx(1.0, abs=1e-5)
    np.testing.assert_array_equal(policy.goal("break a leaves"), goal)  # the alias
    assert list(texts) == ["break leaves"]  # the skill's own prompt is embedded


def test_the_shipped_prior_puts_each_prompt_nearest_its_own_held_out_clips():
    """The held-out check the training ran (success clips of episodes the prior never saw)."""
    report = load_shipped_instruction_policy().info["prior"]
    assert report["held_out_clips"] >= 20
    assert report["cosine_same_prompt"] > report["cosine_other_prompts"] + 0.05


def test_it_reads_only_the_rgb_frame():
    env = make_env(world="map1")
    obs, info = env.reset(seed=0)
    frame = AgentFrame.of(obs)
    policy = make_instruction_policy("learned")
    policy.reset(np.random.default_rng(0), info["camera"])
    read: set[str] = set()
    for _ in range(5):
        action = policy.act(ReadSpy(frame.view(obs), read), "kill cow")
        assert set(action) == {*INSTRUCTION_BUTTONS, "camera"}
        obs, *_ = env.step(action)
    assert read == {"rgb"} == set(LearnedSkills.reads)


def test_same_seed_same_actions():
    def actions(seed):
        env = make_env(world="map1")
        obs, info = env.reset(seed=3)
        frame = AgentFrame.of(obs)
        policy = make_instruction_policy("learned")
        policy.reset(np.random.default_rng(seed), info["camera"])
        taken = []
        for _ in range(20):
            action = policy.act(frame.view(obs), "get water bucket")
            taken.append(sorted((k, np.asarray(v).tolist()) for k, v in action.items()))
            obs, *_ = env.step(action)
        return taken

    assert actions(5) == actions(5)
    assert actions(5) != actions(6)


def test_mrsteve_and_steve1_take_the_learned_policy_and_name_its_weights():
    from mrsteve.agent.baselines import Steve1
    from mrsteve.control.instruction import SHIPPED_INSTRUCTION_POLICY

    mrsteve = make_agent("mrsteve", parts="stand-in", instruction_policy="learned")
    steve1 = make_agent("steve1", parts="stand-in", instruction_policy="learned")
    for agent in (mrsteve, steve1):
        assert isinstance(agent.policy, LearnedSkills)
        assert agent.config_tree.instruction_policy == "learned"
        assert SHIPPED_INSTRUCTION_POLICY in dict(agent.config_tree.data)
    # its goals are the pixel encoder's clips: a semantic image goal sends it to "go explore"
    assert isinstance(steve1, Steve1) and not steve1.visual_goals
    assert make_agent("steve1").visual_goals, "the learned parts' image goals are its own"
    with pytest.raises(ValueError, match="known: scripted, learned"):
        make_agent("steve1", parts="stand-in", instruction_policy="steve")


def test_the_guidance_scale_defaults_to_the_one_the_training_validated():
    weights = replace(small_weights(), info={"guidance": 3.0})
    policy = LearnedSkills(lambda text: np.ones(8, np.float32), "test", weights=weights)
    assert policy.guidance == 3.0
    chosen = LearnedSkills(lambda text: np.ones(8, np.float32), "test",
                           InstructionPolicyConfig(guidance=0.0), weights=weights)
    assert chosen.guidance == 0.0
    assert (policy.camera_guidance, chosen.camera_guidance) == (3.0, 0.0)  # as the keys'
    split = replace(weights, info={"guidance": 7.0, "camera_guidance": 1.0})
    validated = LearnedSkills(lambda text: np.ones(8, np.float32), "test", weights=split)
    assert (validated.guidance, validated.camera_guidance) == (7.0, 1.0)
    told = LearnedSkills(lambda text: np.ones(8, np.float32), "test",
                         InstructionPolicyConfig(camera_guidance=7.0), weights=split)
    assert told.camera_guidance == 7.0
