"""The ai.onnx.ml tree ensembles (TreeEnsemble-5; TreeEnsembleRegressor and TreeEnsembleClassifier, opsets 1
and 3) through the whole compiler, on forests built here, against the ONNX reference implementation and,
where it has a kernel, ONNX Runtime (CPU); malformed attributes as clear import errors.

Tolerances: a row takes the same path through every tree in all three implementations (comparisons are
exact: X and the splits in the wider type), so only the summation order and the transforms' arithmetic
differ: float32 rtol 1e-5 / atol 1e-5 (1e-4 after a post_transform: ONNX Runtime computes them in float32
with its own exp), double 1e-12, float16 rtol 2e-3 / atol 2e-3 (the reference accumulates in float16).
Labels are compared exactly.

Where the reference and ONNX Runtime disagree, Tessera follows (see ops_tree_ensemble.cc):
  - post_transform of TreeEnsemble / the regressor: ONNX Runtime (the reference ignores or refuses it);
  - MIN / MAX aggregation, a target no tree voted for: 0 (ONNX Runtime; the reference: the float max);
  - the classifier's binary case: the reference (ONNX Runtime writes [1 - s, s] untransformed when all
    weights are positive), so ONNX Runtime is compared where they agree;
  - TreeEnsemble's post_transform codes: the spec's (1 SOFTMAX, 2 LOGISTIC; ONNX Runtime 1.32 reads 1 as
    LOGISTIC and 2 as SOFTMAX, so its model gets the other code);
  - two classes both voted for, labels other than 0 / 1: classlabels_int64s[argmax] (ONNX Runtime answers
    1 / 0 there).
The reference ends a BRANCH_MEMBER set at a member 0.0 (its parsing loop tests the value's truth): the
member sets compared with it avoid 0.0. ONNX Runtime implements member sets of integers only."""
import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper
from onnx.reference import ReferenceEvaluator

from conftest import compile_and_run, run_cli

GRID = np.array([-2.0, -1.0, -0.5, 0.0, 0.25, 0.5, 1.0, 1.5, 3.0])  # splits and X values: equality happens
MODE_NAMES = ["BRANCH_LEQ", "BRANCH_LT", "BRANCH_GTE", "BRANCH_GT", "BRANCH_EQ", "BRANCH_NEQ", "BRANCH_MEMBER"]
F32, F64 = dict(rtol=1e-5, atol=1e-5), dict(rtol=1e-12, atol=1e-12)


def forest(rng, n_trees, depth, n_features, n_targets, modes=(0,), early=0.0, missing=0.0, grid=GRID,
           set_grid=GRID[GRID != 0], continuous=False, weights=lambda rng: float(rng.normal())):
    """A random forest: interior nodes (feature, mode, split, member set, missing flag, children) and leaves
    (target, weight) as TreeEnsemble-5 indexes them; each tree `depth` deep, a subtree ending early with
    probability `early`."""
    nodes = {k: [] for k in ("feat", "mode", "split", "miss", "set", "tid", "tleaf", "fid", "fleaf")}
    leaves = {"target": [], "weight": []}

    def build(d):
        if d == depth or (d > 0 and rng.random() < early):
            leaves["target"].append(int(rng.integers(n_targets)))
            leaves["weight"].append(weights(rng))
            return len(leaves["target"]) - 1, 1
        i = len(nodes["feat"])
        for v in nodes.values():
            v.append(None)
        mode = int(rng.choice(modes))
        nodes["feat"][i] = int(rng.integers(n_features))
        nodes["mode"][i] = mode
        nodes["split"][i] = float(rng.normal()) if continuous else float(rng.choice(grid))
        nodes["miss"][i] = int(rng.random() < missing)
        nodes["set"][i] = sorted(rng.choice(set_grid, size=int(rng.integers(1, 4)), replace=False).tolist()) if mode == 6 else None
        nodes["tid"][i], nodes["tleaf"][i] = build(d + 1)
        nodes["fid"][i], nodes["fleaf"][i] = build(d + 1)
        return i, 0

    roots = [build(0)[0] for _ in range(n_trees)]
    return {"nodes": nodes, "leaves": leaves, "roots": roots, "n_targets": n_targets}


