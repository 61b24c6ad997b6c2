"""Bad input gets a clear error and a non-zero exit, never a crash (issue #2, "Checked by")."""
import os
import subprocess

import numpy as np
import onnx
import onnx.helper as oh
import pytest

from conftest import run_cli, tessera_bin

CRASH_CODES = {-11, -6, -4, -8, 134, 139}  # signals: segfault, abort, illegal instruction, fpe


def expect_error(proc, *fragments):
    assert proc.returncode != 0, f"expected failure, got success:\n{proc.stdout}"
    assert proc.returncode not in CRASH_CODES and proc.returncode > 0, f"crashed ({proc.returncode}): {proc.stderr}"
    msg = proc.stderr + proc.stdout
    for f in fragments:
        assert f in msg, f"error message lacks {f!r}:\n{msg}"


@pytest.fixture(scope="module")
def mnist_so(tmp_path_factory, models_dir):
    out = tmp_path_factory.mktemp("mnist") / "mnist.so"
    run_cli("compile", models_dir / "mnist-8" / "model.onnx", "-o", out)
    return out


def test_missing_model_file(tmp_path):
    missing = tmp_path / "nope.onnx"
    expect_error(run_cli("compile", missing, "-o", tmp_path / "x.so", check=False), str(missing))


def test_truncated_model(tmp_path, models_dir):
    data = (models_dir / "mnist-8" / "model.onnx").read_bytes()
    bad = tmp_path / "truncated.onnx"
    bad.write_bytes(data[: len(data) // 3])
    expect_error(run_cli("compile", bad, "-o", tmp_path / "x.so", check=False), str(bad))


def test_garbage_model(tmp_path):
    bad = tmp_path / "garbage.onnx"
    bad.write_bytes(bytes(range(256)) * 40)
    expect_error(run_cli("compile", bad, "-o", tmp_path / "x.so", check=False), str(bad))


def test_unsupported_op_names_op_node_and_opset(tmp_path):
    # StringNormalizer: Tessera has no string tensors, so the string operators are refused.
    node = oh.make_node("StringNormalizer", ["x"], ["y"], name="my_string_node")
    graph = oh.make_graph([node], "g", [oh.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2, 3])],
                          [oh.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2, 3])])
    model = oh.make_model(graph, opset_imports=[oh.make_opsetid("", 13)])
    path = tmp_path / "unsupported.onnx"
    onnx.save(model, str(path))
    expect_error(run_cli("compile", path, "-o", tmp_path / "x.so", check=False), "StringNormalizer", "my_string_node",
                 "13")


def test_every_unsupported_node_is_listed_at_once(tmp_path):
    # Three nodes of two unsupported ops (StringNormalizer twice, one com.microsoft op), between supported ones:
    # one error lists all of them, grouped by op with counts, and `inspect` says the same.
    f = onnx.TensorProto.FLOAT
    nodes = [oh.make_node("Relu", ["x"], ["r"], name="relu"),
             oh.make_node("StringNormalizer", ["r"], ["u1"], name="strings_a"),
             oh.make_node("StringNormalizer", ["u1"], ["u2"]),
             oh.make_node("FusedConv", ["u2"], ["y"], name="fused", domain="com.microsoft")]
    graph = oh.make_graph(nodes, "g", [oh.make_tensor_value_info("x", f, [4])], [oh.make_tensor_value_info("y", f, None)])
    model = oh.make_model(graph, opset_imports=[oh.make_opsetid("", 13), oh.make_opsetid("com.microsoft", 1)])
    path = tmp_path / "many.onnx"
    onnx.save(model, str(path))
    for cmd in (("compile", path, "-o", tmp_path / "x.so"), ("inspect", path)):
        proc = run_cli(*cmd, check=False)
        expect_error(proc, "3 nodes use 2 operators that Tessera's ONNX importer does not support (opset 13)",
                     "StringNormalizer: 2 nodes ('strings_a', node #2)", "com.microsoft:FusedConv: 1 node ('fused')")


def test_wrong_input_name(tmp_path, mnist_so):
    x = tmp_path / "x.npy"
    np.save(x, np.zeros((1, 1, 28, 28), np.float32))
    expect_error(run_cli("run", mnist_so, "--input", f"NotAnInput={x}", check=False), "NotAnInput", "Input3")


def test_wrong_input_shape(tmp_path, mnist_so):
    x = tmp_path / "x.npy"
    np.save(x, np.zeros((1, 1, 28, 27), np.float32))
    expect_error(run_cli("run", mnist_so, "--input", f"Input3={x}", check=False), "Input3", "shape")


def test_wrong_input_dtype(tmp_path, mnist_so):
    x = tmp_path / "x.npy"
    np.save(x, np.zeros((1, 1, 28, 28), np.float64))
    expect_error(run_cli("run", mnist_so, "--input", f"Input3={x}", check=False), "Input3", "float64")


def test_missing_input_file(tmp_path, mnist_so):
    expect_error(run_cli("run", mnist_so, "--input", f"Input3={tmp_path / 'none.npy'}", check=False), "none.npy")


