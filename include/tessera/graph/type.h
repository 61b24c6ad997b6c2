// Types of the graph IR (Relay, arXiv 1904.08368, section 3.2).
//
// A Type is an immutable, shared node: TensorType (shape + dtype), TupleType, FuncType, ListType
// (a list of tensors: Relay's tensor array; the VM's lists, runtime/vm.h; printed TensorArray[...]),
// an algebraic data type ADTType (Relay's TypeCall of a global type: `List[Tensor[(2,), float32]]`,
// defined by a TypeData, arXiv 1904.08368 §3.3), a TypeVar (a type parameter, only inside a TypeData's
// constructors) or IncompleteType (`_`: an ADT's type argument that inference has not determined,
// as the A of a bare `Nil()`; Unify below refines it).
// Tensor dimensions are static (an int64 >= 0) or symbolic (a name such as "batch_size";
// "?" stands for an unknown extent that a type relation could not compute).
// Types compare structurally with StructuralEqual / operator==.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tessera/runtime/data_type.h"

namespace tessera::graph {

/// One tensor dimension: a static extent or a symbolic name.
class Dim {
 public:
  Dim() = default;
  /// A static extent (>= 0).
  Dim(int64_t value) : value_(value) {}  // NOLINT: implicit so {1, 3, 224} reads naturally
  static Dim Symbolic(std::string name) {
    Dim d;
    d.value_ = -1;
    d.name_ = std::move(name);
    return d;
  }
  /// An extent nobody could determine (printed "?").
  static Dim Any() { return Symbolic("?"); }

  bool is_static() const { return value_ >= 0; }
  bool is_symbolic() const { return value_ < 0; }
  /// The static extent; InternalError when the dim is symbolic.
  int64_t value() const;
  /// The symbolic name ("" for static dims).
  const std::string& name() const { return name_; }
  std::string str() const { return is_static() ? std::to_string(value_) : name_; }

  bool operator==(const Dim& o) const { return value_ == o.value_ && name_ == o.name_; }
  bool operator!=(const Dim& o) const { return !(*this == o); }

 private:
  int64_t value_ = 0;
  std::string name_;
};

using Shape = std::vector<Dim>;

/// Converts a fully static shape.
Shape MakeShape(const std::vector<int64_t>& dims);
/// The static extents of `shape`; std::nullopt when some dim is symbolic.
std::optional<std::vector<int64_t>> StaticShape(const Shape& shape);
/// "(1, 3, batch, 224)".
std::string ShapeStr(const Shape& shape);

enum class TypeKind { kTensor, kTuple, kFunc, kList, kADT, kTypeVar, kIncomplete };

class TypeNode;
using Type = std::shared_ptr<const TypeNode>;

class TypeNode {
 public:
  explicit TypeNode(TypeKind kind) : kind(kind) {}
  virtual ~TypeNode() = default;
  const TypeKind kind;

  /// This node as T when it is one, else nullptr: `if (auto* t = ty->as<TensorTypeNode>())`.
  template <typename T>
  const T* as() const {
    return kind == T::kKind ? static_cast<const T*>(this) : nullptr;
  }
  /// Relay-style text: "Tensor[(1, 3), float32]", "(Tensor[...], Tensor[...])", "fn (A) -> B",
  /// "TensorArray[Tensor[(4,), float32]]", "Option[Tensor[(), int64]]", "A", "_".
  std::string str() const;
};

/// A tensor of `shape` with elements of `dtype`. A rank-0 tensor is a scalar.
class TensorTypeNode : public TypeNode {
 public:
  static constexpr TypeKind kKind = TypeKind::kTensor;
  TensorTypeNode(Shape shape, DataType dtype)
      : TypeNode(kKind), shape(std::move(shape)), dtype(dtype) {}
  const Shape shape;
  const DataType dtype;

  int64_t ndim() const { return static_cast<int64_t>(shape.size()); }
  /// Product of the extents; std::nullopt when some dim is symbolic.
  std::optional<int64_t> NumElements() const;

