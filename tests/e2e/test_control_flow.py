"""ONNX control flow decided at import, against the ONNX reference implementation (If) and ONNX Runtime
(Scan, whose axes and directions the reference lacks): If whose condition
folds at import (from a shape, as exporters emit) imports its taken branch, with outer-scope values; Scan
with a static extent is unrolled (states, several scan inputs and outputs, axes, reverse directions, and
Scan-8's batch axis). A run-time condition is refused with a message naming the VM."""
import numpy as np
import onnx
import onnx.reference
import pytest
from onnx import TensorProto, helper

from conftest import compile_and_run, run_cli


def _reference(model, feeds):
    return onnx.reference.ReferenceEvaluator(model).run(None, feeds)


def _onnxruntime(model, feeds):
    # The ONNX reference's Scan supports neither axes nor directions; ONNX Runtime's does.
    ort = pytest.importorskip("onnxruntime")
    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)


def _if_model(rank_test):
    # cond = (Size(Shape(x)) == rank_test): known at import. then: x * w (w from the outer scope); else: x + 1.
    then_g = helper.make_graph([helper.make_node("Mul", ["x", "w"], ["t"])], "then_g", [],
                               [helper.make_tensor_value_info("t", TensorProto.FLOAT, None)])
    else_g = helper.make_graph([helper.make_node("Add", ["x", "one"], ["e"])], "else_g", [],
                               [helper.make_tensor_value_info("e", TensorProto.FLOAT, None)],
                               [onnx.numpy_helper.from_array(np.array(1.0, np.float32), "one")])
    nodes = [helper.make_node("Shape", ["x"], ["s"]), helper.make_node("Size", ["s"], ["r"]),
             helper.make_node("Equal", ["r", "k"], ["c"]),
             helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)]
    graph = helper.make_graph(nodes, "if", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
                              [onnx.numpy_helper.from_array(np.array(rank_test, np.int64), "k"),
                               onnx.numpy_helper.from_array(np.full((2, 3), 3.0, np.float32), "w")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)])


@pytest.mark.parametrize("rank_test", [2, 5])
def test_if_with_a_condition_known_at_import(tmp_path, rank_test):
    model = _if_model(rank_test)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    (y,) = compile_and_run(tmp_path, model, {"x": x})
    np.testing.assert_array_equal(y, _reference(model, {"x": x})[0])


def test_if_with_a_run_time_condition_is_refused(tmp_path):
    model = _if_model(2)
    model.graph.node.pop(2)  # c becomes a graph input
    model.graph.input.append(helper.make_tensor_value_info("c", TensorProto.BOOL, []))
    onnx.save(model, tmp_path / "m.onnx")
    proc = run_cli("compile", tmp_path / "m.onnx", "-o", tmp_path / "m.so", check=False)
    assert proc.returncode == 1
    assert "an If whose condition (input 'c') is computed at run time is not supported" in proc.stderr
    assert "VM" in proc.stderr


def _scan_body():
    # state s [2], scan elems a [2], b [2] -> s' = s + a * b, out1 = s', out2 = a - b
    nodes = [helper.make_node("Mul", ["a", "b"], ["ab"]), helper.make_node("Add", ["s", "ab"], ["s2"]),
             helper.make_node("Identity", ["s2"], ["o1"]), helper.make_node("Sub", ["a", "b"], ["o2"])]
    v = lambda n: helper.make_tensor_value_info(n, TensorProto.FLOAT, [2])  # noqa: E731
    return helper.make_graph(nodes, "body", [v("s"), v("a"), v("b")], [v("s2"), v("o1"), v("o2")])


@pytest.mark.parametrize("attrs", [
    {},
    {"scan_input_directions": [1, 0], "scan_output_directions": [0, 1]},
    {"scan_input_axes": [1, 0], "scan_output_axes": [1, 0]},
    {"scan_input_axes": [-1, 0], "scan_input_directions": [0, 1], "scan_output_axes": [-1, 0]},
])
def test_scan_unrolled(tmp_path, attrs):
    a_shape = [2, 5] if attrs.get("scan_input_axes", [0])[0] in (1, -1) else [5, 2]
    node = helper.make_node("Scan", ["s0", "a", "b"], ["s", "y1", "y2"], body=_scan_body(), num_scan_inputs=2, **attrs)
    graph = helper.make_graph([node], "scan",
                              [helper.make_tensor_value_info("s0", TensorProto.FLOAT, [2]),
                               helper.make_tensor_value_info("a", TensorProto.FLOAT, a_shape),
                               helper.make_tensor_value_info("b", TensorProto.FLOAT, [5, 2])],
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("s", "y1", "y2")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)])
    rng = np.random.default_rng(9)
    feeds = {"s0": rng.standard_normal(2).astype(np.float32), "a": rng.standard_normal(a_shape).astype(np.float32),
             "b": rng.standard_normal((5, 2)).astype(np.float32)}
    got = compile_and_run(tmp_path, model, feeds)
    for g, w in zip(got, _onnxruntime(model, feeds)):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)


def test_scan8_batch(tmp_path):
    v = lambda n, s: helper.make_tensor_value_info(n, TensorProto.FLOAT, s)  # noqa: E731
    body = helper.make_graph([helper.make_node("Add", ["s", "x"], ["s2"]), helper.make_node("Identity", ["s2"], ["o"])],
                             "body", [v("s", [2]), v("x", [2])], [v("s2", [2]), v("o", [2])])
    node = helper.make_node("Scan", ["", "s0", "x"], ["s", "y"], body=body, num_scan_inputs=1, directions=[1])
    graph = helper.make_graph([node], "scan8", [v("s0", [3, 2]), v("x", [3, 4, 2])],
                              [v("s", None), v("y", None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 8)])
    rng = np.random.default_rng(10)
    feeds = {"s0": rng.standard_normal((3, 2)).astype(np.float32), "x": rng.standard_normal((3, 4, 2)).astype(np.float32)}
    got = compile_and_run(tmp_path, model, feeds)
    for g, w in zip(got, _onnxruntime(model, feeds)):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)
