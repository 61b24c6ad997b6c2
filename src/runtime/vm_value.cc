#include "vm_value.h"

#include <utility>

namespace tessera::runtime::vm {

const char* KindName(ValueKind kind) {
  switch (kind) {
    case ValueKind::kNone: return "nothing";
    case ValueKind::kTensor: return "a tensor";
    case ValueKind::kList: return "a list";
    case ValueKind::kADT: return "an ADT";
    case ValueKind::kClosure: return "a closure";
  }
  return "?";
}

// Cells and objects are made non-const (then shared as const), so the destructors below may take
// the links out of one that only they hold before it goes.

ListCell::~ListCell() {
  std::shared_ptr<const ListCell> p = std::move(prev);
  while (p && p.use_count() == 1) {
    std::shared_ptr<const ListCell> next = std::move(const_cast<ListCell&>(*p).prev);
    p = std::move(next);  // frees the cell, whose prev is now null
  }
}

Object::~Object() {
  std::vector<Value> pending = std::move(fields);
  while (!pending.empty()) {
    Value v = std::move(pending.back());
    pending.pop_back();
    if (v.object && v.object.use_count() == 1) {
      std::vector<Value>& inner = const_cast<Object&>(*v.object).fields;
      for (Value& f : inner) pending.push_back(std::move(f));
      inner.clear();
    }
    // v goes here: its object, if only v held it, has no fields left; its list frees itself in a loop.
  }
}

Value Value::Tensor(NDArray t, bool pooled) {
  Value v = Of(ValueKind::kTensor);
  v.pooled = pooled;
  v.tensor = std::move(t);
  return v;
}

Value Value::Push(const Value& list, NDArray element) {
  auto cell = std::make_shared<ListCell>();
  cell->value = std::move(element);
  cell->prev = list.list;
  Value v = Of(ValueKind::kList);
  v.length = list.length + 1;
  v.list = std::move(cell);
  return v;
}

namespace {
Value MakeObject(ValueKind kind, int64_t tag, std::vector<Value> fields) {
  auto object = std::make_shared<Object>();
  object->tag = tag;
  object->fields = std::move(fields);
  Value v = Value::Of(kind);
  v.object = std::move(object);
  return v;
}
}  // namespace

Value Value::ADT(int64_t tag, std::vector<Value> fields) { return MakeObject(ValueKind::kADT, tag, std::move(fields)); }
Value Value::Closure(int func, std::vector<Value> captured) {
  return MakeObject(ValueKind::kClosure, func, std::move(captured));
}

}  // namespace tessera::runtime::vm
