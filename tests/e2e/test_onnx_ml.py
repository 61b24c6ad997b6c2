"""The ai.onnx.ml domain's tensor operators (Binarizer, ArrayFeatureExtractor) through the whole
compiler against ONNX Runtime (CPU) and, where ONNX Runtime has no kernel (Binarizer of double /
int), the ONNX reference implementation, on models built here; bad indices as clear errors. Exact
comparison: both ops only compare and copy."""
import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from conftest import compile_and_run, run_cli, run_outputs

ML = helper.make_opsetid("ai.onnx.ml", 1)


def _model(nodes, inputs, outputs, inits=()):
    graph = helper.make_graph(nodes, "ml", inputs, outputs, initializer=list(inits))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), ML])


def _ort(model, feeds):
    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)


def test_binarizer_every_type_and_nan(tmp_path):
    for np_t, onnx_t, threshold in [(np.float32, TensorProto.FLOAT, 0.25), (np.float64, TensorProto.DOUBLE, -1.0),
                                    (np.int64, TensorProto.INT64, 3.0), (np.int32, TensorProto.INT32, 0.0)]:
        sub = tmp_path / np.dtype(np_t).name
        sub.mkdir()
        x = (np.random.default_rng(3).uniform(-6, 6, size=(3, 4, 5))).astype(np_t)
        floating = np.issubdtype(np_t, np.floating)
        if floating:
            x[1, 1, 1] = threshold  # equal: not above
        model = _model([helper.make_node("Binarizer", ["X"], ["Y"], domain="ai.onnx.ml", threshold=threshold)],
                       [helper.make_tensor_value_info("X", onnx_t, [3, 4, 5])],
                       [helper.make_tensor_value_info("Y", onnx_t, [3, 4, 5])])
        if floating:  # ONNX Runtime refuses a NaN; the ONNX reference (and Tessera) gives 0
            x[0, 0, 0] = np.nan
        (want,) = ReferenceEvaluator(model).run(None, {"X": x})
        (got,) = compile_and_run(sub, model, {"X": x})
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
        if np_t == np.float32:  # ONNX Runtime implements the float one only
            x[0, 0, 0] = 0
            (ort_want,) = _ort(model, {"X": x})
            (sub / "ort").mkdir()
            (got,) = compile_and_run(sub / "ort", model, {"X": x})
            np.testing.assert_array_equal(got, ort_want)


def test_array_feature_extractor_constant_and_run_time_indices(tmp_path):
    x3 = np.random.default_rng(4).standard_normal((2, 3, 6)).astype(np.float32)
    x1 = np.arange(7, dtype=np.int64) * 10
    y_const = numpy_helper.from_array(np.array([[5, 0], [2, 2]], dtype=np.int64), "yc")
    nodes = [helper.make_node("ArrayFeatureExtractor", ["X3", "yc"], ["Z3"], domain="ai.onnx.ml"),
             helper.make_node("ArrayFeatureExtractor", ["X1", "Y"], ["Z1"], domain="ai.onnx.ml"),
             helper.make_node("ArrayFeatureExtractor", ["X3", "Y"], ["Z3r"], domain="ai.onnx.ml")]
    inputs = [helper.make_tensor_value_info("X3", TensorProto.FLOAT, [2, 3, 6]),
              helper.make_tensor_value_info("X1", TensorProto.INT64, [7]),
              helper.make_tensor_value_info("Y", TensorProto.INT64, [3])]
    outputs = [helper.make_tensor_value_info(n, t, None)
               for n, t in [("Z3", TensorProto.FLOAT), ("Z1", TensorProto.INT64), ("Z3r", TensorProto.FLOAT)]]
    model = _model(nodes, inputs, outputs, [y_const])
    feeds = {"X3": x3, "X1": x1, "Y": np.array([4, 1, 5], dtype=np.int64)}
    got = compile_and_run(tmp_path, model, feeds)
    for g, w in zip(got, _ort(model, feeds)):
        assert g.shape == w.shape and g.dtype == w.dtype
        np.testing.assert_array_equal(g, w)
    # A run-time index past the axis fails the run naming the node; a constant one fails the import.
    _, proc = run_outputs(tmp_path, tmp_path / "m.so", {**feeds, "Y": np.array([0, 9, 1], dtype=np.int64)}, "bad",
                          check=False)
    assert proc.returncode != 0 and "out of range" in proc.stderr and "ArrayFeatureExtractor" in proc.stderr, proc.stderr
    bad = _model([helper.make_node("ArrayFeatureExtractor", ["X3", "yc"], ["Z"], name="afe", domain="ai.onnx.ml")],
                 inputs[:1], [helper.make_tensor_value_info("Z", TensorProto.FLOAT, None)],
                 [numpy_helper.from_array(np.array([6], dtype=np.int64), "yc")])
    onnx.save(bad, tmp_path / "bad.onnx")
    proc = run_cli("compile", tmp_path / "bad.onnx", "-o", tmp_path / "bad.so", check=False)
    assert proc.returncode == 1, proc.stderr
    assert "afe" in proc.stderr and "index 6" in proc.stderr and "outside [0, 6)" in proc.stderr, proc.stderr
    assert "domain ai.onnx.ml, opset 1)" in proc.stderr, proc.stderr  # the node's domain's opset
