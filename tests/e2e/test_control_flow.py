"""ONNX control flow, against the ONNX reference implementation (If) and ONNX Runtime
(Scan, whose axes and directions the reference lacks): If whose condition
folds at import (from a shape, as exporters emit) imports its taken branch, with outer-scope values; Scan
with a static extent is unrolled (states, several scan inputs and outputs, axes, reverse directions, and
Scan-8's batch axis). An If on a run-time condition compiles to a VM program (runtime/vm.h) that runs the
taken branch: conditions of every dtype and of one element, nested Ifs, conditions computed from the data,
values of the outer scope used in the branches and the If's outputs used after it. A small run-time integer
operand whose value does not change the output type (CumSum's axis) selects among branches the same way.
Loop with a trip count known at import unrolls; a run-time condition guards each iteration with an If.
A Loop whose trip count is read at run time, absent, or above the unrolling limit runs as a VM loop (a
tail-recursive function, driver/vm_codegen.h): zero, one and many iterations, data-dependent exits; its
scan outputs, of a run-time length, accumulate in VM lists of tensors."""
import numpy as np
import onnx
import onnx.reference
import pytest
from onnx import TensorProto, helper

from conftest import compile_and_run, run_cli, run_outputs


def _reference(model, feeds):
    return onnx.reference.ReferenceEvaluator(model).run(None, feeds)


def _onnxruntime(model, feeds):
    # The ONNX reference's Scan supports neither axes nor directions; ONNX Runtime's does.
    ort = pytest.importorskip("onnxruntime")
    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)


def _if_model(rank_test):
    # cond = (Size(Shape(x)) == rank_test): known at import. then: x * w (w from the outer scope); else: x + 1.
    then_g = helper.make_graph([helper.make_node("Mul", ["x", "w"], ["t"])], "then_g", [],
                               [helper.make_tensor_value_info("t", TensorProto.FLOAT, None)])
    else_g = helper.make_graph([helper.make_node("Add", ["x", "one"], ["e"])], "else_g", [],
                               [helper.make_tensor_value_info("e", TensorProto.FLOAT, None)],
                               [onnx.numpy_helper.from_array(np.array(1.0, np.float32), "one")])
    nodes = [helper.make_node("Shape", ["x"], ["s"]), helper.make_node("Size", ["s"], ["r"]),
             helper.make_node("Equal", ["r", "k"], ["c"]),
             helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)]
    graph = helper.make_graph(nodes, "if", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3])],
                              [onnx.numpy_helper.from_array(np.array(rank_test, np.int64), "k"),
                               onnx.numpy_helper.from_array(np.full((2, 3), 3.0, np.float32), "w")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)])


@pytest.mark.parametrize("rank_test", [2, 5])
def test_if_with_a_condition_known_at_import(tmp_path, rank_test):
    model = _if_model(rank_test)
    x = np.arange(6, dtype=np.float32).reshape(2, 3)
    (y,) = compile_and_run(tmp_path, model, {"x": x})
    np.testing.assert_array_equal(y, _reference(model, {"x": x})[0])


def _compile(tmp_path, model, *extra):
    onnx_path, so = tmp_path / "m.onnx", tmp_path / "m.so"
    onnx.save(model, onnx_path)
    run_cli("compile", onnx_path, "-o", so, *extra)
    return so


def _run(tmp_path, so, feeds, tag, names=("y", "b")):
    got, _ = run_outputs(tmp_path, so, feeds, tag)
    return [got[k] for k in names]


def _branch(name, nodes, outputs, initializers=()):
    return helper.make_graph(nodes, name, [], [helper.make_tensor_value_info(o, TensorProto.FLOAT, None) for o in outputs],
                             list(initializers))


