"""`tessera compile --input-value NAME=VALUE`: a model specialized for one value of an input (as TVM's
bind_params_by_name, and torch.compile's specialization on ints). The value folds at compile time (an If
on it imports one branch), the input stays an input, and the library refuses any other value at run
time (UserError naming the input, exit 1): never a silently wrong answer.

silero-vad (../shared) branches on its sample rate `sr`: specialized for 16000 it compiles, matches
both reference data sets, and carries its LSTM state across calls as ONNX Runtime does. Compiled without
the specialization, the If on `sr` runs in the VM: one library serves 16 kHz and 8 kHz calls."""
import numpy as np
import onnx
import onnx.helper as oh
import onnx.numpy_helper
import onnxruntime as ort
import pytest

from conftest import run_cli, run_outputs
from test_cli_errors import expect_error

ATOL, RTOL = 1e-4, 1e-3


def read_pb(path):
    t = onnx.TensorProto()
    t.ParseFromString(path.read_bytes())
    return onnx.numpy_helper.to_array(t)


@pytest.fixture(scope="module")
def silero(tmp_path_factory, models_dir):
    tmp = tmp_path_factory.mktemp("silero")
    so = tmp / "silero.so"
    run_cli("compile", models_dir / "silero-vad" / "model.onnx", "-o", so, "--input-value", "sr=16000",
            "--input-shape", "input=1,576", "--input-shape", "state=2,1,128")
    return so


@pytest.mark.parametrize("data_set", [0, 1])
def test_silero_vad_at_16k_matches_the_reference(tmp_path, models_dir, silero, data_set):
    d = models_dir / "silero-vad" / f"derived_data_set_{data_set}"
    feeds = {n: read_pb(d / f"input_{i}.pb") for i, n in enumerate(["input", "state", "sr"])}
    got, _ = run_outputs(tmp_path, silero, feeds, "run")
    for i, name in enumerate(["output", "stateN"]):
        np.testing.assert_allclose(got[name], read_pb(d / f"output_{i}.pb"), atol=ATOL, rtol=RTOL, err_msg=name)


def test_silero_vad_carries_its_state_across_calls_like_onnx_runtime(tmp_path, models_dir, silero):
    sess = ort.InferenceSession(str(models_dir / "silero-vad" / "model.onnx"), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(0)
    ours = theirs = np.zeros((2, 1, 128), np.float32)
    sr = np.array(16000, np.int64)
    for step in range(4):  # a stream: each call gets the state the previous one returned
        chunk = (0.1 * rng.standard_normal((1, 576))).astype(np.float32)
        got, _ = run_outputs(tmp_path, silero, {"input": chunk, "state": ours, "sr": sr}, f"s{step}")
        ref_out, ref_state = sess.run(None, {"input": chunk, "state": theirs, "sr": sr})
        np.testing.assert_allclose(got["output"], ref_out, atol=ATOL, rtol=RTOL, err_msg=f"step {step}")
        np.testing.assert_allclose(got["stateN"], ref_state, atol=ATOL, rtol=RTOL, err_msg=f"step {step}")
        ours, theirs = got["stateN"], ref_state


def test_another_value_is_refused_at_run_time(tmp_path, models_dir, silero):
    d = models_dir / "silero-vad" / "derived_data_set_0"
    feeds = {"input": read_pb(d / "input_0.pb"), "state": read_pb(d / "input_1.pb"), "sr": np.array(8000, np.int64)}
    _, proc = run_outputs(tmp_path, silero, feeds, "bad", check=False)
    expect_error(proc, "input 'sr' is [8000]", "compiled for [16000] only", "--input-value sr=")
    assert proc.returncode == 1


def test_inspect_shows_the_specialized_input(silero):
    out = run_cli("inspect", silero).stdout
    assert "sr: [] int64 (compiled for the value [16000] only" in out, out


def test_without_shapes_neither_branch_runs_and_the_error_suggests_them(tmp_path, models_dir):
    # Its symbolic dims bound to 1, the input is one sample: no branch can take it.
    proc = run_cli("compile", models_dir / "silero-vad" / "model.onnx", "-o", tmp_path / "m.so", check=False)
    expect_error(proc, "If_0", "neither branch can run with these input shapes", "--input-shape NAME=D0,D1,...")


def small_model(tmp_path):
    # y = x * k: k an int32 [2] input.
    nodes = [oh.make_node("Cast", ["k"], ["kf"], to=onnx.TensorProto.FLOAT), oh.make_node("Mul", ["x", "kf"], ["y"])]
    graph = oh.make_graph(nodes, "g", [oh.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2]),
                                       oh.make_tensor_value_info("k", onnx.TensorProto.INT32, ["n"])],
                          [oh.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2])])
    path = tmp_path / "m.onnx"
    onnx.save(oh.make_model(graph, opset_imports=[oh.make_opsetid("", 13)]), path)
    return path


