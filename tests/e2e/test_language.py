"""Relay as a language from the command line (issue 14): a program in the graph IR's text form (.ir:
algebraic data types, match, global functions that recurse, closures) compiled with `tessera compile`
and run with `tessera run` (the VM), against numpy; a malformed program is one clear error and exit 1."""
import numpy as np

from conftest import run_cli, run_outputs

PROGRAM = """
type List[A] {
  Cons(A, List[A]),
  Nil,
}

// [n x, (n - 1) x, ..., x]: recursion that is no loop.
def @build(%n: Tensor[(), int64], %x: Tensor[(n4, 4), float32]) -> List[Tensor[(n4, 4), float32]] {
  if (equal(%n, 0i64)) { Nil() } else { Cons(multiply(%x, cast(%n, dtype="float32")), @build(subtract(%n, 1i64), %x)) }
}

def @fold(%f: fn (Tensor[(n4, 4), float32], Tensor[(n4, 4), float32]) -> Tensor[(n4, 4), float32],
          %acc: Tensor[(n4, 4), float32], %l: List[Tensor[(n4, 4), float32]]) -> Tensor[(n4, 4), float32] {
  match (%l) {
    Cons(%h, %t) => @fold(%f, %f(%acc, %h), %t),
    Nil => %acc,
  }
}

def @main(%x: Tensor[(n4, 4), float32], %n: Tensor[(), int64], %w: Tensor[(n4, 4), float32]) {
  // A closure that captures %w: acc + h * w.
  let %axpy = fn (%a: Tensor[(n4, 4), float32], %h: Tensor[(n4, 4), float32]) { add(%a, multiply(%h, %w)) };
  (@fold(%axpy, multiply(%x, 0f), @build(%n, %x)), exp(%x))
}
"""


def test_a_text_program_with_adts_recursion_and_closures_compiles_and_runs(tmp_path):
    src, so = tmp_path / "prog.ir", tmp_path / "prog.so"
    src.write_text(PROGRAM)
    run_cli("compile", src, "-o", so)
    # main and the VM functions it calls (@build, @fold, the closure %axpy), with their kernels (main: 2,
    # @build: the test, the decrement and the scaling, %axpy: 1).
    info = run_cli("inspect", so).stdout
    assert "in main and 3 functions" in info and "kernels: 6 distinct" in info, info
    rng = np.random.default_rng(0)
    for rows, n in [(1, 0), (3, 1), (2, 10), (5, 40)]:  # the symbolic extent n4 takes any value
        x = rng.standard_normal((rows, 4)).astype(np.float32)
        w = rng.standard_normal((rows, 4)).astype(np.float32)
        got, _ = run_outputs(tmp_path, so, {"x": x, "n": np.array(n, np.int64), "w": w}, f"r{rows}_{n}")
        np.testing.assert_allclose(got["output0"], x * w * (n * (n + 1) / 2), rtol=1e-5, atol=1e-5)
        np.testing.assert_allclose(got["output1"], np.exp(x), rtol=1e-6)


def test_a_malformed_program_is_one_error_naming_line_and_column(tmp_path):
    src = tmp_path / "bad.ir"
    src.write_text("def @main(%x: Tensor[(4,), float32]) {\n  match (%x) { Cons(%h, _) => %h }\n}\n")
    proc = run_cli("compile", src, "-o", tmp_path / "bad.so", check=False)
    assert proc.returncode == 1, proc
    assert "bad.ir:2:16: expected a pattern" in proc.stderr, proc.stderr
    src.write_text("def @main(%x: Tensor[(4,), float32]) {\n  @missing(%x)\n}\n")
    proc = run_cli("compile", src, "-o", tmp_path / "bad.so", check=False)
    assert proc.returncode == 1 and "unknown global function @missing" in proc.stderr, proc.stderr
    proc = run_cli("compile", src, "-o", tmp_path / "bad.so", "--input-shape", "x=4", check=False)
    assert proc.returncode == 1 and "--input-shape, --dynamic and --input-value apply to ONNX models" in proc.stderr
