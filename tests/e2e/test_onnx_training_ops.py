"""Training-time ONNX operators, compared with the ONNX reference implementation: the
ai.onnx.preview.training optimizers (Adagrad, Momentum, Adam, with several tensors per node and
run-time R / T), BatchNormalization with training_mode=1 (batch statistics and running
statistics) and the legacy per-channel PRelu slope of opset 6."""
import numpy as np
import onnx
import onnx.reference
import pytest
from onnx import TensorProto, helper

from conftest import compile_and_run

TRAINING = "ai.onnx.preview.training"


def _optimizer_model(op, states, attrs, n=2, shape=(3, 4)):
    names = ["R", "T"] + [f"{k}{i}" for k in ["X", "G"] + states for i in range(n)]
    outs = [f"{k}{i}_new" for k in ["X"] + states for i in range(n)]
    node = helper.make_node(op, names, outs, domain=TRAINING, **attrs)
    inputs = [helper.make_tensor_value_info("R", TensorProto.FLOAT, []),
              helper.make_tensor_value_info("T", TensorProto.INT64, [])]
    inputs += [helper.make_tensor_value_info(nm, TensorProto.FLOAT, list(shape)) for nm in names[2:]]
    outputs = [helper.make_tensor_value_info(nm, TensorProto.FLOAT, list(shape)) for nm in outs]
    graph = helper.make_graph([node], op, inputs, outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(TRAINING, 1)])


@pytest.mark.parametrize("op,states,attrs", [
    ("Adagrad", ["H"], dict(decay_factor=0.1, epsilon=1e-5, norm_coefficient=0.001)),
    ("Momentum", ["V"], dict(alpha=0.95, beta=0.1, mode="standard", norm_coefficient=0.001)),
    ("Momentum", ["V"], dict(alpha=0.9, beta=0.5, mode="nesterov", norm_coefficient=0.01)),
    ("Adam", ["V", "H"], dict(alpha=0.9, beta=0.999, epsilon=1e-7, norm_coefficient=0.001,
                              norm_coefficient_post=0.01)),
])
@pytest.mark.parametrize("t", [0, 3])
def test_optimizers(tmp_path, op, states, attrs, t):
    model = _optimizer_model(op, states, attrs)
    rng = np.random.default_rng(5)
    feeds = {"R": np.array(0.1, np.float32), "T": np.array(t, np.int64)}
    for inp in model.graph.input[2:]:
        v = rng.standard_normal((3, 4)).astype(np.float32)
        feeds[inp.name] = np.abs(v) if inp.name.startswith("H") else v  # squared-gradient sums are >= 0
    got = compile_and_run(tmp_path, model, feeds)
    want = onnx.reference.ReferenceEvaluator(model).run(None, feeds)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_optimizer_rejects_bad_arity(tmp_path):
    from conftest import run_cli
    model = _optimizer_model("Adagrad", ["H"], dict(decay_factor=0.1))
    del model.graph.node[0].input[-1]
    onnx.save(model, tmp_path / "m.onnx")
    proc = run_cli("compile", tmp_path / "m.onnx", "-o", tmp_path / "m.so", check=False)
    assert proc.returncode == 1
    assert "expects R, T and n groups of (X, G, H)" in proc.stderr


@pytest.mark.parametrize("momentum", [None, 0.5])
def test_batchnorm_training_mode(tmp_path, momentum):
    attrs = dict(epsilon=1e-3, training_mode=1)
    if momentum is not None:
        attrs["momentum"] = momentum
    node = helper.make_node("BatchNormalization", ["x", "s", "b", "m", "v"], ["y", "rm", "rv"], **attrs)
    c = 3
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, c, 4, 5])] + [
        helper.make_tensor_value_info(n, TensorProto.FLOAT, [c]) for n in "sbmv"]
    outputs = [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, c, 4, 5]),
               helper.make_tensor_value_info("rm", TensorProto.FLOAT, [c]),
               helper.make_tensor_value_info("rv", TensorProto.FLOAT, [c])]
    model = helper.make_model(helper.make_graph([node], "bn", inputs, outputs),
                              opset_imports=[helper.make_opsetid("", 15)])
    rng = np.random.default_rng(2)
    feeds = {"x": rng.standard_normal((2, c, 4, 5)).astype(np.float32) * 3 + 1,
             "s": rng.standard_normal(c).astype(np.float32), "b": rng.standard_normal(c).astype(np.float32),
             "m": rng.standard_normal(c).astype(np.float32), "v": rng.random(c).astype(np.float32) + 0.5}
    got = compile_and_run(tmp_path, model, feeds)
    want = onnx.reference.ReferenceEvaluator(model).run(None, feeds)
    for g, w in zip(got, want):
        np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("shape", [(2, 3, 4), (2, 3, 4, 5)])
def test_prelu_opset6_slope_per_channel(tmp_path, shape):
    node = helper.make_node("PRelu", ["x", "slope"], ["y"])
    graph = helper.make_graph([node], "prelu", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(shape))],
                              [onnx.numpy_helper.from_array(np.array([0.1, 0.2, 0.3], np.float32), "slope")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 6)])
    x = np.random.default_rng(3).standard_normal(shape).astype(np.float32)
    (y,) = compile_and_run(tmp_path, model, {"x": x})
    slope = np.array([0.1, 0.2, 0.3], np.float32).reshape([3] + [1] * (len(shape) - 2))
    np.testing.assert_allclose(y, np.where(x > 0, x, x * slope), rtol=1e-6)
