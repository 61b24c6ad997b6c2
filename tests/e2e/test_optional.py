"""ONNX optional values (issue 14): Optional / OptionalHasElement / OptionalGetElement over the
prelude's Option ADT (ops_optional.cc). An If whose branches give a present and an empty optional
runs in the VM (AllocADT, a match as IfTag / GetField), against ONNX Runtime; an empty optional's
element fails the run with a clear error; optionals built in the graph fold at import."""
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from conftest import compile_graph as _compile, ort_run as _ort, run_outputs

OPSET = 18
F3 = helper.make_tensor_value_info("x", TensorProto.FLOAT, [3])
COND = helper.make_tensor_value_info("c", TensorProto.BOOL, [])
OPT_TYPE = helper.make_optional_type_proto(helper.make_tensor_type_proto(TensorProto.FLOAT, [3]))


def _optional_if(name="opt"):
    """If(c) { Optional(x + 1) } else { Optional() }: an optional the condition decides."""
    one = helper.make_tensor("one", TensorProto.FLOAT, [], [1.0])
    then_graph = helper.make_graph(
        [helper.make_node("Add", ["x", "one"], ["x1"]), helper.make_node("Optional", ["x1"], ["t_opt"])],
        "then", [], [helper.make_value_info("t_opt", OPT_TYPE)], initializer=[one])
    else_graph = helper.make_graph(
        [helper.make_node("Optional", [], ["e_opt"], type=helper.make_tensor_type_proto(TensorProto.FLOAT, [3]))],
        "else", [], [helper.make_value_info("e_opt", OPT_TYPE)])
    return helper.make_node("If", ["c"], [name], then_branch=then_graph, else_branch=else_graph, name="make_opt")


def _check(tmp_path, path, so, cases):
    names = [o.name for o in onnx.load(path).graph.output]
    for k, feeds in enumerate(cases):
        got, _ = run_outputs(tmp_path, so, feeds, f"r{k}")
        want = _ort(path, feeds)
        for name, w in zip(names, want):
            assert got[name].dtype == w.dtype and got[name].shape == w.shape, (k, name, got[name], w)
            assert np.allclose(got[name], w), (k, name, got[name], w)


def test_an_optional_decided_at_run_time_is_tested_and_read_in_the_vm(tmp_path):
    # has = OptionalHasElement(opt); y = If(has) { OptionalGetElement(opt) * 2 } else { x }
    two = helper.make_tensor("two", TensorProto.FLOAT, [], [2.0])
    get_graph = helper.make_graph(
        [helper.make_node("OptionalGetElement", ["opt"], ["elem"]), helper.make_node("Mul", ["elem", "two"], ["g"])],
        "get", [], [helper.make_tensor_value_info("g", TensorProto.FLOAT, [3])], initializer=[two])
    keep_graph = helper.make_graph([helper.make_node("Identity", ["x"], ["k"])], "keep", [],
                                   [helper.make_tensor_value_info("k", TensorProto.FLOAT, [3])])
    nodes = [_optional_if(),
             helper.make_node("OptionalHasElement", ["opt"], ["has"]),
             helper.make_node("If", ["has"], ["y"], then_branch=get_graph, else_branch=keep_graph)]
    outputs = [helper.make_tensor_value_info("has", TensorProto.BOOL, []),
               helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])]
    path, so = _compile(tmp_path, nodes, [F3, COND], outputs, OPSET)
    x = np.array([1.5, -2.0, 0.25], np.float32)
    _check(tmp_path, path, so, [{"x": x, "c": np.array(True)}, {"x": x, "c": np.array(False)}])


def test_the_element_of_an_empty_optional_fails_the_run_with_a_clear_error(tmp_path):
    nodes = [_optional_if(), helper.make_node("OptionalGetElement", ["opt"], ["y"], name="get")]
    path, so = _compile(tmp_path, nodes, [F3, COND], [helper.make_tensor_value_info("y", TensorProto.FLOAT, [3])], OPSET)
    x = np.array([1.0, 2.0, 3.0], np.float32)
    got, _ = run_outputs(tmp_path, so, {"x": x, "c": np.array(True)}, "present")
    np.testing.assert_allclose(got["y"], x + 1)
    with pytest.raises(Exception):  # ONNX Runtime fails too
        _ort(path, {"x": x, "c": np.array(False)})
    got, proc = run_outputs(tmp_path, so, {"x": x, "c": np.array(False)}, "empty", check=False)
    assert got is None and proc.returncode != 0
    assert "no clause of a match (of a value of type Option[Tensor[(3,), float32]]) matches the value" in proc.stderr, \
        proc.stderr


def test_optionals_built_in_the_graph_fold_at_import(tmp_path):
    # Optional(x) is present, Optional() and a missing input are not; a tensor (opset 18) is present.
    nodes = [helper.make_node("Optional", ["x"], ["some"]),
             helper.make_node("OptionalHasElement", ["some"], ["has_some"]),
             helper.make_node("Optional", [], ["none"], type=helper.make_tensor_type_proto(TensorProto.FLOAT, [3])),
             helper.make_node("OptionalHasElement", ["none"], ["has_none"]),
             helper.make_node("OptionalHasElement", [""], ["has_nothing"]),
             helper.make_node("OptionalHasElement", ["x"], ["has_tensor"]),
             helper.make_node("OptionalGetElement", ["some"], ["elem"]),
             helper.make_node("OptionalGetElement", ["x"], ["same"])]
    outputs = [helper.make_tensor_value_info(n, TensorProto.BOOL, [])
               for n in ("has_some", "has_none", "has_nothing", "has_tensor")]
    outputs += [helper.make_tensor_value_info(n, TensorProto.FLOAT, [3]) for n in ("elem", "same")]
    path, so = _compile(tmp_path, nodes, [F3], outputs, OPSET)
    x = np.array([3.0, 1.0, -1.0], np.float32)
    got, _ = run_outputs(tmp_path, so, {"x": x}, "r")
    assert bool(got["has_some"]) and not bool(got["has_none"]) and not bool(got["has_nothing"])
    assert bool(got["has_tensor"])
    np.testing.assert_array_equal(got["elem"], x)
    np.testing.assert_array_equal(got["same"], x)
    _check(tmp_path, path, so, [{"x": x}])
