"""Dilated (atrous) and grouped 3x3 convolutions through the whole compiler: WinogradConv2d takes a
dilation-d conv as d x d undilated phases and a grouped one as one GEMM per group
(topi/nn/winograd.h) where the x86 strategy picks it, and leaves the direct conv where the phases
would be mostly padding (DeepLabV3's ASPP on small maps), the groups are narrow (ResNeXt's 4
channels) or they have fewer than 128 outputs (topi::x86::kWinogradMinGroupUnits: ResNeXt-101
32x8d's 32 and 64). Each model is compared with a float64 NumPy convolution and with ONNX Runtime,
and the WinogradConv2d step of --dump-ir says which convs were rewritten."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from conftest import compile_and_run, ort_run, run_cli

# F(2x2, 3x3) rounds a little more than the direct conv: outputs are sums of C * 9 products of
# magnitude ~0.1, so 1e-4 absolute is ~1e2 float32 ulps of the largest.
TOL = dict(rtol=1e-4, atol=1e-4)


def _model(n, c, h, w, k, dilation, pads, residual=False, group=1):
    rng = np.random.default_rng(c * 31 + h * 7 + dilation)
    wt = (rng.standard_normal((k, c // group, 3, 3)) * (1.0 / np.sqrt(9 * c // group))).astype(np.float32)
    bias = rng.standard_normal(k).astype(np.float32)
    nodes = [helper.make_node("Conv", ["x", "w", "b"], ["conv"], kernel_shape=[3, 3], pads=pads,
                              dilations=[dilation, dilation], group=group),
             helper.make_node("Relu", ["conv"], ["relu"])]
    out_h = h + pads[0] + pads[2] - 2 * dilation
    out_w = w + pads[1] + pads[3] - 2 * dilation
    if residual:  # the epilogue FuseOps puts into the output transform
        nodes.append(helper.make_node("Add", ["relu", "x"], ["y"]))
    else:
        nodes[-1].output[0] = "y"
    graph = helper.make_graph(nodes, "dilated", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [n, c, h, w])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [n, k, out_h, out_w])],
                              initializer=[numpy_helper.from_array(wt, "w"), numpy_helper.from_array(bias, "b")])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), wt, bias


def _reference(x, wt, bias, dilation, pads, residual, group=1):
    """relu(conv(x) + b) (+ x) in float64."""
    n, c, h, w = x.shape
    xp = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (pads[0], pads[2]), (pads[1], pads[3])))
    oh, ow = xp.shape[2] - 2 * dilation, xp.shape[3] - 2 * dilation
    k = wt.shape[0]
    cg, kg = c // group, k // group
    out = np.zeros((n, k, oh, ow)) + bias[None, :, None, None]
    for g in range(group):
        for ky in range(3):
            for kx in range(3):
                win = xp[:, g * cg:(g + 1) * cg, ky * dilation:ky * dilation + oh, kx * dilation:kx * dilation + ow]
                out[:, g * kg:(g + 1) * kg] += np.einsum("nchw,kc->nkhw", win,
                                                         wt[g * kg:(g + 1) * kg, :, ky, kx].astype(np.float64))
    out = np.maximum(out, 0)
    return out + x if residual else out


def _winograd_convs(tmp_path, onnx_path):
    dump = tmp_path / "ir"
    run_cli("compile", onnx_path, "-o", tmp_path / "dump.so", "--dump-ir", dump)
    step = next(p for p in dump.iterdir() if p.name.endswith("_WinogradConv2d.txt"))
    lines = step.read_text().splitlines()
    return (sum("nn.contrib_conv2d_winograd_output_transform(" in line for line in lines),
            sum("winograd" in line and "dilation=" in line for line in lines))


@pytest.mark.parametrize("n,c,h,w,k,dilation,pads,residual,group,winograd", [
    (1, 64, 28, 28, 64, 2, [2, 2, 2, 2], True, 1, True),      # DeepLabV3's layer3 ('same', 2 x 2 phases of 14x14)
    (1, 48, 28, 28, 32, 4, [4, 4, 4, 4], False, 1, True),     # layer4: 16 phases of 7x7, partial tiles; K padded
    (2, 32, 17, 23, 32, 3, [3, 3, 3, 3], True, 1, True),      # odd sizes, batch 2: phases of 6 and 5 rows
    (1, 32, 20, 18, 40, 2, [1, 3, 2, 0], False, 1, True),     # asymmetric padding: 18x16 outputs
    (1, 32, 28, 28, 32, 12, [12, 12, 12, 12], False, 1, False),  # ASPP: 144 phases of 3x3, direct
    (1, 256, 14, 14, 256, 1, [1, 1, 1, 1], True, 2, True),    # RegNet-like: groups of 128
    (2, 96, 9, 11, 384, 1, [1, 1, 1, 1], False, 3, True),     # groups of 32 -> 128, batch 2, partial tiles
    (1, 256, 28, 28, 256, 2, [2, 2, 2, 2], False, 2, True),   # grouped and dilated
    (1, 128, 14, 14, 128, 1, [1, 1, 1, 1], False, 32, False),  # ResNeXt's groups of 4: direct
    (1, 1024, 14, 14, 1024, 1, [1, 1, 1, 1], True, 32, False),  # ResNeXt-101 32x8d's groups of 32: direct
    (1, 192, 10, 10, 192, 1, [1, 1, 1, 1], False, 3, False),  # groups of 64 outputs: direct
])
def test_conv_matches_numpy_and_onnxruntime(tmp_path, n, c, h, w, k, dilation, pads, residual, group,
                                                    winograd):
    model, wt, bias = _model(n, c, h, w, k, dilation, pads, residual, group)
    x = np.random.default_rng(7).standard_normal((n, c, h, w)).astype(np.float32)
    got = compile_and_run(tmp_path, model, {"x": x})[0]
    np.testing.assert_allclose(got, _reference(x, wt, bias, dilation, pads, residual, group), **TOL)
    onnx_path = tmp_path / "m.onnx"
    np.testing.assert_allclose(got, ort_run(onnx_path, {"x": x})[0], **TOL)
    rewritten, dilated = _winograd_convs(tmp_path, onnx_path)
    assert rewritten == (1 if winograd else 0)
    assert dilated == (2 if winograd and dilation > 1 else 0)  # the input and the output transform carry it
