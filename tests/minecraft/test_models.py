"""The models' forward passes on tiny checkpoints: output shapes, VPT's memory stepped one frame
at a time as over a whole sequence, MineCLIP's rolling window, the tokenizer, and the agent's
parts built on them (encoder, navigator, instruction policy)."""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from mrsteve.minecraft import checkpoints as C  # noqa: E402
from mrsteve.minecraft.actions import resize_bilinear  # noqa: E402
from mrsteve.minecraft.policies import (  # noqa: E402
    MineClipEncoder,
    Steve1Policy,
    VptNavNavigator,
)
from mrsteve.minecraft.tokenizer import clip_tokenizer  # noqa: E402
from mrsteve.minecraft.vpt import TINY_VPT, VptPolicyNet  # noqa: E402
from mrsteve.perception.encoder import Encoder  # noqa: E402


@pytest.fixture(scope="module")
def models():
    """Tiny models of each kind with random values (seeded)."""
    built = {}
    for kind in C.KINDS:
        checkpoint = C.check_state(kind, C.synthetic_state(kind, C.TINY[kind], seed=1),
                                   C.TINY[kind])
        built[kind] = checkpoint.build()
    return built


def frames(n: int, shape=(40, 64, 3), seed: int = 0) -> list[np.ndarray]:
    rng = np.random.default_rng(seed)
    return [rng.integers(0, 256, shape, dtype=np.uint8) for _ in range(n)]


def test_clip_token_ids():
    """Ids of CLIP's vocabulary (``a photo of a cat``, as CLIP's papers and code show it)."""
    tokenizer = clip_tokenizer()
    assert tokenizer.encode("a photo of a cat") == [320, 1125, 539, 320, 2368]
    assert tokenizer.encode("A   Photo of a CAT") == [320, 1125, 539, 320, 2368]
    row = tokenizer.tokenize("a dog")[0]
    assert row.shape == (77,) and list(row[:4]) == [49406, 320, 1929, 49407]
    assert not row[4:].any()
    long = tokenizer.tokenize("wood " * 100)[0]
    assert long[0] == 49406 and long[-1] == 49407 and (long > 0).all()


def test_mineclip_forward_shapes_and_text_causality(models):
    model = models["mineclip"]
    config = model.config
    images = torch.from_numpy(np.stack(frames(3, (*config.resolution, 3))))
    features = model.encode_images(images)
    assert features.shape == (3, config.embed_dim)
    video = model.encode_video(features[None])
    assert video.shape == (1, config.embed_dim)
    tokens = torch.from_numpy(clip_tokenizer().tokenize(["near water", "near tree"]))
    text = model.encode_text(tokens)
    assert text.shape == (2, config.embed_dim)
    assert model.scores(video, text).shape == (1, 2)
    # the causal text encoder reads the end token: what follows it changes nothing
    padded = tokens.clone()
    padded[:, -1] = 5
    assert torch.allclose(model.encode_text(padded), text, atol=1e-6)


def test_mineclip_encoder_rolling_window_matches_whole_clips(models):
    encoder = MineClipEncoder(models["mineclip"])
    assert isinstance(encoder, Encoder) and encoder.dim == 32 and encoder.window == 16
    clip = [{"rgb": f} for f in frames(20)]
    encoder.reset()
    for t, observation in enumerate(clip):
        rolling = encoder.observe(observation)
        if t in (0, 5, 19):
            whole = encoder.encode_frames(clip[:t + 1])
            np.testing.assert_allclose(rolling, whole, atol=1e-5)
    assert abs(float(np.linalg.norm(rolling)) - 1.0) < 1e-5
    # the window is the last 16 frames
    np.testing.assert_allclose(encoder.encode_frames(clip), encoder.encode_frames(clip[4:]),
                               atol=1e-6)
    assert not np.allclose(encoder.encode_frames(clip), encoder.encode_frames(clip[5:]))
    text = encoder.encode_text("near water")
    assert text.shape == (32,) and abs(float(np.linalg.norm(text)) - 1.0) < 1e-5
    assert encoder.task_threshold("near water") == pytest.approx(0.2274)


