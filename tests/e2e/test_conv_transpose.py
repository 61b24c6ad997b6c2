"""ONNX ConvTranspose through the whole compiler against ONNX Runtime (CPU), on models built here:
strides, pads, output_padding, dilations, groups, auto_pad, output_shape, bias, 1-D, 2-D and 3-D,
constant and run-time weights. (ONNX Runtime and the ONNX reference implementation agree exactly on
every ungrouped case here; the reference's grouped path fails for M / group > 1, so it is not used.)

Each model holds several ConvTranspose nodes reading one input, one graph output per node.
Tolerance: |got - ref| <= 1e-4 + 1e-4 * |ref| (float32 sums of up to a few hundred products).
"""
import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

from conftest import compile_and_run, run_cli

ATOL, RTOL = 1e-4, 1e-4


def _model(x_shape, cases, opset=17, weight_inputs=False):
    """cases: (weight shape, bias?, attrs). Weights are initializers, or graph inputs when weight_inputs."""
    rng = np.random.default_rng(1)
    nodes, inits, inputs, outputs, feeds = [], [], [helper.make_tensor_value_info("X", TensorProto.FLOAT, x_shape)], [], {}
    for i, (w_shape, bias, attrs) in enumerate(cases):
        w = rng.uniform(-1, 1, size=w_shape).astype(np.float32)
        names = ["X", f"W{i}"]
        if weight_inputs:
            inputs.append(helper.make_tensor_value_info(f"W{i}", TensorProto.FLOAT, w_shape))
            feeds[f"W{i}"] = w
        else:
            inits.append(numpy_helper.from_array(w, f"W{i}"))
        if bias:
            inits.append(numpy_helper.from_array(rng.uniform(-1, 1, size=[w_shape[1] * attrs.get("group", 1)])
                                                 .astype(np.float32), f"B{i}"))
            names.append(f"B{i}")
        nodes.append(helper.make_node("ConvTranspose", names, [f"Y{i}"], name=f"convt{i}", **attrs))
        outputs.append(helper.make_tensor_value_info(f"Y{i}", TensorProto.FLOAT, None))
    graph = helper.make_graph(nodes, "convt", inputs, outputs, initializer=inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]), feeds


def _compare(tmp_path, model, feeds, x_shape):
    x = np.random.default_rng(2).uniform(-1, 1, size=x_shape).astype(np.float32)
    feeds = {"X": x, **feeds}
    got = dict(zip((o.name for o in model.graph.output), compile_and_run(tmp_path, model, feeds)))
    sess = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    for node, w in zip(model.graph.node, sess.run(None, feeds)):
        g = got[node.output[0]]
        what = f"{node.name} {[(a.name, helper.get_attribute_value(a)) for a in node.attribute]}"
        assert g.shape == w.shape, f"{what}: shape {g.shape} != {w.shape}"
        err = np.abs(g - w)
        assert (err <= ATOL + RTOL * np.abs(w)).all(), f"{what}: max abs error {err.max():.3g}"


def test_conv_transpose_2d_attributes(tmp_path):
    x_shape = [2, 4, 5, 6]
    cases = [
        ([4, 3, 3, 3], True, {}),
        ([4, 3, 3, 3], False, {"strides": [2, 2]}),
        ([4, 2, 4, 4], True, {"strides": [2, 2], "pads": [1, 1, 1, 1]}),
        ([4, 3, 3, 2], False, {"strides": [3, 2], "pads": [0, 1, 2, 0], "output_padding": [1, 1]}),
        ([4, 3, 3, 3], False, {"dilations": [2, 1], "strides": [1, 2]}),
        ([4, 2, 3, 3], True, {"group": 2, "strides": [2, 2]}),
        ([4, 1, 3, 3], False, {"group": 4, "strides": [2, 2], "pads": [1, 1, 1, 1]}),  # depthwise
        ([4, 3, 3, 3], False, {"strides": [2, 2], "auto_pad": "SAME_UPPER"}),
        ([4, 3, 4, 4], False, {"strides": [2, 2], "auto_pad": "SAME_LOWER"}),
        ([4, 3, 3, 3], False, {"strides": [2, 3], "output_shape": [12, 19]}),
        ([4, 3, 5, 5], False, {"pads": [3, 3, 4, 4]}),  # pads beyond the kernel reach: a crop
    ]
    model, feeds = _model(x_shape, cases)
    _compare(tmp_path, model, feeds, x_shape)


def test_conv_transpose_1d_and_runtime_weights(tmp_path):
    x_shape = [1, 3, 7]
    cases = [
        ([3, 2, 3], True, {"strides": [2]}),
        ([3, 4, 4], False, {"strides": [3], "pads": [1, 2], "output_padding": [2], "dilations": [1]}),
        ([3, 1, 5], False, {"group": 3, "dilations": [2]}),
    ]
    model, feeds = _model(x_shape, cases)
    _compare(tmp_path, model, feeds, x_shape)
    sub = tmp_path / "runtime_weights"
    sub.mkdir()
    model, feeds = _model([1, 2, 4, 4], [([2, 3, 3, 3], True, {"strides": [2, 2], "pads": [1, 0, 1, 0]})],
                          weight_inputs=True)
    _compare(sub, model, feeds, [1, 2, 4, 4])


def test_conv_transpose_3d_attributes(tmp_path):
    # A 3-D input: zero insertion and border over D, H and W, then the 3-D conv of volume.h.
    x_shape = [2, 4, 3, 4, 5]
    cases = [
        ([4, 2, 3, 3, 3], True, {}),
        ([4, 3, 2, 3, 3], False, {"strides": [2, 1, 2], "pads": [0, 1, 1, 1, 0, 1]}),
        ([4, 2, 3, 2, 3], True, {"strides": [3, 2, 2], "output_padding": [2, 1, 0], "dilations": [1, 1, 2]}),
        ([4, 1, 3, 3, 3], False, {"group": 2, "strides": [2, 2, 2], "auto_pad": "SAME_UPPER"}),
        ([4, 2, 2, 2, 2], False, {"strides": [2, 2, 2], "output_shape": [7, 8, 11]}),
    ]
    model, feeds = _model(x_shape, cases)
    _compare(tmp_path, model, feeds, x_shape)


def test_conv_transpose_errors(tmp_path):
    def error(x_shape, w_shape, **attrs):
        model, _ = _model(x_shape, [(w_shape, False, attrs)])
        path = tmp_path / "bad.onnx"
        onnx.save(model, path)
        proc = run_cli("compile", path, "-o", tmp_path / "bad.so", check=False)
        assert proc.returncode == 1, proc.stdout + proc.stderr
        assert "convt0" in proc.stderr and "ConvTranspose" in proc.stderr, proc.stderr
        return proc.stderr

    assert "must equal the input channels" in error([1, 4, 5, 5], [3, 2, 3, 3])
    assert "output_padding 2 must be >= 0 and smaller than the stride" in error(
        [1, 4, 5, 5], [4, 2, 3, 3], strides=[2, 2], output_padding=[2, 0])
    assert "only 1-D, 2-D and 3-D ConvTranspose" in error([1, 4, 5, 5, 5, 5], [4, 2, 3, 3, 3, 3])
    assert "'output_shape' must have 2 values" in error([1, 4, 5, 5], [4, 2, 3, 3], output_shape=[3])
