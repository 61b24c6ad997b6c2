"""Every data set of the supported shared models: compile with `tessera compile`, run with
`tessera run`, compare with the shipped reference outputs.

Tolerance (issue #2): |got - ref| <= 1e-4 + 1e-3 * |ref| elementwise.
"""
import pathlib

import numpy as np
import pytest

from conftest import graph_io, read_pb, run_cli

MODELS = ["mnist-8", "super-resolution-10", "ultraface-rfb-320", "nanotrack-v2-backbone", "nanotrack-v2-head"]
ATOL, RTOL = 1e-4, 1e-3


def data_sets(model_dir: pathlib.Path):
    return sorted(p for p in model_dir.iterdir() if p.is_dir() and "data_set" in p.name)


@pytest.fixture(scope="module")
def compiled(tmp_path_factory, models_dir):
    cache = {}

    def get(name):
        if name not in cache:
            out = tmp_path_factory.mktemp(name) / f"{name}.so"
            run_cli("compile", models_dir / name / "model.onnx", "-o", out)
            assert out.exists() and out.stat().st_size > 0
            cache[name] = out
        return cache[name]

    return get


def cases():
    from conftest import shared_dir
    root = shared_dir() / "models"
    for name in MODELS:
        for ds in data_sets(root / name):
            yield pytest.param(name, ds.name, id=f"{name}/{ds.name}")


@pytest.mark.parametrize("model,data_set", list(cases()))
def test_model_matches_reference(model, data_set, models_dir, compiled, tmp_path):
    so = compiled(model)
    model_dir = models_dir / model
    inputs, outputs = graph_io(model_dir / "model.onnx")
    ds = model_dir / data_set
    args = []
    for i, name in enumerate(inputs):
        args += ["--input", f"{name}={ds / f'input_{i}.pb'}"]
    out = tmp_path / "out.npz"
    run_cli("run", so, *args, "--output", out)
    got = np.load(out)
    assert sorted(got.files) == sorted(outputs)
    for i, name in enumerate(outputs):
        ref = read_pb(ds / f"output_{i}.pb")
        g = got[name]
        assert g.shape == ref.shape, f"{name}: shape {g.shape} != reference {ref.shape}"
        err = np.abs(g.astype(np.float64) - ref.astype(np.float64))
        bound = ATOL + RTOL * np.abs(ref.astype(np.float64))
        worst = np.unravel_index(np.argmax(err - bound), err.shape)
        assert np.all(err <= bound), (
            f"{model}/{data_set} output {name}: {np.sum(err > bound)} of {err.size} elements out of tolerance; "
            f"worst at {worst}: got {g[worst]}, ref {ref[worst]}")


def test_bench_prints_median(models_dir, compiled, tmp_path):
    so = compiled("mnist-8")
    x = models_dir / "mnist-8" / "test_data_set_0" / "input_0.pb"
    for threads in (1, 2):
        proc = run_cli("run", so, "--input", f"Input3={x}", "--bench", "5", "--threads", threads)
        lines = [l for l in proc.stdout.splitlines() if l.startswith("median ")]
        assert len(lines) == 1, proc.stdout
        value, unit = lines[0].split()[1:3]
        assert unit == "ms" and float(value) > 0
