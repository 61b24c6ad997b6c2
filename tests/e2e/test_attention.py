"""ONNX Attention (opset 24) against the ONNX reference implementation, in particular the
per-batch valid key lengths (nonpad_kv_seqlen, a run-time input) combined with causal masks,
sliding windows, grouped-query heads and attention masks."""
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