def test_mineclip_encoder_names_a_missing_frame(models):
    encoder = MineClipEncoder(models["mineclip"])
    with pytest.raises(KeyError, match="rgb"):
        encoder.observe({"semantic": np.zeros((4, 4), np.int32)})


def _step_by_step(net, images, first, goal=None):
    state = net.initial_state(1)
    buttons = []
    for t in range(images.shape[1]):
        args = (images[:, t:t + 1], first[:, t], state)
        out = net(*args, goal[:, t:t + 1]) if goal is not None else net(*args)
        state = out.state
        buttons.append(out.buttons)
    return torch.cat(buttons, dim=1), state


def test_vpt_memory_stepped_equals_the_whole_sequence(models):
    """VPT's clipped causal memory: stepping one frame at a time (as the agent does) gives what
    the whole sequence gives at once, also beyond the memory's length (16 steps)."""
    net: VptPolicyNet = models["vpt"]
    steps = TINY_VPT.memory + 4
    images = torch.from_numpy(np.stack(frames(steps, (128, 128, 3))))[None]
    first = torch.zeros(1, steps, dtype=torch.bool)
    stepped, _ = _step_by_step(net, images, first)
    assert stepped.shape == (1, steps, 8641)
    with torch.no_grad():
        whole = net(images, first[:, 0], net.initial_state(1))
    assert whole.buttons.shape == (1, steps, 8641) and whole.camera.shape == (1, steps, 121)
    assert whole.value.shape == (1, steps)
    torch.testing.assert_close(stepped, whole.buttons, atol=1e-4, rtol=1e-4)
    assert torch.allclose(whole.buttons.exp().sum(-1), torch.ones(1, steps), atol=1e-4)


def test_vpt_first_forgets_the_memory(models):
    net = models["vpt"]
    images = torch.from_numpy(np.stack(frames(4, (128, 128, 3))))[None]
    with torch.no_grad():
        warm = net(images[:, :3], torch.tensor([False]), net.initial_state(1))
        restarted = net(images[:, 3:], torch.tensor([True]), warm.state)
        fresh = net(images[:, 3:], torch.tensor([True]), net.initial_state(1))
        continued = net(images[:, 3:], torch.tensor([False]), warm.state)
    torch.testing.assert_close(restarted.buttons, fresh.buttons)
    assert not torch.allclose(continued.buttons, fresh.buttons)


def test_vpt_nav_and_steve1_are_conditioned_on_their_goals(models):
    images = torch.from_numpy(np.stack(frames(1, (128, 128, 3))))[None]
    first = torch.tensor([True])
    for kind, width in (("vpt-nav", 6), ("steve1", 32)):
        net = models[kind]
        with torch.no_grad():
            a = net(images, first, net.initial_state(1), torch.zeros(1, 1, width))
            b = net(images, first, net.initial_state(1), torch.ones(1, 1, width))
        assert a.buttons.shape == (1, 1, 8641) and a.camera.shape == (1, 1, 121)
        assert (a.buttons - b.buttons).abs().max() > 1e-6, kind
        with pytest.raises(ValueError, match="needs goal"):
            net(images, first, net.initial_state(1))


