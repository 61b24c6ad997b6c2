"""Hostile and careless inputs (issue 15): each gives a clear error (exit 1, naming the node and the
attribute) or the answer numpy and ONNX Runtime give, never a signal or a silently wrong value."""
import numpy as np
import onnx
import onnx.helper as oh
import onnx.numpy_helper
import onnxruntime as ort
import pytest

from conftest import compile_and_run, run_cli
from test_cli_errors import expect_error, mnist_so  # noqa: F401 (fixture)

F = onnx.TensorProto.FLOAT


def save(tmp_path, nodes, inputs, outputs, initializers=(), opset=13):
    graph = oh.make_graph(nodes, "g", inputs, outputs, initializer=list(initializers))
    path = tmp_path / "m.onnx"
    onnx.save(oh.make_model(graph, opset_imports=[oh.make_opsetid("", opset)]), str(path))
    return path


@pytest.mark.parametrize("op", ["Conv", "MaxPool", "AveragePool"])
@pytest.mark.parametrize("auto_pad", ["SAME_UPPER", "NOTSET"])
def test_zero_stride_is_a_user_error_not_sigfpe(tmp_path, op, auto_pad):
    w = oh.make_tensor("w", F, [2, 1, 3, 3], np.ones(18, np.float32))
    inputs = ["x", "w"] if op == "Conv" else ["x"]
    attrs = {"strides": [0, 1], "auto_pad": auto_pad}
    if op != "Conv":
        attrs["kernel_shape"] = [3, 3]
    node = oh.make_node(op, inputs, ["y"], name="zero_stride", **attrs)
    path = save(tmp_path, [node], [oh.make_tensor_value_info("x", F, [1, 1, 8, 8])],
                [oh.make_tensor_value_info("y", F, None)], [w] if op == "Conv" else [])
    expect_error(run_cli("compile", path, "-o", tmp_path / "m.so", check=False), "zero_stride", op, "stride")


def test_huge_dilation_is_an_overflow_error_not_garbage(tmp_path):
    w = oh.make_tensor("w", F, [1, 1, 3, 3], np.ones(9, np.float32))
    node = oh.make_node("Conv", ["x", "w"], ["y"], name="huge_dilation", dilations=[2**62, 1], pads=[1, 1, 1, 1])
    path = save(tmp_path, [node], [oh.make_tensor_value_info("x", F, [1, 1, 8, 8])],
                [oh.make_tensor_value_info("y", F, None)], [w])
    expect_error(run_cli("compile", path, "-o", tmp_path / "m.so", check=False), "overflows int64")


@pytest.mark.parametrize("dtype", [np.int32, np.int64, np.uint8, np.uint32])
def test_integer_division_by_zero_and_overflow_do_not_trap(tmp_path, dtype):
    # numpy's answers: x // 0 = 0, x % 0 = 0; MIN / -1 wraps to MIN, MIN % -1 = 0 (ONNX leaves these
    # undefined; ONNX Runtime traps on some of them).
    info = np.iinfo(dtype)
    signed = info.min < 0
    a = np.array([7, info.min, info.max, 5, 0, 9] if signed else [7, 0, info.max, 5, 0, 9], dtype)
    b = np.array([0, -1 if signed else 1, 0, 2, 0, -4 if signed else 4], dtype)
    t = onnx.helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    nodes = [oh.make_node("Div", ["a", "b"], ["q"]), oh.make_node("Mod", ["a", "b"], ["r"], fmod=0)]
    model = oh.make_model(oh.make_graph(nodes, "g", [oh.make_tensor_value_info("a", t, [6]),
                                                     oh.make_tensor_value_info("b", t, [6])],
                                        [oh.make_tensor_value_info("q", t, [6]), oh.make_tensor_value_info("r", t, [6])]),
                          opset_imports=[oh.make_opsetid("", 13)])
    q, r = compile_and_run(tmp_path, model, {"a": a, "b": b})
    safe = np.where(b == 0, 1, b)
    with np.errstate(all="ignore"):
        want_q = np.where(b == 0, 0, np.trunc(a.astype(np.float64) / safe)).astype(np.int64)
        want_r = np.where(b == 0, 0, np.mod(a.astype(np.int64), safe.astype(np.int64)))
    if signed:
        want_q[1] = info.min  # MIN / -1 wraps
        want_r[1] = 0
    np.testing.assert_array_equal(q.astype(np.int64), want_q.astype(dtype).astype(np.int64))
    np.testing.assert_array_equal(r.astype(np.int64), want_r)


