"""Compile an ONNX model with Tessera, run it on its reference input, check it, time it.

    python examples/onnx_example.py [MODEL_DIR]     (default: ../shared/models/mnist-8)

Needs the package: `pip install .` at the checkout, or PYTHONPATH=build/python after a build.
"""
import pathlib
import sys

import numpy as np
import onnx
from onnx import numpy_helper

import tessera

root = pathlib.Path(__file__).resolve().parents[1]
model_dir = pathlib.Path(sys.argv[1]) if len(sys.argv) > 1 else root.parent / "shared" / "models" / "mnist-8"
data = model_dir / "test_data_set_0"

model = tessera.compile(model_dir / "model.onnx")  # for this machine ("native"); opt_level=3
print(model)
inputs = [numpy_helper.to_array(onnx.load_tensor(str(data / f"input_{i}.pb"))) for i in range(len(model.inputs))]
outputs = model(*inputs)
outputs = outputs if isinstance(outputs, tuple) else (outputs,)
for i, (info, got) in enumerate(zip(model.outputs, outputs)):
    ref = numpy_helper.to_array(onnx.load_tensor(str(data / f"output_{i}.pb")))
    err = float(np.max(np.abs(got - ref)))
    print(f"{info.name}: {info.dtype}{list(info.shape)}, max |tessera - reference| = {err:.2e}")
    assert err <= 1e-4 + 1e-3 * float(np.max(np.abs(ref))), "output differs from the reference"
print("latency:", model.benchmark(*inputs, repeat=50))
for k in model.profile(*inputs)[:3]:
    print(f"  {k.ms:8.4f} ms {k.percent:5.1f}%  {k.kernel}")
model.export_library("model.so")  # run it later with tessera.load("model.so") or `tessera run model.so`
