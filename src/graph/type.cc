#include "tessera/graph/type.h"

#include <algorithm>
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

Type ADTTypeNode::make(std::string name, std::vector<Type> args) {
  TESSERA_ICHECK(!name.empty(), "ADTType without a name");
  for (const Type& a : args) TESSERA_ICHECK(a != nullptr, "ADTType ", name, " with a null type argument");
  return std::make_shared<const ADTTypeNode>(std::move(name), std::move(args));
}

Type TypeVarNode::make(std::string name) {
  TESSERA_ICHECK(!name.empty(), "TypeVar without a name");
  return std::make_shared<const TypeVarNode>(std::move(name));
}

Type IncompleteTypeNode::make() { return std::make_shared<const IncompleteTypeNode>(); }

int TypeDataNode::Tag(const std::string& constructor) const {
  for (size_t i = 0; i < constructors.size(); ++i)
    if (constructors[i].name == constructor) return static_cast<int>(i);
  return -1;
}

namespace {
// UserError unless every TypeVar in `t` is one of `params` and `self` is applied to as many args as it has params.
void CheckFieldType(const Type& t, const TypeDataNode& data, const std::string& ctor) {
  TESSERA_CHECK(t != nullptr, "constructor ", ctor, " of type ", data.name, " has a null field type");
  if (auto* v = t->as<TypeVarNode>()) {
    TESSERA_CHECK(std::find(data.type_params.begin(), data.type_params.end(), v->name) != data.type_params.end(),
                  "constructor ", ctor, " of type ", data.name, " names the type parameter ", v->name,
                  ", which ", data.name, " does not declare");
  } else if (auto* a = t->as<ADTTypeNode>()) {
    if (a->name == data.name)
      TESSERA_CHECK(a->args.size() == data.type_params.size(), "constructor ", ctor, " applies ", data.name, " to ",
                    a->args.size(), " type argument(s); it takes ", data.type_params.size());
    for (const Type& x : a->args) CheckFieldType(x, data, ctor);
  } else if (auto* tup = t->as<TupleTypeNode>()) {
    for (const Type& x : tup->fields) CheckFieldType(x, data, ctor);
  } else if (auto* f = t->as<FuncTypeNode>()) {
    for (const Type& x : f->arg_types) CheckFieldType(x, data, ctor);
    CheckFieldType(f->ret_type, data, ctor);
  } else {
    TESSERA_CHECK(!t->as<IncompleteTypeNode>(), "constructor ", ctor, " of type ", data.name,
                  " has a field of unknown type '_'");
  }
}
}  // namespace

TypeData TypeDataNode::make(std::string name, std::vector<std::string> type_params,
                            std::vector<ConstructorDef> constructors) {
  TESSERA_CHECK(!name.empty(), "a type definition needs a name");
  TESSERA_CHECK(!constructors.empty(), "type ", name, " has no constructor");
  for (size_t i = 0; i < type_params.size(); ++i)
    for (size_t j = 0; j < i; ++j)
      TESSERA_CHECK(type_params[i] != type_params[j], "type ", name, " declares the type parameter ", type_params[i],
                    " twice");
  auto data = std::make_shared<const TypeDataNode>(std::move(name), std::move(type_params), std::move(constructors));
  for (size_t i = 0; i < data->constructors.size(); ++i) {
    const ConstructorDef& c = data->constructors[i];
    TESSERA_CHECK(!c.name.empty(), "type ", data->name, " has a constructor without a name");
    TESSERA_CHECK(data->Tag(c.name) == static_cast<int>(i), "type ", data->name, " defines the constructor ", c.name,
                  " twice");
    for (const Type& f : c.fields) CheckFieldType(f, *data, c.name);
  }
  return data;
}

std::string TypeDataNode::str() const {
  std::ostringstream os;
  os << "type " << name;
  if (!type_params.empty()) {
    os << "[";
    for (size_t i = 0; i < type_params.size(); ++i) os << (i ? ", " : "") << type_params[i];
    os << "]";
  }
  os << " {\n";
  for (const ConstructorDef& c : constructors) {
    os << "  " << c.name;
    if (!c.fields.empty()) {
      os << "(";
      for (size_t i = 0; i < c.fields.size(); ++i) os << (i ? ", " : "") << c.fields[i]->str();
      os << ")";
    }
    os << ",\n";
  }
  os << "}";
  return os.str();
}

