// PrimFunc: one kernel of TensorIR, and the IRModule of PrimFuncs a model compiles to.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "tessera/tir/stmt.h"

namespace tessera::tir {

/// A primitive tensor function. Its parameters are buffers, in the order of the kernel
/// calling convention (runtime/kernel_abi.h): inputs first, then outputs. The root of
/// `body` is, before lowering, a BlockRealize of the implicit "root" block.
///
/// Dynamic shapes (Relay's Any, arXiv 2006.03031): a dimension of a param buffer may be a bare
/// ir::Var (a symbolic extent, dtype int32 like every TE shape / index, te/tensor.h). `shape_vars`
/// lists those Vars once each, in calling-convention order (te::create_prim_func: first appearance
/// over params in order, dims outermost first); the kernel receives their values in one extra
/// argument slot (runtime/kernel_abi.h). Empty for a kernel of static shapes.
struct PrimFuncNode {
  std::string name;
  std::vector<Buffer> params;
  Stmt body;
  std::map<std::string, std::string> attrs;  ///< e.g. "global_symbol"
  std::vector<ir::Var> shape_vars;           ///< symbolic extents of params' shapes, ABI order
};

class PrimFunc {
 public:
  PrimFunc() = default;
  explicit PrimFunc(std::shared_ptr<const PrimFuncNode> n) : node_(std::move(n)) {}
  /// Throws InternalError when a shape var is listed twice or a param dim is a Var that is
  /// not among shape_vars.
  static PrimFunc make(std::string name, std::vector<Buffer> params, Stmt body,
                       std::map<std::string, std::string> attrs = {}, std::vector<ir::Var> shape_vars = {});
  bool defined() const { return node_.get() != nullptr; }
  const PrimFuncNode* operator->() const { return node_.get(); }
  const PrimFuncNode* get() const { return node_.get(); }
  /// A copy of this function with a new body (params, name, attrs and shape_vars kept).
  PrimFunc WithBody(Stmt body) const;

 private:
  std::shared_ptr<const PrimFuncNode> node_;
};

/// An ordered collection of PrimFuncs by name: what codegen turns into one object file.
class IRModule {
 public:
  void Add(const PrimFunc& func);  ///< throws InternalError on a duplicate name
  const PrimFunc& Lookup(const std::string& name) const;
  bool Contains(const std::string& name) const { return index_.count(name) != 0; }
  const std::vector<PrimFunc>& functions() const { return functions_; }
  /// Applies f to every function, returning the module of results (a module pass).
  template <typename F>
  IRModule Map(F&& f) const {
    IRModule out;
    for (const auto& fn : functions_) out.Add(f(fn));
    return out;
  }

 private:
  std::vector<PrimFunc> functions_;
  std::map<std::string, size_t> index_;
};

}  // namespace tessera::tir
