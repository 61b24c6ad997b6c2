"""BYOC (issue 16) end to end: `tessera compile --byoc BACKEND` on the shared models, run with
`tessera run`, compared with the shipped reference outputs (the tolerance of test_models.py); the
library's external functions as `tessera inspect` lists them; the partitioned module in --dump-ir;
the CLI's errors. Its own ctest entry (e2e_byoc): not collected by e2e_models.
"""
import os
import pathlib
import re

import numpy as np
import pytest

from conftest import assert_close_to_reference, graph_io, read_pb, run_cli, tessera_bin

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


# --------------------------------------------------------------------------- the transformer paths
# A one-layer transformer encoder block (hidden 32, 4 heads, seq 16) with random weights, in the
# form PyTorch's exporter writes BERT: LayerNormalization, MatMul of [1, S, H] by [H, H] (3-D x 2-D)
# + bias, the attention's batched 4-D MatMuls, the erf GELU, and a MatMul by [1, F, H] weights (batch
# dim broadcast). `--byoc dnnl` must run the layer norms (dnnl.layer_norm), the GELU (dnnl.gelu) and
# the matmuls in oneDNN and match ONNX Runtime within 1e-4 + 1e-3 |ref|.
S, H, HEADS, F = 16, 32, 4, 64


def transformer_block():
    from onnx import TensorProto, helper, numpy_helper
    rng = np.random.default_rng(16)
    inits, nodes = [], []

    def const(name, value):
        inits.append(numpy_helper.from_array(np.asarray(value, np.float32 if np.asarray(value).dtype.kind == "f"
                                                        else np.int64), name))
        return name

    def node(op, ins, **attrs):
        out = f"t{len(nodes)}"
        nodes.append(helper.make_node(op, ins, [out], **attrs))
        return out

    def weight(*shape):
        return const(f"w{len(inits)}", rng.normal(0, 0.2, shape))

    def linear(x, k, n, w_shape=None):
        return node("Add", [weight(n), node("MatMul", [x, weight(*(w_shape or (k, n)))])])

    def layer_norm(x):
        return node("LayerNormalization", [x, const(f"g{len(inits)}", rng.uniform(0.5, 1.5, H)), weight(H)],
                    axis=-1, epsilon=1e-5)

    def heads(x, perm):
        return node("Transpose", [node("Reshape", [x, const(f"s{len(inits)}", [1, S, HEADS, H // HEADS])])], perm=perm)

    x = "x"
    ln = layer_norm(x)
    q, k, v = heads(linear(ln, H, H), [0, 2, 1, 3]), heads(linear(ln, H, H), [0, 2, 3, 1]), \
        heads(linear(ln, H, H), [0, 2, 1, 3])
    scores = node("Div", [node("MatMul", [q, k]), const("scale", np.sqrt(H / HEADS))])
    ctx = node("MatMul", [node("Softmax", [scores], axis=-1), v])
    ctx = node("Reshape", [node("Transpose", [ctx], perm=[0, 2, 1, 3]), const("flat", [1, S, H])])
    h = layer_norm(node("Add", [linear(ctx, H, H), x]))
    f = linear(h, H, F)
    erf = node("Erf", [node("Div", [f, const("sqrt2", np.sqrt(2.0))])])
    gelu = node("Mul", [node("Mul", [f, node("Add", [erf, const("one", 1.0)])]), const("half", 0.5)])
    y = node("Add", [linear(gelu, F, H, (1, F, H)), h])
    nodes[-1].output[0] = "y"
    graph = helper.make_graph(nodes, "block", [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, S, H])],
                              [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, S, H])], inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def test_transformer_block_in_onednn_matches_onnxruntime(tmp_path):
    import onnx
    import onnxruntime as ort
    model = transformer_block()
    onnx.checker.check_model(model)
    path, so, out = tmp_path / "block.onnx", tmp_path / "block.so", tmp_path / "out.npz"
    onnx.save(model, path)
    x = np.random.default_rng(1).normal(0, 1, (1, S, H)).astype(np.float32)
    np.save(tmp_path / "x.npy", x)
    run_cli("compile", path, "--byoc", "dnnl", "-o", so)
    ops = set()
    for line in run_cli("inspect", so).stdout.splitlines():
        m = re.match(r"  dnnl_\d+ \[dnnl\]: (.*)", line)
        if m:
            ops |= set(m.group(1).split(", "))
    assert {"dnnl.layer_norm", "dnnl.gelu", "nn.matmul", "nn.softmax"} <= ops, ops
    assert not ops & {"mean", "erf", "sqrt"}, f"ops of the composites listed one by one: {ops}"
    run_cli("run", so, "--input", f"x={tmp_path / 'x.npy'}", "--output", out)
    ref = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"]).run(None, {"x": x})[0]
    assert_close_to_reference(np.load(out)["y"], ref, "--byoc dnnl transformer block", ATOL, RTOL)


# A backend failing at load time (here: oneDNN refusing every primitive, as on a CPU it has no
# implementation for; an LD_PRELOAD shim stands in for that CPU) is a clear error naming the backend
# and the region, not a crash or a wrong answer.
SHIM = r"""
#include <oneapi/dnnl/dnnl.h>
dnnl_status_t dnnl_primitive_desc_iterator_create(dnnl_primitive_desc_iterator_t* it, const_dnnl_op_desc_t d,
                                                  const_dnnl_primitive_attr_t a, dnnl_engine_t e,
                                                  const_dnnl_primitive_desc_t hint) {
  return dnnl_unimplemented;
}
"""


def test_backend_failure_at_load_names_backend_and_region(compiled, models_dir, tmp_path):
    import subprocess
    (tmp_path / "shim.c").write_text(SHIM)
    subprocess.run(["cc", "-shared", "-fPIC", "-o", tmp_path / "shim.so", tmp_path / "shim.c"], check=True)
    ds = models_dir / "mnist-8" / "test_data_set_0"
    env = dict(os.environ, LD_PRELOAD=str(tmp_path / "shim.so"))
    proc = subprocess.run([tessera_bin(), "run", str(compiled("dnnl", "mnist-8")), "--input",
                           f"Input3={ds / 'input_0.pb'}"], capture_output=True, text=True, env=env, timeout=120)
    assert proc.returncode != 0, proc.stdout
    assert "external function 'dnnl_0' (BYOC backend 'dnnl') failed to initialize: oneDNN: " in proc.stderr, \
        proc.stderr
    assert "compile without --byoc dnnl" in proc.stderr, proc.stderr