def _run_time_if_model(cond_dtype=TensorProto.BOOL, cond_shape=(), nested=False):
    # Outer: h = Relu(x @ w); If(c): then (a, b) = (Tanh(h @ w) + w0, h * 2) [nested: a from an inner If on d]
    #                                  else (a, b) = (Sigmoid(h) - 1, h + x); y = a + b (after the If).
    then_nodes = [helper.make_node("MatMul", ["h", "w"], ["tm"]), helper.make_node("Tanh", ["tm"], ["tt"]),
                  helper.make_node("Add", ["tt", "w0"], ["ta"]), helper.make_node("Mul", ["h", "two"], ["tb"])]
    then_init = [onnx.numpy_helper.from_array(np.array(2.0, np.float32), "two")]
    if nested:
        inner_then = _branch("inner_then", [helper.make_node("Neg", ["ta"], ["it"])], ["it"])
        inner_else = _branch("inner_else", [helper.make_node("Abs", ["tm"], ["ie"])], ["ie"])
        then_nodes.append(helper.make_node("If", ["d"], ["ta2"], then_branch=inner_then, else_branch=inner_else))
        then_g = _branch("then_g", then_nodes, ["ta2", "tb"], then_init)
    else:
        then_g = _branch("then_g", then_nodes, ["ta", "tb"], then_init)
    else_g = _branch("else_g", [helper.make_node("Sigmoid", ["h"], ["es"]), helper.make_node("Sub", ["es", "one"], ["ea"]),
                                helper.make_node("Add", ["h", "x"], ["eb"])], ["ea", "eb"],
                     [onnx.numpy_helper.from_array(np.array(1.0, np.float32), "one")])
    nodes = [helper.make_node("MatMul", ["x", "w"], ["xm"]), helper.make_node("Relu", ["xm"], ["h"]),
             helper.make_node("If", ["c"], ["a", "b"], then_branch=then_g, else_branch=else_g),
             helper.make_node("Add", ["a", "b"], ["y"])]
    inputs = [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 8]),
              helper.make_tensor_value_info("c", cond_dtype, list(cond_shape))]
    if nested:
        inputs.append(helper.make_tensor_value_info("d", TensorProto.BOOL, []))
    rng = np.random.default_rng(0)
    graph = helper.make_graph(nodes, "run_time_if", inputs,
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, 8]),
                               helper.make_tensor_value_info("b", TensorProto.FLOAT, [4, 8])],
                              [onnx.numpy_helper.from_array(rng.standard_normal((8, 8)).astype(np.float32), "w"),
                               onnx.numpy_helper.from_array(rng.standard_normal(8).astype(np.float32), "w0")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)])


def _cond(value, dtype, shape):
    return np.full(shape, value, dtype)


@pytest.mark.parametrize("cond_dtype,np_dtype,cond_shape", [(TensorProto.BOOL, np.bool_, ()),
                                                            (TensorProto.INT64, np.int64, (1,)),
                                                            (TensorProto.FLOAT, np.float32, (1, 1))])
def test_if_with_a_run_time_condition_runs_the_taken_branch(tmp_path, cond_dtype, np_dtype, cond_shape):
    # One library (a VM program) for both conditions; each run matches the ONNX reference.
    model = _run_time_if_model(cond_dtype, cond_shape)
    so = _compile(tmp_path, model)
    x = np.random.default_rng(1).standard_normal((4, 8)).astype(np.float32)
    for i, value in enumerate([1, 0, 3, 0]):  # 3: any non-zero value takes the then branch
        feeds = {"x": x, "c": _cond(value, np_dtype, cond_shape)}
        got = _run(tmp_path, so, feeds, f"r{i}")
        want = _reference(model, feeds)
        for g, w in zip(got, want):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def test_nested_run_time_ifs(tmp_path):
    model = _run_time_if_model(nested=True)
    so = _compile(tmp_path, model)
    x = np.random.default_rng(2).standard_normal((4, 8)).astype(np.float32)
    for i, (c, d) in enumerate([(True, True), (True, False), (False, True), (False, False)]):
        feeds = {"x": x, "c": np.array(c), "d": np.array(d)}
        got = _run(tmp_path, so, feeds, f"r{i}")
        for g, w in zip(got, _reference(model, feeds)):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def test_if_on_a_condition_computed_from_data(tmp_path):
    # c = ReduceSum(x) > 0: the branch depends on the values, not on an input flag.
    model = _run_time_if_model()
    nodes = list(model.graph.node)
    del model.graph.node[:]
    model.graph.node.extend([helper.make_node("ReduceSum", ["x"], ["sx"], keepdims=0),
                             helper.make_node("Greater", ["sx", "zero"], ["c"])] + nodes)
    model.graph.initializer.append(onnx.numpy_helper.from_array(np.array(0.0, np.float32), "zero"))
    del model.graph.input[1]
    so = _compile(tmp_path, model)
    x = np.random.default_rng(3).standard_normal((4, 8)).astype(np.float32)
    for i, sign in enumerate([1.0, -1.0]):
        feeds = {"x": sign * np.abs(x)}
        got = _run(tmp_path, so, feeds, f"r{i}")
        for g, w in zip(got, _reference(model, feeds)):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5)


