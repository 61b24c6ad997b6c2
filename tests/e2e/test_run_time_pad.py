"""Pad whose pads, constant value or axes arrive at run time (graph/op/vm.cc vm.pad_params and vm.pad):
one compiled library, run by the VM, against ONNX Runtime in every mode (constant, reflect, edge, wrap)
with positive, zero and negative (cropping) amounts and run-time axes; reflect padding as large as the
axis fails the run naming the output dim, never a wrong answer. CenterCropPad with a run-time shape
pads and crops through the same kernels."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from conftest import run_cli, run_outputs


def _compile(tmp_path, inputs, node_inputs, mode, opset=18, *flags):
    node = helper.make_node("Pad", node_inputs, ["y"], mode=mode, name="pad_it")
    graph = helper.make_graph([node], "g", inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    path = tmp_path / "m.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]), path)
    so = tmp_path / "m.so"
    run_cli("compile", path, "-o", so, *flags)
    return path, so


def _ort(path, feeds):
    import onnxruntime as ort
    return ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, feeds)[0]


@pytest.mark.parametrize("mode", ["constant", "reflect", "edge", "wrap"])
def test_pad_with_run_time_pads_matches_onnxruntime(tmp_path, mode):
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, "w"]),
              helper.make_tensor_value_info("pads", TensorProto.INT64, [4])]
    path, so = _compile(tmp_path, inputs, ["x", "pads"], mode, 18, "--dynamic")
    rng = np.random.default_rng(0)
    cases = [(4, [1, 2, 0, 3]), (5, [0, 0, 0, 0]), (3, [1, 2, 1, 2])]
    if mode in ("constant", "edge"):  # cropping: whether it comes before or after the padding matters in the others
        cases.append((6, [2, -1, -1, 2]))
    for k, (w, pads) in enumerate(cases):
        feeds = {"x": rng.standard_normal((3, w)).astype(np.float32), "pads": np.array(pads, np.int64)}
        got, _ = run_outputs(tmp_path, so, feeds, f"r{k}")
        want = _ort(path, feeds)
        assert got["y"].shape == want.shape and np.array_equal(got["y"], want), (mode, w, pads)


def test_constant_pad_with_run_time_value_and_axes_matches_onnxruntime(tmp_path):
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4]),
              helper.make_tensor_value_info("pads", TensorProto.INT64, [4]),
              helper.make_tensor_value_info("value", TensorProto.FLOAT, []),
              helper.make_tensor_value_info("axes", TensorProto.INT64, [2])]
    path, so = _compile(tmp_path, inputs, ["x", "pads", "value", "axes"], "constant")
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    for k, (pads, value, axes) in enumerate([([1, 0, 2, 3], 1.5, [0, 2]), ([0, 2, 1, 0], -4.0, [-1, 1]),
                                             ([-1, 1, 0, 1], 0.0, [1, -3])]):
        feeds = {"x": x, "pads": np.array(pads, np.int64), "value": np.array(value, np.float32),
                 "axes": np.array(axes, np.int64)}
        got, _ = run_outputs(tmp_path, so, feeds, f"r{k}")
        want = _ort(path, feeds)
        assert got["y"].shape == want.shape and np.array_equal(got["y"], want), (pads, value, axes)


def test_reflect_padding_as_large_as_the_axis_fails_naming_the_output_dim(tmp_path):
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
              helper.make_tensor_value_info("pads", TensorProto.INT64, [4])]
    _, so = _compile(tmp_path, inputs, ["x", "pads"], "reflect")
    feeds = {"x": np.ones((2, 3), np.float32), "pads": np.array([0, 3, 0, 0], np.int64)}
    got, proc = run_outputs(tmp_path, so, feeds, "bad", check=False)
    assert got is None and proc.returncode == 1 and "'y_1'" in proc.stderr, proc.stderr


def test_center_crop_pad_with_a_run_time_shape_matches_onnxruntime(tmp_path):
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [5, 6, 3]),
              helper.make_tensor_value_info("shape", TensorProto.INT64, [2])]
    node = helper.make_node("CenterCropPad", ["x", "shape"], ["y"], axes=[0, -2])
    graph = helper.make_graph([node], "g", inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    path, so = tmp_path / "m.onnx", tmp_path / "m.so"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)]), path)
    run_cli("compile", path, "-o", so)
    x = np.arange(90, dtype=np.float32).reshape(5, 6, 3)
    for k, shape in enumerate([[3, 9], [8, 6], [5, 1], [1, 4], [10, 11]]):  # crop, pad, odd differences
        feeds = {"x": x, "shape": np.array(shape, np.int64)}
        got, _ = run_outputs(tmp_path, so, feeds, f"r{k}")
        want = _ort(path, feeds)
        assert got["y"].shape == want.shape and np.array_equal(got["y"], want), (shape, got["y"].shape, want.shape)
