// Graph executor codegen: see include/tessera/driver/graph_executor_codegen.h.
#include "tessera/driver/graph_executor_codegen.h"

#include <algorithm>
#include <climits>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "primitive_call.h"
#include "tessera/driver/memory_plan.h"
#include "tessera/graph/functor.h"
#include "tessera/graph/transform/partition_graph.h"
#include "tessera/support/checked_math.h"
#include "tessera/support/error.h"

namespace tessera::driver {
namespace {

using graph::Expr;
using graph::ExprNode;

enum class ValueKind { kInput, kParam, kIntermediate };

struct Value {
  ValueKind kind;
  std::vector<int64_t> shape;
  DataType dtype;
  std::string param;       // kParam: its name
  int writer = -1;         // kIntermediate: the node writing it
  int last_reader = -1;    // last node reading it
  bool is_output = false;
  int alias_of = -1;       // a zero-copy reshape: the value whose storage it shares (a root)

  static Value Make(ValueKind kind, std::vector<int64_t> shape, DataType dtype, std::string param = "") {
    Value v;
    v.kind = kind;
    v.shape = std::move(shape);
    v.dtype = dtype;
    v.param = std::move(param);
    return v;
  }
};

struct Node {
  std::string name, kernel;
  std::vector<int> args;  // value ids, inputs then the output
  std::vector<std::string> checks;  // the model nodes whose run-time checks the kernel makes
};

class Builder {
 public:
  ExecutorPlan Build(const graph::Function& main, const std::vector<std::string>& output_names,
                     const std::map<std::string, runtime::NDArray>& input_guards) {
    guards_ = GuardParams(main, input_guards, params_);
    for (const auto& p : main->params) {
      int id = NewValue(Value::Make(ValueKind::kInput, StaticShapeOf(p->checked_type(), "graph input '" + p->name_hint + "'"),
                         DTypeOf(p->checked_type())));
      value_of_[p.get()] = id;
      inputs_.push_back({p->name_hint, id});
    }
    std::vector<int> results;
    if (const auto* tuple = main->body->as<graph::TupleNode>()) {
      for (const auto& f : tuple->fields) results.push_back(Visit(f));
    } else {
      results.push_back(Visit(main->body));
    }
    TESSERA_ICHECK(results.size() == output_names.size(), "main has ", results.size(), " results but ",
                   output_names.size(), " output names were given");
    for (int r : results) values_[Root(r)].is_output = values_[r].is_output = true;
    return Finish(results, output_names);
  }

 private:
  int NewValue(Value v) {
    values_.push_back(std::move(v));
    return static_cast<int>(values_.size()) - 1;
  }

  int Visit(const Expr& e) {
    if (auto it = value_of_.find(e.get()); it != value_of_.end()) return it->second;
    int id = -1;
    if (const auto* c = e->as<graph::ConstantNode>()) {
      std::string name = "p" + std::to_string(params_.size());
      params_[name] = c->data;
      id = NewValue(Value::Make(ValueKind::kParam, c->data.shape(), c->data.dtype(), name));
    } else if (const auto* call = e->as<graph::CallNode>()) {
      id = VisitCall(call);
    } else if (const auto* get = e->as<graph::TupleGetItemNode>(); get && IsExternalCall(get->tuple)) {
      Visit(get->tuple);
      const std::vector<int>& fields = fields_of_.at(get->tuple.get());
      TESSERA_ICHECK(get->index >= 0 && get->index < static_cast<int>(fields.size()), "tuple index out of range");
      id = fields[get->index];
    } else if (e->as<graph::VarNode>()) {
      TESSERA_THROW(InternalError, "graph executor codegen: free variable in main");
    } else {
      TESSERA_THROW(UnsupportedError, "graph executor codegen: main may only hold calls of primitive functions, "
                    "constants and an output tuple; found a node of another kind (a program with control flow goes "
                    "to VMCodegen, driver/vm_codegen.h)");
    }
    value_of_[e.get()] = id;
    return id;
  }

  /// The value whose storage `v` uses (itself unless it is an alias).
  int Root(int v) const { return values_[v].alias_of >= 0 ? values_[v].alias_of : v; }