@pytest.mark.parametrize("op,attrs", [("Relu", {}), ("Clip", {}), ("Max", {}), ("Min", {}), ("LeakyRelu", {}),
                                      ("MaxPool", {"kernel_shape": [2, 2]}), ("ReduceMax", {"keepdims": 1})])
def test_nan_propagates_like_numpy(tmp_path, op, attrs):
    x = np.array([[[[np.nan, 1.0, -2.0, 3.0], [0.5, np.nan, -1.0, 2.0], [1.0, 2.0, 3.0, 4.0], [-1, -2, -3, -4]]]],
                 np.float32)
    inputs = ["x", "x"] if op in ("Max", "Min") else ["x"]
    extra, inits = [], []
    if op == "Clip":
        inits = [oh.make_tensor("lo", F, [], [0.0]), oh.make_tensor("hi", F, [], [2.5])]
        inputs = ["x", "lo", "hi"]
    if op in ("Max", "Min"):
        inits = [oh.make_tensor("c", F, [1, 1, 1, 4], [0.0, 0.0, 0.0, 0.0])]
        inputs = ["x", "c"]
    node = oh.make_node(op, inputs, ["y"], **attrs)
    model = oh.make_model(oh.make_graph([node], "g", [oh.make_tensor_value_info("x", F, list(x.shape))],
                                        [oh.make_tensor_value_info("y", F, None)], initializer=inits),
                          opset_imports=[oh.make_opsetid("", 13)])
    if op == "MaxPool":
        # ONNX Runtime's MaxPool keeps a NaN only when it comes first in a window (its result depends
        # on the order of the comparisons); numpy and PyTorch's max_pool2d propagate it from anywhere.
        windows = np.lib.stride_tricks.sliding_window_view(x, (2, 2), axis=(2, 3))
        want = windows.max(axis=(-2, -1))
    else:
        want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    (got,) = compile_and_run(tmp_path, model, {"x": x})
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    np.testing.assert_allclose(np.nan_to_num(got), np.nan_to_num(want), rtol=1e-6)


def test_all_nan_input_to_mnist_gives_nan_logits(tmp_path, models_dir):
    so = tmp_path / "mnist.so"
    run_cli("compile", models_dir / "mnist-8" / "model.onnx", "-o", so)
    x = np.full((1, 1, 28, 28), np.nan, np.float32)
    np.save(tmp_path / "x.npy", x)
    run_cli("run", so, "--input", f"Input3={tmp_path / 'x.npy'}", "--output", tmp_path / "out.npz")
    out = np.load(tmp_path / "out.npz")
    (logits,) = [out[k] for k in out.files]
    assert np.isnan(logits).all(), logits


def relu_model(opset=13):
    graph = oh.make_graph([oh.make_node("Relu", ["x"], ["y"])], "g", [oh.make_tensor_value_info("x", F, [4])],
                          [oh.make_tensor_value_info("y", F, [4])])
    return oh.make_model(graph, opset_imports=[oh.make_opsetid("", opset)])


def test_newer_opset_and_ir_version_are_refused_naming_the_range(tmp_path):
    path = tmp_path / "m.onnx"
    onnx.save(relu_model(opset=99), str(path))
    expect_error(run_cli("compile", path, "-o", tmp_path / "m.so", check=False), "opset 99", "opsets 1 to 28")
    model = relu_model()
    model.ir_version = 99
    onnx.save(model, str(path))
    expect_error(run_cli("compile", path, "-o", tmp_path / "m.so", check=False), "IR version 99", "newest Tessera reads (14)")


def test_duplicate_graph_output_names_are_refused_at_compile_time(tmp_path):
    model = relu_model()
    model.graph.output.append(oh.make_tensor_value_info("y", F, [4]))
    path = tmp_path / "m.onnx"
    onnx.save(model, str(path))
    expect_error(run_cli("compile", path, "-o", tmp_path / "m.so", check=False), "graph output 'y' is listed twice")


