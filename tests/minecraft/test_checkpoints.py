"""The released checkpoint formats: full sizes checked on meta tensors, tiny files written and
read back, wrong files refused naming the keys, and `mrsteve weights synth` / `inspect`."""

from __future__ import annotations

import pickle

import pytest

torch = pytest.importorskip("torch")

from typer.testing import CliRunner  # noqa: E402

from mrsteve.cli import app  # noqa: E402
from mrsteve.minecraft import checkpoints as C  # noqa: E402
from mrsteve.minecraft.mineclip import MineClipConfig  # noqa: E402
from mrsteve.minecraft.vpt import TINY_VPT, PriorConfig, VptConfig  # noqa: E402

runner = CliRunner()

FULL_PARAMETERS = {
    "mineclip": 158_537_730,  # ViT-B/16 86.2M, text 63.4M, temporal 8.4M, adapter 0.5M
    "vpt": 248_495_294,
    "vpt-nav": 249_645_886,  # + goal MLP 0.08M + goal_proj 512 x 2048
    "steve1": 249_545_918,  # + mineclip_embed_linear 512 x 2048
    "steve1-prior": 2_366_976,
}
"""Parameter counts of the released sizes (shared MineCLIP towers counted once)."""

FILE_NAMES = {"mineclip": "attn.pth", "vpt": "2x.weights", "vpt-nav": "vpt_nav.weights",
              "steve1": "steve1.weights", "steve1-prior": "steve1_prior.pt"}


@pytest.fixture(scope="module")
def tiny_files(tmp_path_factory):
    """One tiny checkpoint of each kind, written in its released format."""
    folder = tmp_path_factory.mktemp("checkpoints")
    return {kind: (folder / name, C.write_synthetic(kind, folder / name, tiny=True))
            for kind, name in FILE_NAMES.items()}


@pytest.mark.parametrize("kind", C.KINDS)
def test_full_size_layout_is_recognised_on_meta_tensors(kind):
    state = C.synthetic_state(kind, C.FULL[kind], device="meta")
    assert all(tensor.is_meta for tensor in state.values())
    checkpoint = C.check_state(kind, state)
    assert checkpoint.parameters == FULL_PARAMETERS[kind]
    assert checkpoint.config == C.FULL[kind]


def test_full_configurations_are_the_released_ones():
    mineclip = MineClipConfig()
    assert (mineclip.image_width, mineclip.image_layers, mineclip.embed_dim) == (768, 12, 512)
    assert mineclip.patches + 1 == 161 and mineclip.resolution == (160, 256)
    assert (mineclip.text_width, mineclip.text_layers, mineclip.vocab_size,
            mineclip.context_length) == (512, 12, 49408, 77)
    shapes = {k: tuple(v.shape) for k, v in
              C.synthetic_state("vpt", VptConfig(), device="meta").items()}
    assert shapes["pi_head.buttons.linear_layer.weight"] == (8641, 2048)
    assert shapes["pi_head.camera.linear_layer.weight"] == (121, 2048)
    assert shapes["net.img_process.cnn.stacks.0.firstconv.layer.weight"] == (128, 3, 3, 3)
    steve1 = C.synthetic_state("steve1", VptConfig(), device="meta")
    assert tuple(steve1["net.mineclip_embed_linear.weight"].shape) == (2048, 512)
    nav = C.synthetic_state("vpt-nav", VptConfig(), device="meta")
    # MineCLIP's build_mlp puts a parameter-free norm between each linear layer and its ReLU
    assert {k: tuple(v.shape) for k, v in nav.items() if k.startswith("goal_")} == {
        "goal_embed._mlp.0.weight": (128, 6), "goal_embed._mlp.0.bias": (128,),
        "goal_embed._mlp.3.weight": (128, 128), "goal_embed._mlp.3.bias": (128,),
        "goal_embed._mlp.6.weight": (128, 128), "goal_embed._mlp.6.bias": (128,),
        "goal_embed._mlp.9.weight": (512, 128), "goal_embed._mlp.9.bias": (512,),
        "goal_proj.weight": (2048, 512), "goal_proj.bias": (2048,)}
    prior = C.synthetic_state("steve1-prior", PriorConfig(), device="meta")
    assert sorted({k.split(".")[0] + "." + k.split(".")[1] for k in prior}) == [
        f"{part}.{i}" for part in ("decoder", "encoder") for i in (0, 1, 3, 4, 6)]


