"""Dynamic shapes end to end (issue 14: Relay's Any, the VM with symbolic extents): a model whose
inputs keep symbolic dims is compiled once (`tessera compile --dynamic`, or `--input-shape` with a
'?' or a symbol name) and the one library runs every extent, matching ONNX Runtime.

Models: a BERT encoder (bench/torch_models.BertBase, 2 layers, hidden 64, random weights, the
TorchScript exporter with dynamic_axes {1: "seq"}: its Shape / Gather / Concat / Reshape and Range
chains exercise the importer's symbolic shape values) at sequence lengths 1..512, and a small MLP
with a '?' batch given on the command line.

Tolerance: |got - ref| <= 1e-4 + 1e-3 * |ref| elementwise (as test_accuracy_vs_ort.py).
"""
import pathlib
import sys
import warnings

import numpy as np
import onnx
import onnx.helper as oh
import onnxruntime as ort
import pytest

from conftest import ROOT, run_cli

ATOL, RTOL = 1e-4, 1e-3
BERT_INPUTS = ["input_ids", "attention_mask", "token_type_ids"]


def _check(got, ref, what):
    assert got.shape == ref.shape, f"{what}: shape {got.shape}, want {ref.shape}"
    bad = np.abs(got - ref) > ATOL + RTOL * np.abs(ref)
    assert not bad.any(), f"{what}: {bad.sum()} elements off, max abs error {np.abs(got - ref).max():.3g}"


def _run(tmp, so, feeds, tag):
    args = []
    for name, value in feeds.items():
        path = tmp / f"{tag}_{name}.npy"
        np.save(path, value)
        args += ["--input", f"{name}={path}"]
    out = tmp / f"{tag}.npz"
    run_cli("run", so, *args, "--output", out)
    return np.load(out)


@pytest.fixture(scope="module")
def bert(tmp_path_factory):
    import torch  # scripts/setup.sh installs it: a missing torch fails the test, never skips it
    sys.path.insert(0, str(ROOT / "bench"))
    import torch_models as tm

    tmp = tmp_path_factory.mktemp("dynamic_bert")
    torch.manual_seed(0)
    model = tm.BertBase(vocab=1000, hidden=64, layers=2, heads=4, inter=128).eval()
    ids = torch.randint(0, 1000, (1, 16))
    args = (ids, torch.ones(1, 16, dtype=torch.int64), torch.zeros(1, 16, dtype=torch.int64))
    path = tmp / "bert.onnx"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, args, str(path), input_names=BERT_INPUTS,
                          output_names=["last_hidden_state", "pooler_output"], opset_version=17, dynamo=False,
                          dynamic_axes={n: {1: "seq"} for n in BERT_INPUTS})
    so = tmp / "bert.so"
    proc = run_cli("compile", path, "-o", so, "--dynamic")
    assert "bound to" not in proc.stderr, proc.stderr  # nothing was specialized
    return tmp, path, so


@pytest.mark.parametrize("seq", [1, 2, 17, 128, 333, 512])
def test_bert_compiled_once_runs_every_length(bert, seq):
    tmp, path, so = bert
    rng = np.random.default_rng(seq)
    mask = np.ones((1, seq), np.int64)
    mask[0, (3 * seq) // 4:] = 0
    types = np.zeros((1, seq), np.int64)
    types[0, seq // 2:] = 1
    feeds = {"input_ids": rng.integers(0, 1000, (1, seq)).astype(np.int64), "attention_mask": mask,
             "token_type_ids": types}
    ref = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, feeds)
    got = _run(tmp, so, feeds, f"seq{seq}")
    _check(got["last_hidden_state"], ref[0], f"last_hidden_state at seq {seq}")
    _check(got["pooler_output"], ref[1], f"pooler_output at seq {seq}")


def test_inputs_that_disagree_on_a_symbol_are_a_clear_error(bert):
    tmp, _, so = bert
    feeds = {"input_ids": np.zeros((1, 5), np.int64), "attention_mask": np.ones((1, 6), np.int64),
             "token_type_ids": np.zeros((1, 5), np.int64)}
    args = []
    for name, value in feeds.items():
        np.save(tmp / f"bad_{name}.npy", value)
        args += ["--input", f"{name}={tmp / f'bad_{name}.npy'}"]
    proc = run_cli("run", so, *args, check=False)
    assert proc.returncode == 1, proc.stderr
    assert "seq" in proc.stderr and "attention_mask" in proc.stderr, proc.stderr
    np.save(tmp / "rank3.npy", np.zeros((1, 5, 1), np.int64))
    proc = run_cli("run", so, "--input", f"input_ids={tmp / 'rank3.npy'}", *args[2:], check=False)
    assert proc.returncode == 1 and "input_ids" in proc.stderr, proc.stderr


def _mlp(tmp):
    rng = np.random.default_rng(0)
    w = onnx.numpy_helper.from_array(rng.standard_normal((24, 40)).astype(np.float32), "w")
    b = onnx.numpy_helper.from_array(rng.standard_normal(40).astype(np.float32), "b")
    nodes = [oh.make_node("MatMul", ["x", "w"], ["m"]), oh.make_node("Add", ["m", "b"], ["a"]),
             oh.make_node("Relu", ["a"], ["r"]), oh.make_node("Softmax", ["r"], ["y"], axis=-1)]
    graph = oh.make_graph(nodes, "mlp", [oh.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [8, 24])],
                          [oh.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None)], [w, b])
    path = tmp / "mlp.onnx"
    onnx.save(oh.make_model(graph, opset_imports=[oh.make_opsetid("", 17)]), path)
    return path