def ensemble_node(fr, out, dtype=np.float32, name="te", missing=True, **attrs):
    """A TreeEnsemble-5 node of forest `fr` (splits, weights and member values of `dtype`)."""
    n = fr["nodes"]
    members = [v for m, s in zip(n["mode"], n["set"]) if m == 6 for v in s + [np.nan]]
    a = dict(n_targets=fr["n_targets"], tree_roots=fr["roots"], nodes_featureids=n["feat"],
             nodes_modes=numpy_helper.from_array(np.array(n["mode"], np.uint8)),
             nodes_splits=numpy_helper.from_array(np.array(n["split"], dtype)),
             nodes_truenodeids=n["tid"], nodes_trueleafs=n["tleaf"], nodes_falsenodeids=n["fid"],
             nodes_falseleafs=n["fleaf"], leaf_targetids=fr["leaves"]["target"],
             leaf_weights=numpy_helper.from_array(np.array(fr["leaves"]["weight"], dtype)))
    if missing:
        a["nodes_missing_value_tracks_true"] = n["miss"]
    if members:
        a["membership_values"] = numpy_helper.from_array(np.array(members, dtype))
    a.update(attrs)
    return helper.make_node("TreeEnsemble", ["X"], [out], domain="ai.onnx.ml", name=name, **a)


def legacy_node(fr, op, outs, votes, dtype=np.float32, name="te", **attrs):
    """The TreeEnsembleRegressor / TreeEnsembleClassifier node of forest `fr`: each tree's nodes numbered
    breadth first (tree ids 0, 1, ...); votes(leaf) lists a leaf's (target or class, weight) pairs. With
    dtype double, nodes_values and the weights are the opset-3 *_as_tensor attributes."""
    n = fr["nodes"]
    a = {k: [] for k in ("nodes_treeids", "nodes_nodeids", "nodes_featureids", "nodes_modes", "nodes_values",
                         "nodes_truenodeids", "nodes_falsenodeids", "nodes_missing_value_tracks_true")}
    vote = "target" if op == "TreeEnsembleRegressor" else "class"
    v = {f"{vote}_{k}": [] for k in ("treeids", "nodeids", "ids", "weights")}
    for tree, root in enumerate(fr["roots"]):
        order, ids = [(root, 0)], {}
        for ref in order:
            ids[ref] = len(ids)
            if not ref[1]:
                order += [(n["tid"][ref[0]], n["tleaf"][ref[0]]), (n["fid"][ref[0]], n["fleaf"][ref[0]])]
        for (i, leaf), nid in ids.items():
            a["nodes_treeids"].append(tree)
            a["nodes_nodeids"].append(nid)
            if leaf:
                a["nodes_featureids"].append(0)
                a["nodes_modes"].append("LEAF")
                a["nodes_values"].append(0.0)
                a["nodes_truenodeids"].append(0)
                a["nodes_falsenodeids"].append(0)
                a["nodes_missing_value_tracks_true"].append(0)
                for target, w in votes(i):
                    for key, val in zip(("treeids", "nodeids", "ids", "weights"), (tree, nid, target, w)):
                        v[f"{vote}_{key}"].append(val)
            else:
                a["nodes_featureids"].append(n["feat"][i])
                a["nodes_modes"].append(MODE_NAMES[n["mode"][i]])
                a["nodes_values"].append(n["split"][i])
                a["nodes_truenodeids"].append(ids[(n["tid"][i], n["tleaf"][i])])
                a["nodes_falsenodeids"].append(ids[(n["fid"][i], n["fleaf"][i])])
                a["nodes_missing_value_tracks_true"].append(n["miss"][i])
    a.update(v)
    if dtype == np.float64:
        for key in ("nodes_values", f"{vote}_weights"):
            a[key + "_as_tensor"] = numpy_helper.from_array(np.array(a.pop(key), np.float64))
    a.update(attrs)
    return helper.make_node(op, ["X"], outs, domain="ai.onnx.ml", name=name, **a)


def make_model(nodes, x, outs, ml_opset=5):
    """A model of `nodes` reading X (a numpy array: its type and shape) with outputs `outs` ((name, type))."""
    x_type = helper.np_dtype_to_tensor_dtype(x.dtype)
    graph = helper.make_graph(nodes, "trees", [helper.make_tensor_value_info("X", x_type, list(x.shape))],
                              [helper.make_tensor_value_info(o, t, None) for o, t in outs])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21), helper.make_opsetid("ai.onnx.ml", ml_opset)])


def reference(model, x):
    return ReferenceEvaluator(model).run(None, {"X": x})


def onnxruntime(model, x):
    return ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, {"X": x})


def grid_x(rng, rows, features, dtype, nan=0.0):
    x = rng.choice(GRID, size=(rows, features)).astype(dtype)
    x[rng.random(x.shape) < nan] = np.nan
    return x


