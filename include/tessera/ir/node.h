// The node base of every loop-level IR object (PrimExpr, Stmt, Buffer, PrimFunc...).
//
// Nodes are immutable and shared: a reference class holds a std::shared_ptr to a
// const node, so a DAG of expressions shares subterms and copying a reference is
// cheap. Each node type is defined once, as a plain struct with a static `make()`
// that checks its arguments (Halide's IR.h style). `as<T>()` downcasts by kind.
#pragma once

#include <memory>
#include <utility>

namespace tessera::ir {

/// A reference to an immutable node of type NodeT (or a subclass of it).
template <typename NodeT>
class NodeRef {
 public:
  NodeRef() = default;
  explicit NodeRef(std::shared_ptr<const NodeT> node) : node_(std::move(node)) {}

  // .get() everywhere: PrimExpr's operators (op.h) are found by ADL on shared_ptr<PrimExprNode>.
  bool defined() const { return node_.get() != nullptr; }
  const NodeT* get() const { return node_.get(); }
  const NodeT* operator->() const { return node_.get(); }
  const NodeT& operator*() const { return *node_; }
  const std::shared_ptr<const NodeT>& node() const { return node_; }

  /// Downcast: the node as T when its kind is T's, else nullptr.
  template <typename T>
  const T* as() const {
    return node_.get() != nullptr && node_->kind == T::kKind ? static_cast<const T*>(node_.get()) : nullptr;
  }

  /// Identity (pointer) comparison; use StructuralEqual for value comparison.
  bool same_as(const NodeRef& other) const { return node_.get() == other.node_.get(); }

 protected:
  std::shared_ptr<const NodeT> node_;
};

}  // namespace tessera::ir