  int VisitCall(const graph::CallNode* call) {
    const auto* fn = call->op->as<graph::FunctionNode>();
    if (fn && graph::IsExternalFunction(*fn)) return VisitExternalCall(call, fn);
    TESSERA_ICHECK(fn != nullptr && fn->attrs.GetInt("Primitive", 0) == 1,
                   "graph executor codegen expects calls of primitive functions: run FuseOps first");
    std::vector<int> args;
    for (const auto& a : call->args) args.push_back(Visit(a));
    if (IsReshapeOnly(fn) && values_[args[0]].kind != ValueKind::kParam) {
      // Zero-copy reshape: same storage, offset 0, no kernel call. The root's lifetime grows
      // to cover the alias's readers (VisitCall updates the root's last_reader).
      int out = NewValue(Value::Make(ValueKind::kIntermediate, StaticShapeOf(call->checked_type(), "a reshape output"),
                          DTypeOf(call->checked_type())));
      values_[out].alias_of = Root(args[0]);
      return out;
    }
    const int node_index = static_cast<int>(nodes_.size());
    for (int a : args) values_[a].last_reader = values_[Root(a)].last_reader = node_index;
    int out = NewValue(Value::Make(ValueKind::kIntermediate, StaticShapeOf(call->checked_type(), "a kernel output"),
                        DTypeOf(call->checked_type())));
    values_[out].writer = node_index;
    args.push_back(out);
    graph::Function fn_ref = std::static_pointer_cast<const graph::FunctionNode>(call->op);
    std::string kernel = kernels_.KernelFor(fn_ref);
    nodes_.push_back({kernel + "_n" + std::to_string(node_index), kernel, std::move(args), RuntimeChecks(fn_ref)});
    return out;
  }

  // A call of an external function: one node, kernel = its global_symbol, outputs per result.
  int VisitExternalCall(const graph::CallNode* call, const graph::FunctionNode* fn) {
    const std::string symbol = fn->attrs.GetString("global_symbol", "");
    const std::string compiler = fn->attrs.GetString("Compiler");
    TESSERA_ICHECK(!symbol.empty(), "external function of ", compiler, " has no global_symbol");
    std::vector<int> args;
    std::vector<bool> constant;
    for (const auto& a : call->args) {
      args.push_back(Visit(a));
      constant.push_back(values_[args.back()].kind == ValueKind::kParam);
    }
    const int node_index = static_cast<int>(nodes_.size());
    for (int a : args) values_[a].last_reader = values_[Root(a)].last_reader = node_index;
    std::vector<graph::Type> results;
    if (const auto* tt = call->checked_type()->as<graph::TupleTypeNode>()) results = tt->fields;
    else results.push_back(call->checked_type());
    std::vector<int> outs;
    for (const auto& t : results) {
      int out = NewValue(Value::Make(ValueKind::kIntermediate, StaticShapeOf(t, "an output of " + symbol), DTypeOf(t)));
      values_[out].writer = node_index;
      outs.push_back(out);
      args.push_back(out);
    }
    if (call->checked_type()->as<graph::TupleTypeNode>()) fields_of_[call] = outs;
    auto known = std::find_if(externals_.begin(), externals_.end(), [&](const ExternalFunction& x) { return x.symbol == symbol; });
    if (known == externals_.end()) {
      externals_.push_back({symbol, compiler, std::static_pointer_cast<const graph::FunctionNode>(call->op), constant});
    } else {
      TESSERA_ICHECK(known->function.get() == fn, "two external functions are named ", symbol);
      for (size_t i = 0; i < constant.size(); ++i) known->constant_params[i] = known->constant_params[i] && constant[i];
    }
    nodes_.push_back({symbol + "_n" + std::to_string(node_index), symbol, std::move(args)});
    return outs.size() == 1 && !call->checked_type()->as<graph::TupleTypeNode>() ? outs[0] : -1;
  }

  /// The bytes of value v; UserError naming it when they overflow int64.
  int64_t ByteSize(const Value& val, size_t v) const {
    std::string what;
    if (val.kind == ValueKind::kInput) {
      for (const auto& [name, id] : inputs_)
        if (id == static_cast<int>(v)) what = "the size of graph input '" + name + "'";
    } else {
      what = "the size of the output of node '" + nodes_[val.writer].name + "'";
    }
    what += " " + runtime::ShapeToString(val.shape) + " " + val.dtype.str();
    int64_t bytes = val.dtype.bytes();
    for (int64_t d : val.shape) bytes = CheckedMul(bytes, d, what);
    CheckedAdd(bytes, 63, what);  // the planner rounds it up to a multiple of 64
    return bytes;
  }