def test_input_shape_with_a_question_mark_keeps_the_dim_symbolic(tmp_path):
    # The model declares x [8, 24]; the user asks for any batch: --input-shape x=?,24 contradicts
    # the declared static 8, which is an error naming it ...
    path = _mlp(tmp_path)
    proc = run_cli("compile", path, "-o", tmp_path / "bad.so", "--input-shape", "x=?,24", check=False)
    assert proc.returncode == 1 and "declares the static extent 8" in proc.stderr, proc.stderr
    # ... so declare it symbolic, then compile once and run several batches.
    model = onnx.load(path)
    model.graph.input[0].type.tensor_type.shape.dim[0].dim_param = "batch"
    onnx.save(model, path)
    so = tmp_path / "mlp.so"
    run_cli("compile", path, "-o", so, "--input-shape", "x=rows,24")
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    for n in (1, 5, 64, 129):
        x = np.random.default_rng(n).standard_normal((n, 24)).astype(np.float32)
        _check(_run(tmp_path, so, {"x": x}, f"n{n}")["y"], sess.run(None, {"x": x})[0], f"y at batch {n}")


def _rt_model(tmp, allowzero):
    nodes = [oh.make_node("Reshape", ["x", "s"], ["r"], allowzero=allowzero), oh.make_node("Relu", ["r"], ["y"]),
             oh.make_node("ConstantOfShape", ["s2"], ["z"],
                          value=oh.make_tensor("v", onnx.TensorProto.INT32, [1], [7]))]
    graph = oh.make_graph(nodes, "rt", [oh.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2, 3, 4]),
                                        oh.make_tensor_value_info("s", onnx.TensorProto.INT64, [3]),
                                        oh.make_tensor_value_info("s2", onnx.TensorProto.INT64, [2])],
                          [oh.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None),
                           oh.make_tensor_value_info("z", onnx.TensorProto.INT32, None)])
    path = tmp / f"rt{allowzero}.onnx"
    onnx.save(oh.make_model(graph, opset_imports=[oh.make_opsetid("", 14)]), path)
    return path


def test_reshape_and_constant_of_shape_to_shapes_computed_at_run_time(tmp_path):
    # Data-dependent shapes: the library binds the output dims from the shape inputs' values.
    path = _rt_model(tmp_path, 0)
    so = tmp_path / "rt.so"
    run_cli("compile", path, "-o", so)
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    x = np.random.default_rng(0).standard_normal((2, 3, 4)).astype(np.float32)
    for s, s2 in (([4, 0, -1], [3, 5]), ([-1, 2, 2], [1, 0]), ([24, 1, 1], [2, 2])):
        feeds = {"x": x, "s": np.array(s, np.int64), "s2": np.array(s2, np.int64)}
        got, ref = _run(tmp_path, so, feeds, "rt"), sess.run(None, feeds)
        _check(got["y"], ref[0], f"Reshape to {s}")
        assert got["z"].dtype == np.int32
        _check(got["z"], ref[1], f"ConstantOfShape {s2}")
    for s, s2, message in (([5, 0, -1], [3, 5], "element counts differ"),
                           ([4, 6, 1], [-3, 5], "negative extent -3")):
        args = []
        for name, value in {"x": x, "s": np.array(s, np.int64), "s2": np.array(s2, np.int64)}.items():
            np.save(tmp_path / f"bad_{name}.npy", value)
            args += ["--input", f"{name}={tmp_path / f'bad_{name}.npy'}"]
        proc = run_cli("run", so, *args, check=False)
        assert proc.returncode == 1 and message in proc.stderr, proc.stderr


