"""The compiled inference layers give what the plain numpy formulas give (the layers' torch
equivalence is checked per learned part in tests/training)."""

from __future__ import annotations

import numpy as np
import pytest

from mrsteve.nn import (
    CausalCore,
    conv3x3_relu,
    conv_weight,
    dense,
    layer_norm,
    mlp,
    sample_category,
)


def reference_layer_norm(x, weight, bias, eps=1e-5):
    x = x.astype(np.float64)
    centred = x - x.mean(axis=-1, keepdims=True)
    variance = (centred * centred).mean(axis=-1, keepdims=True)
    return centred / np.sqrt(variance + eps) * weight + bias


def reference_step(parameters, heads, history):
    """The block's output for the last of ``history`` (float64), attending to at most
    ``context`` steps back."""
    p = {name: value.astype(np.float64) for name, value in parameters.items()}
    context = p["core.position"].shape[1]
    dim = history.shape[1]
    head_dim = dim // heads

    def project(x):
        return reference_layer_norm(x, p["core.norm1.weight"], p["core.norm1.bias"]) @ \
            p["core.qkv.weight"].T + p["core.qkv.bias"]

    window = history[-context:]
    q, k, v = np.split(project(window), 3, axis=1)
    q = q[-1].reshape(heads, head_dim)
    k = k[::-1].reshape(-1, heads, head_dim)  # offsets 0, 1, ... back from this step
    v = v[::-1].reshape(-1, heads, head_dim)
    scores = np.einsum("hd,khd->hk", q, k) / np.sqrt(head_dim) + p["core.position"][:, :len(k)]
    scores = np.exp(scores - scores.max(axis=1, keepdims=True))
    scores /= scores.sum(axis=1, keepdims=True)
    attended = np.einsum("hk,khd->hd", scores, v).reshape(-1)
    x = history[-1] + attended @ p["core.out.weight"].T + p["core.out.bias"]
    hidden = np.maximum(reference_layer_norm(x, p["core.norm2.weight"], p["core.norm2.bias"])
                        @ p["core.mlp.0.weight"].T + p["core.mlp.0.bias"], 0.0)
    return x + hidden @ p["core.mlp.2.weight"].T + p["core.mlp.2.bias"]


def core_parameters(rng, dim=32, heads=4, context=5, hidden=48):
    shapes = {"core.norm1.weight": (dim,), "core.norm1.bias": (dim,),
              "core.qkv.weight": (3 * dim, dim), "core.qkv.bias": (3 * dim,),
              "core.out.weight": (dim, dim), "core.out.bias": (dim,),
              "core.norm2.weight": (dim,), "core.norm2.bias": (dim,),
              "core.mlp.0.weight": (hidden, dim), "core.mlp.0.bias": (hidden,),
              "core.mlp.2.weight": (dim, hidden), "core.mlp.2.bias": (dim,),
              "core.position": (heads, context)}
    return {name: (rng.standard_normal(shape) / np.sqrt(shape[-1])).astype(np.float32)
            for name, shape in shapes.items()}


@pytest.mark.parametrize("relu", [False, True])
@pytest.mark.parametrize("shape", [(7,), (3, 7), (2, 3, 7)])
def test_dense_is_the_affine_map_with_zero_inputs_skipped(shape, relu):
    rng = np.random.default_rng(0)
    x = rng.standard_normal(shape).astype(np.float32)
    x[x < 0.3] = 0.0  # mostly zeros, as after a ReLU
    weight = rng.standard_normal((7, 5)).astype(np.float32)
    bias = rng.standard_normal(5).astype(np.float32)
    expected = x.astype(np.float64) @ weight + bias
    if relu:
        expected = np.maximum(expected, 0.0)
    got = dense(x, weight, bias, relu=relu)
    assert got.shape == shape[:-1] + (5,) and got.dtype == np.float32
    np.testing.assert_allclose(got, expected, atol=1e-5)


def test_mlp_puts_a_relu_between_layers_only():
    rng = np.random.default_rng(1)
    layers = [(rng.standard_normal((4, 6)).astype(np.float32), rng.standard_normal(6).astype(np.float32)),
              (rng.standard_normal((6, 3)).astype(np.float32), rng.standard_normal(3).astype(np.float32))]
    x = rng.standard_normal(4).astype(np.float32)
    expected = np.maximum(x @ layers[0][0] + layers[0][1], 0.0) @ layers[1][0] + layers[1][1]
    np.testing.assert_allclose(mlp(layers, x), expected, atol=1e-5)
    assert (mlp(layers, x) < 0).any()  # no ReLU after the last layer


