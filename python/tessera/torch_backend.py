"""``torch.compile(model, backend="tessera")``: a TorchDynamo backend that compiles each captured FX
graph with Tessera and runs the graphs it cannot compile eagerly.

Per graph, the backend:

1. freezes the graph's parameters and buffers (TorchDynamo passes them as graph inputs) into the
   model as constants, so that Tessera folds and re-lays them out at compile time, as for an ONNX
   model; the compiled graph checks at every call that it got the same parameter objects, unchanged
   (``Tensor._version``), and runs eagerly, with a warning, once they changed;
2. exports the graph to ONNX with :func:`tessera._compile.export_torch` (torch's TorchScript-based
   exporter) and compiles it for this machine;
3. checks the compiled graph against eager PyTorch on the example inputs (max |diff| <= 1e-3 *
   (1 + max |eager|)) before using it.

A graph that fails any step, or that Tessera does not handle (symbolic shapes: compile with
``dynamic=False``; non-tensor inputs or outputs; CUDA tensors; autograd: run under
``torch.no_grad()`` or ``torch.inference_mode()``), runs eagerly, and a one-line warning says why.
"""
from __future__ import annotations

import re
import warnings
from typing import Any, Callable, Sequence

_WEIGHT_SOURCE = re.compile(r"\._(parameters|buffers)\[")


def _first_line(e: BaseException) -> str:
    text = str(e).strip().splitlines()
    return f"{type(e).__name__}: {text[0] if text else ''}"[:300]


class _Fallback(Exception):
    pass


def _is_weight(node: Any, example: Any) -> bool:
    import torch

    if isinstance(example, torch.nn.Parameter):
        return True
    source = getattr(node.meta.get("grapharg"), "source", None)
    name = getattr(source, "name", None)
    name = name() if callable(name) else name
    return bool(name and _WEIGHT_SOURCE.search(name))


class _TesseraGraph:
    """One FX graph compiled by Tessera; called by TorchDynamo with the graph's inputs."""

    def __init__(self, gm: Any, example_inputs: Sequence[Any]):
        import torch

        from ._compile import compile as tessera_compile
        from ._compile import export_torch

        self._gm = gm
        self._eager_warned = False
        placeholders = [n for n in gm.graph.nodes if n.op == "placeholder"]
        if len(placeholders) != len(example_inputs):
            raise _Fallback("the graph's inputs do not match its example inputs")
        for x in example_inputs:
            if not isinstance(x, torch.Tensor):
                raise _Fallback(f"an input is a {type(x).__name__}, not a tensor (symbolic shapes: use dynamic=False)")
            if x.device.type != "cpu":
                raise _Fallback(f"an input is on {x.device}; Tessera compiles for the CPU")
        weights = {i: x for i, (n, x) in enumerate(zip(placeholders, example_inputs)) if _is_weight(n, x)}
        if torch.is_grad_enabled() and any(x.requires_grad for x in example_inputs):
            raise _Fallback("autograd is on; Tessera compiles inference graphs (use torch.no_grad())")
        self._weights = weights
        self._versions = {i: w._version for i, w in weights.items()}
        self._inputs = [i for i in range(len(example_inputs)) if i not in weights]

        frozen = _Frozen(gm, weights, len(example_inputs))
        real = tuple(example_inputs[i] for i in self._inputs)
        with torch.no_grad():
            expected = gm(*example_inputs)
        self._sequence = isinstance(expected, (tuple, list))
        expected = list(expected) if self._sequence else [expected]
        if not all(isinstance(t, torch.Tensor) for t in expected):
            raise _Fallback("an output is not a tensor")
        if not real:
            raise _Fallback("the graph has no tensor inputs (a constant)")
        self._model = tessera_compile(export_torch(frozen, real))
        got = self._run(real)
        for e, g in zip(expected, got):
            if e.shape != g.shape or e.dtype != g.dtype:
                raise _Fallback(f"an output is {g.dtype} {list(g.shape)} where eager gives {e.dtype} {list(e.shape)}")
            if e.is_floating_point():
                tol = 1e-3 * (1 + float(e.abs().max())) if e.numel() else 0
                if e.numel() and float((e - g).abs().max()) > tol:
                    raise _Fallback(f"outputs differ from eager by {float((e - g).abs().max()):.3g} (> {tol:.3g})")
            elif not torch.equal(e, g):
                raise _Fallback("integer outputs differ from eager")

    def _run(self, real: Sequence[Any]) -> list[Any]:
        import torch

        outs = self._model(*real)
        outs = list(outs) if isinstance(outs, tuple) else [outs]
        return [o if isinstance(o, torch.Tensor) else torch.from_numpy(o) for o in outs]

    def __call__(self, *args: Any) -> Any:
        for i, w in self._weights.items():
            if args[i] is not w or w._version != self._versions[i]:
                if not self._eager_warned:
                    warnings.warn("tessera: a parameter or buffer changed since the graph was compiled; running it "
                                  "eagerly (compile again to use Tessera)", stacklevel=2)
                    self._eager_warned = True
                return self._gm(*args)
        outs = self._run([args[i] for i in self._inputs])
        return tuple(outs) if self._sequence else outs[0]


def _Frozen(gm: Any, weights: dict, n: int) -> Any:
    """gm with its weights as buffers (ONNX initializers) and only the real inputs as arguments."""
    import torch

    class Frozen(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.gm = gm
            for i, w in weights.items():
                self.register_buffer(f"w{i}", w.detach())

        def forward(self, *xs: Any) -> Any:
            it = iter(xs)
            args = [getattr(self, f"w{i}") if i in weights else next(it) for i in range(n)]
            out = self.gm(*args)
            return tuple(out) if isinstance(out, list) else out

    return Frozen()


def tessera_backend(gm: Any, example_inputs: Sequence[Any], **kwargs: Any) -> Callable[..., Any]:
    """The TorchDynamo backend (``torch.compile(model, backend="tessera")``)."""
    try:
        return _TesseraGraph(gm, example_inputs)
    except Exception as e:  # any failure: this graph runs eagerly
        ops = sum(1 for n in gm.graph.nodes if n.op in ("call_function", "call_method", "call_module"))
        reason = str(e) if isinstance(e, _Fallback) else _first_line(e)
        warnings.warn(f"tessera: running a graph of {ops} ops eagerly: {reason}", stacklevel=2)
        return gm.forward


def register() -> None:
    """Registers backend="tessera" with torch.compile (idempotent)."""
    from torch._dynamo import list_backends, register_backend

    if "tessera" not in list_backends(exclude_tags=()):
        register_backend(compiler_fn=tessera_backend, name="tessera")