def test_every_mode_missing_tracking_and_membership(tmp_path):
    """Each mode alone and all mixed, NaN inputs with the missing flag set, unset and mixed, member sets,
    several targets, X float and double: against the reference."""
    rng = np.random.default_rng(0)
    for dtype in (np.float32, np.float64):
        nodes, outs = [], []
        for k, (modes, missing) in enumerate([((m,), p) for m in range(7) for p in (0.0, 1.0)] +
                                             [(range(7), 0.5), (range(6), 0.5), ((0, 6), 0.0), ((3, 6), 1.0)]):
            fr = forest(rng, 5, 4, 3, 3, modes=modes, early=0.25, missing=missing)
            nodes.append(ensemble_node(fr, f"y{k}", dtype, name=f"te{k}", missing=missing != 0 or k % 2 == 0))
            outs.append((f"y{k}", helper.np_dtype_to_tensor_dtype(np.dtype(dtype))))
        x = grid_x(rng, 96, 3, dtype, nan=0.15)
        model = make_model(nodes, x, outs)
        sub = tmp_path / np.dtype(dtype).name
        sub.mkdir()
        got = compile_and_run(sub, model, {"X": x})
        for g, w, (name, _) in zip(got, reference(model, x), outs):
            assert g.dtype == w.dtype and g.shape == w.shape, name
            np.testing.assert_allclose(g, w, **(F32 if dtype == np.float32 else F64), err_msg=name)


def test_integer_member_sets_against_onnxruntime(tmp_path):
    rng = np.random.default_rng(1)
    ints = np.array([-3.0, -1.0, 1.0, 2.0, 4.0, 7.0])
    fr = forest(rng, 6, 4, 4, 2, modes=(0, 1, 4, 5, 6), grid=ints, set_grid=ints, missing=0.5)
    x = rng.choice(ints, size=(64, 4)).astype(np.float32)
    x[rng.random(x.shape) < 0.1] = np.nan
    model = make_model([ensemble_node(fr, "Y")], x, [("Y", TensorProto.FLOAT)])
    (got,) = compile_and_run(tmp_path, model, {"X": x})
    np.testing.assert_allclose(got, onnxruntime(model, x)[0], **F32)
    np.testing.assert_allclose(got, reference(model, x)[0], **F32)


def tree_leaves(fr, root):
    """The leaves tree `root` reaches."""
    n, stack, out = fr["nodes"], [(root, 0)], []
    while stack:
        i, leaf = stack.pop()
        if leaf:
            out.append(i)
        else:
            stack += [(n["tid"][i], n["tleaf"][i]), (n["fid"][i], n["fleaf"][i])]
    return out


def test_aggregates_and_post_transforms(tmp_path):
    """Every aggregate_function with every post_transform over: three targets of which no leaf votes for the
    last (MIN / MAX give it 0); one target (only PROBIT applies); trees voting for one target each, 3, 2 and
    0 trees per target (the leaf weights regroup per target, padded). MIN / MAX with a weight equal to the
    aggregate's identity (+inf / -inf). Against ONNX Runtime; the reference where it defines the result
    (post_transform NONE; SUM, AVERAGE)."""
    rng = np.random.default_rng(2)
    # Sums of three weights in (0, 0.9): PROBIT's domain is (0, 1).
    weights = lambda rng: float(rng.uniform(0.02, 0.3))  # noqa: E731
    fr3 = forest(rng, 3, 4, 4, 2, modes=(0, 3), early=0.2, missing=0.5, weights=weights)
    fr3["n_targets"] = 3
    fr1 = forest(rng, 3, 4, 4, 1, modes=(0, 2), early=0.2, weights=weights)
    per_tree = forest(rng, 5, 3, 4, 3, modes=(1, 5), early=0.2, weights=lambda rng: float(rng.uniform(0.02, 0.18)))
    for t, root in enumerate(per_tree["roots"]):
        for leaf in tree_leaves(per_tree, root):
            per_tree["leaves"]["target"][leaf] = [0, 1, 0, 1, 0][t]
    nodes, outs, names = [], [], []
    for agg, inf in ((2, np.inf), (3, -np.inf)):
        fr_inf = {**fr3, "leaves": {"target": fr3["leaves"]["target"], "weight": [inf] + fr3["leaves"]["weight"][1:]}}
        name = f"inf_agg{agg}_post0"
        nodes.append(ensemble_node(fr_inf, name, name=name, aggregate_function=agg))
        outs.append((name, TensorProto.FLOAT))
        names.append((name, agg, 0))
    for agg in range(4):
        for post in range(5):
            for fr, tag in ((fr3, "k3"), (fr1, "k1"), (per_tree, "grouped")):
                name = f"{tag}_agg{agg}_post{post}"
                nodes.append(ensemble_node(fr, name, name=name, aggregate_function=agg, post_transform=post))
                outs.append((name, TensorProto.FLOAT))
                names.append((name, agg, post))
    x = grid_x(rng, 64, 4, np.float32, nan=0.1)
    model = make_model(nodes, x, outs)
    got = compile_and_run(tmp_path, model, {"X": x})
    ort_model = onnx.ModelProto()
    ort_model.CopyFrom(model)
    for node in ort_model.graph.node:  # ONNX Runtime's codes 1 and 2 are the other way round
        for a in node.attribute:
            if a.name == "post_transform" and a.i in (1, 2):
                a.i = 3 - a.i
    want_ort, want_ref = onnxruntime(ort_model, x), reference(model, x)
    for g, wo, wr, (name, agg, post) in zip(got, want_ort, want_ref, names):
        assert g.shape == wo.shape and g.dtype == np.float32, name
        np.testing.assert_allclose(g, wo, rtol=1e-4, atol=1e-4, err_msg=name)
        if post == 0 and agg in (0, 1):
            np.testing.assert_allclose(g, wr, **F32, err_msg=name)
    assert np.isinf(got[names.index(("k3_agg2_post4", 2, 4))][:, 2]).all()  # PROBIT(0) of the unvoted target
    assert np.isinf(got[0]).any() and (got[0][:, 2] == 0).all()  # a vote of +inf, and no vote (0)


