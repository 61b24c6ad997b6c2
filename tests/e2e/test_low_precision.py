"""float16 / bfloat16 / float8 / float4 / int4 / int2 end to end (issue 18, "Element types").

Cast round trips are compared with ml_dtypes (which the ONNX reference implementation uses),
exactly: a conversion has one right answer. float16 arithmetic is compared with ONNX Runtime
within 2 float16 ulps (Tessera computes in float32 and rounds once per op; ORT does too for
most ops)."""
import numpy as np
import onnx
import onnx.reference
import pytest
from onnx import TensorProto, helper

from conftest import compile_and_run

ml_dtypes = pytest.importorskip("ml_dtypes")

F8 = {
    TensorProto.FLOAT8E4M3FN: ml_dtypes.float8_e4m3fn,
    TensorProto.FLOAT8E4M3FNUZ: ml_dtypes.float8_e4m3fnuz,
    TensorProto.FLOAT8E5M2: ml_dtypes.float8_e5m2,
    TensorProto.FLOAT8E5M2FNUZ: ml_dtypes.float8_e5m2fnuz,
}
OTHER = {
    TensorProto.FLOAT16: np.float16,
    TensorProto.BFLOAT16: ml_dtypes.bfloat16,
    TensorProto.FLOAT4E2M1: ml_dtypes.float4_e2m1fn,
    TensorProto.INT4: ml_dtypes.int4,
    TensorProto.UINT4: ml_dtypes.uint4,
    TensorProto.INT2: ml_dtypes.int2,
    TensorProto.UINT2: ml_dtypes.uint2,
}


def _values(dtype=np.float32):
    """Edge values (zeros, subnormals of every format, ties, the max of every format and just
    beyond, inf, NaN) and random ones over many magnitudes."""
    rng = np.random.default_rng(7)
    edge = [0.0, -0.0, 1.0, -1.0, 0.5, 0.25, 0.75, 1.5, 2.5, 3.5, 6.0, 7.0, 9.6, -9.7, 17.0, 240.0, 248.0, 448.0,
            464.0, 480.0, 57344.0, 61440.0, 65504.0, 65520.0, 1e6, -1e6, 1e-7, 2.0 ** -9, 2.0 ** -10, 2.0 ** -17,
            2.0 ** -16, 3 * 2.0 ** -10, 2.0 ** -24, 2.0 ** -25, 1.0 / 3, np.inf, -np.inf, np.nan]
    rand = rng.standard_normal(2000) * np.exp2(rng.integers(-20, 20, 2000))
    return np.concatenate([np.array(edge), rand]).astype(dtype)


def _cast_model(to, saturate=None, in_type=TensorProto.FLOAT, n=None):
    attrs = {"to": to}
    if saturate is not None:
        attrs["saturate"] = saturate
    back = TensorProto.FLOAT if in_type != TensorProto.DOUBLE else TensorProto.DOUBLE
    nodes = [helper.make_node("Cast", ["x"], ["t"], **attrs), helper.make_node("Cast", ["t"], ["y"], to=back)]
    graph = helper.make_graph(nodes, "cast", [helper.make_tensor_value_info("x", in_type, [n])],
                              [helper.make_tensor_value_info("y", back, [n])])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])


def _same(got, want):
    np.testing.assert_array_equal(np.isnan(got), np.isnan(want))
    ok = ~np.isnan(want)
    np.testing.assert_array_equal(got[ok], want[ok])
    # signed zeros too
    np.testing.assert_array_equal(np.signbit(got[ok & (want == 0)]), np.signbit(want[ok & (want == 0)]))


@pytest.mark.parametrize("to", list(F8))
@pytest.mark.parametrize("saturate", [1, 0])
def test_cast_float8_round_trip(tmp_path, to, saturate):
    x = _values()
    (y,) = compile_and_run(tmp_path, _cast_model(to, saturate, n=len(x)), {"x": x})
    ref = onnx.reference.ReferenceEvaluator(_cast_model(to, saturate, n=len(x))).run(None, {"x": x})[0]
    _same(y, ref)


