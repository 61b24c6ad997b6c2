#include "tessera/runtime/graph_plan.h"

#include <map>
#include <set>

#include <nlohmann/json.hpp>

#include "json_fields.h"
#include "tessera/runtime/ndarray.h"
#include "tessera/support/error.h"

namespace tessera::runtime {
namespace {

using json = nlohmann::json;

// Elements of a shape whose byte size was already checked not to overflow.
size_t NumElementsOf(const std::vector<int64_t>& shape) {
  size_t n = 1;
  for (int64_t d : shape) n *= static_cast<size_t>(d);
  return n;
}

}  // namespace

GraphPlan ParseGraphPlan(std::string_view text, const std::string& origin) {
  const JsonFields ctx(origin, "graph JSON",
                       "The graph and the library do not match or the library is corrupt; rebuild the model");
  const json root = ctx.ParseRoot(text, "tessera-graph");

  GraphPlan plan;
  std::map<int64_t, int> storage_index, value_index;

  const json& storages = ctx.Array(root, "storages", "the root");
  for (size_t i = 0; i < storages.size(); ++i) {
    std::string where = Entry("storages", i);
    int64_t id = ctx.Int(storages[i], "id", where);
    int64_t size = ctx.Int(storages[i], "size_bytes", where);
    if (size < 0) ctx.Fail(where, "negative size_bytes");
    if (!storage_index.emplace(id, static_cast<int>(plan.storages.size())).second)
      ctx.Fail(where, "duplicate storage id " + std::to_string(id));
    plan.storages.push_back({static_cast<size_t>(size)});
  }

  const json& values = ctx.Array(root, "values", "the root");
  for (size_t i = 0; i < values.size(); ++i) {
    const json& jv = values[i];
    std::string where = Entry("values", i);
    PlanValue v;
    v.id = ctx.Int(jv, "id", where);
    where = "value " + std::to_string(v.id);
    v.dtype = ctx.TensorDType(jv, "dtype", where);
    v.shape = ctx.Shape(jv, "shape", where);
    const size_t nbytes = ctx.NBytes(v.shape, v.dtype, where);
    std::string kind = ctx.String(jv, "kind", where);
    if (kind == "param") {
      v.kind = PlanValue::Kind::kParam;
      v.param = ctx.String(jv, "param", where);
    } else if (kind == "input" || kind == "intermediate") {
      v.kind = kind == "input" ? PlanValue::Kind::kInput : PlanValue::Kind::kIntermediate;
      int64_t sid = ctx.Int(jv, "storage", where);
      auto it = storage_index.find(sid);
      if (it == storage_index.end()) ctx.Fail(where, "unknown storage id " + std::to_string(sid));
      v.storage = it->second;
      int64_t offset = jv.contains("offset_bytes") ? ctx.Int(jv, "offset_bytes", where) : 0;
      if (offset < 0 || offset % 64 != 0)
        ctx.Fail(where, "offset_bytes " + std::to_string(offset) +
                            " must be a non-negative multiple of 64 (kernels get aligned pointers)");
      v.offset_bytes = static_cast<size_t>(offset);
      size_t capacity = plan.storages[v.storage].size_bytes;
      if (v.offset_bytes > capacity || nbytes > capacity - v.offset_bytes)
        ctx.Fail(where, v.dtype.str() + " " + ShapeToString(v.shape) + " (" + std::to_string(nbytes) +
                            " bytes) at offset " + std::to_string(offset) + " overflows storage " +
                            std::to_string(sid) + " of " + std::to_string(capacity) + " bytes");
    } else {
      ctx.Fail(where, "kind \"" + kind + "\" is not one of input, param, intermediate");
    }
    if (!value_index.emplace(v.id, static_cast<int>(plan.values.size())).second)
      ctx.Fail(Entry("values", i), "duplicate value id " + std::to_string(v.id));
    plan.values.push_back(std::move(v));
  }
  // Aliases (zero-copy reshapes), once every id is known: "alias_of" names the root value.
  for (size_t i = 0; i < values.size(); ++i) {
    if (!values[i].contains("alias_of")) continue;
    PlanValue& v = plan.values[i];
    const std::string where = "value " + std::to_string(v.id);
    const int64_t root_id = ctx.Int(values[i], "alias_of", where);
    auto it = value_index.find(root_id);
    if (it == value_index.end()) ctx.Fail(where, "alias_of names unknown value id " + std::to_string(root_id));
    const PlanValue& root = plan.values[it->second];
    if (v.kind != PlanValue::Kind::kIntermediate || root.kind == PlanValue::Kind::kParam || it->second == static_cast<int>(i) ||
        values[it->second].contains("alias_of"))
      ctx.Fail(where, "alias_of must name another input or intermediate value that is not itself an alias");
    if (root.storage != v.storage || root.offset_bytes != v.offset_bytes ||
        root.dtype.bytes() * NumElementsOf(root.shape) != v.dtype.bytes() * NumElementsOf(v.shape))
      ctx.Fail(where, "an alias must have the storage, offset and byte size of value " + std::to_string(root_id));
    v.alias_of = it->second;
  }

  auto value_ref = [&](const json& j, const std::string& where, const char* key) {
    int64_t id = ctx.IntValue(j, where, key);
    auto it = value_index.find(id);
    if (it == value_index.end()) ctx.Fail(where, "unknown value id " + std::to_string(id));
    return it->second;
  };

  auto parse_io = [&](const char* list, std::vector<PlanIO>& out) {
    const json& arr = ctx.Array(root, list, "the root");
    std::set<std::string> names;
    for (size_t i = 0; i < arr.size(); ++i) {
      std::string where = Entry(list, i);
      PlanIO io;
      io.name = ctx.String(arr[i], "name", where);
      io.value = value_ref(ctx.Field(arr[i], "value", where), where, "value");
      if (!names.insert(io.name).second) ctx.Fail(where, "duplicate name \"" + io.name + "\"");
      out.push_back(std::move(io));
    }
  };
  parse_io("inputs", plan.inputs);
  parse_io("outputs", plan.outputs);

  std::vector<int> listed(plan.values.size(), 0);
  for (size_t i = 0; i < plan.inputs.size(); ++i) {
    const PlanValue& v = plan.values[plan.inputs[i].value];
    if (v.kind != PlanValue::Kind::kInput)
      ctx.Fail(Entry("inputs", i), "input \"" + plan.inputs[i].name + "\" refers to value " +
                                       std::to_string(v.id) + ", whose kind is not \"input\"");
    if (listed[plan.inputs[i].value]++)
      ctx.Fail(Entry("inputs", i), "value " + std::to_string(v.id) + " is listed as an input twice");
  }
  for (size_t i = 0; i < plan.values.size(); ++i)
    if (plan.values[i].kind == PlanValue::Kind::kInput && !listed[i])
      ctx.Fail("value " + std::to_string(plan.values[i].id),
               "kind is \"input\" but no entry of \"inputs\" names it");

  const json& nodes = ctx.Array(root, "nodes", "the root");
  std::set<std::string> node_names;
  for (size_t i = 0; i < nodes.size(); ++i) {
    std::string where = Entry("nodes", i);
    PlanNode n;
    n.name = ctx.String(nodes[i], "name", where);
    where = "node \"" + n.name + "\"";
    n.kernel = ctx.String(nodes[i], "kernel", where);
    for (const json& a : ctx.Array(nodes[i], "args", where)) n.args.push_back(value_ref(a, where, "args"));
    if (nodes[i].contains("checks")) n.checks = ctx.Strings(nodes[i], "checks", where);
    if (!node_names.insert(n.name).second) ctx.Fail(Entry("nodes", i), "duplicate node name \"" + n.name + "\"");
    plan.nodes.push_back(std::move(n));
  }
  std::vector<std::string> input_names;
  for (const PlanIO& in : plan.inputs) input_names.push_back(in.name);
  for (auto& [input, param] : ReadGuards(ctx, root, input_names, "graph")) plan.guards.push_back({input, param});
  if (root.contains("external")) {  // BYOC kernels (optional)
    const json& ext = ctx.Array(root, "external", "the root");
    for (size_t i = 0; i < ext.size(); ++i) {
      const std::string where = Entry("external", i);
      PlanExternal x;
      x.symbol = ctx.String(ext[i], "symbol", where);
      x.compiler = ctx.String(ext[i], "compiler", where);
      x.ops = ctx.Strings(ext[i], "ops", where);
      plan.external.push_back(std::move(x));
    }
  }
  return plan;
}

}  // namespace tessera::runtime
