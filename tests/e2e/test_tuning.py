"""`tessera tune` and `tessera compile --db` (issue 19) on mnist-8: the tuned model matches the shipped
references; the end-to-end check's verdict decides whether compile --db builds the tuned or the default
model; a kill -9 in the middle of tuning loses no committed record and the next run resumes
without measuring a program twice; records of another target or another Tessera version are never
applied; bad budgets are clear errors. On a 3x3 conv: the Winograd tile decided by the tuner and
built by compile --db. On whole-tensor reductions: the AddRFactor rule in the space, and the tuned
library matching NumPy.

Tolerance as test_models.py: |got - ref| <= 1e-4 + 1e-3 * |ref| elementwise.
"""
import json
import os
import signal
import subprocess
import time

import numpy as np
import onnx
import pytest

from conftest import assert_close_to_reference, graph_io, read_pb, run_cli, run_outputs, tessera_bin

ATOL, RTOL = 1e-4, 1e-3


def records(db):
    """The complete record lines of a database (a torn last line is not a record)."""
    text = db.read_text() if db.exists() else ""
    lines = text.split("\n")
    return [json.loads(l) for l in lines[:-1] if l.strip()]


def kernel_records(db):
    """The records of kernels' programs: not the graph rewrite decisions (no trace; tune/rewrite_choice.h),
    which a host with an NCHWc block knob (AVX-512) records for mnist-8 too, nor the end-to-end check's
    verdicts (no trace; tune/model_check.h)."""
    return [r for r in records(db) if r["trace"] is not None]


def check_model(models_dir, so, tmp_path):
    model_dir = models_dir / "mnist-8"
    inputs, outputs = graph_io(model_dir / "model.onnx")
    for ds in sorted(p for p in model_dir.iterdir() if p.is_dir() and "data_set" in p.name):
        out = tmp_path / f"{ds.name}.npz"
        run_cli("run", so, "--input", f"{inputs[0]}={ds / 'input_0.pb'}", "--output", out)
        assert_close_to_reference(np.load(out)[outputs[0]], read_pb(ds / "output_0.pb"), f"tuned mnist-8 {ds.name}",
                                  ATOL, RTOL)


def _fnv1a(text):
    """tune::Fnv1a64Hex: FNV-1a 64 of the text's bytes, 16 hex digits."""
    h = 14695981039346656037
    for byte in text.encode():
        h = ((h ^ byte) * 1099511628211) % (1 << 64)
    return f"{h:016x}"


def _rewrite_hash(knob):
    """tune::RewriteHash: FNV-1a 64 of "rewrite <knob>"."""
    return _fnv1a("rewrite " + knob)


@pytest.fixture(scope="module")
def tuned(tmp_path_factory, models_dir):
    """mnist-8 tuned for 30 trials: (database, --report JSON)."""
    folder = tmp_path_factory.mktemp("tune")
    db, report = folder / "mnist.jsonl", folder / "report.json"
    proc = run_cli("tune", models_dir / "mnist-8" / "model.onnx", "--db", db, "--trials", 30, "--batch", 4,
                   "--threads", 1, "--report", report, timeout=600)
    assert "kernels' share of a run" in proc.stdout and "end to end: " in proc.stdout, proc.stdout
    return db, json.loads(report.read_text())


@pytest.fixture(scope="module")
def tuned_db(tuned):
    return tuned[0]


def test_tune_then_compile_matches_reference(tuned, models_dir, tmp_path):
    tuned_db, report = tuned
    recs = kernel_records(tuned_db)
    # 30 trials, each a new program, then the confirmation round: each task's best program other than
    # the hand schedule measured twice more (7 tasks, at most 3 programs each).
    programs = {(r["workload"], json.dumps(r["trace"], sort_keys=True)) for r in recs}
    assert len(programs) == 30
    assert 30 <= len(recs) <= 30 + 7 * 3 * 2
    assert all(r["target"] and r["trace"] is not None and len(r["features"]) > 0 for r in recs)
    ok = [r for r in recs if not r["error"]]
    assert len(ok) >= 25, [r["error"] for r in recs if r["error"]]
    so = tmp_path / "tuned.so"
    proc = run_cli("compile", models_dir / "mnist-8" / "model.onnx", "--db", tuned_db, "-o", so)
    check = report["model_check"]
    if check["apply"] and check["rewrites"]:
        assert "tuned schedules: 7 of 7 kernels" in proc.stdout, proc.stdout
    elif check["apply"]:  # the tuned kernels were faster with the block knob at its default
        assert "kept the graph rewrites at their defaults" in proc.stdout, proc.stdout
    else:  # the check found the tuned build slower: the default one (test below)
        assert "tuned schedules: 0 of 7 kernels" in proc.stdout, proc.stdout
    check_model(models_dir, so, tmp_path)


