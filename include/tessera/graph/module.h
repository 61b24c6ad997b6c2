// IRModule of the graph IR: global functions by name; "main" is the entry point.
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

 private:
  std::map<std::string, Function> functions_;
};

}  // namespace tessera::graph