def test_random_forest_50_trees_depth_6(tmp_path):
    """50 trees of depth 6, random features and continuous splits, 5% NaN with per-node missing tracking,
    float and double, N = 300: against the reference and ONNX Runtime."""
    rng = np.random.default_rng(3)
    for dtype in (np.float32, np.float64):
        fr = forest(rng, 50, 6, 12, 1, continuous=True, missing=0.5)
        x = rng.normal(size=(300, 12)).astype(dtype)
        x[rng.random(x.shape) < 0.05] = np.nan
        out_type = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
        model = make_model([ensemble_node(fr, "Y", dtype, aggregate_function=0)], x, [("Y", out_type)])
        sub = tmp_path / np.dtype(dtype).name
        sub.mkdir()
        (got,) = compile_and_run(sub, model, {"X": x})
        tol = F32 if dtype == np.float32 else F64
        np.testing.assert_allclose(got, reference(model, x)[0], **tol)
        np.testing.assert_allclose(got, onnxruntime(model, x)[0], **tol)


def test_float16_and_mixed_precision_splits(tmp_path):
    """X float16 (splits float16), and X float with double splits (compared in double): the reference."""
    rng = np.random.default_rng(4)
    fr = forest(rng, 6, 4, 3, 2, modes=range(7), missing=0.5)
    x16 = grid_x(rng, 64, 3, np.float16, nan=0.1)
    model = make_model([ensemble_node(fr, "Y", np.float16)], x16, [("Y", TensorProto.FLOAT16)])
    (got,) = compile_and_run(tmp_path, model, {"X": x16})
    assert got.dtype == np.float16
    np.testing.assert_allclose(got.astype(np.float32), reference(model, x16)[0].astype(np.float32), rtol=2e-3, atol=2e-3)

    # Splits just above and below values X holds exactly: a float32 comparison would round them.
    fr = forest(rng, 4, 3, 2, 1, modes=(0, 1, 2, 3), continuous=True)
    v = float(np.float32(0.1))
    fr["nodes"]["split"] = [v + 1e-12 if i % 2 else v - 1e-12 for i in range(len(fr["nodes"]["split"]))]
    node = ensemble_node(fr, "Y", np.float32, nodes_splits=numpy_helper.from_array(np.array(fr["nodes"]["split"])))
    x = np.full((4, 2), np.float32(0.1), np.float32)
    x[1] = np.nextafter(np.float32(0.1), np.float32(1))
    model = make_model([node], x, [("Y", TensorProto.FLOAT)])
    (sub := tmp_path / "mixed").mkdir()
    (got,) = compile_and_run(sub, model, {"X": x})
    np.testing.assert_allclose(got, reference(model, x)[0], **F32)


