"""Range, Split, OneHot, AffineGrid and the window generators whose shape-deciding operand arrives at
run time (Range through vm.range_shape / vm.range; Split's sizes through vm.slice_params / vm.slice;
OneHot's depth, AffineGrid's size and the windows' size through vm.range): one compiled library, run
by the VM, against ONNX Runtime for several values; an invalid value (a Range delta of 0, split sizes
that do not cover the axis, an AffineGrid batch other than theta's) fails the run naming the node or
the output dim, never a wrong answer."""
import numpy as np
import pytest
from onnx import TensorProto, helper

from conftest import compile_graph, ort_run as _ort, run_outputs


def _compile(tmp_path, node, inputs, outputs, opset):
    return compile_graph(tmp_path, [node], inputs, outputs, opset)


def test_split_with_run_time_sizes_matches_onnxruntime(tmp_path):
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 7]),
              helper.make_tensor_value_info("split", TensorProto.INT64, [3])]
    outputs = [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("a", "b", "c")]
    node = helper.make_node("Split", ["x", "split"], ["a", "b", "c"], axis=1, name="cut")
    path, so = _compile(tmp_path, node, inputs, outputs, 13)
    x = np.arange(21, dtype=np.float32).reshape(3, 7)
    for k, sizes in enumerate([[2, 3, 2], [0, 7, 0], [1, 1, 5], [7, 0, 0]]):
        feeds = {"x": x, "split": np.array(sizes, np.int64)}
        got, _ = run_outputs(tmp_path, so, feeds, f"r{k}")
        for name, want in zip("abc", _ort(path, feeds)):
            assert got[name].shape == want.shape and np.array_equal(got[name], want), (sizes, name)
    for k, sizes in enumerate([[2, 3, 1], [2, 3, 3], [4, -1, 4]]):  # short, long, negative
        got, proc = run_outputs(tmp_path, so, {"x": x, "split": np.array(sizes, np.int64)}, f"bad{k}", check=False)
        assert got is None and proc.returncode == 1 and "cut" in proc.stderr, (sizes, proc.stderr)


@pytest.mark.parametrize("axis", [-1, 0, 1])
def test_one_hot_with_run_time_depth_and_values_matches_onnxruntime(tmp_path, axis):
    inputs = [helper.make_tensor_value_info("i", TensorProto.INT64, [2, 3]),
              helper.make_tensor_value_info("depth", TensorProto.INT64, []),
              helper.make_tensor_value_info("values", TensorProto.FLOAT, [2])]
    node = helper.make_node("OneHot", ["i", "depth", "values"], ["y"], axis=axis)
    path, so = _compile(tmp_path, node, inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], 11)
    i = np.array([[0, 2, -1], [5, -7, 3]], np.int64)
    for k, (depth, values) in enumerate([(4, [0, 1]), (7, [-2, 3.5]), (1, [5, 6])]):
        feeds = {"i": i, "depth": np.array(depth, np.int64), "values": np.array(values, np.float32)}
        got, _ = run_outputs(tmp_path, so, feeds, f"r{k}")
        want = _ort(path, feeds)[0]
        assert got["y"].shape == want.shape and np.array_equal(got["y"], want), (depth, values)


@pytest.mark.parametrize("op", ["HannWindow", "HammingWindow", "BlackmanWindow"])
@pytest.mark.parametrize("periodic", [0, 1])
def test_window_of_run_time_size_matches_onnxruntime(tmp_path, op, periodic):
    inputs = [helper.make_tensor_value_info("n", TensorProto.INT32, [])]
    node = helper.make_node(op, ["n"], ["y"], periodic=periodic)
    path, so = _compile(tmp_path, node, inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], 17)
    for k, n in enumerate([2, 8, 33]):
        feeds = {"n": np.array(n, np.int32)}
        got, _ = run_outputs(tmp_path, so, feeds, f"r{k}")
        want = _ort(path, feeds)[0]
        assert got["y"].shape == want.shape, (n, got["y"].shape, want.shape)
        np.testing.assert_allclose(got["y"], want, rtol=1e-5, atol=1e-6, err_msg=str(n))


@pytest.mark.parametrize("dtype", [TensorProto.INT64, TensorProto.INT32, TensorProto.FLOAT])
def test_range_with_run_time_operands_matches_onnxruntime(tmp_path, dtype):
    np_dtype = helper.tensor_dtype_to_np_dtype(dtype)
    inputs = [helper.make_tensor_value_info(n, dtype, []) for n in ("start", "limit", "delta")]
    node = helper.make_node("Range", ["start", "limit", "delta"], ["y"], name="count")
    path, so = _compile(tmp_path, node, inputs, [helper.make_tensor_value_info("y", dtype, None)], 11)
    cases = [(0, 10, 3), (5, -4, -2), (7, 7, 1), (3, 1, 1), (-2, 40, 7)]
    if dtype == TensorProto.FLOAT:
        cases += [(0.5, 3.2, 0.7), (1.0, -1.0, -0.25)]
    for k, (start, limit, delta) in enumerate(cases):
        feeds = {"start": np.array(start, np_dtype), "limit": np.array(limit, np_dtype),
                 "delta": np.array(delta, np_dtype)}
        got, _ = run_outputs(tmp_path, so, feeds, f"r{k}")
        want = _ort(path, feeds)[0]
        assert got["y"].dtype == want.dtype and got["y"].shape == want.shape, (start, limit, delta)
        np.testing.assert_allclose(got["y"], want, rtol=1e-6, err_msg=str((start, limit, delta)))
    feeds = {"start": np.array(0, np_dtype), "limit": np.array(3, np_dtype), "delta": np.array(0, np_dtype)}
    got, proc = run_outputs(tmp_path, so, feeds, "zero", check=False)
    assert got is None and proc.returncode == 1 and "'y_0'" in proc.stderr, proc.stderr


@pytest.mark.parametrize("align", [0, 1])
def test_affine_grid_with_a_run_time_size_matches_onnxruntime(tmp_path, align):
    inputs = [helper.make_tensor_value_info("theta", TensorProto.FLOAT, [2, 2, 3]),
              helper.make_tensor_value_info("size", TensorProto.INT64, [4])]
    node = helper.make_node("AffineGrid", ["theta", "size"], ["y"], align_corners=align, name="grid")
    path, so = _compile(tmp_path, node, inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], 20)
    theta = np.random.default_rng(2).standard_normal((2, 2, 3)).astype(np.float32)
    # No extent of 1 with align_corners: ONNX Runtime puts that single point at +1, the reference
    # implementation (and Tessera's compile-time form) at -1, PyTorch at 0.
    for k, size in enumerate([[2, 3, 4, 5], [2, 1, 2, 7], [2, 3, 6, 2]]):
        feeds = {"theta": theta, "size": np.array(size, np.int64)}
        got, _ = run_outputs(tmp_path, so, feeds, f"r{k}")
        want = _ort(path, feeds)[0]
        assert got["y"].shape == want.shape, (size, got["y"].shape, want.shape)
        np.testing.assert_allclose(got["y"], want, rtol=1e-5, atol=1e-6, err_msg=str(size))
    got, proc = run_outputs(tmp_path, so, {"theta": theta, "size": np.array([3, 1, 4, 4], np.int64)}, "bad", check=False)
    assert got is None and proc.returncode == 1 and "grid" in proc.stderr, proc.stderr
