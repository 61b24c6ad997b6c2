// An external function as a list of steps over numbered values: what a backend's codegen walks.
//
//   values: the function's parameters (kParam, index = position = kernel argument), its
//           constants (kConstant: data inside the function) and one kTemp per op call;
//   steps:  the op calls in post-order (producers first), each reading values and writing one;
//   results: the values the kernel returns, one per output argument (a tuple body: per field).
// Composite calls (MergeComposite) are inlined: their body's ops become steps; with
// `composites_as_steps`, each is one step instead (op = its Composite name, `composite` = its
// function, args = the call's arguments), for a backend that runs the unit as one primitive. Every value is a
// tensor of static shape; anything else (a tuple argument, a symbolic dim) is an UnsupportedError
// naming the backend and the region.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/graph/attrs.h"
#include "tessera/graph/expr.h"
#include "tessera/runtime/data_type.h"
#include "tessera/runtime/ndarray.h"

namespace tessera::byoc {

struct RegionValue {
  enum Kind { kParam, kConstant, kTemp } kind;
  int index = 0;  ///< kParam: parameter position; kConstant: index in constants; kTemp: the step
  std::vector<int64_t> shape;
  DataType dtype;
  int64_t NumElements() const;
};

struct RegionStep {
  const graph::CallNode* call = nullptr;  ///< for attrs
  std::string op;                         ///< the op's name, or a composite's Composite attr
  const graph::FunctionNode* composite = nullptr;  ///< a composite kept as one step: its function
  std::vector<int> args;  ///< value ids
  int out = -1;           ///< value id
};

struct Region {
  std::string backend, symbol;
  std::vector<RegionValue> values;
  std::vector<runtime::NDArray> constants;
  std::vector<RegionStep> steps;
  std::vector<int> params;   ///< value ids of the parameters, in order
  std::vector<int> results;  ///< value ids of the outputs, in order
  /// How many steps read each value, plus one per appearance in results.
  std::vector<int> uses;
};

Region FlattenRegion(const graph::FunctionNode& fn, const std::string& backend, const std::string& symbol,
                     bool composites_as_steps = false);

/// Whether the call's arguments and result are all float32 tensors of static shape (what both
/// built-in backends need before looking at the op).
bool AllStaticFloat32(const graph::CallNode& call);

/// [top, left, bottom, right] from a 2-D window op's `padding` attr (1, 2 or 4 values).
std::vector<int64_t> Padding2D(const graph::Attrs& attrs);

/// Row-major strides of `shape` (elements).
std::vector<int64_t> Strides(const std::vector<int64_t>& shape);

}  // namespace tessera::byoc
