"""ONNX Attention (opset 24) against the ONNX reference implementation, in particular the
per-batch valid key lengths (nonpad_kv_seqlen, a run-time input) combined with causal masks,
sliding windows, grouped-query heads and attention masks; FlexAttention (ai.onnx.preview) with its
score_mod / prob_mod subgraphs."""
import numpy as np
import onnx
import onnx.reference
import pytest
from onnx import TensorProto, helper

from conftest import compile_and_run, run_cli


def _model(b, hq, hkv, sq, t, d, with_mask=False, **attrs):
    inputs = [helper.make_tensor_value_info("Q", TensorProto.FLOAT, [b, hq, sq, d]),
              helper.make_tensor_value_info("K", TensorProto.FLOAT, [b, hkv, t, d]),
              helper.make_tensor_value_info("V", TensorProto.FLOAT, [b, hkv, t, d]),
              helper.make_tensor_value_info("L", TensorProto.INT64, [b])]
    names = ["Q", "K", "V", "M" if with_mask else "", "", "", "L"]
    if with_mask:
        inputs.append(helper.make_tensor_value_info("M", TensorProto.BOOL, [sq, t]))
    node = helper.make_node("Attention", names, ["Y"], **attrs)
    graph = helper.make_graph([node], "attn", inputs, [helper.make_tensor_value_info("Y", TensorProto.FLOAT, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 24)])


@pytest.mark.parametrize("attrs", [{}, {"is_causal": 1}, {"left_window_size": 2}, {"is_causal": 1, "right_window_size": 0,
                                                                                    "left_window_size": 3}])
@pytest.mark.parametrize("hkv", [4, 2])
@pytest.mark.parametrize("with_mask", [False, True])
def test_nonpad_kv_seqlen(tmp_path, attrs, hkv, with_mask):
    b, hq, sq, t, d = 3, 4, 2, 6, 8
    model = _model(b, hq, hkv, sq, t, d, with_mask, **attrs)
    rng = np.random.default_rng(11)
    feeds = {"Q": rng.standard_normal((b, hq, sq, d)).astype(np.float32),
             "K": rng.standard_normal((b, hkv, t, d)).astype(np.float32),
             "V": rng.standard_normal((b, hkv, t, d)).astype(np.float32),
             "L": np.array([6, 3, 1], np.int64)}  # the last batch attends one key (some rows none)
    if with_mask:
        feeds["M"] = rng.random((sq, t)) > 0.3
    (y,) = compile_and_run(tmp_path, model, feeds)
    want = onnx.reference.ReferenceEvaluator(model).run(None, feeds)[0]
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-6)


def test_nonpad_with_past_is_refused(tmp_path):
    model = _model(1, 2, 2, 1, 4, 8)
    node = model.graph.node[0]
    node.input[4], node.input[5] = "PK", "PV"
    model.graph.input.extend([helper.make_tensor_value_info(n, TensorProto.FLOAT, [1, 2, 3, 8]) for n in ("PK", "PV")])
    onnx.save(model, tmp_path / "m.onnx")
    proc = run_cli("compile", tmp_path / "m.onnx", "-o", tmp_path / "m.so", check=False)
    assert proc.returncode == 1
    assert "nonpad_kv_seqlen cannot be combined with past_key" in proc.stderr


def _flex_model(hq, hkv, dtype, score_mod=None, prob_mod=None, **attrs):
    b, l, s, e, ev = 2, 5, 7, 8, 6
    if score_mod is not None:
        attrs["score_mod"] = score_mod
    if prob_mod is not None:
        attrs["prob_mod"] = prob_mod
    node = helper.make_node("FlexAttention", ["Q", "K", "V"], ["Y"], domain="ai.onnx.preview", **attrs)
    graph = helper.make_graph([node], "flex", [helper.make_tensor_value_info("Q", dtype, [b, hq, l, e]),
                                               helper.make_tensor_value_info("K", dtype, [b, hkv, s, e]),
                                               helper.make_tensor_value_info("V", dtype, [b, hkv, s, ev])],
                              [helper.make_tensor_value_info("Y", dtype, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 26), helper.make_opsetid("ai.onnx.preview", 1)])
    return model, (b, hq, hkv, l, s, e, ev)


