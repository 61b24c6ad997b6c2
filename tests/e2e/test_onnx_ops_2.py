"""ONNX operators added for issue 18 (second batch), end to end: `tessera compile` + `tessera run`
against the ONNX reference implementation (onnx.reference) and, where it implements the op, ONNX
Runtime (CPU). The backend suite feeds these ops' shape operands (image_shape, shape, size,
output_shape ...) at run time, so the suite counts them as unsupported; here they are
initializers, as exported models have them.
Tolerance: |got - ref| <= 1e-5 + 1e-4 * |ref| (float32) unless a test states otherwise; integers exact.
"""
import numpy as np
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from conftest import compile_and_run, compile_graph, ort_run, run_outputs

_TP = {np.dtype(np.float32): TensorProto.FLOAT, np.dtype(np.float64): TensorProto.DOUBLE,
       np.dtype(np.int64): TensorProto.INT64, np.dtype(np.int32): TensorProto.INT32,
       np.dtype(np.int8): TensorProto.INT8, np.dtype(np.uint8): TensorProto.UINT8,
       np.dtype(np.uint32): TensorProto.UINT32, np.dtype(np.bool_): TensorProto.BOOL}


def _model(nodes, inputs, consts, opset):
    """A graph of `nodes` with graph inputs `inputs` (name -> array) and initializers `consts`; every
    node output is a graph output."""
    outs = [o for n in nodes for o in n.output if o]
    graph = helper.make_graph(
        nodes, "g", [helper.make_tensor_value_info(k, _TP[v.dtype], list(v.shape)) for k, v in inputs.items()],
        [helper.make_empty_tensor_value_info(o) for o in outs],
        initializer=[numpy_helper.from_array(v, k) for k, v in consts.items()])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])


def _check(tmp_path, nodes, inputs, consts, opset, ort_too=False, rtol=1e-4, atol=1e-5, ort_skip=()):
    model = _model(nodes, inputs, consts, opset)
    got = compile_and_run(tmp_path, model, inputs)
    want = ReferenceEvaluator(model).run(None, inputs)
    refs = [want]
    if ort_too:
        refs.append(ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, inputs))
    outs = [o for n in nodes for o in n.output if o]
    for r, ref in enumerate(refs):
        for name, g, w in zip(outs, got, ref):
            if r == 1 and name in ort_skip:
                continue
            w = np.asarray(w)
            assert g.shape == w.shape and g.dtype == w.dtype, f"{name}: {g.shape} {g.dtype} vs {w.shape} {w.dtype}"
            if np.issubdtype(w.dtype, np.integer):
                np.testing.assert_array_equal(g, w, err_msg=name)
            else:
                np.testing.assert_allclose(g, w, rtol=rtol, atol=atol, err_msg=name)
    return got


def _sub(tmp_path, name):
    d = tmp_path / name
    d.mkdir()
    return d


