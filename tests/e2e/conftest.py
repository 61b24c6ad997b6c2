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


def compile_graph(tmp_path, nodes, inputs, outputs, opset, initializers=(), *flags):
    """Saves a one-graph ONNX model (onnx.helper nodes, value infos, initializers; default domain at
    `opset`) as tmp_path/m.onnx and compiles it to tmp_path/m.so with `tessera compile` (extra CLI
    flags after); returns (model path, library path)."""
    import onnx
    from onnx import helper

    graph = helper.make_graph(list(nodes), "g", list(inputs), list(outputs), initializer=list(initializers))
    path, so = tmp_path / "m.onnx", tmp_path / "m.so"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)]), path)
    run_cli("compile", path, "-o", so, *flags)
    return path, so


def ort_run(path, feeds):
    """Every output of ONNX Runtime (CPU) on the model at `path` for `feeds`."""
    import onnxruntime as ort

    return ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, feeds)


def run_outputs(tmp_path, so, feeds, tag, check=True):
    """Runs the compiled library `so` with `tessera run` on `feeds` (name -> numpy array, saved as
    tmp_path/<tag>_<name>.npy); returns (outputs by name, the CompletedProcess), outputs None when the
    run failed (with check=False; check=True raises)."""
    import numpy as np

    args = []
    for name, value in feeds.items():
        np.save(tmp_path / f"{tag}_{name}.npy", value)
        args += ["--input", f"{name}={tmp_path / f'{tag}_{name}.npy'}"]
    out = tmp_path / f"{tag}.npz"
    proc = run_cli("run", so, *args, "--output", out, check=check)
    return (dict(np.load(out)) if proc.returncode == 0 else None), proc


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


# --- Cross-compiled runtimes under qemu-user (qemu_aarch64.py, rpc_loopback.py) ---

CROSS_SYSROOT = {"aarch64": "/usr/aarch64-linux-gnu"}


def cross_runtime(arch: str) -> list:
    """The command prefix that runs the cross-compiled tessera-runtime for `arch` under qemu-user
    (["qemu-aarch64", "-L", sysroot, ".../tessera-runtime"]). Builds it first with
    scripts/build_cross.sh (fast when up to date). Fails, never skips, when qemu or the cross
    toolchain is missing: scripts/setup.sh installs them."""
    import shutil
    qemu = shutil.which(f"qemu-{arch}")
    if qemu is None:
        raise AssertionError(f"qemu-{arch} not found: install Debian's qemu-user (run scripts/setup.sh)")
    proc = subprocess.run(["bash", str(ROOT / "scripts" / "build_cross.sh"), arch], capture_output=True, text=True,
                          timeout=1200)
    if proc.returncode != 0:
        raise AssertionError(f"scripts/build_cross.sh {arch} failed ({proc.returncode}):\n{proc.stdout}\n{proc.stderr}")
    binary = proc.stdout.strip().splitlines()[-1]
    assert os.path.exists(binary), f"scripts/build_cross.sh {arch} did not produce {binary}"
    return [qemu, "-L", CROSS_SYSROOT[arch], binary]


def runtime_bin() -> str:
    """The tessera-runtime of this build (the host architecture)."""
    path = os.environ.get("TESSERA_RUNTIME_BIN", str(ROOT / "build" / "tools" / "tessera_runtime" / "tessera-runtime"))
    if not os.path.exists(path):
        raise RuntimeError(f"tessera-runtime not found at {path}: build first (scripts/build.sh) or set TESSERA_RUNTIME_BIN")
    return path


def read_pb(path):
    """An ONNX TensorProto file as a numpy array."""
    import onnx
    import onnx.numpy_helper
    t = onnx.TensorProto()
    t.ParseFromString(pathlib.Path(path).read_bytes())
    return onnx.numpy_helper.to_array(t)


def graph_io(model_path):
    """(input names without initializers, output names) of an ONNX model, in graph order."""
    import onnx
    model = onnx.load(str(model_path), load_external_data=False)
    inits = {i.name for i in model.graph.initializer}
    return [i.name for i in model.graph.input if i.name not in inits], [o.name for o in model.graph.output]


def assert_close_to_reference(got, ref, what, atol=1e-4, rtol=1e-3):
    """|got - ref| <= atol + rtol * |ref| elementwise (test_models.py's tolerance)."""
    import numpy as np
    assert got.shape == ref.shape, f"{what}: shape {got.shape} != reference {ref.shape}"
    err = np.abs(got.astype(np.float64) - ref.astype(np.float64))
    bound = atol + rtol * np.abs(ref.astype(np.float64))
    if not np.all(err <= bound):
        worst = np.unravel_index(np.argmax(err - bound), err.shape)
        raise AssertionError(f"{what}: {np.sum(err > bound)} of {err.size} elements out of tolerance; "
                             f"worst at {worst}: got {got[worst]}, ref {ref[worst]}")
