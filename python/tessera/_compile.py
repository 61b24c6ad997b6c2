"""tessera.compile and tessera.tune: a model (ONNX file, bytes, ModelProto or torch.nn.Module) in."""
from __future__ import annotations

import inspect
import io
import os
import re
import sys
import tempfile
import warnings
from typing import Any, Callable, Mapping, Sequence

from . import _core
from ._model import CompiledModel, TuneReport

#: The ONNX opset torch.nn.Module models are exported with.
TORCH_EXPORT_OPSET = 17


def _is_torch_module(model: Any) -> bool:
    return any(c.__module__.startswith("torch.nn") and c.__name__ == "Module" for c in type(model).__mro__)


def export_torch(module: Any, example_inputs: Any, opset: int = TORCH_EXPORT_OPSET) -> bytes:
    """A torch.nn.Module as ONNX bytes, through torch's TorchScript-based exporter
    (``torch.onnx.export(..., dynamo=False)``, eval mode, constants folded): it needs no extra
    package and gives the plain opset-17 graphs Tessera's importer reads. Input names are the
    parameters of ``forward`` (``input_i`` past them); outputs are ``output_i`` (one eager run of
    the module counts them)."""
    import torch

    if example_inputs is None:
        raise _core.UserError("compiling a torch.nn.Module needs example_inputs (a tensor or a tuple of tensors) "
                              "to trace it with")
    if isinstance(example_inputs, torch.Tensor):
        example_inputs = (example_inputs,)
    example_inputs = tuple(example_inputs)
    try:
        params = [p for p in inspect.signature(module.forward).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)]
    except (TypeError, ValueError):
        params = []
    names = [params[i].name if i < len(params) else f"input_{i}" for i in range(len(example_inputs))]
    with torch.no_grad():
        sample = module(*example_inputs)
    num_outputs = len(sample) if isinstance(sample, (tuple, list)) else 1
    buf = io.BytesIO()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # the legacy exporter's deprecation notice
        with torch.no_grad():
            torch.onnx.export(module, example_inputs, buf, dynamo=False, opset_version=opset,
                              training=torch.onnx.TrainingMode.EVAL, do_constant_folding=True, input_names=names,
                              output_names=[f"output_{i}" for i in range(num_outputs)])
    return buf.getvalue()


def _model_source(model: Any, example_inputs: Any) -> bytes | str:
    """The model as the C++ importer takes it: a path or serialized ModelProto bytes."""
    if isinstance(model, (str, os.PathLike)):
        return os.fspath(model)
    if isinstance(model, (bytes, bytearray, memoryview)):
        return bytes(model)
    if hasattr(model, "SerializeToString") and hasattr(model, "graph"):  # onnx.ModelProto
        return model.SerializeToString()
    if _is_torch_module(model):
        return export_torch(model, example_inputs)
    raise TypeError(f"tessera.compile: cannot compile a {type(model).__name__}; pass a path to an .onnx file, "
                    "its bytes, an onnx.ModelProto or a torch.nn.Module (with example_inputs)")


def _byoc_list(byoc: str | Sequence[str] | None) -> list[str]:
    if byoc is None:
        return []
    if isinstance(byoc, str):
        return [b.strip() for b in byoc.split(",") if b.strip()]
    return list(byoc)


def _shapes(input_shapes: Mapping[str, Sequence[int]] | None) -> dict[str, list[int]]:
    return {name: [int(d) for d in dims] for name, dims in (input_shapes or {}).items()}


def compile(model: Any, target: str = "native", opt_level: int = 3, db: str | os.PathLike | None = None,
            byoc: str | Sequence[str] | None = None, input_shapes: Mapping[str, Sequence[int]] | None = None,
            example_inputs: Any = None, disabled_passes: Sequence[str] = (),
            input_values: Mapping[str, Any] | None = None) -> CompiledModel:
    """Compiles a model for `target` and loads it.

    model: a path to an ``.onnx`` file, its bytes, an ``onnx.ModelProto``, or a ``torch.nn.Module``
      (then `example_inputs`, a tensor or tuple of tensors, gives the input shapes; exported with
      :func:`export_torch`).
    target: ``"native"`` (this machine), a tag (``"avx2"``, ``"avx512"``, ``"aarch64"``) or
      ``"llvm -mtriple=... -mcpu=... -mattr=..."``. A model for another machine can be exported
      (``export_library``) but not run here: then this raises UserError; use the ``tessera compile``
      CLI for cross-compilation.
    opt_level: 0 (one kernel per operator, no folding) to 3 (everything).
    db: a tuning database written by :func:`tune`: kernels get their best tuned schedule.
    byoc: external codegens to offload to, ``"dnnl"``, ``"csource"`` or both (docs/byoc.md).
    input_shapes: static shapes for inputs with symbolic dimensions, ``{"input_ids": [1, 128]}``.
    input_values: inputs to specialize the model for, ``{"sr": 16000}`` (a number, or an array of the
      input's dtype and shape): folded at compile time (an If on it keeps one branch); the input stays
      an input and a call with another value raises UserError (``tessera compile --input-value``).

    Raises :class:`tessera.UnsupportedError` naming the ONNX node, op and opset for what Tessera
    cannot compile, :class:`tessera.UserError` for bad files or options.
    """
    source = _model_source(model, example_inputs)
    library_dir = tempfile.mkdtemp(prefix="tessera-")
    library = os.path.join(library_dir, "model.so")
    try:
        summary = _core.compile(source, library, target, opt_level, os.fspath(db) if db else "", _byoc_list(byoc),
                                _shapes(input_shapes), list(disabled_passes), _values(input_values))
        for dim, value in summary.get("bound_dims", {}).items():
            warnings.warn(f"tessera: symbolic dimension '{dim}' bound to {value} (set it with input_shapes=)",
                          stacklevel=2)
        return CompiledModel(_core.Session(library), library_dir=library_dir, summary=summary)
    except BaseException:
        import shutil

        shutil.rmtree(library_dir, ignore_errors=True)
        raise


