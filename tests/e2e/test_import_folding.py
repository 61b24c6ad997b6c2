"""Import-time folding of reductions over known values (shape arithmetic: torchvision's image batching
pads to the ReduceMax of constant sizes): the folded value equals ONNX Runtime's, and what depends on it
(Pad's amounts) is static, so the library needs no VM."""
import numpy as np
import pytest
from onnx import TensorProto, helper

from conftest import compile_graph as _compile, ort_run as _ort, run_cli, run_outputs


def test_a_reduction_of_constants_folds_at_import(tmp_path):
    # Image batching as torchvision exports it: the padding is ReduceMax(constant sizes) - the input's
    # extent. The reduction folds at import, so Pad's amounts are known and the program is static
    # (a graph executor library, no VM), as ONNX Runtime computes it.
    sizes = helper.make_tensor("sizes", TensorProto.INT64, [2, 2], [5, 7, 6, 4])
    nodes = [helper.make_node("ReduceMax", ["sizes"], ["m"], axes=[0], keepdims=0),  # [6, 7]
             helper.make_node("Sub", ["m", "hw"], ["extra"]),                            # [2, 3]
             helper.make_node("Concat", ["zeros", "extra"], ["after"], axis=0),
             helper.make_node("Concat", ["zeros4", "after"], ["pads"], axis=0),
             helper.make_node("Pad", ["x", "pads"], ["y"])]
    inits = [sizes, helper.make_tensor("hw", TensorProto.INT64, [2], [4, 4]),
             helper.make_tensor("zeros", TensorProto.INT64, [2], [0, 0]),
             helper.make_tensor("zeros4", TensorProto.INT64, [4], [0, 0, 0, 0])]
    path, so = _compile(tmp_path, nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 1, 4, 4])],
                        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], 13, inits)
    assert "VM bytecode" not in run_cli("inspect", so).stdout
    feeds = {"x": np.arange(16, dtype=np.float32).reshape(1, 1, 4, 4)}
    got, _ = run_outputs(tmp_path, so, feeds, "r")
    np.testing.assert_array_equal(got["y"], _ort(path, feeds)[0])


@pytest.mark.parametrize("op", ["ReduceSum", "ReduceMean", "ReduceMin", "ReduceProd", "ReduceMax"])
def test_every_plain_reduction_of_a_constant_folds_to_onnxruntimes_value(tmp_path, op):
    c = helper.make_tensor("c", TensorProto.FLOAT, [2, 3, 2], np.linspace(-1.5, 2.0, 12).tolist())
    axes = helper.make_tensor("axes", TensorProto.INT64, [2], [0, 2])
    nodes = [helper.make_node(op, ["c", "axes"], ["r"], keepdims=1), helper.make_node("Add", ["x", "r"], ["y"])]
    path, so = _compile(tmp_path, nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 3, 1])],
                        [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], 18, [c, axes])
    feeds = {"x": np.array([[[1.0], [2.0], [3.0]]], np.float32)}
    got, _ = run_outputs(tmp_path, so, feeds, "r")
    np.testing.assert_allclose(got["y"], _ort(path, feeds)[0], rtol=1e-6, atol=1e-6)
