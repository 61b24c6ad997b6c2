// Helpers of the executor codegens: see primitive_call.h.
#include "primitive_call.h"

#include <algorithm>

#include "tessera/graph/functor.h"
#include "tessera/graph/printer.h"
#include "tessera/graph/transform/partition_graph.h"
#include "tessera/support/error.h"

namespace tessera::driver {
namespace {

/// "fused_conv2d_add_relu": the ops of a primitive function, in order, at most four.
std::string KernelBaseName(const graph::Function& fn) {
  std::vector<std::string> ops;
  graph::PostOrderVisit(fn->body, [&](const graph::Expr& e) {
    if (const auto* c = e->as<graph::CallNode>()) {
      if (const auto* op = c->op->as<graph::OpNode>()) {
        std::string n = op->name;
        if (n.rfind("nn.", 0) == 0) n = n.substr(3);
        for (char& ch : n) if (ch == '.') ch = '_';
        ops.push_back(n);
      }
    }
  });
  std::string name = "fused";
  for (size_t i = 0; i < ops.size() && i < 4; ++i) name += "_" + ops[i];
  return name;
}

}  // namespace

std::vector<int64_t> StaticShapeOf(const graph::Type& type, const std::string& what) {
  const auto* tt = type ? type->as<graph::TensorTypeNode>() : nullptr;
  TESSERA_ICHECK(tt != nullptr, what, " is not a tensor (type ", type ? type->str() : "<none>", ")");
  auto shape = graph::StaticShape(tt->shape);
  if (!shape) {
    TESSERA_THROW(UnsupportedError, what, " has the symbolic shape ", graph::ShapeStr(tt->shape),
                  ": the executors need static shapes; bind the symbolic dimensions at import");
  }
  return *shape;
}

DataType DTypeOf(const graph::Type& t) {
  const auto* tt = t ? t->as<graph::TensorTypeNode>() : nullptr;
  TESSERA_ICHECK(tt != nullptr, "expected a tensor type, got ", t ? t->str() : "<none>");
  return tt->dtype;
}

bool IsReshapeOnly(const graph::FunctionNode* fn) {
  if (fn->params.size() != 1) return false;
  graph::Expr e = fn->body;
  while (const auto* c = e->as<graph::CallNode>()) {
    const auto* op = c->op->as<graph::OpNode>();
    if (!op || (op->name != "reshape" && op->name != "expand_dims" && op->name != "squeeze") || c->args.size() != 1)
      return false;
    e = c->args[0];
  }
  return e == fn->params[0];
}

std::vector<std::string> RuntimeChecks(const graph::Function& fn) {
  std::vector<std::string> checks;
  graph::PostOrderVisit(fn->body, [&](const graph::Expr& e) {
    if (const auto* c = e->as<graph::CallNode>(); c && c->attrs.Has("source")) {
      const std::string& label = c->attrs.GetString("source");
      if (std::find(checks.begin(), checks.end(), label) == checks.end()) checks.push_back(label);
    }
  });
  return checks;
}

bool IsExternalCall(const graph::Expr& e) {
  const auto* c = e->as<graph::CallNode>();
  const auto* fn = c ? c->op->as<graph::FunctionNode>() : nullptr;
  return fn && graph::IsExternalFunction(*fn);
}

std::vector<std::pair<std::string, std::string>> GuardParams(const graph::Function& main,
                                                             const std::map<std::string, runtime::NDArray>& guards,
                                                             std::map<std::string, runtime::NDArray>& params) {
  std::vector<std::pair<std::string, std::string>> out;
  for (const auto& [name, value] : guards) {
    auto p = std::find_if(main->params.begin(), main->params.end(),
                          [&](const graph::Var& v) { return v->name_hint == name; });
    TESSERA_CHECK(p != main->params.end(), "input guard '", name, "' names no graph input");
    TESSERA_ICHECK(DTypeOf((*p)->checked_type()) == value.dtype() &&
                       StaticShapeOf((*p)->checked_type(), "graph input '" + name + "'") == value.shape(),
                   "the guard of input '", name, "' is ", value.dtype().str(), " ", runtime::ShapeToString(value.shape()),
                   ", not of the input's type ", (*p)->checked_type()->str());
    const std::string param = "p" + std::to_string(params.size());
    params[param] = value;
    out.emplace_back(name, param);
  }
  return out;
}

std::string KernelTable::KernelFor(const graph::Function& fn) {
  std::string key = graph::PrintExpr(fn);
  auto it = by_key_.find(key);
  std::string name;
  if (it != by_key_.end()) {
    name = it->second;
  } else {
    name = KernelBaseName(fn) + "_" + std::to_string(kernels_.size());
    by_key_[key] = name;
    kernels_.push_back({name, fn});
  }
  ++calls_[name];
  return name;
}

}  // namespace tessera::driver