@pytest.mark.parametrize("to", list(OTHER))
def test_cast_other_round_trip(tmp_path, to):
    x = _values()
    (y,) = compile_and_run(tmp_path, _cast_model(to, n=len(x)), {"x": x})
    want = x.astype(OTHER[to]).astype(np.float32)
    if to in (TensorProto.INT4, TensorProto.UINT4, TensorProto.INT2, TensorProto.UINT2):
        # ml_dtypes: truncation toward zero, then wrap; NaN / inf / beyond int32 give 0.
        t = np.where(np.isfinite(x) & (np.abs(x) < 2.0 ** 31), x, 0).astype(np.float64)
        bits = 4 if to in (TensorProto.INT4, TensorProto.UINT4) else 2
        w = np.trunc(t).astype(np.int64) & ((1 << bits) - 1)
        if to in (TensorProto.INT4, TensorProto.INT2):
            w = np.where(w >= 1 << (bits - 1), w - (1 << bits), w)
        want = w.astype(np.float32)
    if to == TensorProto.FLOAT4E2M1:
        want = np.where(np.isnan(x), np.float32(-0.0), want)  # ml_dtypes' NaN -> 0x8 (-0)
    _same(y, want)


@pytest.mark.parametrize("to", [TensorProto.FLOAT16, TensorProto.BFLOAT16, TensorProto.FLOAT8E4M3FN])
def test_cast_from_double_rounds_once(tmp_path, to):
    # Values just above a tie of the destination: rounding through float32 first would make them the
    # tie and round them down to even. Tessera rounds float64 once (numpy does too for float16;
    # ml_dtypes goes through float32 for bfloat16 and float8, which we do not follow).
    x = np.array([1 + 2.0 ** -11 + 2.0 ** -40, 1 + 2.0 ** -8 + 2.0 ** -40, 1 + 2.0 ** -4 + 2.0 ** -40, 1e300, -3.0],
                 dtype=np.float64)
    (y,) = compile_and_run(tmp_path, _cast_model(to, in_type=TensorProto.DOUBLE, n=len(x)), {"x": x})
    ulp = {TensorProto.FLOAT16: 2.0 ** -10, TensorProto.BFLOAT16: 2.0 ** -7, TensorProto.FLOAT8E4M3FN: 2.0 ** -3}[to]
    # The first three lie in [1, 2), where the destination's quantum is `ulp`: round once, to nearest.
    want = np.concatenate([np.round(x[:3] / ulp) * ulp, [np.inf, -3.0]])
    if to == TensorProto.FLOAT8E4M3FN:
        want[3] = 448.0  # saturate
    _same(y, want)


def test_float16_network_matches_onnxruntime(tmp_path):
    ort = pytest.importorskip("onnxruntime")
    rng = np.random.default_rng(0)
    w = rng.standard_normal((32, 16)).astype(np.float16)
    b = rng.standard_normal(16).astype(np.float16)
    nodes = [
        helper.make_node("MatMul", ["x", "w"], ["m"]),
        helper.make_node("Add", ["m", "b"], ["a"]),
        helper.make_node("Relu", ["a"], ["r"]),
        helper.make_node("Softmax", ["r"], ["s"], axis=-1),
        helper.make_node("ReduceMax", ["r"], ["mx"], keepdims=1),
        helper.make_node("Sub", ["r", "mx"], ["y"]),
    ]
    graph = helper.make_graph(
        nodes, "f16", [helper.make_tensor_value_info("x", TensorProto.FLOAT16, [4, 32])],
        [helper.make_tensor_value_info("s", TensorProto.FLOAT16, [4, 16]),
         helper.make_tensor_value_info("y", TensorProto.FLOAT16, [4, 16])],
        [onnx.numpy_helper.from_array(w, "w"), onnx.numpy_helper.from_array(b, "b")])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    x = rng.standard_normal((4, 32)).astype(np.float16)
    got = compile_and_run(tmp_path, model, {"x": x})
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    want = sess.run(None, {"x": x})
    for g, r in zip(got, want):
        assert g.dtype == np.float16
        np.testing.assert_allclose(g.astype(np.float32), r.astype(np.float32), rtol=2e-3, atol=2e-3)


