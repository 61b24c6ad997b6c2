"""ONNX MaxPool's Indices output (1-D and 2-D, every storage order, pads, strides, dilations, ceil
mode, ties) against ONNX Runtime."""
import numpy as np
import pytest
from onnx import TensorProto, helper

from conftest import compile_and_run

ort = pytest.importorskip("onnxruntime")


def _model(shape, out_spatial_rank, **attrs):
    node = helper.make_node("MaxPool", ["x"], ["y", "i"], **attrs)
    graph = helper.make_graph([node], "mp", [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(shape))],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
                               helper.make_tensor_value_info("i", TensorProto.INT64, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)])


CASES = [
    dict(kernel_shape=[3, 3]),
    dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1]),
    dict(kernel_shape=[2, 3], strides=[2, 1], pads=[0, 1, 1, 0], ceil_mode=1),
    dict(kernel_shape=[2, 2], dilations=[2, 2]),
    dict(kernel_shape=[3, 3], strides=[2, 2], storage_order=1),
    dict(kernel_shape=[2, 2], pads=[1, 1, 1, 1], storage_order=1, ceil_mode=1, strides=[2, 2]),
]


@pytest.mark.parametrize("attrs", CASES)
def test_maxpool2d_indices(tmp_path, attrs):
    model = _model((2, 3, 7, 6), 2, **attrs)
    x = np.random.default_rng(0).standard_normal((2, 3, 7, 6)).astype(np.float32)
    got = compile_and_run(tmp_path, model, {"x": x})
    want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})
    np.testing.assert_array_equal(got[0], want[0])
    np.testing.assert_array_equal(got[1], want[1])


def test_maxpool_indices_ties_take_the_first_tap(tmp_path):
    model = _model((1, 2, 4, 4), 2, kernel_shape=[2, 2], strides=[2, 2])
    x = np.zeros((1, 2, 4, 4), np.float32)
    x[0, 1, 2:, 2:] = 5.0
    got = compile_and_run(tmp_path, model, {"x": x})
    want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})
    np.testing.assert_array_equal(got[1], want[1])


@pytest.mark.parametrize("attrs", [dict(kernel_shape=[3]), dict(kernel_shape=[2], strides=[2], pads=[1, 1])])
def test_maxpool1d_indices(tmp_path, attrs):
    model = _model((2, 3, 9), 1, **attrs)
    x = np.random.default_rng(1).standard_normal((2, 3, 9)).astype(np.float32)
    got = compile_and_run(tmp_path, model, {"x": x})
    want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})
    np.testing.assert_array_equal(got[1], want[1])
