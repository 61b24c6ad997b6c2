// The operator registry: every graph op is defined once, in src/graph/op/<group>.cc
// (nn.cc, tensor.cc, transform.cc, reduce.cc), with its name, arity, type relation and
// op pattern kind. The loop-level compute (TE) is attached later by the topi layer through
// SetCompute, so the graph layer does not depend on te.
//
// Registration is explicit (no static initializers): OpRegistry::Global() calls each
// group's Register*Ops function once, on first use.
#pragma once

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "tessera/graph/attrs.h"
#include "tessera/graph/type.h"

namespace tessera::te {
class Tensor;
}  // namespace tessera::te

namespace tessera::graph {

/// How an op may be fused (TVM's OpPatternKind; FuseOps reads it).
enum OpPatternKind {
  kElemWise = 0,
  kBroadcast = 1,
  kInjective = 2,
  kCommReduce = 3,
  kOutEWiseFusable = 4,
  kTuple = 7,
  kOpaque = 8,
};

/// Computes the output type from the argument types and attrs. Throws UserError with a
/// clear message on incompatible shapes or dtypes (InferType adds the op and arg types).
using TypeRelation = std::function<Type(const std::vector<Type>& arg_types, const Attrs& attrs)>;

/// Loop-level compute of an op, filled in by the topi layer.
using FCompute = std::function<std::vector<te::Tensor>(const Attrs& attrs, const std::vector<te::Tensor>& inputs,
                                                       const Type& out_type)>;

struct OpInfo {
  std::string name;
  /// Number of arguments; -1 for variadic.
  int num_inputs = 0;
  std::string description;
  TypeRelation type_relation;
  OpPatternKind pattern = kOpaque;
  FCompute compute;  ///< empty until SetCompute
};

class OpRegistry {
 public:
  /// The process-wide registry with every built-in op registered.
  static OpRegistry& Global();

  /// Registers a new op; InternalError if the name is taken.
  OpInfo& Register(const std::string& name, int num_inputs, OpPatternKind pattern, TypeRelation rel,
                   std::string description = "");
  /// The op `name`, or nullptr.
  const OpInfo* Find(const std::string& name) const;
  /// The op `name`; InternalError naming it when it is not registered.
  const OpInfo& Get(const std::string& name) const;
  bool Has(const std::string& name) const { return Find(name) != nullptr; }

  void SetCompute(const std::string& name, FCompute compute);
  /// The compute of `name`; empty std::function when none was set.
  const FCompute& GetCompute(const std::string& name) const;

  /// All registered op names, sorted.
  std::vector<std::string> ListOps() const;

 private:
  OpRegistry() = default;
  std::map<std::string, OpInfo> ops_;
};

}  // namespace tessera::graph
