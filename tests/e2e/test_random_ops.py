"""ONNX's random operators (RandomUniform / RandomNormal, their *Like forms, Bernoulli, Multinomial)
through the whole compiler. The generator is counter-based (topi/random.h: SplitMix64 at each
element's row-major position), so values are checked exactly against a NumPy re-implementation of
the documented stream (float32 uniform within 1 ulp of the affine map; Box-Muller normals within
1e-12 in float64), and statistically: moments within 5 standard errors, Bernoulli frequencies per
probability, Multinomial class frequencies against softmax by a chi-square bound. Also: the same
values at every run and every rebuild, different seeds and unseeded nodes giving different
streams, symbolic shapes, 16-bit dtypes, and bad attributes refused at import."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from conftest import run_cli, run_outputs

U64 = np.uint64
GAMMA = U64(0x9E3779B97F4A7C15)


def _mix(z):
    with np.errstate(over="ignore"):
        z = (z ^ (z >> U64(30))) * U64(0xBF58476D1CE4E5B9)
        z = (z ^ (z >> U64(27))) * U64(0x94D049BB133111EB)
        return z ^ (z >> U64(31))


def _key(seed):
    """The importer's key for a float seed: SplitMix64's mix of the seed's float64 bits."""
    bits = np.array([seed], np.float64).view(np.uint64)[0]
    with np.errstate(over="ignore"):
        return _mix(bits + GAMMA)


def _stream(positions, key):
    with np.errstate(over="ignore"):
        return _mix(U64(key) + (positions.astype(np.uint64) + U64(1)) * GAMMA)


def _uniform(n, key, double):
    z = _stream(np.arange(n), key)
    if double:
        return (z >> U64(11)).astype(np.float64) * 2.0 ** -53
    return (z >> U64(40)).astype(np.float32) * np.float32(2.0 ** -24)


def _model(nodes, inputs, outputs, opset=22):
    graph = helper.make_graph(nodes, "random", inputs, outputs)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _run(tmp_path, model, feeds=None, tag="r", flags=()):
    path, so = tmp_path / f"{tag}.onnx", tmp_path / f"{tag}.so"
    onnx.save(model, path)
    run_cli("compile", path, "-o", so, *flags)
    got, _ = run_outputs(tmp_path, so, feeds or {}, tag)
    return got, so


def test_uniform_like_is_the_documented_stream(tmp_path):
    shape = [37, 41]
    node = helper.make_node("RandomUniformLike", ["x"], ["y"], seed=3.0, low=-2.0, high=5.0)
    model = _model([node], [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)])
    got, so = _run(tmp_path, model, {"x": np.zeros(shape, np.float32)})
    want = (np.float32(-2) + _uniform(37 * 41, _key(3.0), False) * np.float32(7)).reshape(shape)
    np.testing.assert_allclose(got["y"], want, rtol=0, atol=5e-7)
    assert got["y"].min() >= -2 and got["y"].max() < 5
    # The same values at every run of the library.
    again, _ = run_outputs(tmp_path, so, {"x": np.ones(shape, np.float32)}, "again")
    np.testing.assert_array_equal(again["y"], got["y"])