def test_one_leaf_trees_and_shared_subtrees(tmp_path):
    """A tree that is one leaf (a node whose both branches are the same leaf, the spec's encoding), two trees
    sharing a subtree, a root listed twice: against the reference (which takes a one-leaf tree's leaf at the
    root's own index: here the same)."""
    u8 = lambda v: numpy_helper.from_array(np.array(v, np.uint8))  # noqa: E731
    f32 = lambda v: numpy_helper.from_array(np.array(v, np.float32))  # noqa: E731
    node = helper.make_node(
        "TreeEnsemble", ["X"], ["Y"], domain="ai.onnx.ml", n_targets=2, tree_roots=[0, 1, 3, 3],
        # 0: leaf 0 (feature 9 is no feature of X: no test); 1: x0 <= 0 ? node 2 : leaf 2; 2: x1 > 1 ? leaf 3 : leaf 4;
        # 3: x1 == 0.5 ? node 2 : leaf 5 (node 2 shared)
        nodes_featureids=[9, 0, 1, 1], nodes_modes=u8([0, 0, 3, 4]), nodes_splits=f32([0, 0, 1, 0.5]),
        nodes_truenodeids=[0, 2, 3, 2], nodes_trueleafs=[1, 0, 1, 0], nodes_falsenodeids=[0, 2, 4, 5],
        nodes_falseleafs=[1, 1, 1, 1], leaf_targetids=[1, 0, 1, 0, 1, 1],
        leaf_weights=f32([0.75, 1.5, 2.0, -1.0, 4.0, 8.0]))
    x = np.array([[-1, 0.5], [-1, 2], [1, 0.5], [1, 3], [np.nan, np.nan]], np.float32)
    model = make_model([node], x, [("Y", TensorProto.FLOAT)])
    (got,) = compile_and_run(tmp_path, model, {"X": x})
    np.testing.assert_allclose(got, reference(model, x)[0], **F32)


def test_regressor_opsets_1_and_3(tmp_path):
    """sklearn-onnx's forms: a random forest (AVERAGE, every leaf voting for both targets, base values), a
    gradient boosting (SUM, one target, a base value, double thresholds and weights as tensors, X double),
    MIN / MAX, NaN with missing tracking; post_transforms over two targets (ONNX Runtime's): against the
    reference and ONNX Runtime."""
    rng = np.random.default_rng(5)
    fr = forest(rng, 10, 5, 6, 2, modes=range(5), early=0.2, missing=0.5)
    both = lambda leaf: [(0, fr["leaves"]["weight"][leaf]), (1, 0.5 * fr["leaves"]["weight"][leaf])]  # noqa: E731
    one = lambda leaf: [(0, fr["leaves"]["weight"][leaf])]  # noqa: E731
    reg = "TreeEnsembleRegressor"
    cases = [  # (name, dtype, votes, attrs, compare with the reference)
        ("rf", np.float32, both, dict(n_targets=2, aggregate_function="AVERAGE", base_values=[0.5, -1.0]), True),
        ("sum", np.float32, one, dict(n_targets=1, base_values=[3.0]), True),
        ("min", np.float32, both, dict(n_targets=2, aggregate_function="MIN"), True),
        ("max", np.float32, both, dict(n_targets=3, aggregate_function="MAX"), False),  # target 2: no votes
        ("logistic", np.float32, both, dict(n_targets=2, post_transform="LOGISTIC"), False),
        ("softmax", np.float32, both, dict(n_targets=2, post_transform="SOFTMAX"), False),
        ("softmax_zero", np.float32, both, dict(n_targets=2, post_transform="SOFTMAX_ZERO"), False),
        ("logistic1", np.float32, one, dict(n_targets=1, post_transform="LOGISTIC"), False),  # raw (one target)
    ]
    x = grid_x(rng, 80, 6, np.float32, nan=0.1)
    nodes = [legacy_node(fr, reg, [name], votes, dtype, name=name, **attrs) for name, dtype, votes, attrs, _ in cases]
    for opset in (1, 3):
        model = make_model(nodes, x, [(c[0], TensorProto.FLOAT) for c in cases], ml_opset=opset)
        (sub := tmp_path / f"opset{opset}").mkdir()
        got = compile_and_run(sub, model, {"X": x})
        want_ort, want_ref = onnxruntime(model, x), None
        for g, wo, (name, _, _, _, with_ref) in zip(got, want_ort, cases):
            assert g.dtype == np.float32 and g.shape == wo.shape, name
            np.testing.assert_allclose(g, wo, rtol=1e-4, atol=1e-4, err_msg=name)
            if with_ref:  # single-case models: the reference refuses any post_transform but NONE
                single = make_model([n for n in nodes if n.name == name], x, [(name, TensorProto.FLOAT)], opset)
                np.testing.assert_allclose(g, reference(single, x)[0], **F32, err_msg=name)

    # Opset 3's double tensors with X double (the regressor's output is float); the reference reads no
    # *_as_tensor attribute.
    x64 = x.astype(np.float64)
    node = legacy_node(fr, reg, ["Y"], one, np.float64, n_targets=1,
                       base_values_as_tensor=numpy_helper.from_array(np.array([0.25])))
    model = make_model([node], x64, [("Y", TensorProto.FLOAT)], ml_opset=3)
    (sub := tmp_path / "double").mkdir()
    (got,) = compile_and_run(sub, model, {"X": x64})
    assert got.dtype == np.float32
    np.testing.assert_allclose(got, onnxruntime(model, x64)[0], **F32)