def test_if_whose_branches_differ_in_shape_is_refused(tmp_path):
    then_g = _branch("then_g", [helper.make_node("Identity", ["x"], ["t"])], ["t"])
    else_g = _branch("else_g", [helper.make_node("Concat", ["x", "x"], ["e"], axis=0)], ["e"])
    graph = helper.make_graph([helper.make_node("If", ["c"], ["y"], then_branch=then_g, else_branch=else_g)], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3]),
                               helper.make_tensor_value_info("c", TensorProto.BOOL, [])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)]), tmp_path / "m.onnx")
    proc = run_cli("compile", tmp_path / "m.onnx", "-o", tmp_path / "m.so", check=False)
    assert proc.returncode == 1
    assert ("output 0 ('y') has type Tensor[(2, 3), float32] in the then branch and Tensor[(4, 3), float32] in the else "
            "branch") in proc.stderr, proc.stderr
    assert "Any" in proc.stderr


def test_run_time_if_rejects_a_condition_of_the_wrong_shape_at_run_time(tmp_path):
    so = _compile(tmp_path, _run_time_if_model())
    np.save(tmp_path / "x.npy", np.zeros((4, 8), np.float32))
    np.save(tmp_path / "c.npy", np.array([True, False]))
    proc = run_cli("run", so, "--input", f"x={tmp_path / 'x.npy'}", "--input", f"c={tmp_path / 'c.npy'}", check=False)
    assert proc.returncode == 1
    assert "'c'" in proc.stderr and "[2]" in proc.stderr, proc.stderr


def _scan_body():
    # state s [2], scan elems a [2], b [2] -> s' = s + a * b, out1 = s', out2 = a - b
    nodes = [helper.make_node("Mul", ["a", "b"], ["ab"]), helper.make_node("Add", ["s", "ab"], ["s2"]),
             helper.make_node("Identity", ["s2"], ["o1"]), helper.make_node("Sub", ["a", "b"], ["o2"])]
    v = lambda n: helper.make_tensor_value_info(n, TensorProto.FLOAT, [2])  # noqa: E731
    return helper.make_graph(nodes, "body", [v("s"), v("a"), v("b")], [v("s2"), v("o1"), v("o2")])


@pytest.mark.parametrize("attrs", [
    {},
    {"scan_input_directions": [1, 0], "scan_output_directions": [0, 1]},
    {"scan_input_axes": [1, 0], "scan_output_axes": [1, 0]},
    {"scan_input_axes": [-1, 0], "scan_input_directions": [0, 1], "scan_output_axes": [-1, 0]},
])
def test_scan_unrolled(tmp_path, attrs):
    a_shape = [2, 5] if attrs.get("scan_input_axes", [0])[0] in (1, -1) else [5, 2]
    node = helper.make_node("Scan", ["s0", "a", "b"], ["s", "y1", "y2"], body=_scan_body(), num_scan_inputs=2, **attrs)
    graph = helper.make_graph([node], "scan",
                              [helper.make_tensor_value_info("s0", TensorProto.FLOAT, [2]),
                               helper.make_tensor_value_info("a", TensorProto.FLOAT, a_shape),
                               helper.make_tensor_value_info("b", TensorProto.FLOAT, [5, 2])],
                              [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("s", "y1", "y2")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)])
    rng = np.random.default_rng(9)
    feeds = {"s0": rng.standard_normal(2).astype(np.float32), "a": rng.standard_normal(a_shape).astype(np.float32),
             "b": rng.standard_normal((5, 2)).astype(np.float32)}
    got = compile_and_run(tmp_path, model, feeds)
    for g, w in zip(got, _onnxruntime(model, feeds)):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)