  static Type make(Shape shape, DataType dtype);
  static Type make(const std::vector<int64_t>& shape, DataType dtype) {
    return make(MakeShape(shape), dtype);
  }
};

/// The type of a Tuple expression.
class TupleTypeNode : public TypeNode {
 public:
  static constexpr TypeKind kKind = TypeKind::kTuple;
  explicit TupleTypeNode(std::vector<Type> fields) : TypeNode(kKind), fields(std::move(fields)) {}
  const std::vector<Type> fields;
  static Type make(std::vector<Type> fields);
};

/// The type of a Function: argument types -> return type.
class FuncTypeNode : public TypeNode {
 public:
  static constexpr TypeKind kKind = TypeKind::kFunc;
  FuncTypeNode(std::vector<Type> arg_types, Type ret_type)
      : TypeNode(kKind), arg_types(std::move(arg_types)), ret_type(std::move(ret_type)) {}
  const std::vector<Type> arg_types;
  const Type ret_type;
  static Type make(std::vector<Type> arg_types, Type ret_type);
};

/// A list of tensors of one type (`element`, a TensorType; its symbolic dims are the elements'
/// extents, the same for every element): Relay's tensor array, printed `TensorArray[Tensor[...]]`
/// (the prelude's `List[A]` is an ADT, graph/prelude.h). Its length is a run-time value: the VM's
/// ListNew / ListPush build it, ListStack stacks it into one tensor (graph/op/vm.cc vm.list_*).
class ListTypeNode : public TypeNode {
 public:
  static constexpr TypeKind kKind = TypeKind::kList;
  explicit ListTypeNode(Type element) : TypeNode(kKind), element(std::move(element)) {}
  const Type element;
  /// InternalError unless `element` is a TensorType.
  static Type make(Type element);
};

/// An algebraic data type: the TypeData named `name` applied to `args` (one per type parameter),
/// e.g. List[Tensor[(), float32]]. Two ADT types are equal when their names and args are.
class ADTTypeNode : public TypeNode {
 public:
  static constexpr TypeKind kKind = TypeKind::kADT;
  ADTTypeNode(std::string name, std::vector<Type> args) : TypeNode(kKind), name(std::move(name)), args(std::move(args)) {}
  const std::string name;
  const std::vector<Type> args;
  static Type make(std::string name, std::vector<Type> args = {});
};

/// A type parameter of a TypeData ("A" in `type List[A] { Cons(A, List[A]), Nil }`); appears only in
/// its constructors' field types, replaced by the ADT type's args (Substitute) wherever a value is typed.
class TypeVarNode : public TypeNode {
 public:
  static constexpr TypeKind kKind = TypeKind::kTypeVar;
  explicit TypeVarNode(std::string name) : TypeNode(kKind), name(std::move(name)) {}
  const std::string name;
  static Type make(std::string name);
};

/// A type inference has not determined yet (printed `_`): only as an ADT type's argument (the
/// element type of `Nil()`, the payload of `None()`). Unify refines it from the context.
class IncompleteTypeNode : public TypeNode {
 public:
  static constexpr TypeKind kKind = TypeKind::kIncomplete;
  IncompleteTypeNode() : TypeNode(kKind) {}
  static Type make();
};

/// One constructor of a TypeData: its name, its tag (its index in the TypeData, the VM's ADT tag) and
/// its field types, which may name the TypeData's type params.
struct ConstructorDef {
  std::string name;
  std::vector<Type> fields;
};

/// The definition of an algebraic data type (Relay's TypeData, arXiv 1904.08368 §3.3):
///   type List[A] { Cons(A, List[A]), Nil }
/// Constructor names are unique within a module (IRModule::AddTypeDef checks it).
class TypeDataNode {
 public:
  TypeDataNode(std::string name, std::vector<std::string> type_params, std::vector<ConstructorDef> constructors)
      : name(std::move(name)), type_params(std::move(type_params)), constructors(std::move(constructors)) {}
  const std::string name;
  const std::vector<std::string> type_params;
  const std::vector<ConstructorDef> constructors;
  /// The index (the tag) of the constructor `name`, or -1.
  int Tag(const std::string& constructor) const;
  /// UserError unless: a name, unique type params, at least one constructor, unique constructor
  /// names, and field types that name only these type params and ADTs (this one applied to as many args
  /// as it has params, or another).
  static std::shared_ptr<const TypeDataNode> make(std::string name, std::vector<std::string> type_params,
                                                  std::vector<ConstructorDef> constructors);
  /// "type List[A] {\n  Cons(A, List[A]),\n  Nil,\n}" (the text form, printer.h).
  std::string str() const;
};
using TypeData = std::shared_ptr<const TypeDataNode>;

/// `type` with every TypeVar named in `subst` replaced (a TypeVar not named stays).
Type Substitute(const Type& type, const std::vector<std::pair<std::string, Type>>& subst);

/// The most specific type that is both `a` and `b`, where IncompleteType matches anything (Relay's
/// unification, restricted to the holes of ADT type args); nullptr when they differ (two tensor
/// types of other shapes, other ADTs, ...). Unify(a, b) == a when both are complete and equal.
Type Unify(const Type& a, const Type& b);

/// Whether `type` has an IncompleteType in it.
bool IsIncomplete(const Type& type);

/// Whether a tensor type (or a field of a tuple type) has a symbolic dim; false for null.
bool HasSymbolicDims(const Type& type);
/// Structural equality: same kind, same shapes (dim by dim, names included), same dtypes.
/// Two null types are equal; a null and a non-null type are not.
bool StructuralEqual(const Type& a, const Type& b);

/// "<null>" for a null type, else TypeNode::str().
std::string TypeStr(const Type& t);

}  // namespace tessera::graph
