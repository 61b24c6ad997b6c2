"""tessera.compile on torch.nn.Module and torch.compile(backend="tessera"): outputs against eager
PyTorch; graphs Tessera cannot compile run eagerly with a one-line warning."""
import warnings

import numpy as np
import pytest

torch = pytest.importorskip("torch")
import tessera  # noqa: E402  (after torch: registers the torch.compile backend)
from torch import nn  # noqa: E402


def small_cnn():
    torch.manual_seed(0)
    m = nn.Sequential(nn.Conv2d(3, 8, 3, padding=1), nn.BatchNorm2d(8), nn.ReLU(), nn.MaxPool2d(2),
                      nn.Flatten(), nn.Linear(8 * 4 * 4, 5))
    with torch.no_grad():  # non-trivial BatchNorm statistics
        m[1].running_mean.uniform_(-0.5, 0.5)
        m[1].running_var.uniform_(0.5, 2.0)
    return m.eval()


class TwoOutputs(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(6, 4)

    def forward(self, x, scale):
        h = torch.tanh(self.fc(x)) * scale
        return h, h.sum(dim=-1)


def assert_close(got, ref, tol=1e-4):
    assert isinstance(got, torch.Tensor) and got.shape == ref.shape and got.dtype == ref.dtype
    assert float((got - ref).abs().max()) <= tol * (1 + float(ref.abs().max()))


def test_compile_module_matches_eager():
    m = small_cnn()
    x = torch.randn(2, 3, 8, 8)
    cm = tessera.compile(m, example_inputs=(x,))
    assert cm.inputs[0].name == "input" and cm.inputs[0].shape == (2, 3, 8, 8)  # Sequential.forward(input)
    with torch.no_grad():
        assert_close(cm(x), m(x))
    np.testing.assert_allclose(cm(x.numpy()), m(x).detach().numpy(), rtol=1e-4, atol=1e-5)


def test_compile_module_with_several_inputs_and_outputs():
    torch.manual_seed(1)
    m = TwoOutputs().eval()
    x, s = torch.randn(3, 6), torch.randn(3, 1)
    cm = tessera.compile(m, example_inputs=(x, s))
    assert [t.name for t in cm.inputs] == ["x", "scale"]
    assert [t.name for t in cm.outputs] == ["output_0", "output_1"]
    with torch.no_grad():
        for got, ref in zip(cm(x, s), m(x, s)):
            assert_close(got, ref)


def test_compile_module_needs_example_inputs():
    with pytest.raises(tessera.UserError, match="example_inputs"):
        tessera.compile(small_cnn())


def compiled_by_tessera(fn, *args):
    """Runs fn(*args) and returns (result, the 'tessera: ... eagerly' warnings it raised)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        out = fn(*args)
    return out, [str(w.message) for w in caught if "tessera:" in str(w.message)]


def test_torch_compile_backend_matches_eager():
    torch._dynamo.reset()
    m = small_cnn()
    c = torch.compile(m, backend="tessera")
    x = torch.randn(2, 3, 8, 8)
    with torch.no_grad():
        got, fallbacks = compiled_by_tessera(c, x)
        assert not fallbacks, fallbacks
        assert_close(got, m(x))
        assert_close(c(x + 1), m(x + 1))  # a second call reuses the compiled graph


class MaxPool3dWithIndices(nn.Module):
    def __init__(self):
        super().__init__()
        self.pool = nn.MaxPool3d(2, return_indices=True)

    def forward(self, x):
        y, indices = self.pool(x)
        return y + indices.float()


def test_torch_compile_falls_back_per_graph():
    torch._dynamo.reset()
    torch.manual_seed(2)
    m = MaxPool3dWithIndices().eval()  # a 3-D MaxPool's Indices output: unsupported
    c = torch.compile(m, backend="tessera")
    x = torch.randn(1, 2, 4, 4, 4)
    with torch.no_grad():
        got, fallbacks = compiled_by_tessera(c, x)
        assert len(fallbacks) == 1 and "eagerly" in fallbacks[0] and "\n" not in fallbacks[0]
        assert_close(got, m(x))


def test_torch_compile_dynamic_shapes_run_eagerly():
    torch._dynamo.reset()
    m = small_cnn()
    c = torch.compile(m, backend="tessera", dynamic=True)
    x = torch.randn(3, 3, 8, 8)
    with torch.no_grad():
        got, fallbacks = compiled_by_tessera(c, x)
        assert fallbacks and "dynamic=False" in fallbacks[0]
        assert_close(got, m(x))


def test_torch_compile_sees_changed_weights():
    torch._dynamo.reset()
    m = small_cnn()
    c = torch.compile(m, backend="tessera")
    x = torch.randn(2, 3, 8, 8)
    with torch.no_grad():
        c(x)
        m[0].weight.mul_(2)  # in place: the frozen copy is stale now
        got, warned = compiled_by_tessera(c, x)
        assert_close(got, m(x))
        assert any("changed since the graph was compiled" in w for w in warned)