def _causal_score_mod():
    # scores [B, H, L, S] -> -inf where the key index exceeds the query index (shapes read from the tensor).
    c = lambda n, v: onnx.numpy_helper.from_array(np.array(v), n)  # noqa: E731
    nodes = [helper.make_node("Shape", ["scores"], ["sh"]),
             helper.make_node("Gather", ["sh", "i2"], ["L"], axis=0), helper.make_node("Gather", ["sh", "i3"], ["S"], axis=0),
             helper.make_node("Range", ["zero", "L", "one"], ["qr"]), helper.make_node("Reshape", ["qr", "qs"], ["q"]),
             helper.make_node("Range", ["zero", "S", "one"], ["kr"]), helper.make_node("Reshape", ["kr", "ks"], ["k"]),
             helper.make_node("GreaterOrEqual", ["q", "k"], ["m"]), helper.make_node("Where", ["m", "scores", "ninf"], ["out"])]
    inits = [c("i2", np.int64(2)), c("i3", np.int64(3)), c("zero", np.int64(0)), c("one", np.int64(1)),
             c("qs", np.array([-1, 1], np.int64)), c("ks", np.array([1, -1], np.int64)), c("ninf", np.float32(-np.inf))]
    return helper.make_graph(nodes, "score_mod", [helper.make_tensor_value_info("scores", TensorProto.FLOAT, None)],
                             [helper.make_tensor_value_info("out", TensorProto.FLOAT, None)], inits)


def _scale_prob_mod():
    return helper.make_graph([helper.make_node("Mul", ["probs", "two"], ["out"])], "prob_mod",
                             [helper.make_tensor_value_info("probs", TensorProto.FLOAT, None)],
                             [helper.make_tensor_value_info("out", TensorProto.FLOAT, None)],
                             [onnx.numpy_helper.from_array(np.array(2.0, np.float32), "two")])


@pytest.mark.parametrize("case", ["plain", "gqa", "scale", "causal_score_mod", "prob_mod", "fp16", "double"])
def test_flex_attention_matches_the_reference(tmp_path, case):
    # FlexAttention-1 (ai.onnx.preview) against the ONNX reference implementation (its function body):
    # grouped-query heads, an explicit scale, a score_mod subgraph (a causal mask built from the scores'
    # shape), a prob_mod subgraph, and 16- / 64-bit inputs (softmax in float32 for float16).
    dtype = {"fp16": TensorProto.FLOAT16, "double": TensorProto.DOUBLE}.get(case, TensorProto.FLOAT)
    model, (b, hq, hkv, l, s, e, ev) = _flex_model(
        4, 2 if case == "gqa" else 4, dtype, score_mod=_causal_score_mod() if case == "causal_score_mod" else None,
        prob_mod=_scale_prob_mod() if case == "prob_mod" else None, **({"scale": 0.3} if case == "scale" else {}))
    np_dtype = {TensorProto.FLOAT16: np.float16, TensorProto.DOUBLE: np.float64}.get(dtype, np.float32)
    rng = np.random.default_rng(12)
    feeds = {"Q": rng.standard_normal((b, hq, l, e)).astype(np_dtype),
             "K": rng.standard_normal((b, hkv, s, e)).astype(np_dtype),
             "V": rng.standard_normal((b, hkv, s, ev)).astype(np_dtype)}
    (y,) = compile_and_run(tmp_path, model, feeds)
    want = onnx.reference.ReferenceEvaluator(model).run(None, feeds)[0]
    tol = 2e-3 if case == "fp16" else 1e-5
    assert y.dtype == want.dtype and y.shape == (b, hq, l, ev)
    np.testing.assert_allclose(y.astype(np.float64), want.astype(np.float64), rtol=tol, atol=tol)


def test_flex_attention_score_mod_that_changes_the_shape_is_refused(tmp_path):
    bad = helper.make_graph([helper.make_node("ReduceSum", ["scores"], ["out"], keepdims=1)], "score_mod",
                            [helper.make_tensor_value_info("scores", TensorProto.FLOAT, None)],
                            [helper.make_tensor_value_info("out", TensorProto.FLOAT, None)])
    model, _ = _flex_model(2, 2, TensorProto.FLOAT, score_mod=bad)
    onnx.save(model, tmp_path / "m.onnx")
    proc = run_cli("compile", tmp_path / "m.onnx", "-o", tmp_path / "m.so", check=False)
    assert proc.returncode == 1
    assert "score_mod must keep its input's type" in proc.stderr, proc.stderr
