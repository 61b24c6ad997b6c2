"""CompiledModel: a compiled model loaded into this process, called like a function."""
from __future__ import annotations

import dataclasses
import os
import shutil
import statistics
import weakref
from typing import Any, Mapping, Sequence

import numpy as np

from . import _core

UserError = _core.UserError

@dataclasses.dataclass(frozen=True)
class TensorInfo:
    """A graph input or output: its name, shape and element type (numpy name, e.g. "float32").

    A dim of a model compiled with dynamic shapes (a VM program's symbolic dim) is its symbol's name,
    a ``str`` (e.g. ``("batch", "seq", 768)``): an input takes arrays of any extent there, the same
    extent wherever the same name appears."""

    name: str
    shape: tuple[int | str, ...]
    dtype: str

    @property
    def is_static(self) -> bool:
        """True when every dim is an int."""
        return all(isinstance(d, int) for d in self.shape)


@dataclasses.dataclass(frozen=True)
class BenchmarkResult:
    """Latency of repeated runs on the same inputs, in milliseconds (steady clock, one run each)."""

    times_ms: tuple[float, ...]

    @property
    def median_ms(self) -> float:
        return statistics.median(self.times_ms)

    @property
    def mean_ms(self) -> float:
        return statistics.fmean(self.times_ms)

    @property
    def std_ms(self) -> float:
        return statistics.pstdev(self.times_ms)

    @property
    def min_ms(self) -> float:
        return min(self.times_ms)

    @property
    def max_ms(self) -> float:
        return max(self.times_ms)

    def __str__(self) -> str:
        return (f"median {self.median_ms:.4f} ms, mean {self.mean_ms:.4f} ms, std {self.std_ms:.4f} ms, "
                f"min {self.min_ms:.4f} ms, max {self.max_ms:.4f} ms over {len(self.times_ms)} runs")


@dataclasses.dataclass(frozen=True)
class KernelTime:
    """One kernel call of the graph: mean wall time per run (ms) and its share of the kernels' total."""

    node: str
    kernel: str
    arg_shapes: str
    ms: float
    percent: float
    serial: bool


@dataclasses.dataclass(frozen=True)
class TuneReport:
    """What :func:`tessera.tune` did: per task (kernel) its calls per run, trials, errors, default /
    best seconds and ``rewrite`` ("" for a kernel of the model as built, "<knob>=<value>" for one only
    a graph rewrite's other value builds); the graph rewrite decisions (``knob``, chosen ``value``,
    ``fallback``, ``cost_s``: value -> its kernels' seconds per run, inf when not all measured); the
    kernels' share of one run with the default and the best schedules and decisions (seconds); and
    the end-to-end check (``model_check``: ``checked``, ``skipped`` (why not), ``apply`` (whether
    ``compile(db=...)`` builds the tuned model), ``rewrites`` (with its graph rewrite decisions, else the
    tuned kernels with the rewrites at their defaults), ``default_s`` / ``tuned_s`` (median seconds per run),
    ``ratio`` (median paired tuned / default), ``rounds``, ``wins`` (rounds the tuned build was faster; it is
    applied only when ``ratio`` < 1 and it won a sign test's share of them, 7 of 10), ``error``, ``untuned_workloads`` (the workloads
    whose tuned kernels ran slower in the model, built with their default schedules), ``workload_programs``
    (workload -> program id: the workloads built with their runner-up record, whose best ran slower in the
    model and the runner-up did not), ``kernels`` (the
    per-kernel profile: ``workload``, ``threads``, ``default_s``, ``tuned_s``: median seconds per run in the model,
    ``ratio``: median paired tuned / default), ``second_kernels`` (the same for the runners-up of the slower
    workloads, ``tuned_s`` the runner-up's), ``builds`` (every tuned build timed: ``rewrites``,
    ``untuned_workloads`` and ``workload_programs`` (how many), ``ratio``, ``wins``, ``apply``), ``elapsed_s``);
    ``revivals``: how many times a task was woken because every task had rested for patience with budget left."""

    tasks: tuple[dict, ...]
    trials: int
    elapsed_s: float
    default_latency_s: float
    best_latency_s: float
    decisions: tuple[dict, ...] = ()
    model_check: dict = dataclasses.field(default_factory=dict)
    revivals: int = 0

    @property
    def speedup(self) -> float:
        return self.default_latency_s / self.best_latency_s if self.best_latency_s > 0 else 0.0


def _is_torch(x: Any) -> bool:
    return type(x).__module__.startswith("torch") and hasattr(x, "is_contiguous")


