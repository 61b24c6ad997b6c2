"""BYOC (issue 16) end to end: `tessera compile --byoc BACKEND` on the shared models, run with
`tessera run`, compared with the shipped reference outputs (the tolerance of test_models.py); the
library's external functions as `tessera inspect` lists them; the partitioned module in --dump-ir;
the CLI's errors. Its own ctest entry (e2e_byoc): not collected by e2e_models.
"""
import pathlib
import re

import numpy as np
import pytest

from conftest import assert_close_to_reference, graph_io, read_pb, run_cli

ATOL, RTOL = 1e-4, 1e-3
# csource: the models the issue names; dnnl: every shared model with data sets (ultraface and the
# nanotrack backbone are the ResNet / MobileNet-style CNNs).
CASES = {
    "csource": ["mnist-8", "ultraface-rfb-320"],
    "dnnl": ["mnist-8", "super-resolution-10", "ultraface-rfb-320", "nanotrack-v2-backbone", "nanotrack-v2-head"],
}


def data_sets(model_dir: pathlib.Path):
    return sorted(p for p in model_dir.iterdir() if p.is_dir() and "data_set" in p.name)


@pytest.fixture(scope="module")
def compiled(tmp_path_factory, models_dir):
    cache = {}

    def get(backend, name):
        if (backend, name) not in cache:
            out = tmp_path_factory.mktemp(f"{backend}-{name}") / f"{name}.so"
            run_cli("compile", models_dir / name / "model.onnx", "--byoc", backend, "-o", out)
            cache[(backend, name)] = out
        return cache[(backend, name)]

    return get


def cases():
    from conftest import shared_dir
    root = shared_dir() / "models"
    for backend, models in CASES.items():
        for name in models:
            for ds in data_sets(root / name):
                yield pytest.param(backend, name, ds.name, id=f"{backend}/{name}/{ds.name}")


@pytest.mark.parametrize("backend,model,data_set", list(cases()))
def test_model_matches_reference(backend, model, data_set, models_dir, compiled, tmp_path):
    so = compiled(backend, model)
    model_dir = models_dir / model
    inputs, outputs = graph_io(model_dir / "model.onnx")
    ds = model_dir / data_set
    args = []
    for i, name in enumerate(inputs):
        args += ["--input", f"{name}={ds / f'input_{i}.pb'}"]
    out = tmp_path / "out.npz"
    run_cli("run", so, *args, "--output", out)
    got = np.load(out)
    for i, name in enumerate(outputs):
        assert_close_to_reference(got[name], read_pb(ds / f"output_{i}.pb"),
                                  f"--byoc {backend} {model}/{data_set} output {name}", ATOL, RTOL)


@pytest.mark.parametrize("backend", ["csource", "dnnl"])
def test_inspect_lists_external_functions(backend, compiled):
    text = run_cli("inspect", compiled(backend, "mnist-8")).stdout
    m = re.search(r"external functions \(BYOC\): (\d+)", text)
    assert m and int(m.group(1)) >= 1, text
    # mnist-8: conv + bias + relu + pool twice in one region, the matmul + bias in another.
    first = re.search(rf"  {backend}_0 \[{backend}\]: (.*)", text)
    assert first, text
    assert first.group(1).split(", ")[:4] == ["nn.conv2d", "add", "nn.relu", "nn.max_pool2d"], text
    # Its nodes call the external functions like any kernel.
    assert re.search(rf"  {backend}_0 x1", text), text


def test_dump_ir_shows_partitioned_module(models_dir, tmp_path):
    dump = tmp_path / "ir"
    run_cli("compile", models_dir / "mnist-8" / "model.onnx", "--byoc", "dnnl", "--dump-ir", dump, "-o",
            tmp_path / "m.so")
    files = sorted(p.name for p in dump.iterdir())
    partitioned = [f for f in files if "PartitionGraph" in f]
    assert partitioned, files
    text = (dump / partitioned[0]).read_text()
    assert 'Compiler="dnnl"' in text or "Compiler=dnnl" in text or '"dnnl"' in text, text[:2000]
    assert "dnnl_0" in text
    external = [f for f in files if "ExternalCodegen" in f]
    assert external, files
    assert 'extern "C" int32_t dnnl_0(void* const* args)' in (dump / external[0]).read_text()


def test_unknown_backend_is_named(models_dir, tmp_path):
    proc = run_cli("compile", models_dir / "mnist-8" / "model.onnx", "--byoc", "tpu", "-o", tmp_path / "m.so",
                   check=False)
    assert proc.returncode != 0
    assert "--byoc 'tpu': no external codegen has that name; the backends are: csource, dnnl" in proc.stderr, proc.stderr


def test_two_backends_first_wins(models_dir, tmp_path):
    so = tmp_path / "m.so"
    run_cli("compile", models_dir / "mnist-8" / "model.onnx", "--byoc", "dnnl,csource", "-o", so)
    text = run_cli("inspect", so).stdout
    assert "[dnnl]" in text, text
    ds = models_dir / "mnist-8" / "test_data_set_0"
    out = tmp_path / "out.npz"
    run_cli("run", so, "--input", f"Input3={ds / 'input_0.pb'}", "--output", out)
    got = np.load(out)["Plus214_Output_0"]
    ref = read_pb(ds / "output_0.pb")
    assert np.allclose(got, ref, atol=ATOL, rtol=RTOL)
