"""ONNX Gradient (ai.onnx.preview.training, opset 1) through the graph IR's reverse-mode AD
(graph/transform/gradient.h, src/frontend/onnx/ops_gradient.cc): models with a Gradient node
compiled and run by the CLI, each gradient compared with central finite differences of the same
forward graph in float64 under the ONNX reference evaluator (the Gradient output is d(sum y)/dx,
x's shape); and the importer's refusals."""
import numpy as np
import onnx
import onnx.reference
import pytest
from onnx import TensorProto, helper, numpy_helper

from conftest import compile_and_run, run_cli

TRAINING = "ai.onnx.preview.training"


def _is_float(v):
    return np.issubdtype(np.asarray(v).dtype, np.floating)


def _model(nodes, inputs, y, grad=None, inits=None, elem=TensorProto.FLOAT):
    """nodes: the forward graph; inputs: name -> shape (float graph inputs); y: the differentiated
    tensor (output 0); grad: (xs, zs, gradient node inputs, output names) adds a Gradient node whose
    outputs follow y; inits: name -> array (initializers; float ones in the model's float type)."""
    dt = np.float32 if elem == TensorProto.FLOAT else np.float64
    nodes = list(nodes)
    outputs = [helper.make_tensor_value_info(y, elem, None)]
    if grad is not None:
        xs, zs, grad_inputs, grad_outputs = grad
        attrs = dict(xs=xs, y=y)
        if zs:
            attrs["zs"] = zs
        nodes.append(helper.make_node("Gradient", grad_inputs, grad_outputs, domain=TRAINING, name="grad", **attrs))
        outputs += [helper.make_tensor_value_info(o, elem, None) for o in grad_outputs if o]
    initializers = [numpy_helper.from_array(np.asarray(v, dt) if _is_float(v) else np.asarray(v), n)
                    for n, v in (inits or {}).items()]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info(n, elem, list(s)) for n, s in inputs.items()], outputs,
        initializer=initializers)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17), helper.make_opsetid(TRAINING, 1)])


def _finite_differences(nodes, inputs, y, feeds, xs, inits=None, h=1e-6):
    """d(sum y)/dx for each x of xs (a graph input or float initializer), in float64: the forward graph
    alone, float initializers made inputs, under the ONNX reference evaluator."""
    float_inits = {n: np.asarray(v, np.float64) for n, v in (inits or {}).items() if _is_float(v)}
    other_inits = {n: v for n, v in (inits or {}).items() if not _is_float(v)}
    all_inputs = {**inputs, **{n: v.shape for n, v in float_inits.items()}}
    ev = onnx.reference.ReferenceEvaluator(_model(nodes, all_inputs, y, inits=other_inits, elem=TensorProto.DOUBLE))
    point = {**{n: np.asarray(v, np.float64) for n, v in feeds.items()}, **float_inits}
    f = lambda p: float(np.sum(ev.run(None, p)[0]))  # noqa: E731
    grads = []
    for x in xs:
        g = np.zeros_like(point[x])
        for i in np.ndindex(g.shape):
            plus, minus = point[x].copy(), point[x].copy()
            plus[i] += h
            minus[i] -= h
            g[i] = (f({**point, x: plus}) - f({**point, x: minus})) / (2 * h)
        grads.append(g)
    return grads


def _check(tmp_path, nodes, inputs, y, xs, zs=(), inits=None, seed=0, scale=1.0):
    """Compiles the forward graph with Gradient(xs, zs, y) at the named tensors, runs it on random
    inputs, and compares each gradient with finite differences. Returns the outputs (y, then dY/dx)."""
    rng = np.random.default_rng(seed)
    feeds = {n: (rng.standard_normal(s) * scale).astype(np.float32) for n, s in inputs.items()}
    outs = [f"d{y}_d{x}" for x in xs]
    model = _model(nodes, inputs, y, (list(xs), list(zs), list(xs) + list(zs), outs), inits)
    got = compile_and_run(tmp_path, model, feeds)
    want = _finite_differences(nodes, inputs, y, feeds, xs, inits)
    for x, g, w in zip(xs, got[1:], want):
        assert g.shape == w.shape, f"d{y}/d{x}: shape {g.shape}, expected {w.shape}"
        np.testing.assert_allclose(g, w, rtol=2e-3, atol=2e-4, err_msg=f"d{y}/d{x}")
    return got


