"""Scaled dot-product attention as exporters write it (MatMul -> Mul / Div by a constant -> [Add a mask
or bias] -> Softmax -> MatMul) through the whole compiler: FuseAttention turns it into one nn.attention
kernel (graph/transform/fuse_attention.h), computed a block of query rows at a time
(topi/x86/attention.h). Each model is checked against ONNX Runtime and a float64 NumPy reference, that it
was fused (the FuseAttention step of --dump-ir has the nn.attention calls), and against the same model
compiled with the pass disabled. Shapes cover Whisper's (1,500 keys a 16-lane panel count does not
divide), BERT's additive mask, LeViT's per-head bias, a prime query count, one query row, a rank-3
(batch x heads folded) form, float64, and -inf entries in the mask.

Tolerances: float32 atol 2e-5 / rtol 1e-4 (the kernel normalizes after the product with V and scales by
1 / c where the graph divided by c: rounding differs from the unfused graph; the softmax's exp is the
compiler's own); float64 1e-12."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from conftest import compile_and_run, ort_run, run_cli, run_outputs

F32_TOL = dict(rtol=1e-4, atol=2e-5)


def _model(q_shape, k_shape, v_shape, scale_op="Mul", scale=0.125, bias=None, bias_input=False, scale_left=False,
           dtype=np.float32, probs_out=False):
    """Q [.., M, D], K [.., N, D] (transposed in the graph), V [.., N, Dv]; the scores scaled by `scale_op`
    (Mul by scale, Div by 1 / scale, or None), plus `bias` (an initializer) or a graph input "mask"."""
    et = TensorProto.DOUBLE if dtype == np.float64 else TensorProto.FLOAT
    rank = len(q_shape)
    perm = list(range(rank - 2)) + [rank - 1, rank - 2]
    inputs = [helper.make_tensor_value_info(n, et, s) for n, s in (("q", q_shape), ("k", k_shape), ("v", v_shape))]
    inits, nodes = [], [helper.make_node("Transpose", ["k"], ["kt"], perm=perm),
                        helper.make_node("MatMul", ["q", "kt"], ["s"])]
    s = "s"
    if scale_op == "Mul":
        inits.append(numpy_helper.from_array(np.array(scale, dtype), "c"))
        nodes.append(helper.make_node("Mul", ["c", s] if scale_left else [s, "c"], ["s1"]))
        s = "s1"
    elif scale_op == "Div":
        inits.append(numpy_helper.from_array(np.array(1.0 / scale, dtype), "c"))
        nodes.append(helper.make_node("Div", [s, "c"], ["s1"]))
        s = "s1"
    if bias is not None:
        inits.append(numpy_helper.from_array(bias.astype(dtype), "bias"))
        nodes.append(helper.make_node("Add", [s, "bias"], ["s2"]))
        s = "s2"
    elif bias_input is not False:
        inputs.append(helper.make_tensor_value_info("mask", et, bias_input))
        nodes.append(helper.make_node("Add", ["mask", s], ["s2"]))
        s = "s2"
    nodes += [helper.make_node("Softmax", [s], ["p"], axis=-1), helper.make_node("MatMul", ["p", "v"], ["o"])]
    outputs = [helper.make_tensor_value_info("o", et, None)]
    if probs_out:
        outputs.append(helper.make_tensor_value_info("p", et, None))
    graph = helper.make_graph(nodes, "attention", inputs, outputs, initializer=inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def _reference(q, k, v, scale, bias):
    s = q.astype(np.float64) @ np.swapaxes(k.astype(np.float64), -1, -2) * scale
    if bias is not None:
        s = s + bias
    with np.errstate(invalid="ignore"):
        e = np.exp(s - s.max(axis=-1, keepdims=True))
        return (e / e.sum(axis=-1, keepdims=True)) @ v.astype(np.float64)


def _fused_calls(tmp_path, onnx_path):
    dump = tmp_path / "ir"
    run_cli("compile", onnx_path, "-o", tmp_path / "dump.so", "--dump-ir", dump)
    step = next(p for p in dump.iterdir() if p.name.endswith("_FuseAttention.txt"))
    return step.read_text().count("nn.attention(")


def _check(tmp_path, model, feeds, scale, bias, fused=1, dtype=np.float32):
    onnx_path = tmp_path / "m.onnx"
    onnx.save(model, onnx_path)
    got = compile_and_run(tmp_path, model, feeds)[0]
    tol = F32_TOL if dtype == np.float32 else dict(rtol=1e-12, atol=1e-12)
    want = _reference(feeds["q"], feeds["k"], feeds["v"], scale, bias)
    np.testing.assert_allclose(got, want, **tol)
    np.testing.assert_allclose(got, ort_run(onnx_path, feeds)[0], **tol)
    assert _fused_calls(tmp_path, onnx_path) == fused
    # The same model without the pass: the unfused matmul / softmax kernels agree.
    run_cli("compile", onnx_path, "-o", tmp_path / "unfused.so", "--disable-pass", "FuseAttention")
    unfused, _ = run_outputs(tmp_path, tmp_path / "unfused.so", feeds, "unfused")
    np.testing.assert_allclose(got, unfused["o"], **tol)


CASES = {
    # name: (B.., M, N, D, Dv)
    "whisper-1500-keys": ((1, 2), 150, 1500, 32, 32),
    "bert": ((1, 12), 128, 128, 64, 64),
    "vit-197": ((1, 3), 197, 197, 64, 64),
    "prime-single-head": ((1, 1), 67, 29, 16, 16),
    "one-query": ((2, 4), 1, 77, 32, 32),
    "odd-dv": ((2, 3), 20, 37, 8, 12),
    "rank3": ((6,), 40, 50, 16, 16),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_attention_shapes_match_onnx_runtime(tmp_path, name):
    batch, m, n, d, dv = CASES[name]
    rng = np.random.default_rng(len(name))
    q = rng.standard_normal(batch + (m, d)).astype(np.float32)
    k = rng.standard_normal(batch + (n, d)).astype(np.float32)
    v = rng.standard_normal(batch + (n, dv)).astype(np.float32)
    scale = 1.0 / np.sqrt(d)
    model = _model(q.shape, k.shape, v.shape, scale=scale)
    _check(tmp_path, model, {"q": q, "k": k, "v": v}, scale, None)


@pytest.mark.parametrize("scale_op,scale_left", [("Div", False), ("Mul", True), (None, False)])
def test_scale_forms(tmp_path, scale_op, scale_left):
    rng = np.random.default_rng(3)
    q, k, v = (rng.standard_normal((1, 4, 24, 16)).astype(np.float32) for _ in range(3))
    scale = 0.25 if scale_op else 1.0
    model = _model(q.shape, k.shape, v.shape, scale_op=scale_op, scale=scale, scale_left=scale_left)
    _check(tmp_path, model, {"q": q, "k": k, "v": v}, scale, None)


def test_bert_additive_mask_with_masked_keys(tmp_path):
    # BERT's mask [B, 1, 1, N]: 0 where attended, -10000 (and -inf) where padded; the last row of the batch
    # has its last 20 keys masked.
    rng = np.random.default_rng(5)
    q, k, v = (rng.standard_normal((2, 4, 64, 32)).astype(np.float32) for _ in range(3))
    mask = np.zeros((2, 1, 1, 64), np.float32)
    mask[1, ..., 44:] = -10000.0
    mask[1, ..., 60:] = -np.inf
    model = _model(q.shape, k.shape, v.shape, scale_op="Div", scale=1 / 8, bias_input=[2, 1, 1, 64])
    _check(tmp_path, model, {"q": q, "k": k, "v": v, "mask": mask}, 1 / 8, mask)


def test_levit_per_head_bias(tmp_path):
    rng = np.random.default_rng(6)
    q, k = (rng.standard_normal((1, 4, 49, 16)).astype(np.float32) for _ in range(2))
    v = rng.standard_normal((1, 4, 49, 32)).astype(np.float32)
    bias = rng.standard_normal((4, 49, 49)).astype(np.float32)
    model = _model(q.shape, k.shape, v.shape, scale=0.25, bias=bias)
    _check(tmp_path, model, {"q": q, "k": k, "v": v}, 0.25, bias)


def test_float64(tmp_path):
    rng = np.random.default_rng(7)
    q, k, v = (rng.standard_normal((1, 2, 33, 8)) for _ in range(3))
    model = _model(q.shape, k.shape, v.shape, scale=0.3, dtype=np.float64)
    _check(tmp_path, model, {"q": q, "k": k, "v": v}, 0.3, None, dtype=np.float64)


def test_returned_probabilities_are_not_fused(tmp_path):
    # The attention weights are a graph output too: nothing is fused, both outputs are right.
    rng = np.random.default_rng(8)
    q, k, v = (rng.standard_normal((1, 2, 10, 8)).astype(np.float32) for _ in range(3))
    model = _model(q.shape, k.shape, v.shape, scale=0.5, probs_out=True)
    onnx_path = tmp_path / "m.onnx"
    onnx.save(model, onnx_path)
    got = compile_and_run(tmp_path, model, {"q": q, "k": k, "v": v})
    for g, w in zip(got, ort_run(onnx_path, {"q": q, "k": k, "v": v})):
        np.testing.assert_allclose(g, w, **F32_TOL)
    assert _fused_calls(tmp_path, onnx_path) == 0