def test_a_file_value_binds_symbolic_dims_and_is_checked(tmp_path):
    path = small_model(tmp_path)
    np.save(tmp_path / "k.npy", np.array([3, -2], np.int32))
    run_cli("compile", path, "-o", tmp_path / "m.so", "--input-value", f"k={tmp_path / 'k.npy'}")
    x = np.array([1.5, 4.0], np.float32)
    got, _ = run_outputs(tmp_path, tmp_path / "m.so", {"x": x, "k": np.array([3, -2], np.int32)}, "ok")
    np.testing.assert_array_equal(got["y"], x * np.array([3, -2], np.float32))
    _, proc = run_outputs(tmp_path, tmp_path / "m.so", {"x": x, "k": np.array([3, 2], np.int32)}, "bad", check=False)
    expect_error(proc, "input 'k' is [3, 2]", "[3, -2]")


@pytest.mark.parametrize("spec,fragments", [
    ("nope=1", ["'nope'", "not a graph input"]),
    ("k=2.5", ["'k'", "int32", "cannot hold exactly"]),  # a rank-0 literal for a rank-1 input: shape
    ("k", ["--input-value 'k'", "NAME=NUMBER"]),
])
def test_bad_values_are_named(tmp_path, spec, fragments):
    path = small_model(tmp_path)
    proc = run_cli("compile", path, "-o", tmp_path / "m.so", "--input-value", spec, check=False)
    expect_error(proc, *fragments)
    assert proc.returncode == 1


def test_a_value_of_the_wrong_dtype_or_rank_is_named(tmp_path):
    path = small_model(tmp_path)
    np.save(tmp_path / "k64.npy", np.array([3, -2], np.int64))
    proc = run_cli("compile", path, "-o", tmp_path / "m.so", "--input-value", f"k={tmp_path / 'k64.npy'}", check=False)
    expect_error(proc, "'k'", "int64", "declares int32")
    proc = run_cli("compile", path, "-o", tmp_path / "m.so", "--input-value", "k=3", check=False)
    expect_error(proc, "'k'", "rank 0", "rank 1")


def test_a_number_literal_takes_the_inputs_dtype(tmp_path):
    # k is float32: the literal 2 binds k = 2.0f (guarded as float32), not an int64 2.
    nodes = [oh.make_node("Mul", ["x", "k"], ["y"])]
    graph = oh.make_graph(nodes, "g", [oh.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2]),
                                       oh.make_tensor_value_info("k", onnx.TensorProto.FLOAT, [])],
                          [oh.make_tensor_value_info("y", onnx.TensorProto.FLOAT, [2])])
    path = tmp_path / "f.onnx"
    onnx.save(oh.make_model(graph, opset_imports=[oh.make_opsetid("", 13)]), path)
    run_cli("compile", path, "-o", tmp_path / "f.so", "--input-value", "k=2")
    x = np.array([1.5, -3.0], np.float32)
    got, _ = run_outputs(tmp_path, tmp_path / "f.so", {"x": x, "k": np.array(2, np.float32)}, "ok")
    np.testing.assert_array_equal(got["y"], 2 * x)
    _, proc = run_outputs(tmp_path, tmp_path / "f.so", {"x": x, "k": np.array(3, np.float32)}, "bad", check=False)
    expect_error(proc, "input 'k' is [3]", "compiled for [2] only")