  ExecutorPlan Finish(const std::vector<int>& results, const std::vector<std::string>& output_names) {
    // Storage planning over inputs (live throughout) and intermediates.
    std::vector<PlannedTensor> planned;
    std::vector<int> planned_value;
    size_t unplanned = 0;
    for (size_t v = 0; v < values_.size(); ++v) {
      const Value& val = values_[v];
      if (val.kind == ValueKind::kParam || val.alias_of >= 0) continue;
      PlannedTensor t;
      t.bytes = static_cast<size_t>(ByteSize(val, v));
      t.first_node = val.kind == ValueKind::kInput ? -1 : val.writer;
      t.last_node = (val.kind == ValueKind::kInput || val.is_output) ? INT32_MAX : val.last_reader;
      unplanned += (t.bytes + 63) / 64 * 64;
      planned.push_back(t);
      planned_value.push_back(static_cast<int>(v));
    }
    MemoryPlan plan = PlanMemory(planned);
    std::vector<int> storage_of(values_.size(), -1);
    for (size_t i = 0; i < planned.size(); ++i) storage_of[planned_value[i]] = plan.storage_of[i];
    for (size_t v = 0; v < values_.size(); ++v)
      if (values_[v].alias_of >= 0) storage_of[v] = storage_of[values_[v].alias_of];

    nlohmann::json j;
    j["format"] = "tessera-graph";
    j["version"] = 1;
    j["storages"] = nlohmann::json::array();
    for (size_t s = 0; s < plan.storage_bytes.size(); ++s)
      j["storages"].push_back({{"id", s}, {"size_bytes", plan.storage_bytes[s]}});
    j["values"] = nlohmann::json::array();
    for (size_t v = 0; v < values_.size(); ++v) {
      const Value& val = values_[v];
      nlohmann::json jv = {{"id", v}, {"dtype", val.dtype.str()}, {"shape", val.shape}};
      if (val.kind == ValueKind::kParam) {
        jv["kind"] = "param";
        jv["param"] = val.param;
      } else {
        jv["kind"] = val.kind == ValueKind::kInput ? "input" : "intermediate";
        jv["storage"] = storage_of[v];
        jv["offset_bytes"] = 0;
        if (val.alias_of >= 0) jv["alias_of"] = val.alias_of;
      }
      j["values"].push_back(jv);
    }
    j["inputs"] = nlohmann::json::array();
    for (const auto& [name, id] : inputs_) j["inputs"].push_back({{"name", name}, {"value", id}});
    j["outputs"] = nlohmann::json::array();
    for (size_t i = 0; i < results.size(); ++i)
      j["outputs"].push_back({{"name", output_names[i]}, {"value", results[i]}});
    j["nodes"] = nlohmann::json::array();
    for (const Node& n : nodes_) {
      nlohmann::json jn = {{"name", n.name}, {"kernel", n.kernel}, {"args", n.args}};
      if (!n.checks.empty()) jn["checks"] = n.checks;
      j["nodes"].push_back(std::move(jn));
    }
    if (!guards_.empty()) {
      j["guards"] = nlohmann::json::array();
      for (const auto& [input, param] : guards_) j["guards"].push_back({{"input", input}, {"param", param}});
    }
    if (!externals_.empty()) {
      j["external"] = nlohmann::json::array();
      for (const ExternalFunction& x : externals_) {
        const std::vector<std::string> ops = graph::transform::ExternalFunctionOps(*x.function);
        j["external"].push_back({{"symbol", x.symbol}, {"compiler", x.compiler}, {"ops", ops}});
      }
    }

    ExecutorPlan out;
    out.graph_json = j.dump();
    out.params = std::move(params_);
    out.kernels = std::move(kernels_.kernels());
    out.externals = std::move(externals_);
    out.num_nodes = static_cast<int>(nodes_.size());
    out.kernel_calls = kernels_.calls();
    out.storage_bytes = plan.TotalBytes();
    out.unplanned_bytes = unplanned;
    return out;
  }

  std::vector<Value> values_;
  std::vector<Node> nodes_;
  std::vector<std::pair<std::string, int>> inputs_;
  std::unordered_map<const ExprNode*, int> value_of_;
  std::map<std::string, runtime::NDArray> params_;
  KernelTable kernels_;
  std::vector<ExternalFunction> externals_;
  std::vector<std::pair<std::string, std::string>> guards_;  // input name, param holding its value
  std::unordered_map<const ExprNode*, std::vector<int>> fields_of_;  // a tuple-typed external call's outputs
};

}  // namespace

ExecutorPlan GraphExecutorCodegen(const graph::IRModule& fused, const std::vector<std::string>& output_names,
                                  const std::map<std::string, runtime::NDArray>& input_guards) {
  return Builder().Build(fused.main(), output_names, input_guards);
}

}  // namespace tessera::driver