def test_scan8_batch(tmp_path):
    v = lambda n, s: helper.make_tensor_value_info(n, TensorProto.FLOAT, s)  # noqa: E731
    body = helper.make_graph([helper.make_node("Add", ["s", "x"], ["s2"]), helper.make_node("Identity", ["s2"], ["o"])],
                             "body", [v("s", [2]), v("x", [2])], [v("s2", [2]), v("o", [2])])
    node = helper.make_node("Scan", ["", "s0", "x"], ["s", "y"], body=body, num_scan_inputs=1, directions=[1])
    graph = helper.make_graph([node], "scan8", [v("s0", [3, 2]), v("x", [3, 4, 2])],
                              [v("s", None), v("y", None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 8)])
    rng = np.random.default_rng(10)
    feeds = {"s0": rng.standard_normal((3, 2)).astype(np.float32), "x": rng.standard_normal((3, 4, 2)).astype(np.float32)}
    got = compile_and_run(tmp_path, model, feeds)
    for g, w in zip(got, _onnxruntime(model, feeds)):
        np.testing.assert_allclose(g, w, rtol=1e-6, atol=1e-6)


def test_inspect_describes_a_vm_program(tmp_path):
    so = _compile(tmp_path, _run_time_if_model())
    out = run_cli("inspect", so).stdout
    assert "program: VM bytecode (control flow)" in out and "1 If" in out, out
    assert "c: [] bool" in out and "y: [4, 8] float32" in out, out
    assert "matches the program and parameters" in out, out


@pytest.mark.parametrize("op,attrs", [("CumSum", {}), ("CumSum", {"exclusive": 1, "reverse": 1}), ("CumProd", {})])
def test_cumulation_along_a_run_time_axis(tmp_path, op, attrs):
    # The axis is an input read at run time: one library selects the cumulation per call (a chain of
    # Ifs in the VM, one branch per axis; negative axes count from the end), as ONNX Runtime does.
    opset = 26 if op == "CumProd" else 14
    graph = helper.make_graph([helper.make_node(op, ["x", "axis"], ["y"], **attrs)], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3, 4]),
                               helper.make_tensor_value_info("axis", TensorProto.INT64, [])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [2, 3, 4])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    so = _compile(tmp_path, model)
    x = np.random.default_rng(4).uniform(0.5, 1.5, (2, 3, 4)).astype(np.float32)
    for i, axis in enumerate([0, 1, 2, -1, -3]):
        feeds = {"x": x, "axis": np.array(axis, np.int64)}
        (got,) = _run(tmp_path, so, feeds, f"r{i}", names=("y",))
        np.testing.assert_allclose(got, _reference(model, feeds)[0], rtol=1e-5, atol=1e-5, err_msg=f"axis {axis}")
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "a.npy", np.array(3, np.int64))
    proc = run_cli("run", so, "--input", f"x={tmp_path / 'x.npy'}", "--input", f"axis={tmp_path / 'a.npy'}", check=False)
    assert proc.returncode == 1
    assert f"{op}'s axis is out of range [-3, 2] at run time" in proc.stderr, proc.stderr


