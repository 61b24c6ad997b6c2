#include "tessera/graph/type.h"

#include <sstream>

#include "tessera/support/error.h"

namespace tessera::graph {

int64_t Dim::value() const {
  TESSERA_ICHECK(is_static(), "Dim::value() on symbolic dim '", name_, "'");
  return value_;
}

Shape MakeShape(const std::vector<int64_t>& dims) {
  Shape s;
  s.reserve(dims.size());
  for (int64_t d : dims) {
    TESSERA_CHECK(d >= 0, "a static tensor dimension must be >= 0, got ", d);
    s.emplace_back(d);
  }
  return s;
}

std::optional<std::vector<int64_t>> StaticShape(const Shape& shape) {
  std::vector<int64_t> out;
  out.reserve(shape.size());
  for (const Dim& d : shape) {
    if (!d.is_static()) return std::nullopt;
    out.push_back(d.value());
  }
  return out;
}

bool HasSymbolicDims(const Type& type) {
  if (!type) return false;
  if (const auto* tt = type->as<TensorTypeNode>()) return !StaticShape(tt->shape).has_value();
  if (const auto* tup = type->as<TupleTypeNode>())
    for (const Type& f : tup->fields)
      if (HasSymbolicDims(f)) return true;
  return false;
}

std::string ShapeStr(const Shape& shape) {
  std::ostringstream os;
  os << "(";
  for (size_t i = 0; i < shape.size(); ++i) os << (i ? ", " : "") << shape[i].str();
  if (shape.size() == 1) os << ",";
  os << ")";
  return os.str();
}

std::optional<int64_t> TensorTypeNode::NumElements() const {
  int64_t n = 1;
  for (const Dim& d : shape) {
    if (!d.is_static()) return std::nullopt;
    n *= d.value();
  }
  return n;
}

Type TensorTypeNode::make(Shape shape, DataType dtype) {
  return std::make_shared<const TensorTypeNode>(std::move(shape), dtype);
}

Type ListTypeNode::make(Type element) {
  TESSERA_ICHECK(element && element->as<TensorTypeNode>(), "ListType's element must be a tensor type");
  return std::make_shared<const ListTypeNode>(std::move(element));
}

Type TupleTypeNode::make(std::vector<Type> fields) {
  for (const Type& f : fields) TESSERA_ICHECK(f != nullptr, "TupleType field is null");
  return std::make_shared<const TupleTypeNode>(std::move(fields));
}

Type FuncTypeNode::make(std::vector<Type> arg_types, Type ret_type) {
  for (const Type& a : arg_types) TESSERA_ICHECK(a != nullptr, "FuncType argument type is null");
  TESSERA_ICHECK(ret_type != nullptr, "FuncType return type is null");
  return std::make_shared<const FuncTypeNode>(std::move(arg_types), std::move(ret_type));
}

std::string TypeNode::str() const {
  std::ostringstream os;
  if (auto* t = as<TensorTypeNode>()) {
    os << "Tensor[" << ShapeStr(t->shape) << ", " << t->dtype.str() << "]";
  } else if (auto* t = as<ListTypeNode>()) {
    os << "List[" << t->element->str() << "]";
  } else if (auto* t = as<TupleTypeNode>()) {
    os << "(";
    for (size_t i = 0; i < t->fields.size(); ++i) os << (i ? ", " : "") << t->fields[i]->str();
    if (t->fields.size() == 1) os << ",";
    os << ")";
  } else if (auto* t = as<FuncTypeNode>()) {
    os << "fn (";
    for (size_t i = 0; i < t->arg_types.size(); ++i) os << (i ? ", " : "") << t->arg_types[i]->str();
    os << ") -> " << t->ret_type->str();
  }
  return os.str();
}

std::string TypeStr(const Type& t) { return t ? t->str() : "<null>"; }

bool StructuralEqual(const Type& a, const Type& b) {
  if (a == b) return true;
  if (!a || !b || a->kind != b->kind) return false;
  if (auto* x = a->as<TensorTypeNode>()) {
    auto* y = b->as<TensorTypeNode>();
    return x->dtype == y->dtype && x->shape == y->shape;
  }
  auto all_equal = [](const std::vector<Type>& p, const std::vector<Type>& q) {
    if (p.size() != q.size()) return false;
    for (size_t i = 0; i < p.size(); ++i)
      if (!StructuralEqual(p[i], q[i])) return false;
    return true;
  };
  if (auto* x = a->as<TupleTypeNode>()) return all_equal(x->fields, b->as<TupleTypeNode>()->fields);
  if (auto* x = a->as<ListTypeNode>()) return StructuralEqual(x->element, b->as<ListTypeNode>()->element);
  auto* x = a->as<FuncTypeNode>();
  auto* y = b->as<FuncTypeNode>();
  return all_equal(x->arg_types, y->arg_types) && StructuralEqual(x->ret_type, y->ret_type);
}

}  // namespace tessera::graph
