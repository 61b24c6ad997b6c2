"""Range whose start, limit and delta arrive at run time (graph/op/vm.cc vm.range_shape and vm.range): one
compiled library, run by the VM, against ONNX Runtime for int64, int32 and float32 operands, ascending,
descending and empty ranges; a delta of 0 fails the run naming the output dim."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from conftest import run_cli, run_outputs


@pytest.mark.parametrize("dtype", [TensorProto.INT64, TensorProto.INT32, TensorProto.FLOAT])
def test_range_with_run_time_operands_matches_onnxruntime(tmp_path, dtype):
    import onnxruntime as ort
    np_dtype = helper.tensor_dtype_to_np_dtype(dtype)
    inputs = [helper.make_tensor_value_info(n, dtype, []) for n in ("start", "limit", "delta")]
    node = helper.make_node("Range", ["start", "limit", "delta"], ["y"], name="count")
    graph = helper.make_graph([node], "g", inputs, [helper.make_tensor_value_info("y", dtype, None)])
    path, so = tmp_path / "m.onnx", tmp_path / "m.so"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 11)]), path)
    run_cli("compile", path, "-o", so)
    session = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    cases = [(0, 10, 3), (5, -4, -2), (7, 7, 1), (3, 1, 1), (-2, 40, 7)]
    if dtype == TensorProto.FLOAT:
        cases += [(0.5, 3.2, 0.7), (1.0, -1.0, -0.25)]
    for k, (start, limit, delta) in enumerate(cases):
        feeds = {"start": np.array(start, np_dtype), "limit": np.array(limit, np_dtype),
                 "delta": np.array(delta, np_dtype)}
        got, _ = run_outputs(tmp_path, so, feeds, f"r{k}")
        want = session.run(None, feeds)[0]
        assert got["y"].dtype == want.dtype and got["y"].shape == want.shape, (start, limit, delta)
        np.testing.assert_allclose(got["y"], want, rtol=1e-6, err_msg=str((start, limit, delta)))
    feeds = {"start": np.array(0, np_dtype), "limit": np.array(3, np_dtype), "delta": np.array(0, np_dtype)}
    got, proc = run_outputs(tmp_path, so, feeds, "zero", check=False)
    assert got is None and proc.returncode == 1 and "'y_0'" in proc.stderr, proc.stderr