@pytest.mark.parametrize("inverse", [0, 1])
def test_dft_along_a_run_time_axis(tmp_path, inverse):
    # DFT-20's axis input read at run time: one DFT per axis in [0, r-2] (or [-r, -2]), chosen per call;
    # the signal axes have equal extents, so every branch has one type. Axis -1 (the complex axis) is
    # invalid and fails the run.
    graph = helper.make_graph([helper.make_node("DFT", ["x", "", "axis"], ["y"], inverse=inverse)], "g",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 6, 6, 2]),
                               helper.make_tensor_value_info("axis", TensorProto.INT64, [])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 20)])
    so = _compile(tmp_path, model)
    x = np.random.default_rng(5).standard_normal((2, 6, 6, 2)).astype(np.float32)
    for i, axis in enumerate([1, 2, -2, -3]):
        feeds = {"x": x, "axis": np.array(axis, np.int64)}
        (got,) = _run(tmp_path, so, feeds, f"r{i}", names=("y",))
        np.testing.assert_allclose(got, _reference(model, feeds)[0], rtol=1e-4, atol=1e-4, err_msg=f"axis {axis}")
    np.save(tmp_path / "x.npy", x)
    np.save(tmp_path / "a.npy", np.array(-1, np.int64))
    proc = run_cli("run", so, "--input", f"x={tmp_path / 'x.npy'}", "--input", f"axis={tmp_path / 'a.npy'}", check=False)
    assert proc.returncode == 1
    assert "DFT's axis is out of range [-4, -2] or [0, 2] at run time" in proc.stderr, proc.stderr


def _loop_model(m, cond_input, body_cond, scan_output, m_input=False):
    # Loop over (x): x_{i+1} = x_i * 0.9 + i; cond_out = body_cond (True, or ReduceSum(x) < 4: data dependent);
    # scan output y_i = x_{i+1} * 2 (optional).
    nodes = [helper.make_node("Cast", ["i"], ["fi"], to=TensorProto.FLOAT),
             helper.make_node("Mul", ["x_in", "k"], ["xk"]), helper.make_node("Add", ["xk", "fi"], ["x_out"])]
    outs = ["c_out", "x_out"]
    if body_cond == "true":
        nodes.append(helper.make_node("Identity", ["c_in"], ["c_out"]))
    else:
        nodes += [helper.make_node("ReduceSum", ["x_out"], ["s"], keepdims=0),
                  helper.make_node("Less", ["s", "limit"], ["c_out"])]
    if scan_output:
        nodes.append(helper.make_node("Mul", ["x_out", "two"], ["y"]))
        outs.append("y")
    inits = [onnx.numpy_helper.from_array(np.array(0.9, np.float32), "k"),
             onnx.numpy_helper.from_array(np.array(2.0, np.float32), "two"),
             onnx.numpy_helper.from_array(np.array(4.0, np.float32), "limit")]
    body = helper.make_graph(nodes, "body", [helper.make_tensor_value_info("i", TensorProto.INT64, []),
                                             helper.make_tensor_value_info("c_in", TensorProto.BOOL, []),
                                             helper.make_tensor_value_info("x_in", TensorProto.FLOAT, [3])],
                             [helper.make_tensor_value_info(o, TensorProto.BOOL if o == "c_out" else TensorProto.FLOAT,
                                                            None) for o in outs], inits)
    node = helper.make_node("Loop", ["M", "cond" if cond_input else "", "x0"], ["x_final"] + (["ys"] if scan_output else []),
                            body=body)
    inputs = [helper.make_tensor_value_info("x0", TensorProto.FLOAT, [3])]
    inits = []
    if m_input:
        inputs.append(helper.make_tensor_value_info("M", TensorProto.INT64, []))
    else:
        inits.append(onnx.numpy_helper.from_array(np.array(m, np.int64), "M"))
    if cond_input:
        inputs.append(helper.make_tensor_value_info("cond", TensorProto.BOOL, []))
    outputs = [helper.make_tensor_value_info("x_final", TensorProto.FLOAT, [3])]
    if scan_output:
        outputs.append(helper.make_tensor_value_info("ys", TensorProto.FLOAT, None))
    graph = helper.make_graph([node], "loop", inputs, outputs, inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 16)])


@pytest.mark.parametrize("cond_input,body_cond,scan_output", [(False, "true", True), (True, "true", False),
                                                              (False, "data", False), (True, "data", False)])
