"""Outputs whose size the data decides (issue 14): NonZero, Compress with a run-time condition and
NonMaxSuppression. One compiled library runs several inputs whose outputs have different lengths
(the VM binds the count a kernel computed), each against ONNX Runtime; Compress's refused condition
and a constant NonZero (folded at import) are checked too."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from conftest import compile_graph as _compile, ort_run as _ort, run_cli, run_outputs


def _check(tmp_path, path, so, cases):
    for k, feeds in enumerate(cases):
        got, _ = run_outputs(tmp_path, so, feeds, f"r{k}")
        for name, want in zip(sorted(got), _ort(path, feeds)):
            assert got[name].dtype == want.dtype and got[name].shape == want.shape, (k, got[name].shape, want.shape)
            assert np.array_equal(got[name], want), (k, got[name], want)


@pytest.mark.parametrize("dtype", [TensorProto.FLOAT, TensorProto.INT32, TensorProto.BOOL])
def test_nonzero_of_run_time_values_matches_onnxruntime(tmp_path, dtype):
    np_dtype = helper.tensor_dtype_to_np_dtype(dtype)
    inputs = [helper.make_tensor_value_info("x", dtype, [3, 4, 5])]
    node = helper.make_node("NonZero", ["x"], ["y"], name="nz")
    path, so = _compile(tmp_path, [node], inputs, [helper.make_tensor_value_info("y", TensorProto.INT64, None)], 13)
    rng = np.random.default_rng(0)
    cases = [rng.integers(-1, 2, (3, 4, 5)), np.zeros((3, 4, 5)), np.ones((3, 4, 5)),
             (rng.random((3, 4, 5)) < 0.05)]
    _check(tmp_path, path, so, [{"x": c.astype(np_dtype)} for c in cases])


def test_nonzero_of_a_constant_folds_at_import(tmp_path):
    c = helper.make_tensor("c", TensorProto.FLOAT, [2, 3], [0, 1.5, 0, float("nan"), 0, -2])
    nodes = [helper.make_node("NonZero", ["c"], ["nz"]), helper.make_node("Add", ["nz", "x"], ["y"])]
    inputs = [helper.make_tensor_value_info("x", TensorProto.INT64, [2, 3])]
    path, so = _compile(tmp_path, nodes, inputs, [helper.make_tensor_value_info("y", TensorProto.INT64, None)], 13, [c])
    _check(tmp_path, path, so, [{"x": np.arange(6, dtype=np.int64).reshape(2, 3)}])


@pytest.mark.parametrize("axis", [None, 0, 1, -1])
def test_compress_with_a_run_time_condition_matches_onnxruntime(tmp_path, axis):
    x_shape, n = [4, 6], {None: 24, 0: 4, 1: 6, -1: 6}[axis]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, x_shape),
              helper.make_tensor_value_info("c", TensorProto.BOOL, [n - 1])]  # shorter than the axis
    attrs = {} if axis is None else {"axis": axis}
    node = helper.make_node("Compress", ["x", "c"], ["y"], **attrs)
    path, so = _compile(tmp_path, [node], inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], 11)
    x = np.arange(24, dtype=np.float32).reshape(x_shape)
    rng = np.random.default_rng(1)
    conds = [rng.random(n - 1) < 0.5, np.zeros(n - 1, bool), np.ones(n - 1, bool)]
    _check(tmp_path, path, so, [{"x": x, "c": c} for c in conds])


def test_compress_refuses_a_condition_longer_than_the_axis(tmp_path):
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 6]),
              helper.make_tensor_value_info("c", TensorProto.BOOL, [5])]
    node = helper.make_node("Compress", ["x", "c"], ["y"], axis=0, name="pick")
    graph = helper.make_graph([node], "g", inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    path = tmp_path / "m.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)]), path)
    proc = run_cli("compile", path, "-o", tmp_path / "m.so", check=False)
    assert proc.returncode == 1 and "pick" in proc.stderr and "longer" in proc.stderr, proc.stderr


def _boxes(rng, b, n, center):
    xy = rng.random((b, n, 2)).astype(np.float32) * 10
    wh = rng.random((b, n, 2)).astype(np.float32) * 4 + 0.5
    if center:
        return np.concatenate([xy, wh], axis=2)
    corners = np.concatenate([xy[..., ::-1], (xy + wh)[..., ::-1]], axis=2)  # [y1, x1, y2, x2]
    corners[:, ::3] = corners[:, ::3][..., [2, 3, 0, 1]]  # some boxes with their corners flipped
    return corners


@pytest.mark.parametrize("center", [0, 1])
def test_non_max_suppression_matches_onnxruntime(tmp_path, center):
    b, c, n = 2, 3, 40
    inputs = [helper.make_tensor_value_info("boxes", TensorProto.FLOAT, [b, n, 4]),
              helper.make_tensor_value_info("scores", TensorProto.FLOAT, [b, c, n]),
              helper.make_tensor_value_info("max_out", TensorProto.INT64, [1]),
              helper.make_tensor_value_info("iou", TensorProto.FLOAT, [1]),
              helper.make_tensor_value_info("score", TensorProto.FLOAT, [1])]
    node = helper.make_node("NonMaxSuppression", ["boxes", "scores", "max_out", "iou", "score"], ["sel"],
                            center_point_box=center)
    path, so = _compile(tmp_path, [node], inputs, [helper.make_tensor_value_info("sel", TensorProto.INT64, None)], 11)
    rng = np.random.default_rng(2 + center)
    cases = []
    for max_out, iou, score in [(5, 0.3, 0.2), (100, 0.5, 0.0), (0, 0.5, 0.0), (3, 0.0, 0.9), (40, 1.0, -1.0)]:
        scores = np.round(rng.random((b, c, n)), 2).astype(np.float32)  # ties included
        cases.append({"boxes": _boxes(rng, b, n, center), "scores": scores,
                      "max_out": np.array([max_out], np.int64), "iou": np.array([iou], np.float32),
                      "score": np.array([score], np.float32)})
    _check(tmp_path, path, so, cases)


def test_non_max_suppression_without_a_score_threshold_matches_onnxruntime(tmp_path):
    b, c, n = 1, 2, 25
    inputs = [helper.make_tensor_value_info("boxes", TensorProto.FLOAT, [b, n, 4]),
              helper.make_tensor_value_info("scores", TensorProto.FLOAT, [b, c, n])]
    max_out = helper.make_tensor("max_out", TensorProto.INT64, [1], [10])
    iou = helper.make_tensor("iou", TensorProto.FLOAT, [1], [0.4])
    node = helper.make_node("NonMaxSuppression", ["boxes", "scores", "max_out", "iou"], ["sel"])
    path, so = _compile(tmp_path, [node], inputs, [helper.make_tensor_value_info("sel", TensorProto.INT64, None)], 11,
                        [max_out, iou])
    rng = np.random.default_rng(7)
    cases = [{"boxes": _boxes(rng, b, n, 0), "scores": rng.random((b, c, n)).astype(np.float32) - 0.5}
             for _ in range(3)]
    _check(tmp_path, path, so, cases)


def _unique_model(tmp_path, shape, dtype, **attrs):
    inputs = [helper.make_tensor_value_info("x", dtype, shape)]
    names = ["y", "indices", "inverse", "counts"]
    outputs = [helper.make_tensor_value_info("y", dtype, None)] + [
        helper.make_tensor_value_info(n, TensorProto.INT64, None) for n in names[1:]]
    node = helper.make_node("Unique", ["x"], names, **attrs)
    return _compile(tmp_path, [node], inputs, outputs, 11)


@pytest.mark.parametrize("attrs", [{}, {"sorted": 0}, {"axis": 0}, {"axis": 1, "sorted": 0}, {"axis": -1}])
def test_unique_matches_onnxruntime(tmp_path, attrs):
    path, so = _unique_model(tmp_path, [6, 4], TensorProto.FLOAT, **attrs)
    rng = np.random.default_rng(3)
    cases = [rng.integers(0, 3, (6, 4)), np.zeros((6, 4)), np.arange(24).reshape(6, 4) % 5,
             np.repeat(rng.integers(0, 2, (3, 4)), 2, axis=0)]
    for k, x in enumerate(cases):
        feeds = {"x": x.astype(np.float32)}
        got, _ = run_outputs(tmp_path, so, feeds, f"r{k}")
        for name, want in zip(["y", "indices", "inverse", "counts"], _ort(path, feeds)):
            assert got[name].shape == want.shape and np.array_equal(got[name], want), (attrs, k, name, got[name], want)


def test_unique_of_nans_follows_numpy(tmp_path):
    """NaNs are one distinct value that sorts last (numpy.unique's equal_nan default)."""
    path, so = _unique_model(tmp_path, [7], TensorProto.FLOAT)
    x = np.array([3, np.nan, 1, 3, np.nan, -2, 1], np.float32)
    got, _ = run_outputs(tmp_path, so, {"x": x}, "nan")
    y, indices, inverse, counts = np.unique(x, return_index=True, return_inverse=True, return_counts=True)
    np.testing.assert_array_equal(got["y"], y)
    for name, want in [("indices", indices), ("inverse", inverse), ("counts", counts)]:
        assert np.array_equal(got[name], want), (name, got[name], want)