@pytest.mark.parametrize("kind", C.KINDS)
def test_tiny_file_reads_back_exactly(tiny_files, kind):
    path, written = tiny_files[kind]
    checkpoint = C.read_checkpoint(path, kind)
    assert checkpoint.parameters == written.parameters
    assert checkpoint.config == C.TINY[kind]
    model = checkpoint.build()
    for key, tensor in model.state_dict().items():
        assert torch.equal(tensor, checkpoint.state[key]), key


def test_mineclip_file_has_the_released_layout(tiny_files):
    content = torch.load(tiny_files["mineclip"][0], weights_only=True)
    assert set(content) == {"state_dict"}
    keys = content["state_dict"]
    assert all(key.startswith("model.") for key in keys)
    # shared towers are saved under each of their names, as torch saves MineCLIP
    for name in ("image_encoder.conv1.weight", "clip_model.vision_model.conv1.weight",
                 "reward_head.clip_model.vision_model.conv1.weight"):
        assert f"model.{name}" in keys


def test_vpt_model_file_pickles_the_policy_arguments(tiny_files):
    model_file = tiny_files["vpt"][0].with_suffix(".model")
    content = pickle.loads(model_file.read_bytes())
    net = content["model"]["args"]["net"]["args"]
    assert net["hidsize"] == TINY_VPT.hidsize and net["recurrence_type"] == "transformer"
    assert content["model"]["args"]["pi_head_opts"] == {"temperature": 2.0}
    assert C.read_model_file(model_file) == TINY_VPT


REMOVED = {"mineclip": "model.temporal_encoder.attn.model.norm.weight",
           "vpt": "net.recurrent_layer.blocks.1.r.orc_block.b_nd",
           "vpt-nav": "goal_embed._mlp.6.bias",
           "steve1": "net.mineclip_embed_linear.weight",
           "steve1-prior": "decoder.3.weight"}
"""One key of each kind that the tests take away or rename."""


def _rewrite(path, kind, edit, out):
    content = torch.load(path, weights_only=True)
    state = content["state_dict"] if kind == "mineclip" else content
    edit(state)
    torch.save(content, out)
    return out


@pytest.mark.parametrize("kind", C.KINDS)
def test_a_missing_key_is_refused_by_name(tiny_files, tmp_path, kind):
    key = REMOVED[kind]
    bad = _rewrite(tiny_files[kind][0], kind, lambda s: s.pop(key), tmp_path / "bad")
    with pytest.raises(C.CheckpointError, match="missing") as refused:
        C.read_checkpoint(bad, kind, tiny_files[kind][0].with_suffix(".model")
                          if kind in C.VPT_FAMILY else None)
    message = str(refused.value)
    assert key.removeprefix("model.") in message and "\n" not in message


@pytest.mark.parametrize("kind", C.KINDS)
def test_a_renamed_key_is_refused_naming_both(tiny_files, tmp_path, kind):
    key = REMOVED[kind]
    renamed = key.replace("weight", "wieght").replace("bias", "bais").replace("b_nd", "b_dn")

    def rename(state):
        state[renamed] = state.pop(key)

    bad = _rewrite(tiny_files[kind][0], kind, rename, tmp_path / "bad")
    with pytest.raises(C.CheckpointError) as refused:
        C.read_checkpoint(bad, kind)
    message = str(refused.value)
    assert f"missing {key.removeprefix('model.')}" in message
    assert f"unexpected {renamed.removeprefix('model.')}" in message


