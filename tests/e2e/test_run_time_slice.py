"""Slice and TopK whose shape-deciding operands arrive at run time (graph/op/vm.cc vm.slice_params and
vm.slice): one compiled library, run by the VM, against ONNX Runtime for every clamping rule of the
spec (negative and out-of-range starts / ends, negative steps and axes, default axes and steps, int32
operands, empty results) and TopK with a run-time k from 0 to the axis' extent; a step of 0, an axis
named twice and a k outside [0, n] fail the run with an error naming the node, never a wrong answer."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from conftest import ort_run as _ort, run_cli, run_outputs


def _save(tmp_path, graph, opset=13):
    path = tmp_path / "m.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]), path)
    so = tmp_path / "m.so"
    run_cli("compile", path, "-o", so)
    return path, so


def _run(tmp_path, so, feeds, tag, names, check=True):
    got, proc = run_outputs(tmp_path, so, feeds, tag, check=check)
    return [got[n] for n in names] if check else proc


@pytest.mark.parametrize("index_dtype", [TensorProto.INT64, TensorProto.INT32])
def test_slice_with_run_time_starts_ends_axes_and_steps_matches_onnxruntime(tmp_path, index_dtype):
    np_dtype = np.int64 if index_dtype == TensorProto.INT64 else np.int32
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [5, 6, 7])] + [
        helper.make_tensor_value_info(n, index_dtype, [2]) for n in ("starts", "ends", "axes", "steps")]
    graph = helper.make_graph([helper.make_node("Slice", ["x", "starts", "ends", "axes", "steps"], ["y"], name="cut")],
                              "g", inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    path, so = _save(tmp_path, graph)
    x = np.arange(5 * 6 * 7, dtype=np.float32).reshape(5, 6, 7)
    big = np.iinfo(np_dtype).max
    cases = [([0, 1], [3, 5], [0, 1], [1, 2]), ([-1, -2], [-4, -100], [0, 2], [-1, -2]),
             ([-100, 2], [100, big], [1, -1], [1, 3]), ([4, 0], [0, 7], [-3, 2], [-2, 1]),
             ([3, 3], [3, 1], [0, 1], [1, 1]), ([10, -10], [20, -20], [2, 0], [1, -1]),
             ([0, 6], [-1, np.iinfo(np_dtype).min], [1, 2], [1, -1])]
    for k, (starts, ends, axes, steps) in enumerate(cases):
        feeds = {"x": x, "starts": np.array(starts, np_dtype), "ends": np.array(ends, np_dtype),
                 "axes": np.array(axes, np_dtype), "steps": np.array(steps, np_dtype)}
        (got,) = _run(tmp_path, so, feeds, f"r{k}", ["y"])
        want = _ort(path, feeds)[0]
        assert got.shape == want.shape, (starts, ends, axes, steps, got.shape, want.shape)
        np.testing.assert_array_equal(got, want, err_msg=str((starts, ends, axes, steps)))
    feeds = {"x": x, "starts": np.array([0, 0], np_dtype), "ends": np.array([2, 2], np_dtype),
             "axes": np.array([0, 1], np_dtype), "steps": np.array([1, 0], np_dtype)}
    proc = _run(tmp_path, so, feeds, "zero", ["y"], check=False)
    assert proc.returncode == 1 and "cut" in proc.stderr, proc.stderr
    feeds["steps"], feeds["axes"] = np.array([1, 1], np_dtype), np.array([1, -2], np_dtype)  # axis 1 twice
    proc = _run(tmp_path, so, feeds, "twice", ["y"], check=False)
    assert proc.returncode == 1 and "cut" in proc.stderr, proc.stderr


def test_slice_with_run_time_ends_and_default_axes_and_steps(tmp_path):
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 9]),
              helper.make_tensor_value_info("ends", TensorProto.INT64, [2])]
    graph = helper.make_graph([helper.make_node("Slice", ["x", "starts", "ends"], ["y"])], "g", inputs,
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              [onnx.numpy_helper.from_array(np.array([1, -5], np.int64), "starts")])
    path, so = _save(tmp_path, graph, opset=11)
    x = np.random.default_rng(0).standard_normal((4, 9)).astype(np.float32)
    for k, ends in enumerate([[4, 9], [2, -1], [-10, 100], [3, 5]]):
        feeds = {"x": x, "ends": np.array(ends, np.int64)}
        (got,) = _run(tmp_path, so, feeds, f"r{k}", ["y"])
        want = _ort(path, feeds)[0]
        assert got.shape == want.shape and np.array_equal(got, want), (ends, got.shape, want.shape)


@pytest.mark.parametrize("largest,axis", [(1, -1), (0, 0)])
def test_top_k_with_a_run_time_k_matches_onnxruntime(tmp_path, largest, axis):
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [6, 8]),
              helper.make_tensor_value_info("k", TensorProto.INT64, [1])]
    graph = helper.make_graph([helper.make_node("TopK", ["x", "k"], ["values", "indices"], axis=axis, largest=largest,
                                                name="best")], "g", inputs,
                              [helper.make_tensor_value_info("values", TensorProto.FLOAT, None),
                               helper.make_tensor_value_info("indices", TensorProto.INT64, None)])
    path, so = _save(tmp_path, graph, opset=11)
    x = np.random.default_rng(1).permutation(48).astype(np.float32).reshape(6, 8)
    n = x.shape[axis]
    for k in [0, 1, 3, n]:
        feeds = {"x": x, "k": np.array([k], np.int64)}
        values, indices = _run(tmp_path, so, feeds, f"k{k}", ["values", "indices"])
        want_values, want_indices = _ort(path, feeds)
        np.testing.assert_array_equal(values, want_values, err_msg=f"k {k}")
        np.testing.assert_array_equal(indices, want_indices, err_msg=f"k {k}")
    for k in [n + 1, -1]:
        proc = _run(tmp_path, so, {"x": x, "k": np.array([k], np.int64)}, f"bad{k}", [], check=False)
        assert proc.returncode == 1 and "best" in proc.stderr, proc.stderr
