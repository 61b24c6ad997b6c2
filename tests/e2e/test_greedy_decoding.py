"""Greedy decoding exported as an ONNX Loop (bench/torch_models.py GreedyDecoder: a scripted `while`
loop whose exit is the end token or max_len), compiled once and run by the VM as a loop
(driver/vm_codegen.h), against ONNX Runtime and eager PyTorch: every max_len from 0 to the buffer's
64, and an early exit on the end token (a variant whose output bias makes it the argmax)."""
import sys

import numpy as np
import pytest

from conftest import ROOT, run_cli, run_outputs

torch = pytest.importorskip("torch")  # scripts/setup.sh installs torch==2.13.0
sys.path.insert(0, str(ROOT / "bench"))
import torch_models as tm  # noqa: E402


def _export(tmp_path, eos_first):
    import warnings
    torch.manual_seed(tm.SEED)
    module = tm.GreedyDecoder().eval()
    if eos_first:
        with torch.no_grad():
            module.out.bias[tm.GREEDY_EOS] = 1e3
    scripted = torch.jit.script(module)
    path = tmp_path / "greedy.onnx"
    args = tm.example_inputs("greedy-decoder")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(scripted, args, str(path), input_names=["h", "tok", "max_len"],
                          output_names=["tokens", "h_out"], opset_version=17, dynamo=False)
    return scripted, path


@pytest.mark.parametrize("eos_first", [False, True])
def test_greedy_decoding_loop_matches_onnxruntime_and_torch(tmp_path, eos_first):
    import onnx
    import onnxruntime as ort
    scripted, path = _export(tmp_path, eos_first)
    assert [n.op_type for n in onnx.load(str(path)).graph.node].count("Loop") == 1
    so = tmp_path / "greedy.so"
    run_cli("compile", path, "-o", so)
    sess = ort.InferenceSession(str(path), providers=["CPUExecutionProvider"])
    gen = torch.Generator().manual_seed(7)
    for k, max_len in enumerate([0, 1, 2, 17, 48, 64]):
        h = torch.randn(1, tm.GREEDY_HIDDEN, generator=gen)
        tok = torch.tensor([k + 2])
        feeds = {"h": h.numpy(), "tok": tok.numpy(), "max_len": np.array(max_len, np.int64)}
        got, _ = run_outputs(tmp_path, so, feeds, f"r{k}")
        tokens, h_out = got["tokens"], got["h_out"]
        want_tokens, want_h = sess.run(None, feeds)
        np.testing.assert_array_equal(tokens, want_tokens, err_msg=f"max_len {max_len}")
        np.testing.assert_allclose(h_out, want_h, atol=1e-4, rtol=1e-3, err_msg=f"max_len {max_len}")
        with torch.no_grad():
            ref_tokens, _ = scripted(h, tok, torch.tensor(max_len))
        np.testing.assert_array_equal(tokens, ref_tokens.numpy(), err_msg=f"max_len {max_len}")
        if eos_first:  # the end token is the first token: one step, then the loop exits
            assert tokens[0] == (tm.GREEDY_EOS if max_len > 0 else 0) and not tokens[1:].any(), tokens