def test_the_end_to_end_check_decides_what_compile_builds(tuned, models_dir, tmp_path):
    """The check (driver/tune_model.h) timed the model with and without the database in 10 paired rounds
    and recorded its verdict on the tuned build's fingerprint; compile --db follows the latest verdict:
    the default build (and a note) when the tuned one was slower, the tuned build otherwise; both match
    the references."""
    tuned_db, report = tuned
    check = report["model_check"]
    assert check["checked"] and check["rounds"] == 10 and check["error"] == "", check
    assert check["default_s"] > 0 and check["tuned_s"] > 0, check
    # At the tuning's thread count (the runtime's default here) and at 1, each build timed at both;
    # the verdict's numbers are its worst count's, and it applies a build only when that build passed
    # at both (7 of 10 rounds: tune::MinWinningRounds(10), the one-sided sign test at 20 %).
    assert len(check["checked_threads"]) in (1, 2) and 1 in check["checked_threads"], check
    assert check["threads"] in check["checked_threads"], check
    assert {b["threads"] for b in check["builds"]} == set(check["checked_threads"]), check["builds"]
    if check["apply"]:
        assert check["ratio"] < 1 and check["wins"] >= 7, check
        chosen = [b for b in check["builds"] if b["rewrites"] == check["rewrites"]
                  and b["untuned_workloads"] == len(check["untuned_workloads"])
                  and b["workload_programs"] == len(check["workload_programs"])]
        assert len(chosen) == len(check["checked_threads"]) and all(b["apply"] for b in chosen), check["builds"]
    else:
        assert not all(b["apply"] for b in check["builds"]), check["builds"]  # each build failed at some count
    verdicts = [r for r in records(tuned_db) if r["workload"] == _fnv1a("model-check " + check["fingerprint"])]
    assert len(verdicts) == 1 and verdicts[0]["trace"] is None, verdicts
    assert verdicts[0]["config"]["apply"] == int(check["apply"]) and verdicts[0]["config"]["rounds"] == 10
    db = tmp_path / "verdicts.jsonl"
    db.write_text(tuned_db.read_text())
    db.with_name("verdicts.workloads.jsonl").write_text(tuned_db.with_name("mnist.workloads.jsonl").read_text())
    for apply in (0, 1, 0):  # each appended as the latest
        with db.open("a") as f:
            f.write(json.dumps({**verdicts[0], "config": {**verdicts[0]["config"], "apply": apply, "rewrites": 1},
                                "timestamp": int(time.time())}) + "\n")
        so = tmp_path / f"m{apply}.so"
        proc = run_cli("compile", models_dir / "mnist-8" / "model.onnx", "--db", db, "-o", so)
        if apply:
            assert "tuned schedules: 7 of 7 kernels" in proc.stdout, proc.stdout
        else:
            assert "tuned schedules: 0 of 7 kernels" in proc.stdout and "kept the default build" in proc.stdout, \
                proc.stdout
            assert "checked this tuned build end to end and found it not faster" in proc.stderr, proc.stderr
        check_model(models_dir, so, tmp_path)