def test_attribute_of_the_wrong_type_is_named(tmp_path):
    w = oh.make_tensor("w", F, [1, 1, 3, 3], np.ones(9, np.float32))
    node = oh.make_node("Conv", ["x", "w"], ["y"], name="float_strides", strides=[1.0, 1.0])
    path = save(tmp_path, [node], [oh.make_tensor_value_info("x", F, [1, 1, 8, 8])],
                [oh.make_tensor_value_info("y", F, None)], [w])
    expect_error(run_cli("compile", path, "-o", tmp_path / "m.so", check=False), "float_strides",
                 "attribute 'strides' must be of type INTS, got FLOATS")


def test_extra_input_is_refused_not_dropped(tmp_path):
    # Relu takes one input: a second one was ignored, a silently different model.
    node = oh.make_node("Relu", ["x", "z"], ["y"], name="relu_with_two")
    path = save(tmp_path, [node], [oh.make_tensor_value_info("x", F, [4]), oh.make_tensor_value_info("z", F, [4])],
                [oh.make_tensor_value_info("y", F, [4])])
    expect_error(run_cli("compile", path, "-o", tmp_path / "m.so", check=False), "relu_with_two",
                 "input 1 ('z') is not an input of Relu at opset 13", "remove it")


def test_inputs_without_effect_at_inference_are_accepted(tmp_path):
    # Dropout's ratio and a Resize roi outside tf_crop_and_resize are taken by the spec and have no
    # effect here: the model compiles and matches ONNX Runtime.
    ratio = oh.make_tensor("ratio", F, [], [0.3])
    roi = oh.make_tensor("roi", F, [0], [])
    scales = oh.make_tensor("scales", F, [4], [1, 1, 2, 2])
    nodes = [oh.make_node("Dropout", ["x", "ratio"], ["d"]), oh.make_node("Resize", ["d", "roi", "scales"], ["y"])]
    x = np.random.default_rng(0).standard_normal((1, 1, 3, 3)).astype(np.float32)
    graph = oh.make_graph(nodes, "g", [oh.make_tensor_value_info("x", F, [1, 1, 3, 3])],
                          [oh.make_tensor_value_info("y", F, [1, 1, 6, 6])], initializer=[ratio, roi, scales])
    model = oh.make_model(graph, opset_imports=[oh.make_opsetid("", 13)])
    (got,) = compile_and_run(tmp_path, model, {"x": x})
    ref = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    np.testing.assert_allclose(got, ref, rtol=1e-5, atol=1e-6)


def test_initializer_whose_shape_exceeds_its_data_is_a_user_error(tmp_path):
    # dims [1, 2^40] with 40 bytes of data: a corrupt model, refused before anything is allocated.
    w = onnx.TensorProto()
    w.name, w.data_type = "w", F
    w.dims.extend([1, 2**40])
    w.raw_data = b"\0" * 40
    node = oh.make_node("Add", ["x", "w"], ["y"])
    path = save(tmp_path, [node], [oh.make_tensor_value_info("x", F, [1, 10])],
                [oh.make_tensor_value_info("y", F, None)], [w])
    expect_error(run_cli("compile", path, "-o", tmp_path / "m.so", check=False), "initializer 'w'",
                 "needs 1099511627776 elements", "holds data for 10")


def test_input_pb_whose_shape_exceeds_its_data_is_a_user_error(tmp_path, models_dir):
    so = tmp_path / "mnist.so"
    run_cli("compile", models_dir / "mnist-8" / "model.onnx", "-o", so)
    t = onnx.TensorProto()
    t.name, t.data_type = "Input3", F
    t.dims.extend([2**26, 2**26])
    t.raw_data = b"\0" * 64
    (tmp_path / "x.pb").write_bytes(t.SerializeToString())
    expect_error(run_cli("run", so, "--input", f"Input3={tmp_path / 'x.pb'}", check=False), "x.pb",
                 "holds data for 16")


