"""Exports one zoo model to ONNX and records its reference: run by bench/zoo/run (zoo Python).

    python bench/zoo/export.py NAME OPSET OUTDIR

Writes OUTDIR/model.onnx (torch.onnx.export with the TorchScript exporter, dynamo=False: the
dynamo exporter emits opset 18 and cannot convert down to 13 / 17), OUTDIR/<input>.npy (the
seeded example inputs), OUTDIR/ref.npz (ONNX Runtime's outputs, CPU provider, by output name)
OUTDIR/ref64.npz (the torch module run in float64: the ground truth that tells float32 rounding
from errors in deep networks) and OUTDIR/meta.json (parameters, operator types, export
seconds). Exits 1 with the reason on
stderr when the export or ONNX Runtime fails.
"""
import json
import pathlib
import sys
import time
import warnings

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parent))
import models  # noqa: E402


def main():
    name, opset, out = sys.argv[1], int(sys.argv[2]), pathlib.Path(sys.argv[3])
    out.mkdir(parents=True, exist_ok=True)
    import onnx
    import onnxruntime as ort
    import torch

    warnings.filterwarnings("ignore")
    module, inputs, in_names, out_names = models.build(name)
    params = sum(p.numel() for p in module.parameters())
    if params > models.MAX_PARAMS:
        print(f"{name} has {params} parameters (> {models.MAX_PARAMS}): not in the zoo", file=sys.stderr)
        sys.exit(2)
    # nn.MultiheadAttention's inference fast path (torchvision's ViT) is one fused aten op that the
    # TorchScript exporter cannot convert; the regular path exports as MatMul / Softmax.
    if hasattr(torch.backends, "mha"):
        torch.backends.mha.set_fastpath_enabled(False)
    t0 = time.perf_counter()
    with torch.inference_mode():
        torch.onnx.export(module, inputs, str(out / "model.onnx"), opset_version=opset, dynamo=False,
                          input_names=in_names, output_names=out_names, do_constant_folding=True)
    export_s = time.perf_counter() - t0
    model = onnx.load(str(out / "model.onnx"))
    feeds = {}
    for n, t in zip(in_names, inputs):
        feeds[n] = t.numpy()
        np.save(out / f"{n}.npy", feeds[n])
    # Exported graphs may drop unused inputs (e.g. an all-ones attention mask folded away).
    graph_inputs = [i.name for i in model.graph.input]
    feeds = {k: v for k, v in feeds.items() if k in graph_inputs}
    sess = ort.InferenceSession(str(out / "model.onnx"), providers=["CPUExecutionProvider"])
    ref = sess.run(None, feeds)
    np.savez(out / "ref.npz", **{o.name: r for o, r in zip(sess.get_outputs(), ref)})
    try:
        with torch.no_grad():
            m64 = module.double()
            y64 = m64(*[t.double() if t.is_floating_point() else t for t in inputs])
        y64 = [y64] if isinstance(y64, torch.Tensor) else list(y64)
        np.savez(out / "ref64.npz", **{o.name: y.numpy() for o, y in zip(sess.get_outputs(), y64)})
    except Exception as e:  # noqa: BLE001 - a model without a float64 path keeps the ORT comparison only
        print(f"no float64 reference: {type(e).__name__}: {str(e)[:200]}", file=sys.stderr)
    meta = {"model": name, "family": models.family(name), "opset": opset, "params": int(params),
            "ops": sorted({n.op_type for n in model.graph.node}), "nodes": len(model.graph.node),
            "inputs": list(feeds), "outputs": [o.name for o in sess.get_outputs()], "export_s": round(export_s, 2)}
    (out / "meta.json").write_text(json.dumps(meta, indent=1))


if __name__ == "__main__":
    try:
        main()
    except SystemExit:
        raise
    except Exception as e:  # noqa: BLE001 - the reason is the result
        print(f"{type(e).__name__}: {str(e)[:600]}", file=sys.stderr)
        sys.exit(1)