def _compile_silero(tmp_path_factory, models_dir, samples):
    # No --input-value: `sr` stays a run-time input and the If on it a VM program (runtime/vm.h).
    tmp = tmp_path_factory.mktemp(f"silero_vm_{samples}")
    so = tmp / "silero.so"
    proc = run_cli("compile", models_dir / "silero-vad" / "model.onnx", "-o", so, "--input-shape",
                   f"input=1,{samples}", "--input-shape", "state=2,1,128")
    return so, proc


@pytest.fixture(scope="module")
def silero_any_rate(tmp_path_factory, models_dir):
    # 576 samples: a 16 kHz chunk (512 + 64 of context). The 8 kHz branch cannot run on it (ONNX Runtime
    # fails there at run time too): the compile warns, and a run that takes it fails with that reason.
    return _compile_silero(tmp_path_factory, models_dir, 576)


@pytest.mark.parametrize("data_set", [0, 1])
def test_silero_vad_with_a_run_time_rate_matches_the_reference(tmp_path, models_dir, silero_any_rate, data_set):
    d = models_dir / "silero-vad" / f"derived_data_set_{data_set}"
    feeds = {n: read_pb(d / f"input_{i}.pb") for i, n in enumerate(["input", "state", "sr"])}
    got, _ = run_outputs(tmp_path, silero_any_rate[0], feeds, "run")
    for i, name in enumerate(["output", "stateN"]):
        np.testing.assert_allclose(got[name], read_pb(d / f"output_{i}.pb"), atol=ATOL, rtol=RTOL, err_msg=name)


def test_silero_vad_branch_that_cannot_run_warns_and_fails_when_taken(tmp_path, models_dir, silero_any_rate):
    so, proc = silero_any_rate
    assert "warning:" in proc.stderr and "node 'If_0'" in proc.stderr, proc.stderr
    assert "the else branch cannot run with these input shapes" in proc.stderr, proc.stderr
    d = models_dir / "silero-vad" / "derived_data_set_0"
    feeds = {"input": read_pb(d / "input_0.pb"), "state": read_pb(d / "input_1.pb"), "sr": np.array(8000, np.int64)}
    _, run = run_outputs(tmp_path, so, feeds, "bad", check=False)
    assert run.returncode == 1
    expect_error(run, "node 'If_0' (op If, domain ai.onnx, opset 16): the else branch cannot run with the input "
                      "shapes this model was compiled for", "LSTM", "instruction")


def test_silero_vad_one_library_runs_both_rates_like_onnx_runtime(tmp_path, tmp_path_factory, models_dir):
    # 288 samples run at either rate (as in ONNX Runtime): one library, a stream alternating 16 kHz and
    # 8 kHz calls, each against ONNX Runtime with the state carried across calls.
    so, _ = _compile_silero(tmp_path_factory, models_dir, 288)
    sess = ort.InferenceSession(str(models_dir / "silero-vad" / "model.onnx"), providers=["CPUExecutionProvider"])
    rng = np.random.default_rng(1)
    ours = theirs = np.zeros((2, 1, 128), np.float32)
    for step, rate in enumerate([16000, 8000, 8000, 16000]):
        chunk = (0.1 * rng.standard_normal((1, 288))).astype(np.float32)
        sr = np.array(rate, np.int64)
        got, _ = run_outputs(tmp_path, so, {"input": chunk, "state": ours, "sr": sr}, f"s{step}")
        ref_out, ref_state = sess.run(None, {"input": chunk, "state": theirs, "sr": sr})
        np.testing.assert_allclose(got["output"], ref_out, atol=ATOL, rtol=RTOL, err_msg=f"step {step} ({rate} Hz)")
        np.testing.assert_allclose(got["stateN"], ref_state, atol=ATOL, rtol=RTOL, err_msg=f"step {step} ({rate} Hz)")
        ours, theirs = got["stateN"], ref_state