Type Substitute(const Type& type, const std::vector<std::pair<std::string, Type>>& subst) {
  if (!type) return type;
  auto all = [&](const std::vector<Type>& ts) {
    std::vector<Type> out;
    for (const Type& t : ts) out.push_back(Substitute(t, subst));
    return out;
  };
  if (auto* v = type->as<TypeVarNode>()) {
    for (const auto& [name, t] : subst)
      if (name == v->name) return t;
    return type;
  }
  if (auto* a = type->as<ADTTypeNode>()) return ADTTypeNode::make(a->name, all(a->args));
  if (auto* t = type->as<TupleTypeNode>()) return TupleTypeNode::make(all(t->fields));
  if (auto* f = type->as<FuncTypeNode>()) return FuncTypeNode::make(all(f->arg_types), Substitute(f->ret_type, subst));
  return type;
}

Type Unify(const Type& a, const Type& b) {
  if (!a || !b) return nullptr;
  if (a->as<IncompleteTypeNode>()) return b;
  if (b->as<IncompleteTypeNode>()) return a;
  if (a->kind != b->kind) return nullptr;
  auto all = [](const std::vector<Type>& p, const std::vector<Type>& q, std::vector<Type>* out) {
    if (p.size() != q.size()) return false;
    for (size_t i = 0; i < p.size(); ++i) {
      out->push_back(Unify(p[i], q[i]));
      if (!out->back()) return false;
    }
    return true;
  };
  std::vector<Type> parts;
  if (auto* x = a->as<ADTTypeNode>()) {
    auto* y = b->as<ADTTypeNode>();
    if (x->name != y->name || !all(x->args, y->args, &parts)) return nullptr;
    return StructuralEqual(a, ADTTypeNode::make(x->name, parts)) ? a : ADTTypeNode::make(x->name, std::move(parts));
  }
  if (auto* x = a->as<TupleTypeNode>()) {
    if (!all(x->fields, b->as<TupleTypeNode>()->fields, &parts)) return nullptr;
    return StructuralEqual(a, TupleTypeNode::make(parts)) ? a : TupleTypeNode::make(std::move(parts));
  }
  if (auto* x = a->as<FuncTypeNode>()) {
    auto* y = b->as<FuncTypeNode>();
    Type ret = Unify(x->ret_type, y->ret_type);
    if (!ret || !all(x->arg_types, y->arg_types, &parts)) return nullptr;
    Type out = FuncTypeNode::make(std::move(parts), ret);
    return StructuralEqual(a, out) ? a : out;
  }
  return StructuralEqual(a, b) ? a : nullptr;
}

bool IsIncomplete(const Type& type) {
  if (!type) return false;
  if (type->as<IncompleteTypeNode>()) return true;
  auto any = [](const std::vector<Type>& ts) { return std::any_of(ts.begin(), ts.end(), IsIncomplete); };
  if (auto* a = type->as<ADTTypeNode>()) return any(a->args);
  if (auto* t = type->as<TupleTypeNode>()) return any(t->fields);
  if (auto* f = type->as<FuncTypeNode>()) return any(f->arg_types) || IsIncomplete(f->ret_type);
  return false;
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
    os << "TensorArray[" << t->element->str() << "]";
  } else if (auto* t = as<ADTTypeNode>()) {
    os << t->name;
    if (!t->args.empty()) {
      os << "[";
      for (size_t i = 0; i < t->args.size(); ++i) os << (i ? ", " : "") << t->args[i]->str();
      os << "]";
    }
  } else if (auto* t = as<TypeVarNode>()) {
    os << t->name;
  } else if (as<IncompleteTypeNode>()) {
    os << "_";
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
  if (auto* x = a->as<ADTTypeNode>()) return x->name == b->as<ADTTypeNode>()->name && all_equal(x->args, b->as<ADTTypeNode>()->args);
  if (auto* x = a->as<TypeVarNode>()) return x->name == b->as<TypeVarNode>()->name;
  if (a->as<IncompleteTypeNode>()) return true;
  auto* x = a->as<FuncTypeNode>();
  auto* y = b->as<FuncTypeNode>();
  return all_equal(x->arg_types, y->arg_types) && StructuralEqual(x->ret_type, y->ret_type);
}

}  // namespace tessera::graph
