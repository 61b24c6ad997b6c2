// Internal to the runtime: the values a VirtualMachine register holds (vm.h): a tensor, a list of
// tensors, an ADT (Relay's algebraic-data-type object: a constructor tag and fields) or a closure
// (a function and its captured values). Lists, ADTs and closures are immutable and shared by
// reference (copying a Value copies handles, never tensor data).
//
// Destruction is iterative: dropping the last handle to a chain of a million list cells or ADT
// objects (a Cons list) frees it in a loop, never by one C++ call per link, so it cannot overflow
// the stack. ADTs are built from existing values only, so no cycle can form.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "tessera/runtime/ndarray.h"

namespace tessera::runtime::vm {

enum class ValueKind : uint8_t { kNone, kTensor, kList, kADT, kClosure };

/// "nothing", "a tensor", "a list", "an ADT", "a closure": for messages.
const char* KindName(ValueKind kind);

/// One element of a list: the tensor and the cell before it (null for the first element).
struct ListCell {
  NDArray value;
  std::shared_ptr<const ListCell> prev;
  ~ListCell();  // iterative over `prev`
};

struct Object;

struct Value {
  ValueKind kind = ValueKind::kNone;
  bool pooled = false;  ///< kTensor: a view of a VM pool storage (vm.h "Memory")
  int64_t length = 0;   ///< kList: the number of elements
  NDArray tensor;       ///< kTensor
  std::shared_ptr<const ListCell> list;  ///< kList: the last cell (null when empty)
  std::shared_ptr<const Object> object;  ///< kADT, kClosure

  static Value Tensor(NDArray t, bool pooled);
  /// `list` with `element` appended (`list` unchanged; O(1)).
  static Value Push(const Value& list, NDArray element);
  static Value EmptyList() { return Of(ValueKind::kList); }
  /// An ADT of constructor `tag` / a closure of function `func`, holding `fields`.
  static Value ADT(int64_t tag, std::vector<Value> fields);
  static Value Closure(int func, std::vector<Value> captured);
  /// A value of `kind` with every other field at its default.
  static Value Of(ValueKind kind) {
    Value v;
    v.kind = kind;
    return v;
  }
};

/// An ADT (tag: its constructor tag, fields) or a closure (tag: its function index, fields: the
/// captured values).
struct Object {
  int64_t tag = 0;
  std::vector<Value> fields;
  ~Object();  // iterative over the objects and lists only this one holds
};

}  // namespace tessera::runtime::vm
