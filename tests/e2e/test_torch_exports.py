"""Models as a user exports them from PyTorch (torch.onnx.export, the TorchScript exporter, opset 17;
random weights from a fixed seed): a segmentation-style decoder with every F.interpolate mode a
torchvision / timm model uses (nearest by a scale, bilinear to an input-derived size, bicubic with
align_corners) and a learned ConvTranspose2d upsampler. The Resize sizes arrive as Shape -> Slice ->
Concat arithmetic that the importer folds.

Checked against PyTorch's own output and ONNX Runtime's: |got - ref| <= 1e-4 + 1e-3 * |ref|.
"""
import numpy as np
import onnxruntime as ort
import pytest

from conftest import run_cli

torch = pytest.importorskip("torch")
nn, F = torch.nn, torch.nn.functional

ATOL, RTOL = 1e-4, 1e-3


class Decoder(nn.Module):
    def __init__(self):
        super().__init__()
        self.down = nn.Conv2d(3, 8, 3, stride=2, padding=1)
        self.up = nn.ConvTranspose2d(8, 8, 4, stride=2, padding=1)
        self.grouped_up = nn.ConvTranspose2d(8, 8, 3, stride=2, padding=1, output_padding=1, groups=2)
        self.head = nn.Conv2d(8, 4, 1)

    def forward(self, x):
        y = F.relu(self.down(x))
        a = F.interpolate(y, scale_factor=2, mode="nearest")
        b = F.relu(self.up(y)) + self.grouped_up(y)
        z = self.head(a + b)
        z = F.interpolate(z, size=x.shape[-2:], mode="bilinear", align_corners=False)
        small = F.interpolate(z, scale_factor=0.5, mode="bicubic", align_corners=True)
        return z + F.interpolate(small, size=z.shape[-2:], mode="bilinear", align_corners=True)


def test_decoder_with_interpolate_and_conv_transpose(tmp_path):
    torch.manual_seed(0)
    model = Decoder().eval()
    x = torch.randn(1, 3, 30, 44)
    onnx_path = tmp_path / "decoder.onnx"
    torch.onnx.export(model, (x,), str(onnx_path), opset_version=17, dynamo=False, input_names=["x"],
                      output_names=["y"])
    with torch.no_grad():
        want_torch = model(x).numpy()
    sess = ort.InferenceSession(str(onnx_path), providers=["CPUExecutionProvider"])
    want_ort = sess.run(None, {"x": x.numpy()})[0]

    np.save(tmp_path / "x.npy", x.numpy())
    run_cli("compile", onnx_path, "-o", tmp_path / "decoder.so")
    run_cli("run", tmp_path / "decoder.so", "--input", f"x={tmp_path / 'x.npy'}", "--output", tmp_path / "out.npz")
    got = np.load(tmp_path / "out.npz")["y"]
    for name, want in (("torch", want_torch), ("onnxruntime", want_ort)):
        assert got.shape == want.shape, f"vs {name}: shape {got.shape} != {want.shape}"
        err = np.abs(got - want)
        assert (err <= ATOL + RTOL * np.abs(want)).all(), f"vs {name}: max abs error {err.max():.3g}"