def test_layer_norm_matches_torch_formula():
    rng = np.random.default_rng(2)
    x = (rng.standard_normal((3, 64)) * 5 + 2).astype(np.float32)
    weight, bias = rng.standard_normal((2, 64)).astype(np.float32)
    np.testing.assert_allclose(layer_norm(x, weight, bias), reference_layer_norm(x, weight, bias),
                               atol=1e-5)
    np.testing.assert_allclose(layer_norm(x[0], weight, bias), layer_norm(x, weight, bias)[0])


def test_conv_matches_a_direct_convolution_with_zero_padding():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 5, 6, 3)).astype(np.float32)
    torch_weight = rng.standard_normal((4, 3, 3, 3)).astype(np.float32)
    bias = rng.standard_normal(4).astype(np.float32)
    got = conv3x3_relu(x, conv_weight(torch_weight), bias, stride=2)
    padded = np.pad(x.astype(np.float64), ((0, 0), (1, 1), (1, 1), (0, 0)))
    expected = np.empty((2, 3, 3, 4))
    for r in range(3):
        for c in range(3):
            patch = padded[:, 2 * r:2 * r + 3, 2 * c:2 * c + 3, :]  # [n, ky, kx, in]
            expected[:, r, c] = np.einsum("nyxi,oiyx->no", patch, torch_weight) + bias
    np.testing.assert_allclose(got, np.maximum(expected, 0.0), atol=1e-5)


def test_causal_core_attends_to_the_last_context_steps():
    rng = np.random.default_rng(4)
    parameters = core_parameters(rng)
    core = CausalCore(parameters, heads=4, context=5)
    inputs = rng.standard_normal((12, 32)).astype(np.float32)
    for t in range(len(inputs)):  # past the context: the ring wraps
        got = core.step(inputs[t])
        np.testing.assert_allclose(got, reference_step(parameters, 4, inputs[:t + 1].astype(np.float64)),
                                   atol=1e-4)
    core.reset()
    np.testing.assert_allclose(core.step(inputs[-1]), reference_step(parameters, 4, inputs[-1:]),
                               atol=1e-4)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_sample_category_inverts_the_cumulative_softmax(dtype):
    """The category is the first whose cumulative softmax weight exceeds the draw (numpy's
    right-sided search over the float64 cumulative sum, to the bit), the last for a draw at 1."""
    rng = np.random.default_rng(5)
    for _ in range(300):
        logits = (rng.standard_normal(11) * rng.choice([0.1, 3.0, 30.0])).astype(dtype)
        draw = float(rng.random())
        cumulative = np.cumsum(np.exp(logits.astype(np.float64) - logits.max()))
        expected = min(int(np.searchsorted(cumulative, draw * cumulative[-1], side="right")), 10)
        assert sample_category(logits, draw) == expected
    assert sample_category(np.array([0.0, 0.0], dtype), 0.49) == 0
    assert sample_category(np.array([0.0, 0.0], dtype), 0.5) == 1
    assert sample_category(np.array([0.0, -1e4], dtype), 0.999999) == 0
    assert sample_category(np.array([0.0, 0.0], dtype), 1.0) == 1


@pytest.mark.parametrize("channels", [3, 16])
@pytest.mark.parametrize("stride", [1, 2])
def test_conv_sees_each_output_pixels_zero_padded_patch(channels, stride):
    """With an identity weight the convolution returns each output pixel's 3 x 3 patch, (ky,
    kx, channel) order, zero beyond the frame: exactly (RGB frames take an unrolled copy)."""
    rng = np.random.default_rng(5)
    x = rng.uniform(0.1, 1.0, (2, 7, 9, channels)).astype(np.float32)  # positive: ReLU keeps all
    identity = np.eye(9 * channels, dtype=np.float32)
    got = conv3x3_relu(x, identity, np.zeros(9 * channels, np.float32), stride)
    rows, cols = (7 - 1) // stride + 1, (9 - 1) // stride + 1
    padded = np.pad(x, ((0, 0), (1, 1), (1, 1), (0, 0)))
    patches = [[padded[:, r * stride:r * stride + 3, c * stride:c * stride + 3].reshape(2, -1)
                for c in range(cols)] for r in range(rows)]
    expected = np.stack([np.stack(row, axis=1) for row in patches], axis=1)
    assert got.shape == (2, rows, cols, 9 * channels)
    np.testing.assert_array_equal(got, expected)
    strided = np.repeat(x, 2, axis=2)[:, :, ::2]  # the same frames, not contiguous
    np.testing.assert_array_equal(
        conv3x3_relu(strided, identity, np.zeros(9 * channels, np.float32), stride), expected)
