"""Artifacts, outputs and input files that cannot hurt their user (issue 15): `inspect` reads a library
without loading it (no constructor runs; foreign architectures too), a library whose data changed after
compilation is refused, hostile output names never become paths, and inputs that are FIFOs, devices or
folders are refused at once instead of blocking or reading forever."""
import os
import shutil
import subprocess

import numpy as np
import onnx
import onnx.helper as oh
import pytest

from conftest import run_cli, tessera_bin
from test_cli_errors import expect_error, mnist_so  # noqa: F401 (fixture)

F = onnx.TensorProto.FLOAT
QUICK = 60  # seconds: a refusal is immediate; a hang would be the bug


def test_inspect_reads_an_aarch64_library_on_this_host(tmp_path, models_dir):
    so = tmp_path / "mnist-a64.so"
    run_cli("compile", models_dir / "mnist-8" / "model.onnx", "-o", so, "--target", "aarch64")
    out = run_cli("inspect", so).stdout
    assert "(aarch64, read without loading it)" in out, out
    assert "target: aarch64" in out and "neon" in out, out
    assert "Input3: [1, 1, 28, 28] float32" in out and "Plus214_Output_0: [1, 10] float32" in out, out
    assert "content hash:" in out and "matches" in out, out


CONSTRUCTOR_LIBRARY = r"""
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>
__attribute__((constructor)) static void mark(void) {
  const char* p = getenv("TESSERA_E2E_MARKER");
  if (p) { int fd = open(p, O_CREAT | O_WRONLY, 0644); if (fd >= 0) close(fd); }
}
const char __tessera_graph_json[] = "{}";
const char __tessera_target_info[] = "tessera 0.1.0\ntriple x86_64-pc-linux-gnu\nfeatures \n";
"""


def test_inspect_runs_none_of_the_librarys_code(tmp_path):
    src, so, marker = tmp_path / "ctor.c", tmp_path / "ctor.so", tmp_path / "constructor-ran"
    src.write_text(CONSTRUCTOR_LIBRARY)
    subprocess.run([shutil.which("cc") or "gcc", "-shared", "-fPIC", "-o", str(so), str(src)], check=True)
    env = dict(os.environ, TESSERA_E2E_MARKER=str(marker))

    def cli(*args):
        return subprocess.run([tessera_bin(), *map(str, args)], capture_output=True, text=True, timeout=QUICK, env=env)

    expect_error(cli("inspect", so), "no content hash")
    assert not marker.exists(), "tessera inspect ran the library's constructor"
    # `run` loads the library (dlopen runs constructors; running a model means trusting it).
    expect_error(cli("run", so), "ctor.so")
    assert marker.exists()


def test_a_library_changed_after_compilation_is_refused(tmp_path, mnist_so):
    data = bytearray(mnist_so.read_bytes())
    at = data.find(b"TSRPARAM")
    assert at > 0
    data[at + 1000] ^= 0x10  # one bit of a weight
    bad = tmp_path / "bitflip.so"
    bad.write_bytes(bytes(data))
    np.save(tmp_path / "x.npy", np.zeros((1, 1, 28, 28), np.float32))
    for cmd in (("run", bad, "--input", f"Input3={tmp_path / 'x.npy'}"), ("inspect", bad)):
        expect_error(run_cli(*cmd, check=False), "bitflip.so", "is corrupt", "content hash")


HOSTILE = ["../../evil", "/tmp/tessera_abs_evil", "a\\b", "out:0", "..", "plain"]


def test_hostile_output_names_stay_inside_the_folder_and_the_archive(tmp_path):
    nodes = [oh.make_node("Identity", ["x"], [name]) for name in HOSTILE]
    graph = oh.make_graph(nodes, "g", [oh.make_tensor_value_info("x", F, [2])],
                          [oh.make_tensor_value_info(name, F, [2]) for name in HOSTILE])
    model_dir = tmp_path / "work"
    model_dir.mkdir()
    onnx.save(oh.make_model(graph, opset_imports=[oh.make_opsetid("", 13)]), model_dir / "m.onnx")
    run_cli("compile", model_dir / "m.onnx", "-o", model_dir / "m.so")
    np.save(model_dir / "x.npy", np.array([1.5, -2], np.float32))
    proc = run_cli("run", model_dir / "m.so", "--input", f"x={model_dir / 'x.npy'}",
                   "--output", model_dir / "o.npz", "--output-dir", model_dir / "out")
    # out/../../evil.npy would be tmp_path/evil.npy.
    assert sorted(os.listdir(tmp_path)) == ["work"], os.listdir(tmp_path)
    assert not os.path.exists("/tmp/tessera_abs_evil.npy") and not os.path.exists("/tmp/tessera_abs_evil")
    files = sorted(os.listdir(model_dir / "out"))
    assert files == sorted(["_._.._evil.npy", "_tmp_tessera_abs_evil.npy", "a_b.npy", "out_0.npy", "_..npy",
                            "plain.npy"]), files
    got = np.load(model_dir / "o.npz")
    assert sorted(got.files) == sorted([".._.._evil", "_tmp_tessera_abs_evil", "a_b", "out:0", "..", "plain"])
    for key in got.files:
        np.testing.assert_array_equal(got[key], [1.5, -2])
    assert "note: output '../../evil' is written as '.._.._evil'" in proc.stderr, proc.stderr
    assert "plain" not in proc.stderr


@pytest.mark.parametrize("kind", ["fifo", "directory", "dev-zero"])
@pytest.mark.parametrize("ext", [".npy", ".pb"])
def test_input_that_is_not_a_regular_file_is_refused_at_once(tmp_path, mnist_so, kind, ext):
    path = tmp_path / f"in{ext}"
    if kind == "fifo":
        os.mkfifo(path)
    elif kind == "directory":
        path.mkdir()
    else:
        path.symlink_to("/dev/zero")
    words = {"fifo": "FIFO", "directory": "a directory", "dev-zero": "character device"}[kind]
    expect_error(run_cli("run", mnist_so, "--input", f"Input3={path}", check=False, timeout=QUICK),
                 str(path), words, "not a regular file")


def test_model_and_library_that_are_not_regular_files_are_refused(tmp_path):
    fifo = tmp_path / "m.onnx"
    os.mkfifo(fifo)
    expect_error(run_cli("compile", fifo, "-o", tmp_path / "m.so", check=False, timeout=QUICK), "FIFO")
    expect_error(run_cli("inspect", fifo, check=False, timeout=QUICK), "FIFO")
    lib = tmp_path / "lib.so"
    os.mkfifo(lib)
    expect_error(run_cli("inspect", lib, check=False, timeout=QUICK), "FIFO")
    expect_error(run_cli("run", lib, check=False, timeout=QUICK), "not a regular file")
