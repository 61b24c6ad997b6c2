// IRModule of the graph IR: global functions by name ("main" is the entry point) and the
// algebraic data types they use (Relay's global type definitions, arXiv 1904.08368 §3.3).
#pragma once

#include <map>
#include <string>

#include "tessera/graph/expr.h"

namespace tessera::graph {

class IRModule {
 public:
  IRModule() = default;
  /// A module whose "main" is `main`.
  static IRModule FromMain(Function main);

  /// Adds or replaces the global function `name`.
  void Add(const std::string& name, Function func) { functions_[name] = std::move(func); }
  bool Contains(const std::string& name) const { return functions_.count(name) != 0; }
  /// The function `name`; UserError naming it (and the functions present) when absent.
  const Function& Lookup(const std::string& name) const;
  /// Lookup("main").
  const Function& main() const { return Lookup("main"); }
  const std::map<std::string, Function>& functions() const { return functions_; }

  /// A module with `mod`'s type definitions and no function: what a pass that rebuilds every
  /// function starts from, so that the types survive it.
  static IRModule WithTypesOf(const IRModule& mod);
  /// Adds the type definition `data` (an identical definition again is a no-op); UserError when
  /// another type of that name, or another type's constructor of one of its constructors' names,
  /// is defined.
  void AddTypeDef(const TypeData& data);
  /// The type named `name`, or nullptr.
  TypeData FindTypeDef(const std::string& name) const;
  /// The constructor named `name` (of any type of the module), or nullptr.
  Constructor FindConstructor(const std::string& name) const;
  const std::map<std::string, TypeData>& type_defs() const { return type_defs_; }

 private:
  std::map<std::string, Function> functions_;
  std::map<std::string, TypeData> type_defs_;
};

}  // namespace tessera::graph
