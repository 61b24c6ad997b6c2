"""Tessera: an optimizing compiler for deep learning models (ONNX and PyTorch) to native code.

The compiler and the runtime are C++ (``tessera._core``, a nanobind extension); this package is a
thin layer over them::

    import numpy as np, tessera
    model = tessera.compile("model.onnx")          # or an onnx.ModelProto, or a torch.nn.Module
    y = model(np.zeros((1, 3, 224, 224), np.float32))
    model.export_library("model.so"); tessera.load("model.so")

``torch.compile(module, backend="tessera")`` works once this package is imported (or installed:
the ``torch_dynamo_backends`` entry point). Errors are :class:`Error` subclasses:
:class:`UserError` (also a ``ValueError``) for bad input, :class:`UnsupportedError` for what Tessera
cannot compile yet, :class:`InternalError` for bugs.
"""
import sys as _sys

from ._core import Error, InternalError, UnsupportedError, UserError, __version__, num_threads, set_num_threads
from ._compile import compile, tune
from ._model import BenchmarkResult, CompiledModel, KernelTime, TensorInfo, TuneReport, load

__all__ = [
    "compile", "tune", "load", "CompiledModel", "TensorInfo", "BenchmarkResult", "KernelTime", "TuneReport",
    "Error", "UserError", "UnsupportedError", "InternalError", "set_num_threads", "num_threads", "__version__",
]

if "torch" in _sys.modules:  # registers backend="tessera" for torch.compile (installed: also via entry point)
    from . import torch_backend as _torch_backend

    _torch_backend.register()