def test_col2im_strides_pads_dilations_2d_and_3d(tmp_path):
    rng = np.random.default_rng(0)
    cases = [  # image, block, strides, pads, dilations
        ([5, 5], [1, 5], None, None, None),
        ([5, 5], [2, 2], [2, 2], None, None),
        ([5, 5], [2, 2], None, [1, 0, 1, 2], None),
        ([6, 6], [2, 2], None, None, [2, 3]),
        ([7, 6], [3, 2], [2, 1], [1, 1, 0, 1], [1, 2]),
        ([3, 4, 5], [2, 2, 2], [1, 2, 1], [0, 1, 1, 1, 0, 0], None),
    ]
    nodes, inputs, consts = [], {}, {}
    for i, (image, block, strides, pads, dil) in enumerate(cases):
        k = len(image)
        s, p, d = strides or [1] * k, pads or [0] * (2 * k), dil or [1] * k
        nb = [(image[j] + p[j] + p[k + j] - d[j] * (block[j] - 1) - 1) // s[j] + 1 for j in range(k)]
        inputs[f"x{i}"] = rng.standard_normal((2, 3 * int(np.prod(block)), int(np.prod(nb)))).astype(np.float32)
        consts[f"img{i}"] = np.array(image, np.int64)
        consts[f"blk{i}"] = np.array(block, np.int64)
        attrs = {n: v for n, v in (("strides", strides), ("pads", pads), ("dilations", dil)) if v}
        nodes.append(helper.make_node("Col2Im", [f"x{i}", f"img{i}", f"blk{i}"], [f"y{i}"], **attrs))
    _check(tmp_path, nodes, inputs, consts, 18)


def test_center_crop_pad_crop_pad_axes(tmp_path):
    x = np.random.default_rng(1).standard_normal((5, 8, 3)).astype(np.float32)
    cases = [([3, 11, 3], None), ([6, 5], [0, 1]), ([2, 7], [-1, 0]), ([9], [1]), ([5, 8, 3], None)]
    nodes, consts = [], {}
    for i, (shape, axes) in enumerate(cases):
        consts[f"s{i}"] = np.array(shape, np.int64)
        attrs = {"axes": axes} if axes else {}
        nodes.append(helper.make_node("CenterCropPad", ["x", f"s{i}"], [f"y{i}"], **attrs))
    _check(tmp_path, nodes, {"x": x}, consts, 18)


def test_affine_grid_2d_3d_align_corners(tmp_path):
    rng = np.random.default_rng(2)
    nodes, inputs, consts = [], {}, {}
    for i, (size, align) in enumerate([([2, 3, 4, 5], 0), ([2, 3, 4, 5], 1), ([2, 1, 1, 3], 1),
                                       ([2, 3, 3, 4, 2], 0), ([2, 3, 3, 4, 2], 1)]):
        dims = len(size) - 2
        inputs[f"t{i}"] = rng.standard_normal((2, dims, dims + 1)).astype(np.float32)
        consts[f"s{i}"] = np.array(size, np.int64)
        nodes.append(helper.make_node("AffineGrid", [f"t{i}", f"s{i}"], [f"g{i}"], align_corners=align))
    # An extent of 1 with align_corners=1: the reference (and the suite) give -1, ONNX Runtime 1.
    _check(tmp_path, nodes, inputs, consts, 20, ort_too=True, ort_skip=("g2",))


def _maxpool_with_indices(x, kernel, strides, pads):
    model = _model([helper.make_node("MaxPool", ["x"], ["y", "i"], kernel_shape=kernel, strides=strides, pads=pads)],
                   {"x": x}, {}, 12)
    return ReferenceEvaluator(model).run(None, {"x": x})


def test_max_unpool_1d_2d_3d_with_and_without_output_shape(tmp_path):
    rng = np.random.default_rng(3)
    nodes, inputs, consts = [], {}, {}
    for i, (shape, kernel, strides, pads, out) in enumerate([
            ((2, 3, 6, 6), [2, 2], [2, 2], [0, 0, 0, 0], None),
            ((1, 2, 7, 7), [3, 3], [2, 2], [1, 1, 1, 1], [1, 2, 8, 9]),
            ((1, 2, 9), [3], [3], [0, 0], None),
            ((1, 1, 4, 4, 4), [2, 2, 2], [2, 2, 2], [0] * 6, [1, 1, 5, 4, 5])]):
        x = rng.permutation(np.prod(shape)).reshape(shape).astype(np.float32)
        y, idx = _maxpool_with_indices(x, kernel, strides, pads)
        inputs[f"y{i}"], inputs[f"i{i}"] = y, idx
        ins = [f"y{i}", f"i{i}"]
        if out:
            consts[f"o{i}"] = np.array(out, np.int64)
            ins.append(f"o{i}")
        nodes.append(helper.make_node("MaxUnpool", ins, [f"u{i}"], kernel_shape=kernel, strides=strides, pads=pads))
    _check(tmp_path, nodes, inputs, consts, 22)


def test_det_batched_pivoting_and_singular(tmp_path):
    rng = np.random.default_rng(4)
    a = rng.standard_normal((3, 2, 4, 4)).astype(np.float32)
    a[0, 0] = [[0, 1, 2, 3], [1, 0, 4, 5], [2, 4, 0, 6], [3, 5, 6, 0]]  # zero diagonal: needs pivoting
    a[0, 1, 3] = a[0, 1, 0] * 2  # singular
    a[1, 0] = np.zeros((4, 4))
    one = rng.standard_normal((5, 1, 1)).astype(np.float32)
    got = _check(tmp_path, [helper.make_node("Det", ["a"], ["d"]), helper.make_node("Det", ["one"], ["d1"])],
                 {"a": a, "one": one}, {}, 22, ort_too=True, rtol=1e-4, atol=1e-4)
    np.testing.assert_allclose(got[0], np.linalg.det(a.astype(np.float64)), rtol=1e-4, atol=1e-4)


def test_roi_align_modes_and_adaptive_sampling(tmp_path):
    rng = np.random.default_rng(5)
    x = rng.standard_normal((2, 3, 10, 12)).astype(np.float32)
    rois = np.array([[0, 0, 9, 9], [1.5, 2.25, 7.75, 8.5], [-2, -1, 4, 13], [5, 5, 5.2, 5.1]], np.float32)
    batch = np.array([0, 1, 1, 0], np.int64)
    nodes = []
    for i, (ctm, mode, ratio, scale) in enumerate([("half_pixel", "avg", 2, 1.0), ("output_half_pixel", "avg", 3, 0.5),
                                                   ("half_pixel", "max", 2, 1.0), ("output_half_pixel", "max", 1, 1.0)]):
        nodes.append(helper.make_node("RoiAlign", ["x", "rois", "b"], [f"y{i}"], coordinate_transformation_mode=ctm,
                                      mode=mode, sampling_ratio=ratio, spatial_scale=scale, output_height=3,
                                      output_width=4))
    _check(_sub(tmp_path, "runtime_rois"), nodes, {"x": x, "rois": rois, "b": batch}, {}, 22)
    # sampling_ratio 0 sizes each roi's grid from the roi: rois known at import.
    nodes = [helper.make_node("RoiAlign", ["x", "rois", "b"], ["a"], output_height=2, output_width=3),
             helper.make_node("RoiAlign", ["x", "rois", "b"], ["m"], mode="max", output_height=2, output_width=3,
                              coordinate_transformation_mode="output_half_pixel", spatial_scale=0.75)]
    _check(_sub(tmp_path, "adaptive"), nodes, {"x": x}, {"rois": rois, "b": batch}, 22)
    # Opset 10 has no coordinate_transformation_mode and behaves as output_half_pixel (spec and ONNX
    # Runtime; onnx.reference applies opset 16's half_pixel default, so ONNX Runtime is the reference).
    node = helper.make_node("RoiAlign", ["x", "rois", "b"], ["y"], sampling_ratio=2, output_height=3, output_width=3)
    feeds = {"x": x, "rois": rois[:2], "b": batch[:2]}
    model = _model([node], feeds, {}, 10)
    want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)[0]
    np.testing.assert_allclose(compile_and_run(_sub(tmp_path, "opset10"), model, feeds)[0], want, rtol=1e-4, atol=1e-5)


