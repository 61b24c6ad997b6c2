"""TfIdfVectorizer-9 beyond the conformance suite's TF cases: every mode (TF, IDF, TFIDF) with and
without weights, 1-D and 2-D int32 / int64 token inputs, 1- to 3-grams with skips, a pool n-gram
whose output column is shared or unused, and a duplicated pool n-gram. The reference is ONNX Runtime
(its CPU kernel; ONNX's Python reference fails on IDF without weights and indexes weights by column,
not by n-gram as the spec says), and ONNX's reference for the duplicated n-gram, which ONNX Runtime
refuses; counts are exact. String tokens are refused with the reason."""
import numpy as np
import onnx
import onnx.helper as oh
import onnxruntime as ort
import pytest
from onnx.reference import ReferenceEvaluator

from conftest import compile_and_run, run_cli
from test_cli_errors import expect_error

I32, I64, F = onnx.TensorProto.INT32, onnx.TensorProto.INT64, onnx.TensorProto.FLOAT


def reference(m, x):
    sess = ort.InferenceSession(m.SerializeToString(), providers=["CPUExecutionProvider"])
    return sess.run(None, {"x": x})[0]


def tfidf_model(x_shape, x_elem, out_cols, **attrs):
    node = oh.make_node("TfIdfVectorizer", ["x"], ["y"], name="the_tfidf", **attrs)
    y_shape = [out_cols] if len(x_shape) == 1 else [x_shape[0], out_cols]
    graph = oh.make_graph([node], "g", [oh.make_tensor_value_info("x", x_elem, x_shape)],
                          [oh.make_tensor_value_info("y", F, y_shape)])
    return oh.make_model(graph, opset_imports=[oh.make_opsetid("", 9)])


# pool: 1-grams [2, 3, 5, 4], 2-grams [5 6] [7 8] [6 7], 3-grams [2 3 5] [5 6 7];
# columns: the 1-gram 4 and the 2-gram [7 8] share column 3, column 6 is never written.
POOL = dict(ngram_counts=[0, 4, 10], pool_int64s=[2, 3, 5, 4, 5, 6, 7, 8, 6, 7, 2, 3, 5, 5, 6, 7],
            ngram_indexes=[0, 1, 2, 3, 4, 3, 5, 7, 8])
COLS = 9
WEIGHTS = [0.5, 1.5, 2.0, 0.25, 3.0, 1.0, 0.75, 4.0, 9.0]  # one per pool n-gram (the spec)


# The same pool with a column each: IDF with weights where n-grams share a column is refused.
POOL_OWN = dict(POOL, ngram_indexes=[0, 1, 2, 3, 4, 6, 5, 7, 8])


@pytest.mark.parametrize("mode", ["TF", "IDF", "TFIDF"])
@pytest.mark.parametrize("weighted", [False, True])
@pytest.mark.parametrize("grams,skip", [((1, 1), 0), ((1, 3), 2), ((2, 3), 0), ((2, 2), 4), ((3, 3), 1)])
@pytest.mark.parametrize("shape,elem", [([2, 12], I64), ([12], I32)])
def test_matches_the_onnx_reference(tmp_path, mode, weighted, grams, skip, shape, elem):
    pool = POOL_OWN if (mode == "IDF" and weighted) else POOL
    attrs = dict(pool, mode=mode, min_gram_length=grams[0], max_gram_length=grams[1], max_skip_count=skip)
    if weighted:
        attrs["weights"] = WEIGHTS
    m = tfidf_model(shape, elem, COLS, **attrs)
    rng = np.random.default_rng(hash((mode, weighted, grams, skip)) % 2**32)
    x = rng.integers(2, 9, size=shape).astype(np.int64 if elem == I64 else np.int32)
    x.flat[:4] = [2, 3, 5, 6]  # at least one 3-gram and 2-gram hit
    ref = reference(m, x)
    (got,) = compile_and_run(tmp_path, m, {"x": x})
    assert got.shape == ref.shape and got.dtype == np.float32
    np.testing.assert_array_equal(got, ref)


def test_a_duplicated_pool_ngram_counts_once_for_its_last_index(tmp_path):
    attrs = dict(ngram_counts=[0, 2], pool_int64s=[7, 8, 7, 7, 7, 7], ngram_indexes=[0, 1, 2, 3], mode="TF",
                 min_gram_length=1, max_gram_length=2, max_skip_count=1)
    m = tfidf_model([6], I64, 4, **attrs)
    x = np.array([7, 7, 8, 7, 7, 7], np.int64)
    # ONNX Runtime refuses a duplicated n-gram; ONNX's reference keeps its last index.
    (ref,) = ReferenceEvaluator(m).run(None, {"x": x})
    (got,) = compile_and_run(tmp_path, m, {"x": x})
    np.testing.assert_array_equal(got, ref)
    assert got[2] == 0 and got[3] > 0  # [7 7] is listed twice: only its last column counts


def test_string_ngrams_are_refused_with_the_reason(tmp_path):
    m = tfidf_model([4], onnx.TensorProto.STRING, 2, ngram_counts=[0], pool_strings=["a", "b"],
                    ngram_indexes=[0, 1], mode="TF", min_gram_length=1, max_gram_length=1, max_skip_count=0)
    onnx.save(m, tmp_path / "m.onnx")
    proc = run_cli("compile", tmp_path / "m.onnx", "-o", tmp_path / "m.so", check=False)
    assert proc.returncode == 1, proc.stderr
    expect_error(proc, "graph value 'x'", "element type STRING is not supported")


def test_idf_weights_on_a_shared_column_are_refused(tmp_path):
    m = tfidf_model([6], I64, COLS, **dict(POOL, mode="IDF", weights=WEIGHTS, min_gram_length=1,
                                           max_gram_length=2, max_skip_count=0))
    onnx.save(m, tmp_path / "m.onnx")
    proc = run_cli("compile", tmp_path / "m.onnx", "-o", tmp_path / "m.so", check=False)
    assert proc.returncode == 1, proc.stderr
    expect_error(proc, "the_tfidf", "TfIdfVectorizer", "share output column 3")


@pytest.mark.parametrize("attrs,fragment", [
    (dict(ngram_indexes=[0, 2**40]), "outside [0, 16777216)"),
    (dict(max_skip_count=2**40), "more than 16384"),
])
def test_sizes_beyond_the_composition_are_refused(tmp_path, attrs, fragment):
    base = dict(ngram_counts=[0, 1], pool_int64s=[1, 2, 3], ngram_indexes=[0, 1], mode="TF", min_gram_length=1,
                max_gram_length=2, max_skip_count=0)
    m = tfidf_model([40000], I64, 2, **dict(base, **attrs))
    onnx.save(m, tmp_path / "m.onnx")
    proc = run_cli("compile", tmp_path / "m.onnx", "-o", tmp_path / "m.so", check=False)
    assert proc.returncode == 1, proc.stderr
    expect_error(proc, "the_tfidf", fragment)
