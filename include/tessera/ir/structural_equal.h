// Structural equality and hashing of PrimExpr, up to consistent renaming of variables.
//
// Two expressions are structurally equal when they have the same node kinds, dtypes,
// constants and intrinsic names, and their variables correspond one-to-one: a
// variable *defined* inside the compared IR (a Let var here; For loop vars, LetStmt
// vars, block iter vars and buffer parameters in tir/structural_equal.h) is mapped
// to the variable at the same position on the other side. A *free* variable (used
// but not defined) must be the same Var on both sides, unless map_free_vars is set,
// in which case free variables are also mapped on first use (still one-to-one).
// Variable names never matter.
//
// StructuralHash is consistent with StructuralEqual (equal ⇒ same hash, in either
// map_free_vars mode): variables hash by dtype and order of first appearance.
//
// Nodes of higher layers (BufferLoad, Reduce) reach the virtual EqualExtension /
// HashExtension hooks; tir/structural_equal.h handles BufferLoad and statements.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>

#include "tessera/ir/expr.h"

namespace tessera::ir {

/// Stateful comparator: keeps the variable correspondence across calls, so a
/// caller (the TIR comparator) can define variables and then compare bodies.
class ExprComparator {
 public:
  explicit ExprComparator(bool map_free_vars = false) : map_free_vars_(map_free_vars) {}
  virtual ~ExprComparator() = default;

  bool Equal(const PrimExpr& a, const PrimExpr& b);
  /// Records that lhs-side definition `a` corresponds to rhs-side `b` (replacing an
  /// earlier correspondence of either). False when their dtypes differ.
  bool DefineVar(const Var& a, const Var& b);
  /// A use of variables a (lhs) and b (rhs): true when they correspond.
  bool VarEqual(const VarNode* a, const VarNode* b);

 protected:
  /// Nodes of higher layers; the default requires the same node.
  virtual bool EqualExtension(const PrimExpr& a, const PrimExpr& b) { return a.same_as(b); }

  bool map_free_vars_;
  std::map<const VarNode*, const VarNode*> lhs_to_rhs_, rhs_to_lhs_;
};

/// Stateful hasher matching ExprComparator.
class ExprHasher {
 public:
  virtual ~ExprHasher() = default;
  size_t Hash(const PrimExpr& e);
  /// Hash contribution of a variable: dtype and first-appearance index.
  size_t HashVar(const VarNode* v);
  /// A definition of v: gives it a fresh index (so re-definitions hash like new vars).
  size_t DefineVar(const VarNode* v);

 protected:
  virtual size_t HashExtension(const PrimExpr& e) { return static_cast<size_t>(e->kind) * 0x9e3779b9u; }
  std::map<const VarNode*, size_t> index_;
  size_t next_ = 0;
};

/// Combines two hash values (boost::hash_combine's mixing).
inline size_t HashCombine(size_t seed, size_t v) {
  return seed ^ (v + 0x9e3779b97f4a7c15ULL + (seed << 6) + (seed >> 2));
}

/// Expression-only forms for layers below tir (BufferLoad compared by identity).
/// Code that can see TensorIR uses tir::StructuralEqual / StructuralHash
/// (tir/structural_equal.h), which also compare BufferLoads, Stmts and PrimFuncs;
/// the names differ so that the two never form an ambiguous overload set via ADL.
bool ExprStructuralEqual(const PrimExpr& a, const PrimExpr& b, bool map_free_vars = false);
size_t ExprStructuralHash(const PrimExpr& e);

}  // namespace tessera::ir