def test_every_key_is_needed(tiny_files):
    """Each key of a tiny STEVE-1 state dict, removed alone, is named (the configuration is
    still read from the others)."""
    state = C.read_checkpoint(tiny_files["steve1"][0], "steve1").state
    for key in state:
        rest = {k: v for k, v in state.items() if k != key}
        with pytest.raises(C.CheckpointError, match=f"missing {key}"):
            C.check_state("steve1", rest)


def test_a_misshaped_tensor_is_named(tiny_files):
    state = dict(C.read_checkpoint(tiny_files["vpt"][0], "vpt").state)
    state["pi_head.camera.linear_layer.bias"] = torch.zeros(120)
    with pytest.raises(C.CheckpointError, match=r"mis-shaped pi_head.camera.linear_layer.bias "
                                                r"\[120\] \(expected \[121\]\)"):
        C.check_state("vpt", state, TINY_VPT)


def test_a_file_of_another_kind_is_refused(tiny_files):
    with pytest.raises(C.CheckpointError, match="no 'state_dict'"):
        C.read_checkpoint(tiny_files["vpt"][0], "mineclip")
    with pytest.raises(C.CheckpointError, match="missing"):
        C.read_checkpoint(tiny_files["steve1-prior"][0], "vpt")


def test_a_model_file_naming_python_objects_is_refused(tmp_path):
    class Evil:
        def __reduce__(self):
            return (eval, ("1",))

    path = tmp_path / "evil.model"
    path.write_bytes(pickle.dumps({"model": Evil()}))
    with pytest.raises(C.CheckpointError, match="builtins.eval"):
        C.read_model_file(path)


class Settings:
    """An object a training run might save beside its tensors."""


def test_a_file_holding_python_objects_is_refused_without_unpickling_them(tmp_path):
    path = tmp_path / "attn.pth"
    torch.save({"state_dict": {"model.x": torch.zeros(1)}, "settings": Settings()}, path)
    with pytest.raises(C.CheckpointError, match=r"holds the Python object [\w.]*Settings"):
        C.read_checkpoint(path, "mineclip")


@pytest.mark.parametrize("kind", C.KINDS)
def test_inspect_names_format_configuration_and_count(tiny_files, kind):
    path, written = tiny_files[kind]
    result = runner.invoke(app, ["weights", "inspect", str(path)])
    assert result.exit_code == 0, result.output
    assert f"format: {kind} -- " in result.output
    assert f"parameters: {written.parameters:,}" in result.output
    assert "configuration: " in result.output


def test_inspect_reads_a_model_file(tiny_files):
    result = runner.invoke(app, ["weights", "inspect",
                                 str(tiny_files["vpt"][0].with_suffix(".model"))])
    assert result.exit_code == 0, result.output
    assert "format: vpt-model" in result.output and "hidsize=64" in result.output


def test_inspect_refuses_other_files_in_one_line(tmp_path):
    junk = tmp_path / "junk.pt"
    junk.write_bytes(b"not a checkpoint")
    result = runner.invoke(app, ["weights", "inspect", str(junk)])
    assert result.exit_code == 2
    assert result.output.count("\n") == 1 and "neither a torch checkpoint" in result.output
    torch.save({"something": torch.zeros(2)}, tmp_path / "other.pt")
    result = runner.invoke(app, ["weights", "inspect", str(tmp_path / "other.pt")])
    assert result.exit_code == 2 and "is none of" in result.output


