"""A PyTorch model through Tessera, two ways: tessera.compile (ONNX export inside) and
torch.compile(backend="tessera"); both checked against eager PyTorch.

    python examples/pytorch_example.py

Needs the package (`pip install .`, or PYTHONPATH=build/python after a build) and torch.
"""
import torch
from torch import nn

import tessera  # importing it registers backend="tessera" (installed, the entry point does too)

torch.manual_seed(0)
model = nn.Sequential(
    nn.Conv2d(3, 16, 3, padding=1), nn.BatchNorm2d(16), nn.ReLU(), nn.MaxPool2d(2),
    nn.Conv2d(16, 32, 3, padding=1), nn.ReLU(), nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 10),
).eval()
x = torch.randn(1, 3, 32, 32)
with torch.no_grad():
    expected = model(x)

# 1. Ahead of time: a CompiledModel, torch tensors in and out (no copies).
compiled = tessera.compile(model, example_inputs=(x,))
got = compiled(x)
print("tessera.compile: max |diff| vs eager =", float((got - expected).abs().max()))
print("latency:", compiled.benchmark(x, repeat=50))

# 2. Just in time: every graph TorchDynamo captures goes through Tessera (eager fallback per graph).
fast = torch.compile(model, backend="tessera")
with torch.no_grad():
    got = fast(x)
print("torch.compile(backend='tessera'): max |diff| vs eager =", float((got - expected).abs().max()))
assert torch.allclose(got, expected, rtol=1e-3, atol=1e-4)