def _values(input_values: Mapping[str, Any] | None) -> dict:
    """{name: C-contiguous numpy array}: a Python int is an int64 scalar, a float a float64 one (the
    importer converts such a scalar to the input's dtype when exact)."""
    import numpy as np

    return {str(k): np.asarray(v, order="C") for k, v in (input_values or {}).items()}  # 0-d stays 0-d


def parse_duration(text: str | float | int) -> float:
    """600, "600", "90s", "10m", "1.5h" -> seconds. UserError otherwise."""
    if isinstance(text, (int, float)) and not isinstance(text, bool):
        seconds = float(text)
    else:
        m = re.fullmatch(r"\s*([0-9]*\.?[0-9]+)\s*([smh]?)\s*", str(text))
        seconds = float(m.group(1)) * {"": 1, "s": 1, "m": 60, "h": 3600}[m.group(2)] if m else -1.0
    if not seconds > 0:
        raise _core.UserError(f"time={text!r}: expected a positive duration such as 600, \"90s\", \"10m\" or \"1.5h\"")
    return seconds


def _progress_printer(progress: bool | Callable[[dict], None] | None) -> tuple[Callable[[dict], None] | None, Any]:
    if callable(progress):
        return progress, None
    if progress is False or (progress is None and not sys.stderr.isatty()):
        return None, None
    try:
        from tqdm import tqdm
    except ImportError:
        return None, None
    bar = tqdm(total=1000, unit="‰", file=sys.stderr, dynamic_ncols=True, bar_format="{l_bar}{bar}| {elapsed}<{remaining}{postfix}")

    def update(p: dict) -> None:
        bar.n = int(p["fraction"] * 1000)
        bar.set_description(f"task {p['task'] + 1}/{p['tasks']}", refresh=False)
        bar.set_postfix_str(f"{p['name'][:28]} trials {p['task_trials']} best {p['best_gflops']:.1f} GFLOP/s")
    return update, bar


def tune(model: Any, time: str | float | None = "10m", db: str | os.PathLike = "tuning.jsonl", trials: int | None = None,
         target: str = "native", threads: int = 0, batch: int = 8, seed: int = 0, timeout: float = 30.0,
         input_shapes: Mapping[str, Sequence[int]] | None = None, example_inputs: Any = None,
         progress: bool | Callable[[dict], None] | None = None, check_rounds: int = 10,
         check_threads: Sequence[int] = ()) -> TuneReport:
    """Searches faster schedules for every kernel of `model` on this machine and appends every
    measurement to the tuning database `db` (JSON lines, fsync-ed per batch; an existing database is
    resumed). Compile with ``tessera.compile(model, db=db)`` to use them.

    time: the wall-clock budget (600, "90s", "10m", "1.5h"); trials: a budget in measured
    candidates instead (or as well: the first reached ends it). progress: a tqdm bar when stderr is a
    terminal (None), always (True), never (False), or a callable getting a dict per measured batch
    (task, tasks, name, task_trials, best_gflops, trials, elapsed_s, fraction).

    check_rounds: the end-to-end check (driver/tune_model.h): the model built with and without the
    database is timed this many paired rounds, and ``compile(model, db=db)`` builds the tuned model
    only when it was faster and computed the same outputs (``TuneReport.model_check``); 0: no check.
    A time budget includes the check (a tenth of it). check_threads: the runtime thread counts the
    check times the model at, each in turn (empty: ``threads``' count and 1); a tuned kernel slower
    at any keeps its default schedule, and the tuned model is applied only when faster at every one.
    ``model_check["threads"]`` is the count its times are at (the worst ratio's), ``checked_threads``
    all of them. A count outside [1, 4 x the hardware threads] or listed twice raises UserError.
    """
    seconds = parse_duration(time) if time is not None else 0.0
    source = _model_source(model, example_inputs)
    callback, bar = _progress_printer(progress)
    try:
        r = _core.tune(source, os.fspath(db), seconds, int(trials or 0), target, threads, batch, seed, timeout,
                       check_rounds, [int(t) for t in check_threads], _shapes(input_shapes), callback)
    finally:
        if bar is not None:
            bar.close()
    return TuneReport(tuple(r["tasks"]), r["trials"], r["elapsed_s"], r["default_latency_s"], r["best_latency_s"],
                      tuple(r["decisions"]), r["model_check"], r["revivals"])