def test_synth_writes_the_format_and_refuses_to_overwrite(tmp_path):
    out = tmp_path / "steve1.weights"
    result = runner.invoke(app, ["weights", "synth", "--kind", "steve1", "--out", str(out),
                                 "--tiny"])
    assert result.exit_code == 0, result.output
    assert out.with_suffix(".model").is_file()
    assert C.read_checkpoint(out, "steve1").config == TINY_VPT
    before = out.read_bytes()
    again = runner.invoke(app, ["weights", "synth", "--kind", "steve1", "--out", str(out),
                                "--tiny", "--seed", "1"])
    assert again.exit_code == 2 and "--force" in again.output
    assert out.read_bytes() == before
    forced = runner.invoke(app, ["weights", "synth", "--kind", "steve1", "--out", str(out),
                                 "--tiny", "--seed", "1", "--force"])
    assert forced.exit_code == 0 and out.read_bytes() != before


def test_synth_refuses_an_existing_model_file_alone(tmp_path):
    (tmp_path / "x.model").write_bytes(b"keep")
    result = runner.invoke(app, ["weights", "synth", "--kind", "vpt", "--out",
                                 str(tmp_path / "x.weights"), "--tiny"])
    assert result.exit_code == 2 and "x.model already exists" in result.output
    assert not (tmp_path / "x.weights").exists()
    assert (tmp_path / "x.model").read_bytes() == b"keep"


def test_synth_to_a_folder_says_so_before_asking_for_force(tmp_path):
    for extra in ([], ["--force"]):
        result = runner.invoke(app, ["weights", "synth", "--kind", "vpt", "--out",
                                     str(tmp_path), "--tiny", *extra])
        assert result.exit_code == 2
        assert f"{tmp_path} is a folder" in result.output and "--force" not in result.output
        assert f"--out {tmp_path / 'vpt.weights'}" in result.output
    assert not any(tmp_path.iterdir())


@pytest.mark.parametrize("content", [b"garbage" * 10, bytes(range(256)) * 2])
def test_inspect_refuses_garbage_in_our_words_not_torchs_advice(tmp_path, content):
    garbage = tmp_path / "x.pt"
    garbage.write_bytes(content)
    result = runner.invoke(app, ["weights", "inspect", str(garbage)])
    assert result.exit_code == 2
    assert f"{garbage} is neither a torch checkpoint nor a VPT .model" in result.output
    assert "weights_only" not in result.output and "will likely succeed" not in result.output


def test_synth_refuses_bad_kinds_before_any_work(tmp_path):
    result = runner.invoke(app, ["weights", "synth", "--kind", "clip", "--out",
                                 str(tmp_path / "x")])
    assert result.exit_code == 2
    assert "choose one of mineclip, vpt, vpt-nav, steve1, steve1-prior" in result.output
    assert not any(tmp_path.iterdir())


def test_without_torch_the_commands_say_what_to_install(monkeypatch, tmp_path):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "torch" else real(name, *a))
    result = runner.invoke(app, ["weights", "synth", "--kind", "vpt", "--out",
                                 str(tmp_path / "x")])
    assert result.exit_code == 2
    assert "pip install 'mrsteve[minecraft]'" in result.output
    assert not any(tmp_path.iterdir())


def test_the_agents_parts_load_from_the_files(tiny_files):
    import numpy as np

    from mrsteve.minecraft.policies import MineClipEncoder, Steve1Policy, VptNavNavigator

    encoder = MineClipEncoder.from_file(tiny_files["mineclip"][0])
    navigator = VptNavNavigator.from_file(tiny_files["vpt-nav"][0])
    policy = Steve1Policy.from_files(tiny_files["steve1"][0], tiny_files["steve1-prior"][0],
                                     tiny_files["mineclip"][0])
    rgb = np.zeros((40, 64, 3), np.uint8)
    assert encoder.observe({"rgb": rgb}).shape == (32,)
    navigator.reset(np.random.default_rng(0), None)
    assert "camera" in navigator.act({"rgb": rgb, "pose": np.zeros(5)}, (5.0, 5.0))
    policy.reset(np.random.default_rng(0), None)
    assert "camera" in policy.act({"rgb": rgb}, policy.skills.skills[0].prompt)
    with pytest.raises(C.CheckpointError, match="missing"):
        VptNavNavigator.from_file(tiny_files["steve1"][0])
