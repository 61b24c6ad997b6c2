"""A graph input with no elements (a static dim of 0) is known at import: the empty tensor. ReduceSum-18's
empty `axes` input then reduces every axis, or none with noop_with_empty_axes, as ONNX Runtime does."""
import numpy as np
import pytest
from onnx import TensorProto, helper

from conftest import compile_and_run

ort = pytest.importorskip("onnxruntime")


@pytest.mark.parametrize("op", ["ReduceSum", "ReduceMax", "ReduceL2"])
@pytest.mark.parametrize("noop", [0, 1])
@pytest.mark.parametrize("keepdims", [0, 1])
def test_empty_axes_input(tmp_path, op, noop, keepdims):
    node = helper.make_node(op, ["x", "axes"], ["y"], keepdims=keepdims, noop_with_empty_axes=noop)
    graph = helper.make_graph([node], "r", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4]),
                                            helper.make_tensor_value_info("axes", TensorProto.INT64, [0])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)])
    feeds = {"x": np.random.default_rng(4).standard_normal((2, 3, 4)).astype(np.float32),
             "axes": np.zeros(0, np.int64)}
    (y,) = compile_and_run(tmp_path, model, feeds)
    (want,) = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    assert y.shape == want.shape
    np.testing.assert_allclose(y, want, rtol=1e-5, atol=1e-6)