def test_regressor_int64_input(tmp_path):
    """Integer X compares as float: against the reference on X as float (ONNX Runtime has no integer kernel;
    the reference sums integer X's scores in its integer type)."""
    rng = np.random.default_rng(6)
    fr = forest(rng, 4, 4, 3, 1, grid=np.array([-2.0, 0.0, 1.0, 3.0]))
    x = rng.integers(-3, 4, size=(32, 3)).astype(np.int64)
    node = legacy_node(fr, "TreeEnsembleRegressor", ["Y"], lambda leaf: [(0, fr["leaves"]["weight"][leaf])], n_targets=1)
    model = make_model([node], x, [("Y", TensorProto.FLOAT)], ml_opset=3)
    (got,) = compile_and_run(tmp_path, model, {"X": x})
    xf = x.astype(np.float32)
    np.testing.assert_allclose(got, reference(make_model([node], xf, [("Y", TensorProto.FLOAT)], ml_opset=3), xf)[0], **F32)


def test_classifier_multiclass_and_binary(tmp_path):
    """sklearn-onnx's forms: a random forest over 3 classes (every leaf voting each class's probability,
    labels 10 / 20 / 30), gradient boosting over 3 classes (one class per tree, SOFTMAX, base values), a
    binary random forest (class 0 votes the positive probability), binary gradient boosting (LOGISTIC, one
    base value, weights of both signs); labels (int64) and scores against the reference and ONNX Runtime."""
    rng = np.random.default_rng(7)
    clf = "TreeEnsembleClassifier"
    fr = forest(rng, 12, 4, 5, 3, modes=(0, 1), early=0.2, missing=0.3, continuous=True)
    probs = {leaf: rng.dirichlet(np.ones(3)) for leaf in range(len(fr["leaves"]["weight"]))}
    per_tree_class = {}
    for t, root in enumerate(fr["roots"]):  # gradient boosting: tree t scores class t % 3
        stack = [(root, 0)]
        while stack:
            i, leaf = stack.pop()
            if leaf:
                per_tree_class[i] = t % 3
            else:
                stack += [(fr["nodes"]["tid"][i], fr["nodes"]["tleaf"][i]), (fr["nodes"]["fid"][i], fr["nodes"]["fleaf"][i])]
    w = fr["leaves"]["weight"]
    cases = [  # (name, votes, attrs, compare with ONNX Runtime)
        ("rf3", lambda leaf: [(c, float(probs[leaf][c]) / 12) for c in range(3)], dict(classlabels_int64s=[10, 20, 30]), True),
        ("gb3", lambda leaf: [(per_tree_class[leaf], w[leaf])],
         dict(classlabels_int64s=[0, 1, 2], post_transform="SOFTMAX", base_values=[0.1, -0.2, 0.3]), True),
        ("rf2", lambda leaf: [(0, float(probs[leaf][0]) / 12)], dict(classlabels_int64s=[0, 1]), True),
        ("gb2", lambda leaf: [(0, w[leaf])], dict(classlabels_int64s=[3, 5], post_transform="LOGISTIC", base_values=[-0.3]), True),
        ("gb2_none", lambda leaf: [(0, w[leaf])], dict(classlabels_int64s=[0, 1]), False),
        ("gb2_softmax", lambda leaf: [(0, w[leaf])], dict(classlabels_int64s=[0, 1], post_transform="SOFTMAX"), False),
        ("gb2_softmax_zero", lambda leaf: [(0, w[leaf])], dict(classlabels_int64s=[0, 1], post_transform="SOFTMAX_ZERO"), False),
        ("rf2_probit", lambda leaf: [(0, float(probs[leaf][0]) / 12)], dict(classlabels_int64s=[0, 1], post_transform="PROBIT"), False),
        ("one_label", lambda leaf: [(0, float(probs[leaf][0]) / 12)], dict(classlabels_int64s=[1]), False),
        ("gb3_logistic", lambda leaf: [(per_tree_class[leaf], w[leaf])], dict(classlabels_int64s=[0, 1, 2], post_transform="LOGISTIC"), True),
        ("gb3_softmax_zero", lambda leaf: [(per_tree_class[leaf], w[leaf])],
         dict(classlabels_int64s=[0, 1, 2], post_transform="SOFTMAX_ZERO"), True),
    ]
    x = rng.normal(size=(100, 5)).astype(np.float32)
    x[rng.random(x.shape) < 0.05] = np.nan
    for opset in (1, 3):
        nodes, outs = [], []
        for name, votes, attrs, _ in cases:
            nodes.append(legacy_node(fr, clf, [name + "_label", name + "_scores"], votes, name=name, **attrs))
            outs += [(name + "_label", TensorProto.INT64), (name + "_scores", TensorProto.FLOAT)]
        model = make_model(nodes, x, outs, ml_opset=opset)
        (sub := tmp_path / f"opset{opset}").mkdir()
        got = compile_and_run(sub, model, {"X": x})
        want_ref, want_ort = reference(model, x), onnxruntime(model, x)
        for k, (name, _, _, with_ort) in enumerate(cases):
            label, scores = got[2 * k], got[2 * k + 1]
            assert label.dtype == np.int64 and label.shape == (100,) and scores.dtype == np.float32, name
            np.testing.assert_array_equal(label, want_ref[2 * k], err_msg=name)
            np.testing.assert_allclose(scores, want_ref[2 * k + 1], rtol=1e-4, atol=1e-5, err_msg=name)
            if with_ort:
                np.testing.assert_array_equal(label, want_ort[2 * k], err_msg=name)
                np.testing.assert_allclose(scores, want_ort[2 * k + 1], rtol=1e-4, atol=1e-5, err_msg=name)