def test_loop_with_a_known_trip_count(tmp_path, cond_input, body_cond, scan_output):
    # M = 6 known at import: unrolled; a run-time condition (an input, or computed by the body from the
    # data) guards each iteration with an If in the VM, as ONNX Runtime stops the loop.
    model = _loop_model(6, cond_input, body_cond, scan_output)
    so = _compile(tmp_path, model)
    names = ("x_final", "ys") if scan_output else ("x_final",)
    for i, (scale, cond) in enumerate([(0.1, True), (1.0, True), (0.5, False), (-1.0, True)]):
        feeds = {"x0": (scale * np.arange(3)).astype(np.float32)}
        if cond_input:
            feeds["cond"] = np.array(cond)
        got = _run(tmp_path, so, feeds, f"r{i}", names=names)
        for g, w in zip(got, _onnxruntime(model, feeds)):
            np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-5, err_msg=str((scale, cond)))


@pytest.mark.parametrize("cond_input,body_cond", [(False, "true"), (True, "true"), (False, "data"), (True, "data")])
def test_loop_with_a_run_time_trip_count_runs_in_the_vm(tmp_path, cond_input, body_cond):
    # M is an input: one compiled loop runs 0, 1, 7 and 300 iterations (a data-dependent exit stops it earlier).
    model = _loop_model(0, cond_input, body_cond, False, m_input=True)
    so = _compile(tmp_path, model)
    k = 0
    for m in (0, 1, 7, 300):
        for scale, cond in [(0.1, True), (-1.0, True), (0.5, False)]:
            feeds = {"x0": (scale * np.arange(3)).astype(np.float32), "M": np.array(m, np.int64)}
            if cond_input:
                feeds["cond"] = np.array(cond)
            (got,) = _run(tmp_path, so, feeds, f"r{k}", names=("x_final",))
            k += 1
            np.testing.assert_allclose(got, _onnxruntime(model, feeds)[0], rtol=1e-5, atol=1e-4, err_msg=str((m, scale, cond)))


def _while_model(m=None):
    # while (ReduceSum(x) < limit) x = x * 2 + 1 (no M, or a constant M above the unrolling limit, as
    # exporters write `while` loops); the iteration count is a second loop-carried value.
    nodes = [helper.make_node("Mul", ["x_in", "two"], ["x2"]), helper.make_node("Add", ["x2", "one"], ["x_out"]),
             helper.make_node("Add", ["n_in", "one_i"], ["n_out"]),
             helper.make_node("ReduceSum", ["x_out"], ["s"], keepdims=0),
             helper.make_node("Less", ["s", "limit"], ["c_out"])]
    inits = [onnx.numpy_helper.from_array(np.array(2.0, np.float32), "two"),
             onnx.numpy_helper.from_array(np.array(1.0, np.float32), "one"),
             onnx.numpy_helper.from_array(np.array(1, np.int64), "one_i")]
    body = helper.make_graph(nodes, "body", [helper.make_tensor_value_info("i", TensorProto.INT64, []),
                                             helper.make_tensor_value_info("c_in", TensorProto.BOOL, []),
                                             helper.make_tensor_value_info("x_in", TensorProto.FLOAT, [2, 2]),
                                             helper.make_tensor_value_info("n_in", TensorProto.INT64, [])],
                             [helper.make_tensor_value_info("c_out", TensorProto.BOOL, []),
                              helper.make_tensor_value_info("x_out", TensorProto.FLOAT, [2, 2]),
                              helper.make_tensor_value_info("n_out", TensorProto.INT64, [])], inits)
    outer = [onnx.numpy_helper.from_array(np.array(0, np.int64), "n0")]
    if m is not None:
        outer.append(onnx.numpy_helper.from_array(np.array(m, np.int64), "M"))
    nodes = [helper.make_node("ReduceSum", ["x0"], ["s0"], keepdims=0),
             helper.make_node("Less", ["s0", "limit"], ["c0"]),
             helper.make_node("Loop", ["M" if m is not None else "", "c0", "x0", "n0"], ["x_final", "n_final"], body=body)]
    graph = helper.make_graph(nodes, "while", [helper.make_tensor_value_info("x0", TensorProto.FLOAT, [2, 2]),
                                               helper.make_tensor_value_info("limit", TensorProto.FLOAT, [])],
                              [helper.make_tensor_value_info("x_final", TensorProto.FLOAT, [2, 2]),
                               helper.make_tensor_value_info("n_final", TensorProto.INT64, [])], outer)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