@pytest.mark.parametrize("qtype", [TensorProto.INT4, TensorProto.UINT4, TensorProto.INT2, TensorProto.FLOAT8E4M3FN,
                                   TensorProto.FLOAT8E5M2, TensorProto.FLOAT4E2M1])
def test_quantize_dequantize_round_trip(tmp_path, qtype):
    rng = np.random.default_rng(1)
    x = (rng.standard_normal((3, 8)) * 4).astype(np.float32)
    scale = np.array([0.5, 0.25, 1.0], np.float32)
    zp_np = {TensorProto.INT4: np.array([1, -2, 0]), TensorProto.UINT4: np.array([8, 3, 7]),
             TensorProto.INT2: np.array([0, 1, -1])}.get(qtype)
    inits = [onnx.numpy_helper.from_array(scale, "s")]
    if zp_np is not None:
        inits.append(helper.make_tensor("z", qtype, [3], zp_np.tolist()))
    else:
        inits.append(helper.make_tensor("z", qtype, [3], [0.0, 0.0, 0.0]))
    nodes = [helper.make_node("QuantizeLinear", ["x", "s", "z"], ["q"], axis=0),
             helper.make_node("DequantizeLinear", ["q", "s", "z"], ["y"], axis=0)]
    graph = helper.make_graph(nodes, "qdq", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [3, 8])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3, 8])], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 23)])
    (y,) = compile_and_run(tmp_path, model, {"x": x})
    want = onnx.reference.ReferenceEvaluator(model).run(None, {"x": x})[0]
    np.testing.assert_array_equal(y, want)


def test_bfloat16_output_saved_for_ml_dtypes(tmp_path):
    """A bfloat16 graph output is written to the .npz as '<V2' elements, which ml_dtypes views back."""
    graph = helper.make_graph([helper.make_node("Cast", ["x"], ["y"], to=TensorProto.BFLOAT16)], "c",
                              [helper.make_tensor_value_info("x", TensorProto.FLOAT, [5])],
                              [helper.make_tensor_value_info("y", TensorProto.BFLOAT16, [5])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
    x = np.array([1.0, -2.5, 3.14159, 1e-3, 65504.0], np.float32)
    (y,) = compile_and_run(tmp_path, model, {"x": x})
    np.testing.assert_array_equal(y.view(ml_dtypes.bfloat16).astype(np.float32),
                                  x.astype(ml_dtypes.bfloat16).astype(np.float32))


@pytest.mark.parametrize("src,dst,np_src,np_dst", [
    (TensorProto.FLOAT, TensorProto.INT32, np.float32, np.int32),
    (TensorProto.INT64, TensorProto.DOUBLE, np.int64, np.float64),
    (TensorProto.FLOAT16, TensorProto.UINT16, np.float16, np.uint16),
    (TensorProto.UINT16, TensorProto.FLOAT16, np.uint16, np.float16),
])
def test_bitcast_float_int_at_run_time(tmp_path, src, dst, np_src, np_dst):
    """BitCast between float and integer types of a run-time value (graph op reinterpret, an LLVM bitcast)."""
    graph = helper.make_graph([helper.make_node("BitCast", ["x"], ["y"], to=dst)], "b",
                              [helper.make_tensor_value_info("x", src, [7])],
                              [helper.make_tensor_value_info("y", dst, [7])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 26)])
    rng = np.random.default_rng(3)
    x = (rng.standard_normal(7) * 100).astype(np_src) if np.dtype(np_src).kind == "f" else \
        rng.integers(0, 2 ** 15, 7).astype(np_src)
    (y,) = compile_and_run(tmp_path, model, {"x": x})
    np.testing.assert_array_equal(y, x.view(np_dst))