def test_classifier_double_and_int_inputs(tmp_path):
    """X double with double thresholds and weights as tensors (scores stay float): ONNX Runtime (the
    reference reads no *_as_tensor attribute; labels 0 / 1, which ONNX Runtime answers for two classes);
    X int64 with labels 7 / 9: the reference."""
    rng = np.random.default_rng(8)
    fr = forest(rng, 5, 4, 3, 2, grid=np.array([-2.0, 0.0, 1.0, 3.0]), missing=0.5)
    votes = lambda leaf: [(0, fr["leaves"]["weight"][leaf]), (1, -fr["leaves"]["weight"][leaf])]  # noqa: E731
    for dtype, x in [(np.float64, rng.normal(size=(40, 3))), (np.int64, rng.integers(-3, 4, size=(40, 3)))]:
        node = legacy_node(fr, "TreeEnsembleClassifier", ["L", "S"], votes, np.float64 if dtype == np.float64 else np.float32,
                           classlabels_int64s=[0, 1] if dtype == np.float64 else [7, 9], post_transform="SOFTMAX")
        x = x.astype(dtype)
        model = make_model([node], x, [("L", TensorProto.INT64), ("S", TensorProto.FLOAT)], ml_opset=3)
        (sub := tmp_path / np.dtype(dtype).name).mkdir()
        label, scores = compile_and_run(sub, model, {"X": x})
        want = onnxruntime(model, x) if dtype == np.float64 else reference(model, x)
        np.testing.assert_array_equal(label, want[0])
        np.testing.assert_allclose(scores, want[1], **F32)


def _import_error(tmp_path, tag, node, x=np.zeros((2, 3), np.float32), outs=(("Y", TensorProto.FLOAT),), ml_opset=5):
    path = tmp_path / f"{tag}.onnx"
    onnx.save(make_model([node], x, list(outs), ml_opset), path)
    proc = run_cli("compile", path, "-o", tmp_path / f"{tag}.so", check=False)
    assert proc.returncode != 0, tag
    return proc.stderr