def test_reshape_with_allowzero_at_run_time(tmp_path):
    path = _rt_model(tmp_path, 1)
    so = tmp_path / "rt1.so"
    run_cli("compile", path, "-o", so)
    x = np.random.default_rng(1).standard_normal((2, 3, 4)).astype(np.float32)
    feeds = {"x": x, "s": np.array([6, 4, 1], np.int64), "s2": np.array([0, 3], np.int64)}
    ref = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, feeds)
    got = _run(tmp_path, so, feeds, "rt1")
    _check(got["y"], ref[0], "Reshape allowzero")
    assert got["z"].shape == (0, 3)


@pytest.mark.parametrize("op,keepdims,noop", [("ReduceSum", 1, 0), ("ReduceMean", 0, 0), ("ReduceMax", 0, 0),
                                              ("ReduceLogSumExp", 1, 0), ("ReduceL2", 0, 0), ("ReduceSum", 0, 1)])
def test_reduction_over_axes_computed_at_run_time(tmp_path, op, keepdims, noop):
    attrs = {"keepdims": keepdims}
    if noop:
        attrs["noop_with_empty_axes"] = 1
    graph = oh.make_graph([oh.make_node(op, ["x", "axes"], ["y"], **attrs)], "red",
                          [oh.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [3, 4, 5]),
                           oh.make_tensor_value_info("axes", onnx.TensorProto.INT64, [2 if not noop else 0])],
                          [oh.make_tensor_value_info("y", onnx.TensorProto.FLOAT, None)])
    path = tmp_path / "red.onnx"
    onnx.save(oh.make_model(graph, opset_imports=[oh.make_opsetid("", 18)]), path)
    so = tmp_path / "red.so"
    run_cli("compile", path, "-o", so)
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    x = np.random.default_rng(2).uniform(0.5, 2, (3, 4, 5)).astype(np.float32)
    for axes in ([[0, 2], [-1, 1], [2, 0]] if not noop else [[]]):
        feeds = {"x": x, "axes": np.array(axes, np.int64)}
        _check(_run(tmp_path, so, feeds, "red")["y"], sess.run(None, feeds)[0], f"{op} over {axes}")
    if not noop:
        args = []
        for name, value in {"x": x, "axes": np.array([0, 3], np.int64)}.items():
            np.save(tmp_path / f"bad_{name}.npy", value)
            args += ["--input", f"{name}={tmp_path / f'bad_{name}.npy'}"]
        proc = run_cli("run", so, *args, check=False)  # axis 3 of a rank-3 tensor: names the node
        assert proc.returncode == 1 and f"op {op}" in proc.stderr and "outside" in proc.stderr, proc.stderr


def test_the_shape_of_a_symbolic_tensor_used_as_data_is_read_at_run_time(tmp_path):
    # y = x / n * 2 (n = x's run-time row count, read through Shape -> Gather -> Cast), and the
    # element count [rows * 3] as an int64 tensor through Shape -> ReduceProd: a shape value of
    # symbolic dims used as data becomes the VM's ShapeOf (vm.shape_of).
    i64 = onnx.TensorProto.INT64
    nodes = [oh.make_node("Shape", ["x"], ["s"]),
             oh.make_node("Gather", ["s", "zero"], ["n"]),
             oh.make_node("Cast", ["n"], ["nf"], to=onnx.TensorProto.FLOAT),
             oh.make_node("Div", ["x", "nf"], ["q"]),
             oh.make_node("Mul", ["q", "two"], ["y"]),
             oh.make_node("ReduceProd", ["s"], ["count"], keepdims=0)]
    inits = [oh.make_tensor("zero", i64, [], [0]), oh.make_tensor("two", onnx.TensorProto.FLOAT, [], [2.0])]
    graph = oh.make_graph(nodes, "shape_data", [oh.make_tensor_value_info("x", onnx.TensorProto.FLOAT, ["rows", 3])],
                          [oh.make_tensor_value_info("y", onnx.TensorProto.FLOAT, ["rows", 3]),
                           oh.make_tensor_value_info("count", i64, [])], initializer=inits)
    path, so = tmp_path / "shape_data.onnx", tmp_path / "shape_data.so"
    onnx.save(oh.make_model(graph, opset_imports=[oh.make_opsetid("", 13)]), path)
    run_cli("compile", path, "-o", so, "--dynamic")
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    for rows in (1, 4, 37):
        x = np.random.default_rng(rows).standard_normal((rows, 3)).astype(np.float32)
        got, ref = _run(tmp_path, so, {"x": x}, f"r{rows}"), sess.run(None, {"x": x})
        _check(got["y"], ref[0], f"y at {rows} rows")
        assert got["count"].dtype == np.int64 and int(got["count"]) == int(ref[1]) == rows * 3