@pytest.mark.parametrize("m", [None, 2**63 - 1, 1000])
def test_while_loop_without_a_usable_trip_count_runs_in_the_vm(tmp_path, m):
    model = _while_model(m)
    so = _compile(tmp_path, model)
    for k, (scale, limit) in enumerate([(1.0, 0.0), (0.25, 10.0), (0.5, 1e4), (1e-3, 1e30)]):
        feeds = {"x0": (scale * np.arange(1, 5)).reshape(2, 2).astype(np.float32), "limit": np.array(limit, np.float32)}
        got = _run(tmp_path, so, feeds, f"r{k}", names=("x_final", "n_final"))
        want = _onnxruntime(model, feeds)
        np.testing.assert_allclose(got[0], want[0], rtol=1e-5, err_msg=str((scale, limit)))
        np.testing.assert_array_equal(got[1], want[1])


@pytest.mark.parametrize("m,body_cond", [(None, "true"), (None, "data"), (6, "data"), (0, "true")])
def test_loop_scan_outputs_of_a_run_time_length_accumulate_in_vm_lists(tmp_path, m, body_cond):
    # M read at run time (0 to 300 iterations), a data-dependent exit, or no iteration at all: the scan
    # output's length is known when the loop ends. The VM pushes each iteration's value to a list of
    # tensors carried by the loop and stacks it after (ListNew / ListPush / ListStack, runtime/vm.h).
    model = _loop_model(m or 0, False, body_cond, True, m_input=m is None)
    so = _compile(tmp_path, model)
    k = 0
    for trips in ((0, 1, 7, 300) if m is None else (m,)):
        for scale in (0.1, -1.0, 0.5):
            feeds = {"x0": (scale * np.arange(3)).astype(np.float32)}
            if m is None:
                feeds["M"] = np.array(trips, np.int64)
            got = _run(tmp_path, so, feeds, f"r{k}", names=("x_final", "ys"))
            k += 1
            want = _onnxruntime(model, feeds)
            assert got[1].shape == want[1].shape, (trips, scale, got[1].shape, want[1].shape)
            for g, w in zip(got, want):
                np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-4, err_msg=str((trips, scale)))


def test_a_loop_carried_value_that_changes_type_is_refused(tmp_path):
    # x_out = Concat(x_in, x_in): the carried value grows each iteration (dynamic shapes in a VM loop).
    body = helper.make_graph([helper.make_node("Concat", ["x_in", "x_in"], ["x_out"], axis=0),
                              helper.make_node("Identity", ["c_in"], ["c_out"])], "body",
                             [helper.make_tensor_value_info("i", TensorProto.INT64, []),
                              helper.make_tensor_value_info("c_in", TensorProto.BOOL, []),
                              helper.make_tensor_value_info("x_in", TensorProto.FLOAT, [2])],
                             [helper.make_tensor_value_info("c_out", TensorProto.BOOL, []),
                              helper.make_tensor_value_info("x_out", TensorProto.FLOAT, None)])
    graph = helper.make_graph([helper.make_node("Loop", ["M", "", "x0"], ["x_final"], body=body, name="grow")], "g",
                              [helper.make_tensor_value_info("x0", TensorProto.FLOAT, [2]),
                               helper.make_tensor_value_info("M", TensorProto.INT64, [])],
                              [helper.make_tensor_value_info("x_final", TensorProto.FLOAT, None)])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), tmp_path / "m.onnx")
    proc = run_cli("compile", tmp_path / "m.onnx", "-o", tmp_path / "m.so", check=False)
    assert proc.returncode == 1
    assert "node 'grow'" in proc.stderr and "loop-carried value 0 changes its type across iterations" in proc.stderr, \
        proc.stderr