def test_a_build_without_a_verdict_is_noted_and_built_as_its_records_say(tuned, models_dir, tmp_path):
    """The verdict names the pair of builds it timed (each kernel's tuned and default program). A new
    best record since the check (as after tuning again, or a Tessera whose default schedules changed)
    makes another build: compile --db has no verdict for it, says so on stderr with the command that
    checks it, and builds the records; the result matches the references."""
    tuned_db, _ = tuned
    db = tmp_path / "newer.jsonl"
    db.write_text(tuned_db.read_text())
    db.with_name("newer.workloads.jsonl").write_text(tuned_db.with_name("mnist.workloads.jsonl").read_text())
    programs = {}
    for r in kernel_records(db):
        if not r["error"]:
            programs.setdefault(r["workload"], {})[json.dumps(r["trace"], sort_keys=True)] = r
    workload, by_trace = next((w, p) for w, p in programs.items() if len(p) >= 2)
    # The slowest of its programs, now measured fastest: the new best.
    slowest = max(by_trace.values(), key=lambda r: sorted(r["run_secs"])[len(r["run_secs"]) // 2])
    with db.open("a") as f:
        f.write(json.dumps({**slowest, "run_secs": [1e-9, 1e-9, 1e-9], "timestamp": int(time.time())}) + "\n")
    so = tmp_path / "newer.so"
    proc = run_cli("compile", models_dir / "mnist-8" / "model.onnx", "--db", db, "-o", so)
    assert "has no end-to-end check of this tuned build" in proc.stderr and "--check-only" in proc.stderr, proc.stderr
    assert "kept the default build" not in proc.stdout, proc.stdout
    check_model(models_dir, so, tmp_path)


def test_check_only_checks_the_database_as_it_is(tuned, models_dir, tmp_path):
    """`tessera tune --check-only`: no tuning, one more verdict on the same tuned build."""
    tuned_db, report = tuned
    db = tmp_path / "again.jsonl"
    db.write_text(tuned_db.read_text())
    db.with_name("again.workloads.jsonl").write_text(tuned_db.with_name("mnist.workloads.jsonl").read_text())
    before = records(db)
    out = tmp_path / "check.json"
    run_cli("tune", models_dir / "mnist-8" / "model.onnx", "--db", db, "--check-only", "--check-rounds", 3,
            "--threads", 1, "--check-threads", "2,1", "--report", out, timeout=600)
    check = json.loads(out.read_text())["model_check"]
    assert check["checked"] and check["rounds"] == 3 and check["fingerprint"] == report["model_check"]["fingerprint"]
    assert check["checked_threads"] == [1, 2] and [b["threads"] for b in check["builds"]][:1] == [2], check
    assert all(k["threads"] in (1, 2) for k in check["kernels"]), check["kernels"]
    after = records(db)
    assert after[:len(before)] == before and len(after) == len(before) + 1
    assert after[-1]["workload"] == _fnv1a("model-check " + check["fingerprint"])
    assert after[-1]["config"]["apply"] == int(check["apply"])
    proc = run_cli("tune", models_dir / "mnist-8" / "model.onnx", "--db", db, "--check-only", "--trials", 3,
                   check=False)
    assert proc.returncode == 1 and "--check-only tunes nothing" in proc.stderr, proc.stderr
    proc = run_cli("tune", models_dir / "mnist-8" / "model.onnx", "--db", db, "--check-only", "--check-threads",
                   "1,1", check=False)
    assert proc.returncode == 1 and "list one twice" in proc.stderr, proc.stderr


def test_records_of_another_target_or_version_are_not_applied(tuned_db, models_dir, tmp_path):
    for field, value in (("target", "llvm -mtriple=x86_64-pc-linux-gnu -mcpu=skylake-avx512"), ("version", "0.0.1")):
        db = tmp_path / f"other_{field}.jsonl"
        recs = records(tuned_db)
        for r in recs:
            r[field] = value
        db.write_text("".join(json.dumps(r) + "\n" for r in recs))
        proc = run_cli("compile", models_dir / "mnist-8" / "model.onnx", "--db", db, "-o", tmp_path / "m.so")
        assert "tuned schedules: 0 of 7 kernels" in proc.stdout, (field, proc.stdout)


def test_kill_9_mid_tune_loses_no_committed_record_and_resumes(models_dir, tmp_path):
    db = tmp_path / "killed.jsonl"
    model = models_dir / "mnist-8" / "model.onnx"
    proc = subprocess.Popen([tessera_bin(), "tune", str(model), "--db", str(db), "--trials", "400", "--batch", "2",
                             "--threads", "1", "--confirm", "0"], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.time() + 300
    while len(records(db)) < 9 and time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    before = records(db)
    assert len(before) >= 9, "the tuner committed too few records before the deadline"
    run_cli("tune", model, "--db", db, "--trials", 6, "--batch", 2, "--threads", 1, "--confirm", 0, timeout=600)
    after = records(db)
    assert after[:len(before)] == before, "a committed record was lost or changed"
    # The resumed run measured new programs only: no (workload, trace) twice.
    keys = [(r["workload"], json.dumps(r["trace"], sort_keys=True)) for r in after]
    assert len(set(keys)) == len(keys), "a program was measured twice"
    assert len(after) > len(before)


@pytest.mark.parametrize("args,message", [
    ([], "needs a budget"),
    (["--time", "ten minutes"], "expected a positive duration"),
])
def test_bad_budgets_are_clear_errors(models_dir, tmp_path, args, message):
    proc = run_cli("tune", models_dir / "mnist-8" / "model.onnx", "--db", tmp_path / "d.jsonl", *args, check=False)
    assert proc.returncode == 1 and message in proc.stderr, proc.stderr


def test_the_report_says_how_candidates_were_measured(tuned, models_dir, tmp_path):
    """--threads and --cold-weights reach the measurement (tune/measure.h) and the report says so: the
    fixture's run has the default eviction threshold (1 MiB), a run with --cold-weights -1 never
    evicts; a threshold below -1 is refused before anything is tuned."""
    assert tuned[1]["measure"] == {"threads": 1, "cold_weights_bytes": 1 << 20, "timeout_s": 30.0}
    db, report = tmp_path / "warm.jsonl", tmp_path / "warm.json"
    model = models_dir / "mnist-8" / "model.onnx"
    run_cli("tune", model, "--db", db, "--trials", 2, "--threads", 1, "--cold-weights", -1, "--check-rounds", 0,
            "--report", report, timeout=600)
    assert json.loads(report.read_text())["measure"]["cold_weights_bytes"] == -1
    assert kernel_records(db), "the warm run measured nothing"
    proc = run_cli("tune", model, "--db", tmp_path / "bad.jsonl", "--trials", 2, "--cold-weights", -2, check=False)
    assert proc.returncode != 0 and "--cold-weights" in proc.stderr and "-2" in proc.stderr, proc.stderr
    assert not (tmp_path / "bad.jsonl").exists()


def test_compile_with_a_missing_database_is_a_clear_error(models_dir, tmp_path):
    proc = run_cli("compile", models_dir / "mnist-8" / "model.onnx", "--db", tmp_path / "none.jsonl", "-o",
                   tmp_path / "m.so", check=False)
    assert proc.returncode == 1 and "does not exist; create it with `tessera tune" in proc.stderr, proc.stderr


def test_tasks_filter_tunes_only_the_named_kernels(models_dir, tmp_path):
    db, report = tmp_path / "conv.jsonl", tmp_path / "r.json"
    model = models_dir / "mnist-8" / "model.onnx"
    run_cli("tune", model, "--db", db, "--trials", 6, "--batch", 3, "--threads", 1, "--tasks", "conv2d",
            "--report", report, timeout=600)
    rep = json.loads(report.read_text())
    tasks = rep["tasks"]
    assert tasks and all("conv2d" in t["name"] for t in tasks), [t["name"] for t in tasks]
    workloads = {t["workload"] for t in tasks}
    assert {r["workload"] for r in kernel_records(db)} <= workloads
    assert rep["decisions"] == []  # an AVX-512 host's block knob has kernels outside the filter: not decided
    proc = run_cli("tune", model, "--db", db, "--trials", 2, "--tasks", "no_such_kernel", check=False)
    assert proc.returncode == 1 and "no task of" in proc.stderr and "conv2d" in proc.stderr, proc.stderr



def test_the_winograd_tile_is_tuned_and_compile_builds_the_decision(tmp_path):
    """WinogradConv2d's tile is a graph rewrite knob (tune/rewrite_choice.h): the tuner measures the
    kernels of the direct conv, F(2x2, 3x3) and F(4x4, 3x3), decides by their summed best times and
    records the decision; `compile --db` builds the latest decision (the WinogradConv2d step of
    --dump-ir), and every value matches a float64 NumPy conv (1e-4). On an AVX-512 host the NCHWc
    block is a knob too (AlterOpLayout.block, 16 or 32)."""
    from test_winograd_dilated_grouped import TOL, _model, _reference

    model, wt, bias = _model(1, 32, 16, 16, 32, 1, [1, 1, 1, 1], residual=True)
    onnx_path, db, report = tmp_path / "conv.onnx", tmp_path / "t.jsonl", tmp_path / "r.json"
    onnx.save(model, onnx_path)
    # 9 tasks (the model as built, the direct conv's, F(4x4)'s; more with the block knob): the warm-up
    # round measures 3 programs of each.
    proc = run_cli("tune", onnx_path, "--db", db, "--trials", 60, "--batch", 3, "--threads", 1, "--report", report,
                   "--check-rounds", 0, timeout=600)  # the builds below are the decisions', not the check's
    assert "graph rewrite decisions" in proc.stdout, proc.stdout
    rep = json.loads(report.read_text())
    knob = "WinogradConv2d.tile[data 1x2x16x16x16, kernel 2x2x3x3x16x16, padding 1x1x1x1, dilation 1, groups 1]"
    block = "AlterOpLayout.block"
    assert {d["knob"] for d in rep["decisions"]} - {block} == {knob}
    for decision in rep["decisions"]:
        costs = {int(v): secs for v, secs in decision["cost_secs"].items()}
        assert set(costs) == ({0, 2, 4} if decision["knob"] == knob else {16, 32})
        assert decision["fallback"] == (2 if decision["knob"] == knob else 16)
        assert all(secs is not None and secs > 0 for secs in costs.values()), costs  # every value's kernels measured
        assert decision["value"] == min(costs, key=costs.get)
    # The model as built (F(2x2)) and the other values' kernels, labelled.
    labels = {t["rewrite"] for t in rep["tasks"]}
    assert {"", f"{knob}=0", f"{knob}=4"} <= labels <= {"", f"{knob}=0", f"{knob}=4", f"{block}=32"}, labels
    decisions = {r["workload"]: r for r in records(db) if r["trace"] is None}
    assert {_rewrite_hash(d["knob"]): d["value"] for d in rep["decisions"]} == \
        {w: r["config"]["value"] for w, r in decisions.items()}

    x = np.random.default_rng(3).standard_normal((1, 32, 16, 16)).astype(np.float32)
    want = _reference(x, wt, bias, 1, [1, 1, 1, 1], True)
    template = decisions[_rewrite_hash(knob)]
    for value in (0, 2, 4):  # each decision appended as the latest, the block (if a knob here) at 16
        with db.open("a") as f:
            for k, v in ((block, 16), (knob, value)):
                f.write(json.dumps({**template, "workload": _rewrite_hash(k), "config": {"value": v},
                                    "timestamp": int(time.time())}) + "\n")
        so, dump = tmp_path / f"m{value}.so", tmp_path / f"ir{value}"
        run_cli("compile", onnx_path, "--db", db, "-o", so, "--dump-ir", dump)
        step = next(p for p in dump.iterdir() if p.name.endswith("_WinogradConv2d.txt")).read_text()
        assert ("winograd_output_transform(" in step) == (value != 0), value
        assert ("tile_size=4" in step) == (value == 4), value
        got, _ = run_outputs(tmp_path, so, {"x": x}, f"v{value}")
        np.testing.assert_allclose(got["y"], want, **TOL, err_msg=f"Winograd tile {value}")


def test_a_reduction_with_few_outputs_is_tuned_over_the_rfactor_rule(tmp_path):
    """A sum of a [256, 4096] tensor to one number and the maxima of its 4 row blocks: reductions with
    fewer outputs than the parallel extent, which MetaSchedule's AddRFactor rule (topi/x86/add_rfactor.h)
    splits into partial reductions (the default here, "<block>.rule" 2). The tuner measures several of the
    rule's splits; every measured program computed what the default does (the measure checks it: no
    record has an error), and `compile --db` builds a library that matches float64 NumPy."""
    from onnx import TensorProto, helper

    x_info = helper.make_tensor_value_info("x", TensorProto.FLOAT, [256, 4096])
    nodes = [helper.make_node("ReduceSum", ["x"], ["total"], keepdims=0),
             helper.make_node("Reshape", ["x", "blocks"], ["xb"]),
             helper.make_node("ReduceMax", ["xb"], ["block_max"], axes=[1, 2], keepdims=0)]
    blocks = helper.make_tensor("blocks", TensorProto.INT64, [3], [4, 64, 4096])
    graph = helper.make_graph(nodes, "g", [x_info],
                              [helper.make_tensor_value_info("total", TensorProto.FLOAT, []),
                               helper.make_tensor_value_info("block_max", TensorProto.FLOAT, [4])], [blocks])
    onnx_path, db = tmp_path / "reduce.onnx", tmp_path / "t.jsonl"
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)]), onnx_path)
    run_cli("tune", onnx_path, "--db", db, "--trials", 24, "--batch", 4, "--threads", 2, "--check-rounds", 0,
            timeout=600)
    measured = kernel_records(db)
    assert [r["error"] for r in measured if r["error"]] == []
    splits = {r["config"][k] for r in measured for k in r["config"] if k.endswith(".rfactor_split")}
    assert len(splits) >= 2, [r["config"] for r in measured]  # the rule's space searched, not just its fallback
    so = tmp_path / "m.so"
    run_cli("compile", onnx_path, "--db", db, "-o", so)
    x = np.random.default_rng(5).uniform(0, 1, (256, 4096)).astype(np.float32)
    got, _ = run_outputs(tmp_path, so, {"x": x}, "tuned")
    np.testing.assert_allclose(got["total"], x.astype(np.float64).sum(), rtol=1e-5)
    np.testing.assert_array_equal(got["block_max"], x.reshape(4, -1).max(axis=1))
