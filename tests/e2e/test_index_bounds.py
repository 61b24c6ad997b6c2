"""Index bounds of the gather / scatter family (issue 15). An index outside [-n, n) of the axis it
indexes is an error in the ONNX spec's sense (ONNX Runtime refuses it): known at compile time it is
a compile error naming the node; read at run time, the kernel fails and `tessera run` exits 1 naming
the ONNX node, never reading elsewhere or returning a wrapped or clamped value. In-range indices,
negative ones included, give numpy's answer."""
import numpy as np
import onnx
import onnx.helper as oh
import pytest

from conftest import compile_and_run, run_cli
from test_cli_errors import expect_error

F, I64, I32 = onnx.TensorProto.FLOAT, onnx.TensorProto.INT64, onnx.TensorProto.INT32


def model(node, inputs, outputs, initializers=(), opset=13):
    graph = oh.make_graph([node], "g", inputs, outputs, initializer=list(initializers))
    return oh.make_model(graph, opset_imports=[oh.make_opsetid("", opset)])


def vi(name, elem, shape):
    return oh.make_tensor_value_info(name, elem, shape)


def run_expecting_index_error(tmp_path, m, feeds, node_name, op):
    onnx.save(m, tmp_path / "m.onnx")
    run_cli("compile", tmp_path / "m.onnx", "-o", tmp_path / "m.so")
    args = []
    for name, value in feeds.items():
        np.save(tmp_path / f"{name}.npy", value)
        args += ["--input", f"{name}={tmp_path / f'{name}.npy'}"]
    proc = run_cli("run", tmp_path / "m.so", *args, check=False)
    expect_error(proc, "index is out of range", f"node '{node_name}'", f"op {op}")
    assert proc.returncode == 1, proc.stderr


# The cases: (node, inputs, output, feeds with in-range indices, numpy reference, out-of-range indices).
def gather_case(dtype):
    x = np.arange(15, dtype=np.float32).reshape(5, 3)
    good = np.array([[0, 4], [-1, -5]], dtype)
    node = oh.make_node("Gather", ["x", "i"], ["y"], name="the_gather", axis=0)
    io = [vi("x", F, [5, 3]), vi("i", I64 if dtype == np.int64 else I32, [2, 2])], [vi("y", F, [2, 2, 3])]
    return node, io, {"x": x, "i": good}, np.take(x, good, axis=0), np.array([[0, 5], [1, 2]], dtype)


def gather_elements_case(dtype):
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    good = np.array([[2, -1, 0, 1], [-3, 0, 1, 2]], dtype)
    node = oh.make_node("GatherElements", ["x", "i"], ["y"], name="the_gather_elements", axis=0)
    io = [vi("x", F, [3, 4]), vi("i", I64 if dtype == np.int64 else I32, [2, 4])], [vi("y", F, [2, 4])]
    ref = np.take_along_axis(x, np.where(good < 0, good + 3, good).astype(np.int64), axis=0)
    return node, io, {"x": x, "i": good}, ref, np.array([[0, 0, -4, 0], [0, 0, 0, 0]], dtype)


def gather_nd_case(dtype):
    x = np.arange(24, dtype=np.float32).reshape(2, 3, 4)
    good = np.array([[1, -1], [0, 2]], dtype)
    node = oh.make_node("GatherND", ["x", "i"], ["y"], name="the_gather_nd")
    io = [vi("x", F, [2, 3, 4]), vi("i", I64, [2, 2])], [vi("y", F, [2, 4])]
    return node, io, {"x": x, "i": good.astype(np.int64)}, np.stack([x[1, 2], x[0, 2]]), np.array([[0, 3], [0, 0]], np.int64)


def scatter_elements_case(dtype):
    x = np.zeros((3, 3), np.float32)
    u = np.array([[1, 2, 3]], np.float32)
    good = np.array([[2, -3, 1]], dtype)
    node = oh.make_node("ScatterElements", ["x", "i", "u"], ["y"], name="the_scatter_elements", axis=0)
    io = [vi("x", F, [3, 3]), vi("i", I64, [1, 3]), vi("u", F, [1, 3])], [vi("y", F, [3, 3])]
    ref = x.copy()
    for j, k in enumerate(good[0]):
        ref[k, j] = u[0, j]
    feeds = {"x": x, "i": good.astype(np.int64), "u": u}
    return node, io, feeds, ref, np.array([[0, 3, 0]], np.int64)


def scatter_nd_case(dtype):
    x = np.zeros((4, 2), np.float32)
    u = np.array([[1, 2], [3, 4]], np.float32)
    good = np.array([[3], [-4]], np.int64)
    node = oh.make_node("ScatterND", ["x", "i", "u"], ["y"], name="the_scatter_nd")
    io = [vi("x", F, [4, 2]), vi("i", I64, [2, 1]), vi("u", F, [2, 2])], [vi("y", F, [4, 2])]
    ref = x.copy()
    ref[3], ref[0] = u[0], u[1]
    return node, io, {"x": x, "i": good, "u": u}, ref, np.array([[1], [-5]], np.int64)