class CompiledModel:
    """A compiled model. Call it with one array per input, positionally (graph order) or by name::

        y = model(x)                  # one output: the array; several: a tuple
        outs = model.run({"x": x})    # {output name: array}, as onnxruntime's run with names

    Inputs may be numpy arrays, torch CPU tensors, any object with ``__dlpack__`` or the buffer
    protocol, or nested lists / scalars (converted to the input's dtype). They are not copied when
    C-contiguous and 64-byte aligned (the kernels read them in place); outputs are written by the
    kernels straight into the returned arrays. Outputs are numpy arrays, or torch tensors when a torch
    tensor came in. The dtype and shape of every input must be the graph's (see ``inputs``; a dim
    shown as a name takes any extent, the same for every input naming it): a mismatch raises
    :class:`tessera.UserError` naming the input.

    Thread-safe: several threads may call one model at once (the GIL is released while it runs).
    """

    def __init__(self, session: _core.Session, *, library_dir: str | None = None, summary: dict | None = None):
        self._session = session
        self._inputs = tuple(TensorInfo(n, tuple(s), d) for n, s, d in session.inputs)
        self._outputs = tuple(TensorInfo(n, tuple(s), d) for n, s, d in session.outputs)
        self._input_index = {t.name: i for i, t in enumerate(self._inputs)}
        self.summary = dict(summary or {})
        if library_dir is not None:  # a temporary library from tessera.compile: removed with the model
            self._cleanup = weakref.finalize(self, shutil.rmtree, library_dir, True)

    @property
    def inputs(self) -> tuple[TensorInfo, ...]:
        return self._inputs

    @property
    def outputs(self) -> tuple[TensorInfo, ...]:
        return self._outputs

    @property
    def library_path(self) -> str:
        """The shared library the model runs from."""
        return self._session.path

    def __repr__(self) -> str:
        sig = lambda ts: ", ".join(f"{t.name}: {t.dtype}{list(t.shape)}" for t in ts)
        return f"CompiledModel(({sig(self._inputs)}) -> ({sig(self._outputs)}))"

    # --- running ---------------------------------------------------------------------------------
    def _arrays(self, args: Sequence[Any], named: Mapping[str, Any]) -> list[Any]:
        n = len(self._inputs)
        if len(args) > n:
            raise UserError(f"the model takes {n} input(s) ({', '.join(t.name for t in self._inputs)}), got {len(args)}")
        slots: list[Any] = list(args) + [None] * (n - len(args))
        for name, value in named.items():
            i = self._input_index.get(name)
            if i is None:
                raise UserError(f"the model has no input named '{name}'; its inputs are: "
                                f"{', '.join(t.name for t in self._inputs)}")
            if slots[i] is not None:
                raise UserError(f"input '{name}' is given twice")
            slots[i] = value
        missing = [t.name for t, s in zip(self._inputs, slots) if s is None]
        if missing:
            raise UserError(f"missing input(s): {', '.join(missing)}")
        return [self._prepare(a, t) for a, t in zip(slots, self._inputs)]

    @staticmethod
    def _prepare(a: Any, info: TensorInfo) -> Any:
        if isinstance(a, np.ndarray):
            return a if a.flags.c_contiguous else np.ascontiguousarray(a)
        if _is_torch(a):
            if a.device.type != "cpu":
                raise UserError(f"input '{info.name}' is on {a.device}; Tessera runs on the CPU: pass it as .cpu()")
            if a.requires_grad:
                a = a.detach()
            return a if a.is_contiguous() else a.contiguous()
        if hasattr(a, "__dlpack__"):
            return a
        return np.ascontiguousarray(np.asarray(a, dtype=info.dtype))

    def __call__(self, *args: Any, **named: Any) -> Any:
        # Fast path (the common call: contiguous numpy arrays, positionally): no conversion at all.
        if not named and len(args) == len(self._inputs) and all(
                type(a) is np.ndarray and a.flags.c_contiguous for a in args):
            outs = self._session.run(list(args), False)
        else:
            arrays = self._arrays(args, named)
            outs = self._session.run(arrays, any(_is_torch(a) for a in arrays))
        return outs[0] if len(outs) == 1 else tuple(outs)

    def run(self, inputs: Mapping[str, Any] | None = None, **named: Any) -> dict[str, Any]:
        """Runs on inputs by name; returns {output name: array}."""
        arrays = self._arrays((), {**(inputs or {}), **named})
        outs = self._session.run(arrays, any(_is_torch(a) for a in arrays))
        return {t.name: o for t, o in zip(self._outputs, outs)}

    def _sample_inputs(self, args: Sequence[Any], named: Mapping[str, Any]) -> list[Any]:
        if args or named:
            return self._arrays(args, named)
        dynamic = [t for t in self._inputs if not t.is_static]
        if dynamic:
            raise UserError(f"input '{dynamic[0].name}' has dynamic dims {list(dynamic[0].shape)}: "
                            "pass the inputs to time the model with (zeros are made only for static shapes)")
        return [np.zeros(t.shape, dtype=t.dtype) for t in self._inputs]

    def benchmark(self, *args: Any, repeat: int = 100, warmup: int = 10, **named: Any) -> BenchmarkResult:
        """Times `repeat` runs (after `warmup`) on the given inputs (zeros when none are given and every
        input shape is static), in C++ with the GIL released: the model's latency without Python's
        call overhead."""
        secs = self._session.benchmark(self._sample_inputs(args, named), warmup, repeat)
        return BenchmarkResult(tuple(s * 1e3 for s in secs))

    def profile(self, *args: Any, runs: int = 10, **named: Any) -> list[KernelTime]:
        """Every kernel call's mean time over `runs` runs (after one warm-up), slowest first. Graph
        programs only: a model with run-time control flow runs in the VM, which raises UserError here
        (time it with ``benchmark``)."""
        rows = self._session.profile(self._sample_inputs(args, named), runs)
        total = sum(r[3] for r in rows) or 1.0
        return [KernelTime(node, kernel, shapes, ms, 100.0 * ms / total, serial) for node, kernel, shapes, ms, serial in rows]

    # --- files -----------------------------------------------------------------------------------
    def export_library(self, path: str | os.PathLike) -> None:
        """Writes the model's shared library to `path` (run it with ``tessera.load`` or ``tessera run``)."""
        if os.path.exists(path) and os.path.samefile(path, self.library_path):
            return
        shutil.copyfile(self.library_path, path)


def load(path: str | os.PathLike) -> CompiledModel:
    """Loads a library written by ``tessera compile`` or :meth:`CompiledModel.export_library`.
    Raises :class:`tessera.UserError` when it is missing, corrupt, built for another machine (missing
    CPU features) or by another Tessera version."""
    return CompiledModel(_core.Session(os.fspath(path)))