def test_add_and_mul_scalars(tmp_path):
    # The conformance case test_gradient_of_add_and_mul: d = (a + b) * a.
    nodes = [helper.make_node("Add", ["a", "b"], ["c"]), helper.make_node("Mul", ["c", "a"], ["d"])]
    model = _model(nodes, {"a": [], "b": []}, "d", (["a", "b"], [], ["a", "b"], ["dd_da", "dd_db"]))
    a, b = np.array(1.5, np.float32), np.array(-2.0, np.float32)
    d, da, db = compile_and_run(tmp_path, model, {"a": a, "b": b})
    np.testing.assert_allclose([d, da, db], [(a + b) * a, 2 * a + b, a], rtol=1e-6)


def test_broadcasting(tmp_path):
    # A tensor y (seed: ones), operands broadcast against each other: each gradient summed back.
    nodes = [helper.make_node("Add", ["A", "B"], ["S"]), helper.make_node("Mul", ["S", "C"], ["P"]),
             helper.make_node("Div", ["P", "D"], ["Y"])]
    inputs = {"A": [2, 3], "B": [3], "C": [2, 1], "D": [1]}
    got = _check(tmp_path, nodes, inputs, "Y", ["A", "B", "C"], zs=["D"])
    assert [g.shape for g in got[1:]] == [(2, 3), (3,), (2, 1)]


def test_matmul_and_elementwise(tmp_path):
    nodes = [helper.make_node("MatMul", ["X", "W"], ["M"]), helper.make_node("Tanh", ["M"], ["T"]),
             helper.make_node("Sigmoid", ["X"], ["S"]), helper.make_node("ReduceSum", ["S"], ["R"], keepdims=0),
             helper.make_node("Mul", ["T", "R"], ["Y"])]
    _check(tmp_path, nodes, {"X": [2, 3, 4], "W": [4, 5]}, "Y", ["X", "W"], scale=0.5)


def test_batched_matmul_transpose_reshape(tmp_path):
    nodes = [helper.make_node("Transpose", ["B"], ["Bt"], perm=[0, 2, 1]),
             helper.make_node("MatMul", ["A", "Bt"], ["M"]),
             helper.make_node("Reshape", ["M", "shape"], ["R"]),
             helper.make_node("Exp", ["R"], ["Y"])]
    _check(tmp_path, nodes, {"A": [2, 3, 4], "B": [2, 5, 4]}, "Y", ["A", "B"],
           inits={"shape": np.array([6, 5], np.int64)}, scale=0.3)


def _mlp(loss):
    nodes = [helper.make_node("Gemm", ["X", "W1", "b1"], ["H0"]), helper.make_node("Relu", ["H0"], ["H"]),
             helper.make_node("Gemm", ["H", "W2", "b2"], ["O"], transB=1)]
    if loss == "mse":
        nodes += [helper.make_node("Sub", ["O", "T"], ["E"]), helper.make_node("Mul", ["E", "E"], ["E2"]),
                  helper.make_node("ReduceMean", ["E2"], ["L"], keepdims=0)]
    else:  # softmax cross-entropy against the probabilities T
        nodes += [helper.make_node("LogSoftmax", ["O"], ["LP"], axis=1), helper.make_node("Mul", ["LP", "T"], ["TL"]),
                  helper.make_node("ReduceSum", ["TL"], ["S"], keepdims=0), helper.make_node("Neg", ["S"], ["L"])]
    return nodes


@pytest.mark.parametrize("loss", ["mse", "cross_entropy"])
def test_mlp_loss(tmp_path, loss):
    inputs = {"X": [4, 3], "W1": [3, 5], "b1": [5], "W2": [2, 5], "b2": [2], "T": [4, 2]}
    got = _check(tmp_path, _mlp(loss), inputs, "L", ["W1", "b1", "W2", "b2"], zs=["X", "T"], seed=4)
    assert got[0].shape == ()


