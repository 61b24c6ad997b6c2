// Arrays across the Python boundary without copies: a Python array (numpy, torch, anything with
// __dlpack__ or the buffer protocol, as nanobind's nb::ndarray accepts it) becomes a
// runtime::NDArray over the same memory, and an NDArray becomes a numpy array or a torch tensor
// over its memory (DLPack, dlpack.h).
#pragma once

#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>

#include "tessera/runtime/ndarray.h"

namespace tessera::python {

/// A read-only CPU array from Python: any dtype, shape and strides (checked by FromPython).
using PyArray = nanobind::ndarray<nanobind::ro, nanobind::device::cpu>;

/// An NDArray over `array`'s memory that keeps `array` alive (its release takes the GIL). Throws
/// UserError, naming `what`, for a non-contiguous array or an element type Tessera lacks.
runtime::NDArray FromPython(const PyArray& array, const std::string& what);

/// A numpy array (or, with `torch`, a torch.Tensor) over `array`'s memory, owning a handle to it.
/// Needs the GIL.
nanobind::object ToPython(const runtime::NDArray& array, bool torch);

}  // namespace tessera::python
