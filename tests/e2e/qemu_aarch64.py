"""AArch64 end to end on this x86 machine (issue 13, deliverable 4): models cross-compiled with
`tessera compile --target aarch64` run under qemu-aarch64 with the cross-compiled tessera-runtime
(scripts/build_cross.sh) and match their reference outputs; the x86 runtime refuses the artifact
with a clear error; the artifact's kernels are NEON code.

Not collected by e2e_models: its own ctest entry (e2e_aarch64_qemu). Needs qemu-user and
g++-aarch64-linux-gnu (scripts/setup.sh); fails, never skips, without them.
"""
import pathlib
import re
import shutil
import subprocess

import numpy as np
import pytest

from conftest import assert_close_to_reference, cross_runtime, graph_io, read_pb, run_cli, shared_dir

MODELS = ["mnist-8", "ultraface-rfb-320", "nanotrack-v2-head"]


@pytest.fixture(scope="module")
def runtime_a64():
    return cross_runtime("aarch64")


@pytest.fixture(scope="module")
def compiled(tmp_path_factory, models_dir):
    cache = {}

    def get(name):
        if name not in cache:
            out = tmp_path_factory.mktemp(name) / f"{name}-aarch64.so"
            run_cli("compile", "--target", "aarch64", models_dir / name / "model.onnx", "-o", out)
            cache[name] = out
        return cache[name]

    return get


def cases():
    root = shared_dir() / "models"
    for name in MODELS:
        for ds in sorted(p for p in (root / name).iterdir() if p.is_dir() and "data_set" in p.name):
            yield pytest.param(name, ds.name, id=f"{name}/{ds.name}")


@pytest.mark.parametrize("model,data_set", list(cases()))
def test_cross_compiled_model_matches_reference_under_qemu(model, data_set, models_dir, compiled, runtime_a64,
                                                          tmp_path):
    so = compiled(model)
    ds = models_dir / model / data_set
    inputs, outputs = graph_io(models_dir / model / "model.onnx")
    args = []
    for i, name in enumerate(inputs):  # the device runtime reads .npy only
        np.save(tmp_path / f"input_{i}.npy", read_pb(ds / f"input_{i}.pb"))
        args += ["--input", f"{name}={tmp_path / f'input_{i}.npy'}"]
    out_dir = tmp_path / "out"
    proc = subprocess.run([*runtime_a64, "run", str(so), *args, "--output-dir", str(out_dir), "--threads", "2"],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, f"tessera-runtime under qemu failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}"
    for i, name in enumerate(outputs):
        assert f"output {name}: " in proc.stdout, proc.stdout
        assert_close_to_reference(np.load(out_dir / f"{name}.npy"), read_pb(ds / f"output_{i}.pb"),
                                  f"{model}/{data_set} output {name} (aarch64 under qemu)")


def test_x86_runtime_refuses_the_aarch64_artifact(compiled, models_dir):
    so = compiled("mnist-8")
    x = models_dir / "mnist-8" / "test_data_set_0" / "input_0.pb"
    proc = run_cli("run", so, "--input", f"Input3={x}", check=False)
    assert proc.returncode == 1, f"exit {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"
    for fragment in (str(so), "compiled for aarch64", "this machine is x86_64", "--rpc", "--target native"):
        assert fragment in proc.stderr, f"error message lacks {fragment!r}:\n{proc.stderr}"


def test_aarch64_runtime_refuses_an_x86_artifact(models_dir, runtime_a64, tmp_path):
    so = tmp_path / "mnist-x86.so"
    run_cli("compile", models_dir / "mnist-8" / "model.onnx", "-o", so)
    x = tmp_path / "x.npy"
    np.save(x, read_pb(models_dir / "mnist-8" / "test_data_set_0" / "input_0.pb"))
    proc = subprocess.run([*runtime_a64, "run", str(so), "--input", f"Input3={x}"], capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 1, f"exit {proc.returncode}:\n{proc.stdout}\n{proc.stderr}"
    assert "compiled for x86_64" in proc.stderr and "this machine is aarch64" in proc.stderr, proc.stderr


def test_device_runtime_without_libzip_says_to_use_npy(compiled, models_dir, runtime_a64, tmp_path):
    x = tmp_path / "x.npy"
    np.save(x, read_pb(models_dir / "mnist-8" / "test_data_set_0" / "input_0.pb"))
    proc = subprocess.run([*runtime_a64, "run", str(compiled("mnist-8")), "--input", f"Input3={x}", "--output",
                           str(tmp_path / "o.npz")], capture_output=True, text=True, timeout=300)
    assert proc.returncode == 1, proc.stderr
    assert "without .npz support" in proc.stderr and "--output-dir" in proc.stderr, proc.stderr


def test_aarch64_artifact_is_neon_code(compiled):
    objdump = shutil.which("aarch64-linux-gnu-objdump")
    assert objdump, "aarch64-linux-gnu-objdump not found: install g++-aarch64-linux-gnu (scripts/setup.sh)"
    so = compiled("ultraface-rfb-320")
    header = subprocess.run([objdump, "-f", str(so)], capture_output=True, text=True, check=True).stdout
    assert "elf64-littleaarch64" in header, header
    asm = subprocess.run([objdump, "-d", "--no-show-raw-insn", str(so)], capture_output=True, text=True,
                         check=True).stdout
    # Vector fused multiply-adds on 128-bit NEON registers: fmla v0.4s, v1.4s, v2.4s (or by element, v2.s[1]).
    fmla = re.findall(r"\bfmla\s+v\d+\.4s, v\d+\.4s, v\d+\.(?:4s|s\[\d\])", asm)
    assert len(fmla) >= 16, f"expected NEON fmla on v registers in {so.name}; found {len(fmla)}"