def test_deform_conv_stride_dilation_groups_mask_bias(tmp_path):
    rng = np.random.default_rng(6)
    nodes, inputs = [], {}
    for i, (xshape, wshape, attrs, with_mask, with_bias) in enumerate([
            ((1, 2, 6, 7), (3, 2, 3, 3), {"strides": [2, 1], "pads": [1, 1, 1, 0]}, False, True),
            ((2, 4, 5, 5), (4, 2, 2, 2), {"group": 2, "offset_group": 2, "dilations": [2, 1]}, True, False),
            ((1, 2, 4, 4), (2, 2, 1, 1), {}, True, True)]):
        kh, kw = wshape[2:]
        pads = attrs.get("pads", [0] * 4)
        s, d = attrs.get("strides", [1, 1]), attrs.get("dilations", [1, 1])
        oh = (xshape[2] + pads[0] + pads[2] - (kh - 1) * d[0] - 1) // s[0] + 1
        ow = (xshape[3] + pads[1] + pads[3] - (kw - 1) * d[1] - 1) // s[1] + 1
        g = attrs.get("offset_group", 1)
        inputs[f"x{i}"] = rng.standard_normal(xshape).astype(np.float32)
        inputs[f"w{i}"] = rng.standard_normal(wshape).astype(np.float32)
        inputs[f"o{i}"] = (rng.standard_normal((xshape[0], g * kh * kw * 2, oh, ow)) * 1.5).astype(np.float32)
        ins = [f"x{i}", f"w{i}", f"o{i}", "", ""]
        if with_bias:
            inputs[f"b{i}"] = rng.standard_normal(wshape[0]).astype(np.float32)
            ins[3] = f"b{i}"
        if with_mask:
            inputs[f"m{i}"] = rng.uniform(0, 1, (xshape[0], g * kh * kw, oh, ow)).astype(np.float32)
            ins[4] = f"m{i}"
        while ins[-1] == "":
            ins.pop()
        nodes.append(helper.make_node("DeformConv", ins, [f"y{i}"], kernel_shape=[kh, kw], **attrs))
    _check(tmp_path, nodes, inputs, {}, 22, rtol=1e-4, atol=1e-4)


def test_tensor_scatter_linear_circular_axis(tmp_path):
    rng = np.random.default_rng(7)
    past = rng.standard_normal((3, 2, 6, 4)).astype(np.float32)
    upd = rng.standard_normal((3, 2, 3, 4)).astype(np.float32)
    upd1 = rng.standard_normal((3, 2, 6, 2)).astype(np.float32)
    past1 = rng.standard_normal((3, 2, 6, 5)).astype(np.float32)
    wi = np.array([0, 2, 3], np.int64)
    wc = np.array([4, 5, 1], np.int64)
    nodes = [helper.make_node("TensorScatter", ["past", "upd", "wi"], ["lin"]),
             helper.make_node("TensorScatter", ["past", "upd", "wc"], ["circ"], mode="circular"),
             helper.make_node("TensorScatter", ["past", "upd"], ["nowi"]),
             helper.make_node("TensorScatter", ["past1", "upd1", "wi"], ["ax"], axis=3, mode="circular")]
    _check(tmp_path, nodes, {"past": past, "upd": upd, "past1": past1, "upd1": upd1, "wi": wi, "wc": wc}, {}, 24)


def test_swiglu_alpha(tmp_path):
    rng = np.random.default_rng(8)
    a, b = rng.standard_normal((2, 3, 8)).astype(np.float32), rng.standard_normal((2, 3, 8)).astype(np.float32)
    nodes = [helper.make_node("SwiGLU", ["a", "b"], ["y"]), helper.make_node("SwiGLU", ["a", "b"], ["y2"], alpha=1.702)]
    _check(tmp_path, nodes, {"a": a, "b": b}, {}, 28)


def test_bitcast_integers_at_run_time_and_floats_folded(tmp_path):
    rng = np.random.default_rng(9)
    i8 = rng.integers(-128, 127, (3, 4), dtype=np.int8)
    u32 = rng.integers(0, 2**32 - 1, (5,), dtype=np.uint32)
    nodes = [helper.make_node("BitCast", ["i8"], ["u8"], to=TensorProto.UINT8),
             helper.make_node("BitCast", ["u32"], ["i32"], to=TensorProto.INT32),
             # a float initializer reinterpreted at import
             helper.make_node("BitCast", ["f"], ["fbits"], to=TensorProto.INT32),
             helper.make_node("BitCast", ["d"], ["dbits"], to=TensorProto.UINT64)]
    consts = {"f": np.array([1.0, -2.5, np.inf, 0.0], np.float32), "d": np.array([[np.pi, -0.0]], np.float64)}
    got = _check(tmp_path, nodes, {"i8": i8, "u32": u32}, consts, 26)
    np.testing.assert_array_equal(got[2], consts["f"].view(np.int32))
    np.testing.assert_array_equal(got[3], consts["d"].view(np.uint64))


def test_dft_every_mode_opset17_and_20(tmp_path):
    rng = np.random.default_rng(10)
    real = rng.standard_normal((2, 7, 5, 1)).astype(np.float32)
    cplx = rng.standard_normal((2, 7, 5, 2)).astype(np.float32)
    half = rng.standard_normal((2, 4, 5, 2)).astype(np.float32)  # one-sided spectra along axis 1
    nodes17, nodes20, consts = [], [], {}
    modes = [("real", 1, None, 0, 0), ("cplx", 1, None, 0, 0), ("real", 2, None, 0, 1), ("cplx", 2, 9, 0, 0),
             ("cplx", -3, 4, 1, 0), ("real", 1, 10, 1, 0), ("half", 1, None, 1, 1), ("half", 1, 7, 1, 1),
             ("half", 1, 5, 1, 1), ("real", 1, 8, 0, 1)]
    for i, (x, axis, length, inverse, onesided) in enumerate(modes):
        ins = [x, ""]
        if length:
            consts[f"len{i}"] = np.array(length, np.int64)
            ins[1] = f"len{i}"
        ins17 = ins if length else ins[:1]
        nodes17.append(helper.make_node("DFT", ins17, [f"a{i}"], axis=axis, inverse=inverse, onesided=onesided))
        consts[f"ax{i}"] = np.array(axis, np.int64)
        nodes20.append(helper.make_node("DFT", [*ins, f"ax{i}"], [f"b{i}"], inverse=inverse, onesided=onesided))
    inputs = {"real": real, "cplx": cplx, "half": half}
    _check(_sub(tmp_path, "o17"), nodes17, inputs, consts, 17, rtol=1e-4, atol=1e-4)
    _check(_sub(tmp_path, "o20"), nodes20, inputs, consts, 20, rtol=1e-4, atol=1e-4)


