"""ONNX sequence operators over sequences whose length is known at import (ops_sequence.cc), against
ONNX Runtime: SequenceEmpty / Construct / Insert / Erase / At / Length, SplitToSequence and
ConcatFromSequence, with positions known at import and read at run time (negative ones included; an
out-of-range run-time position fails the run naming the node), and the refusal of a sequence-typed
graph output."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from conftest import run_cli


def _ort(model, feeds):
    ort = pytest.importorskip("onnxruntime")
    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)


def _tensor(name, dtype=TensorProto.FLOAT, shape=(2, 3)):
    return helper.make_tensor_value_info(name, dtype, list(shape))


def _model(nodes, inputs, outputs, inits=()):
    graph = helper.make_graph(nodes, "seq", inputs, outputs, list(inits))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])


def _compile(tmp_path, model):
    onnx.save(model, tmp_path / "m.onnx")
    run_cli("compile", tmp_path / "m.onnx", "-o", tmp_path / "m.so")
    return tmp_path / "m.so"


def _run(tmp_path, so, feeds, names, tag, check=True):
    args = []
    for name, value in feeds.items():
        np.save(tmp_path / f"{tag}_{name}.npy", value)
        args += ["--input", f"{name}={tmp_path / f'{tag}_{name}.npy'}"]
    proc = run_cli("run", so, *args, "--output", tmp_path / f"{tag}.npz", check=check)
    if proc.returncode != 0:
        return None, proc
    got = np.load(tmp_path / f"{tag}.npz")
    return [got[n] for n in names], proc


XYZ = [_tensor("X"), _tensor("Y"), _tensor("Z")]


def _feeds(rng, **extra):
    f = {n: rng.standard_normal((2, 3)).astype(np.float32) for n in "XYZ"}
    f.update({k: np.array(v, np.int64) for k, v in extra.items()})
    return f


def test_insert_erase_at_with_run_time_positions(tmp_path):
    # out = At(Insert(Erase(Construct(X, Y, Z), pe), X, pi), pa): every position read at run time.
    nodes = [helper.make_node("SequenceConstruct", ["X", "Y", "Z"], ["s1"]),
             helper.make_node("SequenceErase", ["s1", "pe"], ["s2"]),
             helper.make_node("SequenceInsert", ["s2", "X", "pi"], ["s3"]),
             helper.make_node("SequenceAt", ["s3", "pa"], ["out"]),
             helper.make_node("SequenceLength", ["s3"], ["len"])]
    pos = [helper.make_tensor_value_info(n, TensorProto.INT64, []) for n in ("pe", "pi", "pa")]
    model = _model(nodes, XYZ + pos, [_tensor("out"), helper.make_tensor_value_info("len", TensorProto.INT64, [])])
    so = _compile(tmp_path, model)
    rng = np.random.default_rng(0)
    for k, (pe, pi, pa) in enumerate([(0, 0, 0), (1, 2, 2), (-1, -2, -3), (2, 1, 1), (-3, 2, -1)]):
        feeds = _feeds(rng, pe=pe, pi=pi, pa=pa)
        got, _ = _run(tmp_path, so, feeds, ["out", "len"], f"r{k}")
        want = _ort(model, feeds)
        np.testing.assert_array_equal(got[0], want[0], err_msg=str((pe, pi, pa)))
        assert got[1] == want[1] == 3
    # Out-of-range positions: the run fails naming the node, as ONNX Runtime refuses them.
    for k, (pe, pi, pa) in enumerate([(3, 0, 0), (0, 3, 0), (0, 0, 3), (-4, 0, 0)]):
        _, proc = _run(tmp_path, so, _feeds(rng, pe=pe, pi=pi, pa=pa), ["out"], f"bad{k}", check=False)
        assert proc.returncode == 1, (pe, pi, pa)
        assert "out of range" in proc.stderr and "op Sequence" in proc.stderr, proc.stderr


def test_known_positions_and_empty_sequence(tmp_path):
    c = lambda n, v: onnx.numpy_helper.from_array(np.array(v, np.int64), n)  # noqa: E731
    nodes = [helper.make_node("SequenceEmpty", [], ["e"], dtype=TensorProto.FLOAT),
             helper.make_node("SequenceInsert", ["e", "X"], ["s1"]),
             helper.make_node("SequenceInsert", ["s1", "Y", "zero"], ["s2"]),
             helper.make_node("SequenceInsert", ["s2", "Z", "minus1"], ["s3"]),  # [Y, Z, X]
             helper.make_node("SequenceErase", ["s3"], ["s4"]),                  # [Y, Z]
             helper.make_node("ConcatFromSequence", ["s4"], ["cat"], axis=1),
             helper.make_node("ConcatFromSequence", ["s3"], ["stk"], axis=-1, new_axis=1)]
    model = _model(nodes, XYZ, [_tensor("cat", shape=(2, 6)), _tensor("stk", shape=(2, 3, 3))],
                   [c("zero", 0), c("minus1", -1)])
    so = _compile(tmp_path, model)
    feeds = _feeds(np.random.default_rng(1))
    got, _ = _run(tmp_path, so, feeds, ["cat", "stk"], "r")
    for g, w in zip(got, _ort(model, feeds)):
        np.testing.assert_array_equal(g, w)


@pytest.mark.parametrize("split,attrs", [(None, {"axis": 1}), (None, {"axis": -1, "keepdims": 0}),
                                         (np.array(2, np.int64), {"axis": 1}),
                                         (np.array([1, 3, 1], np.int64), {"axis": 1})])
def test_split_to_sequence(tmp_path, split, attrs):
    inputs = ["X"] + (["split"] if split is not None else [])
    nodes = [helper.make_node("SplitToSequence", inputs, ["s"], **attrs),
             helper.make_node("SequenceLength", ["s"], ["len"]),
             helper.make_node("SequenceAt", ["s", "last"], ["tail"]),
             helper.make_node("ConcatFromSequence", ["s"], ["back"], axis=attrs["axis"],
                              new_axis=1 if attrs.get("keepdims", 1) == 0 else 0)]
    inits = [onnx.numpy_helper.from_array(np.array(-1, np.int64), "last")]
    if split is not None:
        inits.append(onnx.numpy_helper.from_array(split, "split"))
    model = _model(nodes, [_tensor("X", shape=(2, 5))],
                   [helper.make_tensor_value_info(n, TensorProto.FLOAT, None) for n in ("tail", "back")] +
                   [helper.make_tensor_value_info("len", TensorProto.INT64, [])], inits)
    so = _compile(tmp_path, model)
    feeds = {"X": np.arange(10, dtype=np.float32).reshape(2, 5)}
    got, _ = _run(tmp_path, so, feeds, ["tail", "back", "len"], "r")
    for g, w in zip(got, _ort(model, feeds)):
        np.testing.assert_array_equal(g, w)


def test_sequence_graph_output_is_refused(tmp_path):
    model = _model([helper.make_node("SequenceConstruct", ["X", "Y"], ["s"])], XYZ[:2],
                   [helper.make_tensor_sequence_value_info("s", TensorProto.FLOAT, None)])
    onnx.save(model, tmp_path / "m.onnx")
    proc = run_cli("compile", tmp_path / "m.onnx", "-o", tmp_path / "m.so", check=False)
    assert proc.returncode == 1
    assert "graph output 's' is a sequence (of 2 tensors)" in proc.stderr, proc.stderr