def test_malformed_attributes_are_import_errors(tmp_path):
    """Each malformed ensemble fails the import naming the node and what is wrong."""
    u8 = lambda v: numpy_helper.from_array(np.array(v, np.uint8))  # noqa: E731
    f32 = lambda v: numpy_helper.from_array(np.array(v, np.float32))  # noqa: E731
    good = dict(n_targets=1, tree_roots=[0], nodes_featureids=[0, 1], nodes_modes=u8([0, 0]), nodes_splits=f32([0, 1]),
                nodes_truenodeids=[1, 0], nodes_trueleafs=[0, 1], nodes_falsenodeids=[1, 1], nodes_falseleafs=[1, 1],
                leaf_targetids=[0, 0], leaf_weights=f32([1, 2]))

    def v5(**changes):
        return helper.make_node("TreeEnsemble", ["X"], ["Y"], domain="ai.onnx.ml", name="bad_trees", **{**good, **changes})

    cases = [
        (v5(nodes_splits=f32([0])), ["nodes_splits has 1 entries but nodes_featureids has 2"]),
        (v5(nodes_truenodeids=[5, 0]), ["node 0: nodes_truenodeids is 5, outside [0, 2)"]),
        (v5(nodes_falsenodeids=[1, 7]), ["node 1: nodes_falsenodeids is 7, outside [0, 2)", "leaf_*"]),
        (v5(nodes_falsenodeids=[1, 0], nodes_falseleafs=[1, 0]), ["cycle", "node 0"]),
        (v5(nodes_modes=u8([0, 9])), ["node 1: nodes_modes is 9, not a mode"]),
        (v5(nodes_featureids=[0, 3]), ["node 1: feature id 3 is outside [0, 3)"]),
        (v5(leaf_targetids=[0, 1]), ["leaf_targetids[1] is 1, outside [0, 1)"]),
        (v5(tree_roots=[2]), ["tree_roots[0] is 2, outside [0, 2)"]),
        (v5(aggregate_function=4), ["aggregate_function is 4"]),
        (v5(nodes_modes=u8([6, 0])), ["BRANCH_MEMBER", "membership_values is missing"]),
        (v5(nodes_modes=u8([6, 0]), membership_values=f32([1, np.nan, 2, np.nan])),
         ["membership_values holds 2 NaN-terminated sets but nodes_modes has 1 BRANCH_MEMBER nodes"]),
        (v5(nodes_modes=u8([6, 0]), membership_values=f32([1, 2])), ["no NaN terminates"]),
    ]
    for k, (node, needles) in enumerate(cases):
        err = _import_error(tmp_path, f"v5_{k}", node)
        assert "bad_trees" in err and "TreeEnsemble" in err, err
        for needle in needles:
            assert needle in err, (needle, err)

    leg = dict(nodes_treeids=[0, 0, 0], nodes_nodeids=[0, 1, 2], nodes_featureids=[0, 0, 0],
               nodes_modes=["BRANCH_LEQ", "LEAF", "LEAF"], nodes_values=[0.5, 0, 0], nodes_truenodeids=[1, 0, 0],
               nodes_falsenodeids=[2, 0, 0])
    reg = dict(leg, n_targets=1, target_treeids=[0, 0], target_nodeids=[1, 2], target_ids=[0, 0], target_weights=[1.0, 2.0])
    clf = dict(leg, classlabels_int64s=[0, 1], class_treeids=[0, 0], class_nodeids=[1, 2], class_ids=[0, 1],
               class_weights=[1.0, 2.0])

    def legacy(op, attrs, **changes):
        return helper.make_node(op, ["X"], ["Y", "Z"][: 1 if op == "TreeEnsembleRegressor" else 2], domain="ai.onnx.ml",
                                name="bad_trees", **{**attrs, **changes})

    two = (("Y", TensorProto.INT64), ("Z", TensorProto.FLOAT))
    cases = [
        (legacy("TreeEnsembleRegressor", reg, nodes_nodeids=[0, 1, 1]), ("Y",), ["tree 0 node 1 is listed twice"]),
        (legacy("TreeEnsembleRegressor", reg, nodes_falsenodeids=[3, 0, 0]), ("Y",),
         ["tree 0 node 0: its false child, node 3, is not a node of tree 0"]),
        (legacy("TreeEnsembleRegressor", reg, nodes_modes=["BRANCH_LE", "LEAF", "LEAF"]), ("Y",), ["'BRANCH_LE'"]),
        (legacy("TreeEnsembleRegressor", reg, target_ids=[0, 2]), ("Y",), ["target_ids is 2, outside [0, 1)"]),
        (legacy("TreeEnsembleRegressor", reg, target_nodeids=[1, 0]), ("Y",), ["names a branch node"]),
        (legacy("TreeEnsembleRegressor", reg, nodes_values=[0.5]), ("Y",), ["nodes_values has 1 entries"]),
        (legacy("TreeEnsembleRegressor", reg, base_values=[1.0, 2.0]), ("Y",), ["base_values has 2 values"]),
        (legacy("TreeEnsembleRegressor", reg, aggregate_function="MEDIAN"), ("Y",), ["'MEDIAN'"]),
        (legacy("TreeEnsembleClassifier", clf, post_transform="RELU"), two, ["'RELU'"]),
        (legacy("TreeEnsembleClassifier", {k: v for k, v in clf.items() if k != "classlabels_int64s"},
                classlabels_strings=["a", "b"]), two, ["classlabels_strings", "no string tensors"]),
        (legacy("TreeEnsembleClassifier", clf, class_ids=[0, 2]), two, ["class_ids is 2, outside [0, 2)"]),
    ]
    for k, (node, outs, needles) in enumerate(cases):
        types = {"Y": TensorProto.FLOAT} if len(outs) == 1 else dict(two)
        err = _import_error(tmp_path, f"legacy_{k}", node, outs=[(o, types[o]) for o in types], ml_opset=3)
        assert "bad_trees" in err and "domain ai.onnx.ml, opset 3" in err, err
        for needle in needles:
            assert needle in err, (needle, err)