def test_stft_windows_and_frame_length(tmp_path):
    rng = np.random.default_rng(11)
    sig = rng.standard_normal((2, 64, 1)).astype(np.float32)
    csig = rng.standard_normal((1, 40, 2)).astype(np.float32)
    win = np.hanning(16).astype(np.float32)
    consts = {"step": np.array(8, np.int64), "step3": np.array(3, np.int64), "fl": np.array(16, np.int64),
              "fl10": np.array(10, np.int64), "win": win}
    nodes = [helper.make_node("STFT", ["sig", "step", "win"], ["y0"]),
             helper.make_node("STFT", ["sig", "step3", "", "fl10"], ["y1"], onesided=0),
             helper.make_node("STFT", ["sig", "step", "win", "fl"], ["y2"], onesided=1),
             helper.make_node("STFT", ["csig", "step3", "", "fl10"], ["y3"], onesided=0)]
    _check(tmp_path, nodes, {"sig": sig, "csig": csig}, consts, 17, rtol=1e-4, atol=1e-4)


def test_windows_and_mel_weight_matrix_folded(tmp_path):
    consts = {"n10": np.array(10, np.int64), "n1": np.array(1, np.int64), "mels": np.array(8, np.int64),
              "dft": np.array(64, np.int64), "rate": np.array(16000, np.int64),
              "lo": np.array(0.0, np.float32), "hi": np.array(8000.0, np.float32), "lo2": np.array(300.0, np.float32),
              "hi2": np.array(4000.0, np.float32)}
    nodes = []
    for op in ("HannWindow", "HammingWindow", "BlackmanWindow"):
        nodes.append(helper.make_node(op, ["n10"], [f"{op}_p"]))
        nodes.append(helper.make_node(op, ["n10"], [f"{op}_s"], periodic=0))
        nodes.append(helper.make_node(op, ["n10"], [f"{op}_d"], output_datatype=TensorProto.DOUBLE))
    nodes.append(helper.make_node("MelWeightMatrix", ["mels", "dft", "rate", "lo", "hi"], ["mel"]))
    nodes.append(helper.make_node("MelWeightMatrix", ["mels", "dft", "rate", "lo2", "hi2"], ["mel2"],
                                  output_datatype=TensorProto.DOUBLE))
    # A graph input keeps the model from being empty of run-time work.
    nodes.append(helper.make_node("Identity", ["x"], ["xo"]))
    _check(tmp_path, nodes, {"x": np.ones(2, np.float32)}, consts, 17, rtol=1e-5, atol=1e-6)


def _q(rng, shape, dtype):
    info = np.iinfo(dtype)
    return rng.integers(info.min, info.max + 1, shape).astype(dtype)


def test_matmul_integer_and_qlinear_matmul_per_tensor_row_column(tmp_path):
    """Bit-exact against onnx.reference (int32 accumulation, float64 requantization, round half to
    even, saturation); within 1 of ONNX Runtime (its float32 requantization may differ on ties)."""
    rng = np.random.default_rng(12)
    nodes, inputs, consts = [], {}, {}
    for i, (dt, ydt, ashape, bshape, per_row, per_col) in enumerate([
            (np.uint8, np.uint8, (5, 7), (7, 3), False, False), (np.int8, np.int8, (2, 5, 7), (2, 7, 3), False, False),
            (np.uint8, np.int8, (5, 7), (7, 3), True, True), (np.int8, np.uint8, (4, 6), (6, 2), False, True)]):
        inputs[f"a{i}"], inputs[f"b{i}"] = _q(rng, ashape, dt), _q(rng, bshape, dt)
        m, n = ashape[-2], bshape[-1]
        consts[f"az{i}"] = _q(rng, (m, 1) if per_row else (), dt)  # per row as [M, 1] (the reference's broadcast)
        consts[f"bz{i}"] = _q(rng, (n,) if per_col else (), dt)
        consts[f"as{i}"] = rng.uniform(0.01, 0.05, (m, 1) if per_row else ()).astype(np.float32)
        consts[f"bs{i}"] = rng.uniform(0.01, 0.05, (n,) if per_col else ()).astype(np.float32)
        consts[f"ys{i}"] = np.array(rng.uniform(0.5, 2.0), np.float32)
        consts[f"yz{i}"] = _q(rng, (), ydt)
        nodes.append(helper.make_node("MatMulInteger", [f"a{i}", f"b{i}", f"az{i}", f"bz{i}"], [f"mi{i}"]))
        nodes.append(helper.make_node("QLinearMatMul", [f"a{i}", f"as{i}", f"az{i}", f"b{i}", f"bs{i}", f"bz{i}",
                                                         f"ys{i}", f"yz{i}"], [f"q{i}"]))
    # Without zero points (MatMulInteger) and with the scales as run-time inputs.
    nodes.append(helper.make_node("MatMulInteger", ["a0", "b0"], ["mi_nozp"]))
    inputs["rs"] = np.array(0.03, np.float32)
    nodes.append(helper.make_node("QLinearMatMul", ["a0", "rs", "az0", "b0", "rs", "bz0", "rs", "yz0"], ["q_rt"]))
    _check(_sub(tmp_path, "ref"), nodes, inputs, consts, 21)
    # The spec's 1-D [M] per-row zero point of a 2-D A (onnx.reference does not broadcast it): numpy.
    a, b = inputs["a2"], inputs["b2"]
    az, bz = consts["az2"].reshape(-1), consts["bz2"]
    node = helper.make_node("MatMulInteger", ["a", "b", "az", "bz"], ["y"])
    got = compile_and_run(_sub(tmp_path, "row"), _model([node], {"a": a, "b": b}, {"az": az, "bz": bz}, 10),
                          {"a": a, "b": b})[0]
    want = (a.astype(np.int32) - az.astype(np.int32)[:, None]) @ (b.astype(np.int32) - bz.astype(np.int32))
    np.testing.assert_array_equal(got, want)


