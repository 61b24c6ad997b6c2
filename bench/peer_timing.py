"""Timing helpers the operator benchmarks share (bench/run_reductions, bench/run_attention): a compiled Tessera library through
`tessera run --bench`, and an ONNX Runtime (CPU) session, each the median of N timed runs after a warm-up."""
import statistics
import subprocess
import time


def tessera_ms(tessera, so, inputs, threads, repeats):
    """Median ms per run of library `so` (`tessera run --bench repeats --threads threads`); `inputs` maps
    input names to .npy files; `tessera` is the CLI binary."""
    args = [a for name, f in inputs.items() for a in ("--input", f"{name}={f}")]
    out = subprocess.run([str(tessera), "run", str(so), *args, "--bench", str(repeats), "--threads", str(threads)],
                         capture_output=True, text=True, check=True).stdout
    line = [l for l in out.splitlines() if "median" in l][-1]
    return float(line.split("median")[1].split("ms")[0])


def ort_ms(path, feeds, threads, repeats):
    """Median ms per run of the ONNX model `path` in ONNX Runtime (intra_op_num_threads = threads) on
    `feeds` (name -> numpy array), after one warm-up run."""
    import onnxruntime as ort

    so = ort.SessionOptions()
    so.intra_op_num_threads = threads
    so.inter_op_num_threads = 1
    sess = ort.InferenceSession(str(path), so, providers=["CPUExecutionProvider"])
    sess.run(None, feeds)
    times = []
    for _ in range(repeats):
        t = time.perf_counter()
        sess.run(None, feeds)
        times.append((time.perf_counter() - t) * 1e3)
    return statistics.median(times)