def test_mlp_weights_as_initializers(tmp_path):
    # Weights the importer knows (Gemm would fold B's transpose): the Gradient imports its function
    # again with each x a variable, so the derivative still reaches them.
    rng = np.random.default_rng(6)
    inits = {"W1": rng.standard_normal((3, 5)), "b1": rng.standard_normal(5), "W2": rng.standard_normal((2, 5)),
             "b2": rng.standard_normal(2)}
    inputs = {"X": [4, 3], "T": [4, 2]}
    _check(tmp_path, _mlp("mse"), inputs, "L", ["W1", "W2", "b2"], zs=["X", "T", "b1"], inits=inits, seed=7)


def test_gradient_at_other_values_of_an_intermediate(tmp_path):
    # xs names the intermediate H = tanh(X); the node's input H1 is where dY/dH is taken: 2 * H1 * W.
    nodes = [helper.make_node("Tanh", ["X"], ["H"]), helper.make_node("Mul", ["H", "H"], ["H2"]),
             helper.make_node("Mul", ["H2", "W"], ["Y"])]
    inputs = {"X": [3], "W": [3], "H1": [3]}
    model = _model(nodes, inputs, "Y", (["H"], ["W"], ["H1", "W"], ["dY_dH"]))
    rng = np.random.default_rng(8)
    feeds = {n: rng.standard_normal(s).astype(np.float32) for n, s in inputs.items()}
    y, d = compile_and_run(tmp_path, model, feeds)
    np.testing.assert_allclose(d, 2 * feeds["H1"] * feeds["W"], rtol=1e-5, atol=1e-6)
    np.testing.assert_allclose(y, np.tanh(feeds["X"]) ** 2 * feeds["W"], rtol=1e-5, atol=1e-6)


def test_x_that_y_does_not_depend_on_gets_zeros(tmp_path):
    nodes = [helper.make_node("Exp", ["a"], ["y"])]
    model = _model(nodes, {"a": [2], "b": [3]}, "y", (["a", "b"], [], ["a", "b"], ["dy_da", "dy_db"]))
    a = np.array([0.5, -1.0], np.float32)
    _, da, db = compile_and_run(tmp_path, model, {"a": a, "b": np.ones(3, np.float32)})
    np.testing.assert_allclose(da, np.exp(a), rtol=1e-6)
    np.testing.assert_array_equal(db, np.zeros(3, np.float32))


def _compile_error(tmp_path, model):
    onnx.save(model, tmp_path / "m.onnx")
    proc = run_cli("compile", tmp_path / "m.onnx", "-o", tmp_path / "m.so", check=False)
    assert proc.returncode != 0, "compiling should have failed"
    return proc.stderr


def test_unknown_xs_name_is_refused(tmp_path):
    nodes = [helper.make_node("Add", ["a", "b"], ["c"])]
    model = _model(nodes, {"a": [2], "b": [2]}, "c", (["a", "nope"], [], ["a", "b"], ["dc_da", "dc_db"]))
    err = _compile_error(tmp_path, model)
    assert "xs names 'nope', which is not a tensor of the graph computed before this node" in err, err
    assert "op Gradient" in err, err


def test_unknown_y_and_input_count_are_refused(tmp_path):
    nodes = [helper.make_node("Add", ["a", "b"], ["c"])]
    model = _model(nodes, {"a": [2], "b": [2]}, "c", (["a", "b"], [], ["a", "b"], ["dc_da", "dc_db"]))
    model.graph.node[-1].attribute[1].s = b"missing"
    assert "y names 'missing'" in _compile_error(tmp_path, model)
    model = _model(nodes, {"a": [2], "b": [2]}, "c", (["a", "b"], [], ["a"], ["dc_da", "dc_db"]))
    assert "has 1 inputs, but xs and zs name 2 tensors" in _compile_error(tmp_path, model)


def test_op_without_gradient_rule_is_named(tmp_path):
    nodes = [helper.make_node("Conv", ["x", "w"], ["y"])]
    model = _model(nodes, {"x": [1, 1, 4, 4], "w": [1, 1, 3, 3]}, "y", (["w"], ["x"], ["w", "x"], ["dy_dw"]))
    err = _compile_error(tmp_path, model)
    assert "Gradient through op nn.conv2d is not supported" in err, err