def test_conv_integer_and_qlinear_conv_per_channel_groups(tmp_path):
    rng = np.random.default_rng(13)
    nodes, inputs, consts = [], {}, {}
    for i, (dt, xshape, wshape, attrs, per_ch, bias) in enumerate([
            (np.uint8, (1, 3, 7, 7), (4, 3, 3, 3), {"pads": [1, 1, 1, 1]}, False, False),
            (np.int8, (2, 4, 8, 6), (6, 2, 3, 2), {"group": 2, "strides": [2, 1], "pads": [1, 0, 0, 1]}, True, True),
            (np.uint8, (1, 2, 9, 9), (3, 2, 2, 2), {"dilations": [2, 2], "pads": [2, 1, 1, 2]}, True, True),
            (np.int8, (1, 2, 5, 6), (2, 2, 3, 3), {"auto_pad": "SAME_UPPER"}, False, False)]):
        inputs[f"x{i}"] = _q(rng, xshape, dt)
        consts[f"w{i}"] = _q(rng, wshape, dt)  # weights are initializers, as in quantized models
        o = wshape[0]
        consts[f"xz{i}"] = _q(rng, (), dt)
        consts[f"wz{i}"] = _q(rng, (o,) if per_ch else (), dt) if dt == np.uint8 else np.zeros((o,) if per_ch else (), dt)
        consts[f"xs{i}"] = np.array(rng.uniform(0.01, 0.05), np.float32)
        consts[f"ws{i}"] = rng.uniform(0.001, 0.01, (o,) if per_ch else ()).astype(np.float32)
        consts[f"ys{i}"] = np.array(rng.uniform(0.05, 0.2), np.float32)
        consts[f"yz{i}"] = _q(rng, (), dt)
        ins = [f"x{i}", f"xs{i}", f"xz{i}", f"w{i}", f"ws{i}", f"wz{i}", f"ys{i}", f"yz{i}"]
        if bias:
            consts[f"B{i}"] = rng.integers(-2000, 2000, (o,)).astype(np.int32)
            ins.append(f"B{i}")
        nodes.append(helper.make_node("ConvInteger", [f"x{i}", f"w{i}", f"xz{i}", f"wz{i}"], [f"ci{i}"], **attrs))
        nodes.append(helper.make_node("QLinearConv", ins, [f"qc{i}"], **attrs))
    got = _check(tmp_path, nodes, inputs, consts, 10)
    # ONNX Runtime: ConvInteger exactly (it takes per-tensor weight zero points only), QLinearConv
    # within one step.
    keep = [k for k, n in enumerate(nodes) if n.op_type == "QLinearConv" or consts[n.input[3]].ndim == 0]
    model = _model([nodes[k] for k in keep], inputs, consts, 10)
    want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, inputs)
    for node, g, w in zip([nodes[k] for k in keep], [got[k] for k in keep], want):
        if node.op_type == "ConvInteger":
            np.testing.assert_array_equal(g, w, err_msg=node.output[0])
        else:
            assert np.abs(g.astype(np.int32) - w.astype(np.int32)).max() <= 1, node.output[0]


def test_causal_conv_with_state_activations_state_bias(tmp_path):
    rng = np.random.default_rng(14)
    x = rng.standard_normal((2, 3, 6)).astype(np.float32)
    w4 = rng.standard_normal((3, 1, 4)).astype(np.float32)
    w1 = rng.standard_normal((3, 1, 1)).astype(np.float32)
    bias = rng.standard_normal(3).astype(np.float32)
    past = rng.standard_normal((2, 3, 3)).astype(np.float32)
    short = rng.standard_normal((2, 3, 2)).astype(np.float32)  # shorter than k - 1
    nodes = [helper.make_node("CausalConvWithState", ["x", "w4"], ["y0", "s0"]),
             helper.make_node("CausalConvWithState", ["x", "w4", "bias", "past"], ["y1", "s1"], activation="silu"),
             helper.make_node("CausalConvWithState", ["short", "w4", "", "past"], ["y2", "s2"], activation="swish"),
             helper.make_node("CausalConvWithState", ["x", "w1", "bias"], ["y3"])]
    _check(tmp_path, nodes, {"x": x, "w4": w4, "w1": w1, "bias": bias, "past": past, "short": short}, {}, 27)


