"""Resize and Upsample whose scales, sizes or roi arrive at run time (graph/op/vm.cc vm.resize_shape and
vm.resize): one compiled library, run by the VM, against ONNX Runtime for several values of the operand
in each interpolation mode (nearest with its rounding modes, linear, cubic, antialias, exclude_outside,
keep_aspect_ratio_policy, tf_crop_and_resize), on an input whose spatial extents are themselves
symbolic; a scale that gives an empty output, or is not positive, fails the run naming the output dim."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from conftest import run_cli, run_outputs


def _compile(tmp_path, nodes, inputs, initializers=(), opset=19, *flags):
    graph = helper.make_graph(nodes, "g", inputs, [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)],
                              list(initializers))
    path = tmp_path / "m.onnx"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]), path)
    so = tmp_path / "m.so"
    run_cli("compile", path, "-o", so, *flags)
    return path, so


def _check(tmp_path, path, so, feeds, tag, atol=1e-5):
    import onnxruntime as ort
    want = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    got, _ = run_outputs(tmp_path, so, feeds, tag)
    assert got["y"].shape == want.shape, (tag, got["y"].shape, want.shape)
    np.testing.assert_allclose(got["y"], want, rtol=1e-4, atol=atol, err_msg=tag)


MODES = [dict(mode="nearest", nearest_mode="round_prefer_floor", coordinate_transformation_mode="half_pixel"),
         dict(mode="nearest", nearest_mode="floor", coordinate_transformation_mode="asymmetric"),
         dict(mode="nearest", nearest_mode="round_prefer_ceil", coordinate_transformation_mode="align_corners"),
         dict(mode="linear", coordinate_transformation_mode="half_pixel"),
         dict(mode="linear", coordinate_transformation_mode="pytorch_half_pixel"),
         dict(mode="linear", coordinate_transformation_mode="align_corners", antialias=1),
         dict(mode="cubic", coordinate_transformation_mode="half_pixel", cubic_coeff_a=-0.5, exclude_outside=1),
         dict(mode="cubic", coordinate_transformation_mode="asymmetric", antialias=1)]


@pytest.mark.parametrize("attrs", MODES, ids=lambda a: "-".join(str(v) for v in a.values()))
def test_resize_with_run_time_scales_matches_onnxruntime(tmp_path, attrs):
    # The input's spatial extents are symbolic too: one library for every input and every scale.
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 2, "h", "w"]),
              helper.make_tensor_value_info("scales", TensorProto.FLOAT, [4])]
    node = helper.make_node("Resize", ["x", "", "scales"], ["y"], name="scale_it", **attrs)
    path, so = _compile(tmp_path, [node], inputs, (), 19, "--dynamic")
    rng = np.random.default_rng(0)
    # Scales exact in binary, and scale * extent whole: ONNX Runtime computes coordinates in float32,
    # Tessera in float64 (as the reference implementation; a scale such as 0.7 puts some nearest
    # coordinates on either side of a .5 tie), and align_corners divides by the output extent in ONNX
    # Runtime, by scale * extent in the reference and Tessera.
    for k, (h, w, sh, sw) in enumerate([(4, 4, 2.0, 1.5), (6, 8, 0.5, 0.75), (5, 7, 1.0, 3.0), (8, 4, 0.375, 1.25)]):
        feeds = {"x": rng.standard_normal((1, 2, h, w)).astype(np.float32),
                 "scales": np.array([1, 1, sh, sw], np.float32)}
        _check(tmp_path, path, so, feeds, f"r{k}")


@pytest.mark.parametrize("policy", ["stretch", "not_larger", "not_smaller"])
def test_resize_with_run_time_sizes_and_axes_matches_onnxruntime(tmp_path, policy):
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 6, 8]),
              helper.make_tensor_value_info("sizes", TensorProto.INT64, [2])]
    node = helper.make_node("Resize", ["x", "", "", "sizes"], ["y"], mode="linear", axes=[3, 2],
                            keep_aspect_ratio_policy=policy)
    path, so = _compile(tmp_path, [node], inputs)
    x = np.random.default_rng(1).standard_normal((1, 3, 6, 8)).astype(np.float32)
    for k, sizes in enumerate([[16, 12], [5, 3], [8, 6], [1, 20]]):
        _check(tmp_path, path, so, {"x": x, "sizes": np.array(sizes, np.int64)}, f"r{k}")


def test_tf_crop_and_resize_with_a_run_time_roi_matches_onnxruntime(tmp_path):
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 5, 5]),
              helper.make_tensor_value_info("roi", TensorProto.FLOAT, [4])]
    sizes = onnx.numpy_helper.from_array(np.array([4, 3], np.int64), "sizes")
    node = helper.make_node("Resize", ["x", "roi", "", "sizes"], ["y"], mode="linear", axes=[2, 3],
                            coordinate_transformation_mode="tf_crop_and_resize", extrapolation_value=7.0)
    path, so = _compile(tmp_path, [node], inputs, [sizes])
    x = np.arange(25, dtype=np.float32).reshape(1, 1, 5, 5)
    for k, roi in enumerate([[0.4, 0.6, 0.6, 0.8], [0.0, 0.0, 1.0, 1.0], [-0.2, 0.5, 1.3, 0.9]]):
        _check(tmp_path, path, so, {"x": x, "roi": np.array(roi, np.float32)}, f"r{k}")


def test_upsample_9_with_run_time_scales_matches_onnxruntime(tmp_path):
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 3, 4]),
              helper.make_tensor_value_info("scales", TensorProto.FLOAT, [4])]
    node = helper.make_node("Upsample", ["x", "scales"], ["y"], mode="nearest")
    path, so = _compile(tmp_path, [node], inputs, opset=9)
    x = np.arange(12, dtype=np.float32).reshape(1, 1, 3, 4)
    for k, s in enumerate([[1, 1, 2, 3], [1, 2, 1.5, 1]]):
        _check(tmp_path, path, so, {"x": x, "scales": np.array(s, np.float32)}, f"r{k}")


def test_an_invalid_run_time_scale_fails_naming_the_output_dim(tmp_path):
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 4, 4]),
              helper.make_tensor_value_info("scales", TensorProto.FLOAT, [4])]
    node = helper.make_node("Resize", ["x", "", "scales"], ["y"], name="bad_scale", mode="nearest")
    path, so = _compile(tmp_path, [node], inputs)
    x = np.ones((1, 1, 4, 4), np.float32)
    for k, s in enumerate([[1, 1, 0.1, 1], [1, 1, -2, 1], [1, 1, np.nan, 1]]):
        got, proc = run_outputs(tmp_path, so, {"x": x, "scales": np.array(s, np.float32)}, f"bad{k}", check=False)
        assert got is None and proc.returncode == 1, (s, proc.stderr)
        # y's dim 2 (symbol y_2) would be floor(4 * scale) < 1: LoadShape refuses the shape function's -1.
        assert "'y_2'" in proc.stderr and "Traceback" not in proc.stderr, proc.stderr