def test_vpt_nav_adds_the_released_goal_mlp_after_the_final_layer_norm(models):
    """The goal MLP of ``vpt_nav.weights`` (linear layers ``_mlp.0, 3, 6, 9`` with ReLU between,
    then ``goal_proj``) is added to the policy and the value latents after ``net.final_ln``."""
    net = models["vpt-nav"]
    images = torch.from_numpy(np.stack(frames(2, (128, 128, 3))))[None]
    first = torch.tensor([True])
    goal = torch.randn(1, 2, 6, generator=torch.Generator().manual_seed(3))
    w = net.state_dict()
    h = goal
    for i in (0, 3, 6, 9):
        h = h @ w[f"goal_embed._mlp.{i}.weight"].T + w[f"goal_embed._mlp.{i}.bias"]
        h = torch.relu(h) if i < 9 else h
    embedding = h @ w["goal_proj.weight"].T + w["goal_proj.bias"]
    with torch.no_grad():
        latent, _ = net.net(net.image_features(images), first, net.initial_state(1))
        expected = net.heads(latent + embedding, latent + embedding, net.initial_state(1))
        out = net(images, first, net.initial_state(1), goal)
    torch.testing.assert_close(out.buttons, expected.buttons)
    torch.testing.assert_close(out.value, expected.value)


def test_prior_maps_text_to_visual_embeddings(models):
    prior = models["steve1-prior"]
    text = torch.randn(3, 32, generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        assert prior(text).shape == (3, 32)
        torch.testing.assert_close(prior(text), prior(text))
        drawn = prior(text, torch.Generator().manual_seed(1))
    assert not torch.allclose(drawn, prior(text))


def _pose_obs(rgb, x=0.0, z=0.0):
    return {"rgb": rgb, "pose": np.array([x, 64.0, z, 30.0, 10.0])}


def _same(a, b) -> bool:
    return a.keys() == b.keys() and all(np.array_equal(a[k], b[k]) for k in a)


def test_vpt_nav_navigator_acts_and_repeats_with_the_seed(models):
    navigator = VptNavNavigator(models["vpt-nav"])
    clip = frames(5)

    def episode(seed):
        navigator.reset(np.random.default_rng(seed), None)
        return [navigator.act(_pose_obs(rgb), (12.0, -4.0)) for rgb in clip]

    first, again, other = episode(7), episode(7), episode(8)
    assert set(first[0]) >= {"forward", "jump", "attack", "camera"}
    assert first[0]["camera"].shape == (2,)
    assert all(map(_same, first, again))
    assert not all(map(_same, first, other))
    assert navigator.reached(_pose_obs(clip[0], 11.0, -3.0), (12.0, -4.0))
    assert not navigator.act(_pose_obs(clip[0], 11.0, -3.0), (12.0, -4.0)).get("forward")
    assert not navigator.blocked(_pose_obs(clip[0]), (12.0, -4.0))


def test_steve1_guidance_zero_is_the_conditioned_policy(models):
    encoder = MineClipEncoder(models["mineclip"])
    policy = Steve1Policy(models["steve1"], models["steve1-prior"], encoder.text_features,
                          guidance=0.0, sample=False)
    prompt = policy.skills.skills[0].prompt
    goal = policy.goal(prompt)
    assert goal.shape == (32,)
    rgb = frames(1)[0]
    policy.reset(np.random.default_rng(0), None)
    guided = policy.step(rgb, goal)
    net = models["steve1"]
    image = torch.from_numpy(resize_bilinear(rgb))[None, None]
    with torch.no_grad():
        alone = net(image, torch.tensor([True]), net.initial_state(1),
                    torch.from_numpy(goal)[None, None])
    assert guided == (int(alone.buttons.argmax()), int(alone.camera.argmax()))


def test_steve1_policy_acts_and_refuses_unknown_prompts(models):
    encoder = MineClipEncoder(models["mineclip"])
    policy = Steve1Policy(models["steve1"], models["steve1-prior"], encoder.text_features)
    policy.reset(np.random.default_rng(0), None)
    action = policy.act({"rgb": frames(1)[0]}, policy.skills.skills[0].prompt)
    assert action["camera"].shape == (2,) and "attack" in action
    with pytest.raises(ValueError, match="prompt"):
        policy.act({"rgb": frames(1)[0]}, "fly to the moon")
    with pytest.raises(ValueError, match="guidance"):
        Steve1Policy(models["steve1"], models["steve1-prior"], encoder.text_features,
                     guidance=-1.0)