def test_linear_attention_every_rule_gqa_decay_beta(tmp_path):
    rng = np.random.default_rng(15)
    b, t, hq, hkv, dk, dv = 2, 5, 4, 2, 3, 2
    q = rng.standard_normal((b, t, hq * dk)).astype(np.float32)
    k = rng.standard_normal((b, t, hkv, dk)).astype(np.float32)
    k = (k / np.linalg.norm(k, axis=-1, keepdims=True)).reshape(b, t, hkv * dk)  # L2-normalised for delta rules
    v = rng.standard_normal((b, t, hkv * dv)).astype(np.float32)
    past = rng.standard_normal((b, hkv, dk, dv)).astype(np.float32)
    g_head = -rng.uniform(0.01, 0.5, (b, t, hkv)).astype(np.float32)
    g_key = -rng.uniform(0.01, 0.5, (b, t, hkv * dk)).astype(np.float32)
    beta = rng.uniform(0.1, 0.9, (b, t, hkv)).astype(np.float32)
    beta1 = rng.uniform(0.1, 0.9, (b, t, 1)).astype(np.float32)
    common = {"q_num_heads": hq, "kv_num_heads": hkv}
    nodes = [helper.make_node("LinearAttention", ["q", "k", "v"], ["o0", "s0"], update_rule="linear", **common),
             helper.make_node("LinearAttention", ["q", "k", "v", "past", "g_head"], ["o1", "s1"], update_rule="gated",
                              **common),
             helper.make_node("LinearAttention", ["q", "k", "v", "past", "g_key"], ["o2"], update_rule="gated",
                              scale=0.3, **common),
             helper.make_node("LinearAttention", ["q", "k", "v", "past", "", "beta"], ["o3", "s3"], update_rule="delta",
                              **common),
             helper.make_node("LinearAttention", ["q", "k", "v", "past", "g_head", "beta1"], ["o4", "s4"], **common)]
    feeds = {"q": q, "k": k, "v": v, "past": past, "g_head": g_head, "g_key": g_key, "beta": beta, "beta1": beta1}
    _check(tmp_path, nodes, feeds, {}, 27, rtol=1e-4, atol=1e-4)


def _rnn_case(rng, op, t, b, i, h, dirs, layout=0, bias=True, init=True, lens=None, peep=False):
    g = {"RNN": 1, "GRU": 3, "LSTM": 4}[op]
    feeds = {"X": rng.standard_normal((b, t, i) if layout else (t, b, i)).astype(np.float32),
             "W": (rng.standard_normal((dirs, g * h, i)) * 0.5).astype(np.float32),
             "R": (rng.standard_normal((dirs, g * h, h)) * 0.5).astype(np.float32)}
    names = ["X", "W", "R", "", "", "", "", ""]
    if bias:
        feeds["B"] = (rng.standard_normal((dirs, 2 * g * h)) * 0.3).astype(np.float32)
        names[3] = "B"
    if lens is not None:
        feeds["L"] = np.array(lens, np.int32)
        names[4] = "L"
    state = (b, dirs, h) if layout else (dirs, b, h)
    if init:
        feeds["H0"] = rng.standard_normal(state).astype(np.float32)
        names[5] = "H0"
        if op == "LSTM":
            feeds["C0"] = rng.standard_normal(state).astype(np.float32)
            names[6] = "C0"
    if peep:
        feeds["P"] = (rng.standard_normal((dirs, 3 * h)) * 0.3).astype(np.float32)
        names[7] = "P"
    while names[-1] == "":
        names.pop()
    return feeds, names


def test_rnn_gru_lstm_against_onnxruntime(tmp_path):
    """Every direction, layout, activation set (with alpha / beta), clip, input_forget,
    linear_before_reset, peepholes, initial states and a run-time sequence_lens shorter than T;
    against ONNX Runtime (onnx.reference implements the defaults only). Tolerance 1e-4."""
    rng = np.random.default_rng(16)
    cases = [
        ("RNN", dict(direction="bidirectional", hidden_size=4), {}),
        ("RNN", dict(direction="reverse", hidden_size=3, activations=["Relu"]), {"lens": [4, 2, 1]}),
        ("RNN", dict(hidden_size=3, activations=["LeakyRelu", "Affine"], activation_alpha=[0.2, 0.7],
                     activation_beta=[0.1], direction="bidirectional", layout=1), {"layout": 1}),
        ("GRU", dict(hidden_size=4, linear_before_reset=1), {}),
        ("GRU", dict(hidden_size=3, direction="bidirectional", clip=0.8), {"lens": [3, 4, 2]}),
        ("GRU", dict(hidden_size=3, activations=["HardSigmoid", "ScaledTanh"], activation_alpha=[0.3, 0.9],
                     activation_beta=[0.4, 1.1], layout=1), {"layout": 1, "init": False}),
        ("LSTM", dict(hidden_size=4, direction="bidirectional"), {"peep": True}),
        ("LSTM", dict(hidden_size=3, input_forget=1, clip=1.5, direction="reverse"), {"lens": [4, 1, 3]}),
        ("LSTM", dict(hidden_size=3, activations=["Sigmoid", "Softsign", "Elu"], activation_alpha=[0.5],
                      layout=1), {"layout": 1, "bias": False}),
    ]
    for n, (op, attrs, kw) in enumerate(cases):
        feeds, names = _rnn_case(rng, op, 4, 3, 5, attrs["hidden_size"],
                                 2 if attrs.get("direction") == "bidirectional" else 1, **kw)
        outs = ["Y", "Y_h"] + (["Y_c"] if op == "LSTM" else [])
        node = helper.make_node(op, names, outs, **attrs)
        model = _model([node], feeds, {}, 22)
        got = compile_and_run(_sub(tmp_path, f"c{n}"), model, feeds)
        if attrs.get("layout"):  # ONNX Runtime has no batch-major layout: run the time-major equivalent
            tm = {k: (v.transpose(1, 0, 2) if k in ("X", "H0", "C0") else v) for k, v in feeds.items()}
            ref_model = _model([helper.make_node(op, names, outs, **{**attrs, "layout": 0})], tm, {}, 22)
            want = ort.InferenceSession(ref_model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, tm)
            want = [want[0].transpose(2, 0, 1, 3)] + [w.transpose(1, 0, 2) for w in want[1:]]
        else:
            want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
        for name, g, w in zip(outs, got, want):
            assert g.shape == w.shape, f"{op} {attrs} {name}: {g.shape} vs {w.shape}"
            np.testing.assert_allclose(g, w, rtol=1e-4, atol=1e-4, err_msg=f"{op} {attrs} {name}")


