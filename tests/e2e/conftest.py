"""Shared fixtures of the end-to-end tests: where the CLI and the shared models are."""
import os
import pathlib
import subprocess

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[2]


def tessera_bin() -> str:
    path = os.environ.get("TESSERA_BIN", str(ROOT / "build" / "tools" / "tessera"))
    if not os.path.exists(path):
        raise RuntimeError(f"tessera CLI not found at {path}: build first (scripts/build.sh) or set TESSERA_BIN")
    return path


def shared_dir() -> pathlib.Path:
    return pathlib.Path(os.environ.get("TESSERA_SHARED", str(ROOT.parent / "shared")))


def run_cli(*args, check=True, timeout=900):
    """Runs `tessera ARGS...`; returns the CompletedProcess (text mode)."""
    proc = subprocess.run([tessera_bin(), *map(str, args)], capture_output=True, text=True, timeout=timeout)
    if check and proc.returncode != 0:
        raise AssertionError(f"tessera {' '.join(map(str, args))} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    return proc


def compile_and_run(tmp_path, model, feeds):
    """Saves `model` (an onnx.ModelProto) under tmp_path, compiles it with `tessera compile`, runs it on
    `feeds` (name -> numpy array) with `tessera run --output`, and returns the outputs in graph order."""
    import numpy as np
    import onnx

    onnx_path, so, out = tmp_path / "m.onnx", tmp_path / "m.so", tmp_path / "out.npz"
    onnx.save(model, onnx_path)
    args = []
    for name, value in feeds.items():
        np.save(tmp_path / f"{name}.npy", value)
        args += ["--input", f"{name}={tmp_path / f'{name}.npy'}"]
    run_cli("compile", onnx_path, "-o", so)
    run_cli("run", so, *args, "--output", out)
    got = np.load(out)
    return [got[o.name] for o in model.graph.output]


@pytest.fixture(scope="session")
def models_dir() -> pathlib.Path:
    d = shared_dir() / "models"
    assert d.is_dir(), f"shared models not found at {d}"
    return d