def test_normal_double_is_box_muller_over_the_stream(tmp_path):
    node = helper.make_node("RandomNormal", [], ["y"], seed=1.5, mean=1.0, scale=2.0, shape=[400, 50],
                            dtype=TensorProto.DOUBLE)
    model = _model([node], [], [helper.make_tensor_value_info("y", TensorProto.DOUBLE, [400, 50])])
    got, _ = _run(tmp_path, model)
    u = _uniform(2 * 20000, _key(1.5), True)
    n = np.sqrt(-2 * np.log(1 - u[0::2])) * np.cos(2 * np.pi * u[1::2])
    np.testing.assert_allclose(got["y"], (1 + 2 * n).reshape(400, 50), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("onnx_type,np_type", [(TensorProto.FLOAT, np.float32), (TensorProto.DOUBLE, np.float64),
                                               (TensorProto.FLOAT16, np.float16)])
def test_moments(tmp_path, onnx_type, np_type):
    n = 200_000
    nodes = [helper.make_node("RandomUniform", [], ["u"], shape=[n], low=1.0, high=3.0, dtype=onnx_type, seed=7.0),
             helper.make_node("RandomNormalLike", ["x"], ["z"], mean=-1.0, scale=0.5, dtype=onnx_type)]
    model = _model(nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [n])],
                   [helper.make_tensor_value_info("u", onnx_type, [n]), helper.make_tensor_value_info("z", onnx_type, [n])])
    got, _ = _run(tmp_path, model, {"x": np.zeros(n, np.float32)})
    u, z = got["u"].astype(np.float64), got["z"].astype(np.float64)
    assert got["u"].dtype == np_type and got["z"].dtype == np_type
    assert u.min() >= 1 and u.max() <= 3
    # U(1, 3): mean 2, variance 1/3; N(-1, 0.25). Five standard errors.
    assert abs(u.mean() - 2) < 5 * np.sqrt(1 / 3 / n)
    assert abs(u.var() - 1 / 3) < 5 * np.sqrt(4 / 45 / n) + 1e-3
    assert abs(z.mean() + 1) < 5 * 0.5 / np.sqrt(n)
    assert abs(z.std() - 0.5) < 5 * 0.5 / np.sqrt(2 * n) + 2e-3
    # Kolmogorov-Smirnov against U(1, 3): D below the 0.1 % critical value 1.95 / sqrt(n).
    s = np.sort(u)
    d = np.max(np.abs(np.arange(1, n + 1) / n - (s - 1) / 2))
    assert d < 1.95 / np.sqrt(n) + (1e-3 if np_type == np.float16 else 0)


def test_bernoulli_frequencies_and_dtypes(tmp_path):
    p = np.repeat(np.array([0.0, 0.1, 0.5, 0.9, 1.0]), 20000).reshape(5, 20000)
    nodes = [helper.make_node("Bernoulli", ["p"], ["b"], seed=2.0),
             helper.make_node("Bernoulli", ["p"], ["i"], dtype=TensorProto.INT32),
             helper.make_node("Bernoulli", ["p"], ["t"], dtype=TensorProto.BOOL)]
    model = _model(nodes, [helper.make_tensor_value_info("p", TensorProto.DOUBLE, [5, 20000])],
                   [helper.make_tensor_value_info("b", TensorProto.DOUBLE, [5, 20000]),
                    helper.make_tensor_value_info("i", TensorProto.INT32, [5, 20000]),
                    helper.make_tensor_value_info("t", TensorProto.BOOL, [5, 20000])])
    got, _ = _run(tmp_path, model, {"p": p})
    for name, dtype in [("b", np.float64), ("i", np.int32), ("t", np.bool_)]:
        y = got[name]
        assert y.dtype == dtype and set(np.unique(y.astype(np.float64))) <= {0.0, 1.0}
        freq = y.astype(np.float64).mean(axis=1)
        sigma = np.sqrt(p[:, 0] * (1 - p[:, 0]) / 20000)
        assert np.all(np.abs(freq - p[:, 0]) <= 5 * sigma + 1e-12), (name, freq)
    # Unseeded nodes draw different streams from each other and from the seeded one.
    assert not np.array_equal(got["i"][2], got["t"][2].astype(np.int32))
    assert not np.array_equal(got["b"][2], got["i"][2].astype(np.float64))