def _compile_error(tmp_path, node, inputs, consts, opset):
    from conftest import run_cli
    import onnx
    model = _model([node], inputs, consts, opset)
    path = tmp_path / f"{node.name}.onnx"
    onnx.save(model, str(path))
    proc = run_cli("compile", path, "-o", tmp_path / "x.so", check=False)
    assert proc.returncode > 0 and proc.returncode not in (134, 139), proc.stderr
    return proc.stderr + proc.stdout


def test_bad_attributes_are_located_errors(tmp_path):
    """Bad attributes and operands give an error naming the node and what is wrong, never a crash."""
    f = np.zeros((1, 2, 4, 4), np.float32)
    cases = [
        (helper.make_node("RoiAlign", ["x", "r", "b"], ["y"], name="bad_roi", mode="median"),
         {"x": f, "r": np.zeros((1, 4), np.float32), "b": np.zeros(1, np.int64)}, {}, 22, "unknown mode 'median'"),
        (helper.make_node("TensorScatter", ["p", "u"], ["y"], name="bad_ts", mode="ring"),
         {"p": f, "u": f}, {}, 24, "unknown mode 'ring'"),
        (helper.make_node("LinearAttention", ["q", "q", "q"], ["y"], name="bad_la", q_num_heads=3, kv_num_heads=2),
         {"q": np.zeros((1, 2, 6), np.float32)}, {}, 27, "must be a positive multiple"),
        (helper.make_node("LSTM", ["x", "w", "r"], ["y"], name="bad_lstm", hidden_size=2, activations=["Cube"] * 3),
         {"x": np.zeros((2, 1, 3), np.float32), "w": np.zeros((1, 8, 3), np.float32),
          "r": np.zeros((1, 8, 2), np.float32)}, {}, 22, "unknown activation 'Cube'"),
        (helper.make_node("Col2Im", ["x", "i", "k"], ["y"], name="bad_col2im"),
         {"x": np.zeros((1, 4, 7), np.float32)}, {"i": np.array([4, 4], np.int64), "k": np.array([2, 2], np.int64)}, 18,
         "number of sliding blocks"),
        (helper.make_node("BitCast", ["x"], ["y"], name="bad_bitcast", to=TensorProto.INT64),
         {"x": np.zeros(3, np.int32)}, {}, 26, "one width"),
        (helper.make_node("DeformConv", ["x", "w", "o"], ["y"], name="bad_deform"),
         {"x": f, "w": np.zeros((1, 2, 3, 3), np.float32), "o": np.zeros((1, 18, 3, 3), np.float32)}, {}, 22,
         "offset must be"),
    ]
    for node, inputs, consts, opset, fragment in cases:
        msg = _compile_error(tmp_path, node, inputs, consts, opset)
        assert node.name in msg and fragment in msg, msg


def test_scan_axes_directions_outer_scope(tmp_path):
    rng = np.random.default_rng(17)
    # body: state s [2], scan slices a [2] and b [2]; s' = s * w + a - b (w from the outer scope);
    # per-step outputs s' and a * 2 (a body initializer).
    body = helper.make_graph(
        [helper.make_node("Mul", ["s", "w"], ["sw"]), helper.make_node("Add", ["sw", "a"], ["t"]),
         helper.make_node("Sub", ["t", "b"], ["s_out"]), helper.make_node("Identity", ["s_out"], ["s_step"]),
         helper.make_node("Mul", ["a", "two"], ["a2"])],
        "body", [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2]) for n in ("s", "a", "b")],
        [helper.make_tensor_value_info(n, TensorProto.FLOAT, [2]) for n in ("s_out", "s_step", "a2")],
        initializer=[numpy_helper.from_array(np.array(2.0, np.float32), "two")])
    node = helper.make_node("Scan", ["s0", "A", "B"], ["s_final", "ys", "a2s"], body=body, num_scan_inputs=2,
                            scan_input_axes=[0, 1], scan_input_directions=[0, 1], scan_output_axes=[1, -2],
                            scan_output_directions=[1, 0])
    feeds = {"s0": rng.standard_normal(2).astype(np.float32), "A": rng.standard_normal((5, 2)).astype(np.float32),
             "B": rng.standard_normal((2, 5)).astype(np.float32)}
    # onnx.reference scans forward only: ONNX Runtime is the reference.
    model = _model([node], feeds, {"w": np.array([0.5, -1.5], np.float32)}, 16)
    want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)
    for g, w in zip(compile_and_run(tmp_path, model, feeds), want):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-5, atol=1e-6)


def test_attention_nonpad_kv_seqlen_padding_and_causal_frontier(tmp_path):
    rng = np.random.default_rng(18)
    q = rng.standard_normal((3, 2, 2, 4)).astype(np.float32)
    k = rng.standard_normal((3, 2, 6, 4)).astype(np.float32)
    v = rng.standard_normal((3, 2, 6, 4)).astype(np.float32)
    lens = np.array([6, 3, 1], np.int64)  # the last gives a negative causal offset: fully masked rows -> 0
    nodes = [helper.make_node("Attention", ["q", "k", "v", "", "", "", "lens"], ["y0"]),
             helper.make_node("Attention", ["q", "k", "v", "", "", "", "lens"], ["y1"], is_causal=1)]
    _check(tmp_path, nodes, {"q": q, "k": k, "v": v, "lens": lens}, {}, 24)


