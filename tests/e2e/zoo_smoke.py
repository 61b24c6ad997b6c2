"""The model zoo's CI smoke test (issue 18): five zoo models of different families (bench/zoo/models.py
SMOKE), exported at opsets 13 and 17 with random weights, must compile and match ONNX Runtime.

Runs bench/zoo/setup.sh first (the zoo's own Python environment: torch 2.14.1, torchvision 0.29.1,
transformers; idempotent), then `bench/zoo/run --models smoke --no-timing` into a temporary results
directory. The full zoo, with timings, is `bench/zoo/run` (not in CI)."""
import json
import os
import pathlib
import subprocess
import sys

ROOT = pathlib.Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "bench" / "zoo"))
import models  # noqa: E402


def test_zoo_smoke(tmp_path):
    subprocess.run(["bash", str(ROOT / "bench" / "zoo" / "setup.sh")], check=True, timeout=1800)
    env = dict(os.environ)
    subprocess.run([sys.executable, str(ROOT / "bench" / "zoo" / "run"), "--models", "smoke", "--opsets", "13,17",
                    "--no-timing", "--results", str(tmp_path)], check=True, timeout=1800, env=env)
    rows = json.loads((tmp_path / "zoo.json").read_text())
    assert {(r["model"], r["opset"]) for r in rows} == {(m, o) for m in models.SMOKE for o in (13, 17)}
    bad = [f"{r['model']} opset {r['opset']}: " + (r.get("export_error") or r.get("compile_error") or r.get("run_error")
                                                  or f"max abs err {r.get('max_abs_err')}")
           for r in rows if not (r["compiles"] and r["matches"])]
    assert not bad, "zoo models that do not compile or match ONNX Runtime:\n" + "\n".join(bad)