def _carried_sequence_model(concat):
    # seq = SequenceEmpty(); for i < M: x = x * 0.9 + i; seq.append(x) (SequenceInsert without a position);
    # the outputs are ConcatFromSequence(seq), SequenceLength(seq) and SequenceAt(seq, pos), as a scripted torch loop that appends
    # to a list exports. The sequence's length is the run's: the VM carries it as a list of tensors.
    shape = [1, 3] if concat["new_axis"] == 0 else [3]
    body = helper.make_graph(
        [helper.make_node("Cast", ["i"], ["fi"], to=TensorProto.FLOAT), helper.make_node("Mul", ["x_in", "k"], ["xk"]),
         helper.make_node("Add", ["xk", "fi"], ["x_out"]), helper.make_node("SequenceInsert", ["s_in", "x_out"], ["s_out"]),
         helper.make_node("Identity", ["c_in"], ["c_out"])], "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []), helper.make_tensor_value_info("c_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("x_in", TensorProto.FLOAT, shape),
         helper.make_tensor_sequence_value_info("s_in", TensorProto.FLOAT, None)],
        [helper.make_tensor_value_info("c_out", TensorProto.BOOL, []), helper.make_tensor_value_info("x_out", TensorProto.FLOAT, shape),
         helper.make_tensor_sequence_value_info("s_out", TensorProto.FLOAT, None)],
        [onnx.numpy_helper.from_array(np.array(0.9, np.float32), "k")])
    nodes = [helper.make_node("SequenceEmpty", [], ["s0"], dtype=TensorProto.FLOAT),
             helper.make_node("Loop", ["M", "", "x0", "s0"], ["x_final", "s_final"], body=body),
             helper.make_node("ConcatFromSequence", ["s_final"], ["y"], **concat),
             helper.make_node("SequenceLength", ["s_final"], ["n"]),
             helper.make_node("SequenceAt", ["s_final", "pos"], ["at"], name="pick")]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x0", TensorProto.FLOAT, shape),
                                           helper.make_tensor_value_info("M", TensorProto.INT64, []),
                                           helper.make_tensor_value_info("pos", TensorProto.INT64, [])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None),
                               helper.make_tensor_value_info("n", TensorProto.INT64, None),
                               helper.make_tensor_value_info("at", TensorProto.FLOAT, None)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), shape


@pytest.mark.parametrize("concat", [{"new_axis": 1, "axis": 0}, {"new_axis": 1, "axis": -1}, {"new_axis": 0, "axis": 0}])
def test_a_loop_carried_sequence_is_a_vm_list(tmp_path, concat):
    model, shape = _carried_sequence_model(concat)
    so = _compile(tmp_path, model)
    for k, (m, pos) in enumerate(((1, 0), (4, -1), (40, 17))):
        feeds = {"x0": np.arange(3, dtype=np.float32).reshape(shape), "M": np.array(m, np.int64),
                 "pos": np.array(pos, np.int64)}
        got = _run(tmp_path, so, feeds, f"r{k}", names=("y", "n", "at"))
        want = _onnxruntime(model, feeds)
        assert got[0].shape == want[0].shape, (m, got[0].shape, want[0].shape)
        np.testing.assert_allclose(got[0], want[0], rtol=1e-5, atol=1e-4)
        assert int(got[1]) == int(want[1]) == m
        np.testing.assert_allclose(got[2], want[2], rtol=1e-5, atol=1e-4)
    # A position outside [-length, length) fails the run, naming it.
    feeds = {"x0": np.arange(3, dtype=np.float32).reshape(shape), "M": np.array(4, np.int64), "pos": np.array(4, np.int64)}
    got, proc = run_outputs(tmp_path, so, feeds, "bad", check=False)
    assert got is None and proc.returncode == 1 and "position 4 is out of range" in proc.stderr, proc.stderr


def test_concatenating_a_run_time_number_of_tensors_along_a_long_axis_is_refused(tmp_path):
    # [1, 3] elements concatenated along axis 1: the result's extent would be 3 * length (a dim expression).
    model, _ = _carried_sequence_model({"new_axis": 0, "axis": 1})
    onnx.save(model, tmp_path / "m.onnx")
    proc = run_cli("compile", tmp_path / "m.onnx", "-o", tmp_path / "m.so", check=False)
    assert proc.returncode == 1 and "ConcatFromSequence" in proc.stderr and "dim expression" in proc.stderr, proc.stderr