def test_multinomial_frequencies(tmp_path):
    logits = np.log(np.array([[0.1, 0.2, 0.3, 0.4], [0.7, 0.0, 0.2, 0.1]])).astype(np.float32)
    logits[1, 1] = -np.inf  # probability 0: never drawn
    s = 40000
    for k, dtype in enumerate([TensorProto.INT32, TensorProto.INT64]):
        node = helper.make_node("Multinomial", ["x"], ["y"], sample_size=s, seed=5.0, dtype=dtype)
        model = _model([node], [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 4])],
                       [helper.make_tensor_value_info("y", dtype, [2, s])])
        got, _ = _run(tmp_path, model, {"x": logits}, tag=f"m{k}")
        y = got["y"]
        assert y.dtype == (np.int32 if dtype == TensorProto.INT32 else np.int64) and y.shape == (2, s)
        probs = np.exp(logits - logits.max(axis=1, keepdims=True))
        probs /= probs.sum(axis=1, keepdims=True)
        for row in range(2):
            counts = np.bincount(y[row], minlength=4)
            assert counts.size == 4 and counts[probs[row] == 0].sum() == 0
            live = probs[row] > 0
            expected = probs[row][live] * s
            chi2 = ((counts[live] - expected) ** 2 / expected).sum()
            assert chi2 < 20, (row, counts, expected)  # df <= 3: P(chi2 > 20) < 2e-4


def test_seeds_rebuilds_and_symbolic_shapes(tmp_path):
    def uniform_like(seed=None):
        attrs = {} if seed is None else {"seed": seed}
        node = helper.make_node("RandomUniformLike", ["x"], ["y"], **attrs)
        return _model([node], [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", 8])],
                      [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", 8])])

    x5, x3 = np.zeros((5, 8), np.float32), np.zeros((3, 8), np.float32)
    a, so = _run(tmp_path, uniform_like(1.0), {"x": x5}, "a", ("--dynamic",))
    b, _ = _run(tmp_path, uniform_like(1.0), {"x": x5}, "b", ("--dynamic",))
    c, _ = _run(tmp_path, uniform_like(2.0), {"x": x5}, "c", ("--dynamic",))
    np.testing.assert_array_equal(a["y"], b["y"])  # a rebuild gives the same values
    assert not np.array_equal(a["y"], c["y"])
    small, _ = run_outputs(tmp_path, so, {"x": x3}, "small")  # one library, every extent: a prefix
    np.testing.assert_array_equal(small["y"], a["y"][:3])
    want = _uniform(40, _key(1.0), False).reshape(5, 8)
    np.testing.assert_allclose(a["y"], want, rtol=0, atol=1e-7)


@pytest.mark.parametrize("node,inputs,message", [
    (helper.make_node("RandomUniform", [], ["y"], shape=[2], dtype=TensorProto.INT32), [],
     "dtype must be float16, bfloat16, float or double, got int32"),
    (helper.make_node("RandomNormal", [], ["y"], dtype=TensorProto.FLOAT), [], "attr shape is required"),
    (helper.make_node("RandomUniformLike", ["x"], ["y"]), [("x", TensorProto.INT64, [3])],
     "the output dtype must be float16, bfloat16, float or double, got int64 (the input's; give attr dtype)"),
    (helper.make_node("Multinomial", ["x"], ["y"]), [("x", TensorProto.FLOAT, [4])],
     "the input must be [batch_size, class_size], got rank 1"),
    (helper.make_node("Multinomial", ["x"], ["y"], sample_size=0), [("x", TensorProto.FLOAT, [1, 4])],
     "sample_size must be >= 1, got 0"),
    (helper.make_node("Bernoulli", ["x"], ["y"]), [("x", TensorProto.INT32, [4])],
     "the probabilities must be float16, float or double, got int32"),
])
def test_bad_attributes_are_refused(tmp_path, node, inputs, message):
    model = _model([node], [helper.make_tensor_value_info(*i) for i in inputs],
                   [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)])
    path = tmp_path / "bad.onnx"
    onnx.save(model, path)
    proc = run_cli("compile", path, "-o", tmp_path / "bad.so", check=False)
    assert proc.returncode == 1, proc.stderr
    assert message in proc.stderr and node.op_type in proc.stderr, proc.stderr