def test_corrupt_library(tmp_path):
    bad = tmp_path / "corrupt.so"
    bad.write_bytes(b"\x7fELF" + bytes(1000))
    expect_error(run_cli("run", bad, check=False), str(bad))


def test_library_without_tessera_symbols(tmp_path):
    import ctypes.util
    libm = ctypes.util.find_library("m")
    import glob
    candidates = glob.glob("/usr/lib/x86_64-linux-gnu/libm.so.6") or glob.glob("/lib/x86_64-linux-gnu/libm.so.6")
    assert candidates, libm
    expect_error(run_cli("run", candidates[0], check=False), "Tessera")


def test_inspect_onnx_and_library(models_dir, mnist_so):
    proc = run_cli("inspect", models_dir / "mnist-8" / "model.onnx")
    assert "Input3" in proc.stdout and "Conv" in proc.stdout and "Plus214_Output_0" in proc.stdout
    proc = run_cli("inspect", mnist_so)
    assert "Input3" in proc.stdout and "kernels" in proc.stdout
    assert "target: x86_64" in proc.stdout or "target: aarch64" in proc.stdout, proc.stdout
    assert "built by Tessera" in proc.stdout


# --- Targets (issue 13): a named target is compiled for, and an artifact refuses a machine that
# cannot run it with one clear error instead of SIGILL. ---

def host_has(flag):
    with open("/proc/cpuinfo") as f:
        return any(flag in line.split() for line in f if line.startswith("flags"))


def test_bad_target_names_the_token_and_the_forms(tmp_path, models_dir):
    model = models_dir / "mnist-8" / "model.onnx"
    expect_error(run_cli("compile", model, "-o", tmp_path / "x.so", "--target", "avx1024", check=False),
                 "unknown target 'avx1024'", "avx2", "avx512", "aarch64", "llvm [-mtriple=<triple>]")
    expect_error(run_cli("compile", model, "-o", tmp_path / "x.so", "--target", "llvm -mcpu=notacpu", check=False),
                 "unknown CPU 'notacpu'")
    expect_error(run_cli("compile", model, "-o", tmp_path / "x.so", "--target", "llvm -mattr=avx2", check=False),
                 "feature 'avx2' in -mattr must be +name or -name")


@pytest.mark.skipif(host_has("avx512f"), reason="the host runs AVX-512: nothing to refuse")
def test_avx512_artifact_is_compiled_and_refused_on_this_host(tmp_path, models_dir):
    out = tmp_path / "mnist-avx512.so"
    run_cli("compile", models_dir / "mnist-8" / "model.onnx", "-o", out, "--target", "avx512")
    asm = subprocess.run(["objdump", "-d", str(out)], capture_output=True, text=True).stdout
    assert "%zmm" in asm, "AVX-512 code uses zmm registers"
    x = tmp_path / "x.npy"
    np.save(x, np.zeros((1, 1, 28, 28), np.float32))
    proc = run_cli("run", out, "--input", f"Input3={x}", check=False)
    assert proc.returncode == 1, f"exit {proc.returncode}: {proc.stderr}"
    expect_error(proc, str(out), "avx512f", "this machine lacks", "--target native", "--target avx2")


@pytest.mark.skipif(not host_has("avx2") or not host_has("fma"), reason="the host has no AVX2 + FMA")
def test_avx2_artifact_runs_like_native(tmp_path, models_dir):
    model = models_dir / "mnist-8" / "model.onnx"
    x = tmp_path / "x.npy"
    np.save(x, np.random.default_rng(0).standard_normal((1, 1, 28, 28)).astype(np.float32))
    outs = {}
    for target in ("avx2", "native"):
        so = tmp_path / f"mnist-{target}.so"
        run_cli("compile", model, "-o", so, "--target", target)
        run_cli("run", so, "--input", f"Input3={x}", "--output", tmp_path / f"{target}.npz")
        outs[target] = np.load(tmp_path / f"{target}.npz")
    for name in outs["native"].files:
        np.testing.assert_allclose(outs["avx2"][name], outs["native"][name], rtol=1e-5, atol=1e-5)


def test_aarch64_without_a_cross_linker_says_how_to_link(tmp_path, models_dir):
    # An empty PATH and no $CC: no cross compiler to find (scripts/setup.sh installs one, so hide it).
    env = {k: v for k, v in os.environ.items() if k != "CC"}
    env["PATH"] = str(tmp_path)
    proc = subprocess.run([tessera_bin(), "compile", str(models_dir / "mnist-8" / "model.onnx"), "-o",
                           str(tmp_path / "m.so"), "--target", "aarch64"], capture_output=True, text=True, env=env)
    assert proc.returncode == 1, proc.stderr
    expect_error(proc, "aarch64-unknown-linux-gnu", "aarch64-linux-gnu-gcc", "gcc-aarch64-linux-gnu", "$CC")
    assert not (tmp_path / "m.so").exists()