def test_shape_arithmetic_with_ceil_pow_sqrt_folds_at_import(tmp_path):
    # A Reshape whose shape is computed from constants through Ceil, Pow, Sqrt, Floor and Round (as
    # exported MobileViT / DINOv2 compute patch grids): folded at import, so the model compiles.
    f = lambda n, v: numpy_helper.from_array(np.array(v, np.float32), n)  # noqa: E731
    nodes = [helper.make_node("Ceil", ["h"], ["hc"]), helper.make_node("Pow", ["two", "e"], ["p"]),
             helper.make_node("Sqrt", ["sixteen"], ["s"]), helper.make_node("Floor", ["x5"], ["fl"]),
             helper.make_node("Round", ["x25"], ["r"]),  # 2.5 -> 2 (half to even)
             helper.make_node("Mul", ["hc", "p"], ["a"]),  # ceil(1.5) * 2^1 = 4
             helper.make_node("Add", ["s", "fl"], ["b"]),  # sqrt(16) + floor(1.7) = 5
             helper.make_node("Concat", ["r", "a", "b"], ["shape_f"], axis=0),
             helper.make_node("Cast", ["shape_f"], ["shape"], to=TensorProto.INT64),
             helper.make_node("Reshape", ["x", "shape"], ["y"])]
    inits = [f("h", [1.5]), f("two", [2.0]), f("e", [1.0]), f("sixteen", [16.0]), f("x5", [1.7]), f("x25", [2.5])]
    graph = helper.make_graph(nodes, "g", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [40])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, None)], inits)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    x = np.arange(40, dtype=np.float32)
    (y,) = compile_and_run(tmp_path, model, {"x": x})
    want = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    assert y.shape == want.shape == (2, 4, 5)
    np.testing.assert_array_equal(y, want)


def test_atrous_convolutions_whose_taps_read_only_padding_match_onnxruntime(tmp_path):
    # DeepLabV3's ASPP on a 14 x 14 map: at dilation 24 / 36 only the center tap reads the image
    # (SimplifyInference makes them 1 x 1 convs), at 12 every tap does; W-only dilation 20 too.
    rng = np.random.default_rng(0)
    x = rng.standard_normal((1, 8, 14, 14)).astype(np.float32)
    nodes, inits, outputs = [], [], []
    for k, (dil, pad) in enumerate([((24, 24), 24), ((36, 36), 36), ((12, 12), 12), ((1, 20), None)]):
        w = helper.make_tensor(f"w{k}", TensorProto.FLOAT, [4, 8, 3, 3], rng.standard_normal(288).astype(np.float32))
        b = helper.make_tensor(f"b{k}", TensorProto.FLOAT, [4], rng.standard_normal(4).astype(np.float32))
        pads = [pad] * 4 if pad is not None else [1, 20, 1, 20]
        nodes.append(helper.make_node("Conv", ["x", f"w{k}", f"b{k}"], [f"y{k}"], dilations=list(dil), pads=pads))
        inits += [w, b]
        outputs.append(helper.make_tensor_value_info(f"y{k}", TensorProto.FLOAT, [1, 4, 14, 14]))
    path, so = compile_graph(tmp_path, nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 8, 14, 14])],
                             outputs, 13, inits)
    got, _ = run_outputs(tmp_path, so, {"x": x}, "r")
    for k, want in enumerate(ort_run(path, {"x": x})):
        np.testing.assert_allclose(got[f"y{k}"], want, rtol=1e-4, atol=1e-4)


def test_atrous_convolutions_whose_taps_are_mostly_dead_match_onnxruntime(tmp_path):
    # Taps that read padding for most outputs (dilation near the map's size): SimplifyInference
    # splits such a conv into one conv per live tap over the outputs it reaches. Rate 12 on 14 x 14
    # (ASPP), strided with asymmetric pads and a dead tap dropped first, depthwise, a 5 x 5 kernel
    # split along H only, and along W only.
    rng = np.random.default_rng(1)
    x = rng.standard_normal((2, 8, 14, 13)).astype(np.float32)
    cases = [  # kernel, dilations, pads, strides, group
        ((3, 3), (12, 12), [12, 12, 12, 12], (1, 1), 1),
        ((3, 3), (11, 10), [11, 10, 11, 3], (2, 3), 1),
        ((3, 3), (11, 11), [11, 11, 11, 11], (1, 1), 8),
        ((5, 5), (6, 5), [12, 10, 12, 10], (1, 1), 2),
        ((3, 3), (1, 11), [1, 11, 1, 11], (1, 1), 1),
    ]
    nodes, inits, outputs = [], [], []
    for k, (ks, dil, pads, st, g) in enumerate(cases):
        shape = [4 if g != 8 else 8, 8 // g, *ks]
        w = helper.make_tensor(f"w{k}", TensorProto.FLOAT, shape, rng.standard_normal(int(np.prod(shape))).astype(np.float32))
        nodes.append(helper.make_node("Conv", ["x", f"w{k}"], [f"y{k}"], dilations=list(dil), pads=pads, strides=list(st),
                                      group=g))
        inits.append(w)
        out = [2, shape[0]] + [(n + pads[i] + pads[i + 2] - dil[i] * (ks[i] - 1) - 1) // st[i] + 1
                               for i, n in enumerate((14, 13))]
        outputs.append(helper.make_tensor_value_info(f"y{k}", TensorProto.FLOAT, out))
    path, so = compile_graph(tmp_path, nodes, [helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 8, 14, 13])],
                             outputs, 13, inits)
    got, _ = run_outputs(tmp_path, so, {"x": x}, "r")
    for k, want in enumerate(ort_run(path, {"x": x})):
        assert got[f"y{k}"].shape == want.shape
        np.testing.assert_allclose(got[f"y{k}"], want, rtol=1e-4, atol=1e-4, err_msg=str(cases[k]))