def test_output_path_that_is_the_input_model_is_refused(tmp_path, models_dir):
    model = tmp_path / "m.onnx"
    model.write_bytes((models_dir / "mnist-8" / "model.onnx").read_bytes())
    before = model.read_bytes()
    expect_error(run_cli("compile", model, "-o", model, check=False), "is the input model", "m.so")
    expect_error(run_cli("compile", model, "-o", tmp_path / "." / "m.onnx", check=False), "is the input model")
    assert model.read_bytes() == before


def test_unknown_disabled_pass_is_named(tmp_path, models_dir):
    proc = run_cli("compile", models_dir / "mnist-8" / "model.onnx", "-o", tmp_path / "m.so",
                   "--disable-pass", "NoSuchPass", check=False)
    expect_error(proc, "--disable-pass 'NoSuchPass'", "FoldConstant", "LoopPartition")


@pytest.mark.parametrize("keep", [0.5, 0.9, 0.99])
def test_truncated_library_is_a_clear_error_not_sigbus(tmp_path, mnist_so, keep):
    data = mnist_so.read_bytes()
    bad = tmp_path / "truncated.so"
    bad.write_bytes(data[: int(len(data) * keep)])
    x = np.zeros((1, 1, 28, 28), np.float32)
    np.save(tmp_path / "x.npy", x)
    for cmd in (("run", bad, "--input", f"Input3={tmp_path / 'x.npy'}"), ("inspect", bad)):
        expect_error(run_cli(*cmd, check=False), "truncated")


def test_threads_above_four_per_core_need_force(tmp_path, mnist_so, models_dir):
    import os

    x = models_dir / "mnist-8" / "test_data_set_0" / "input_0.pb"
    many = 4 * (os.cpu_count() or 1) + 1
    proc = run_cli("run", mnist_so, "--input", f"Input3={x}", "--threads", many, check=False)
    expect_error(proc, f"SetNumThreads({many})", "4 x the", "--force-threads")
    assert proc.returncode == 1
    run_cli("run", mnist_so, "--input", f"Input3={x}", "--threads", many, "--force-threads")


@pytest.mark.parametrize("dtype", [np.int8, np.int16, np.int32, np.int64, np.uint32])
def test_integer_constants_fold_exactly(tmp_path, dtype):
    # Cast of a constant folds at import: a negative int32 once read as 2^32 - 2 (a silently wrong answer).
    info = np.iinfo(dtype)
    k = np.array([3, info.min, info.max, -2 if info.min < 0 else 2], dtype)
    t = onnx.helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    nodes = [oh.make_node("Cast", ["k"], ["kf"], to=onnx.TensorProto.DOUBLE), oh.make_node("Mul", ["x", "kf"], ["y"])]
    graph = oh.make_graph(nodes, "g", [oh.make_tensor_value_info("x", onnx.TensorProto.DOUBLE, [4])],
                          [oh.make_tensor_value_info("y", onnx.TensorProto.DOUBLE, [4])],
                          initializer=[onnx.numpy_helper.from_array(k, "k")])
    x = np.array([1.5, 1.0, 1.0, 4.0])
    (y,) = compile_and_run(tmp_path, oh.make_model(graph, opset_imports=[oh.make_opsetid("", 13)]), {"x": x})
    np.testing.assert_array_equal(y, x * k.astype(np.float64))


@pytest.mark.parametrize("op,n", [("Add", 2), ("Equal", 2), ("Where", 3), ("Neg", 1), ("Concat", 1)])
def test_an_absent_input_of_a_folding_converter_is_named(tmp_path, op, n):
    # Every present input constant, one required input missing (a fuzz finding: an InternalError, exit 3).
    k = oh.make_tensor("k", F, [2], [1.0, 2.0])
    attrs = {"axis": 0} if op == "Concat" else {}
    inputs = ["k"] * (n - 1) if op != "Concat" else []
    node = oh.make_node(op, inputs, ["y"], name="short_node", **attrs)
    path = save(tmp_path, [node], [], [oh.make_tensor_value_info("y", F, None)], [k])
    proc = run_cli("compile", path, "-o", tmp_path / "m.so", check=False)
    expect_error(proc, "short_node", op)
    assert proc.returncode == 1, proc.stderr