CASES = {"Gather": gather_case, "GatherElements": gather_elements_case, "GatherND": gather_nd_case,
         "ScatterElements": scatter_elements_case, "ScatterND": scatter_nd_case}


@pytest.mark.parametrize("op", list(CASES))
def test_in_range_indices_match_numpy(tmp_path, op):
    node, (inputs, outputs), feeds, ref, _ = CASES[op](np.int64)
    (got,) = compile_and_run(tmp_path, model(node, inputs, outputs), feeds)
    np.testing.assert_array_equal(got, ref)


@pytest.mark.parametrize("op", list(CASES))
def test_out_of_range_run_time_index_is_an_error_naming_the_node(tmp_path, op):
    node, (inputs, outputs), feeds, _, bad = CASES[op](np.int64)
    feeds = dict(feeds, i=bad)
    run_expecting_index_error(tmp_path, model(node, inputs, outputs), feeds, node.name, op)


def test_int32_indices_are_checked_too(tmp_path):
    node, (inputs, outputs), feeds, ref, bad = gather_case(np.int32)
    (got,) = compile_and_run(tmp_path, model(node, inputs, outputs), feeds)
    np.testing.assert_array_equal(got, ref)
    run_expecting_index_error(tmp_path, model(node, inputs, outputs), dict(feeds, i=bad), "the_gather", "Gather")


def test_a_fused_gather_names_its_node(tmp_path):
    # Gather fused with a Relu into one kernel (vectorized along the row): the error still names the Gather.
    nodes = [oh.make_node("Gather", ["x", "i"], ["g"], name="emb", axis=0), oh.make_node("Relu", ["g"], ["y"], name="r")]
    m = oh.make_model(oh.make_graph(nodes, "g", [vi("x", F, [10, 64]), vi("i", I64, [1, 7])], [vi("y", F, [1, 7, 64])]),
                      opset_imports=[oh.make_opsetid("", 13)])
    x = np.random.default_rng(0).standard_normal((10, 64)).astype(np.float32)
    i = np.array([[0, 9, -10, 3, 3, 2, -1]], np.int64)
    (got,) = compile_and_run(tmp_path, m, {"x": x, "i": i})
    np.testing.assert_array_equal(got, np.maximum(x[i], 0))
    for bad in (10, -11, 2**40, -(2**63)):
        run_expecting_index_error(tmp_path, m, {"x": x, "i": np.array([[0, 1, 2, bad, 3, 4, 5]], np.int64)}, "emb", "Gather")


def test_constant_out_of_range_index_is_a_compile_error(tmp_path):
    idx = oh.make_tensor("i", I64, [2], [1, 7])
    node = oh.make_node("Gather", ["x", "i"], ["y"], name="const_gather", axis=1)
    m = model(node, [vi("x", F, [2, 5])], [vi("y", F, [2, 2])], [idx])
    onnx.save(m, tmp_path / "m.onnx")
    proc = run_cli("compile", tmp_path / "m.onnx", "-o", tmp_path / "m.so", check=False)
    expect_error(proc, "const_gather", "index 7", "[-5, 5)")
    assert proc.returncode == 1


def test_activation_whose_size_overflows_is_a_user_error(tmp_path):
    # Expand to [2^40, 2^40]: 2^80 elements. Refused at compile time naming the size, not planned as a few bytes.
    shape = oh.make_tensor("s", I64, [2], [2**40, 2**40])
    node = oh.make_node("Expand", ["x", "s"], ["y"], name="huge_expand")
    m = model(node, [vi("x", F, [1, 1])], [vi("y", F, None)], [shape])
    onnx.save(m, tmp_path / "m.onnx")
    proc = run_cli("compile", tmp_path / "m.onnx", "-o", tmp_path / "m.so", check=False)
    expect_error(proc, "overflows")
    assert proc.returncode == 1


def test_indexing_an_empty_axis_fails_at_run_time(tmp_path):
    # data [0, 3]: no index is in range (every one fails), but an empty index list is fine.
    node = oh.make_node("Gather", ["x", "i"], ["y"], name="empty_axis", axis=0)
    for n_idx, ok in ((0, True), (2, False)):
        m = model(node, [vi("x", F, [0, 3]), vi("i", I64, [n_idx])], [vi("y", F, [n_idx, 3])])
        feeds = {"x": np.zeros((0, 3), np.float32), "i": np.zeros(n_idx, np.int64)}
        if ok:
            (got,) = compile_and_run(tmp_path, m, feeds)
            assert got.shape == (0, 3)
        else:
            run_expecting_index_error(tmp_path, m, feeds, "empty_axis", "Gather")
