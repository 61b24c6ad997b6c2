// Builds small ONNX models in tests with the generated protobuf classes.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "onnx.pb.h"
#include "tessera/frontend/onnx_importer.h"
#include "tessera/graph/functor.h"

namespace tessera::frontend::testing {

class ModelBuilder {
 public:
  explicit ModelBuilder(int64_t opset) {
    model_.set_ir_version(8);
    model_.set_producer_name("tessera-test");
    auto* o = model_.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    model_.mutable_graph()->set_name("test");
  }
  onnx::GraphProto& graph() { return *model_.mutable_graph(); }
  onnx::ModelProto& model() { return model_; }

  /// A graph input; a negative extent becomes the symbolic dim "batch_size".
  void Input(const std::string& name, const std::vector<int64_t>& shape, int elem = onnx::TensorProto::FLOAT) {
    SetType(graph().add_input(), name, shape, elem);
  }
  void Output(const std::string& name, const std::vector<int64_t>& shape, int elem = onnx::TensorProto::FLOAT) {
    SetType(graph().add_output(), name, shape, elem);
  }
  void InitFloats(const std::string& name, const std::vector<int64_t>& dims, const std::vector<float>& v) {
    auto* t = graph().add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t->add_dims(d);
    for (float x : v) t->add_float_data(x);
  }
  void InitInts(const std::string& name, const std::vector<int64_t>& v) {
    auto* t = graph().add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::INT64);
    t->add_dims(static_cast<int64_t>(v.size()));
    for (int64_t x : v) t->add_int64_data(x);
  }
  onnx::NodeProto* Node(const std::string& op, const std::vector<std::string>& in,
                        const std::vector<std::string>& out, const std::string& name = "") {
    auto* n = graph().add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (const auto& s : in) n->add_input(s);
    for (const auto& s : out) n->add_output(s);
    return n;
  }
  static void AttrInt(onnx::NodeProto* n, const std::string& name, int64_t v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(v);
  }
  static void AttrFloat(onnx::NodeProto* n, const std::string& name, float v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::FLOAT);
    a->set_f(v);
  }
  static void AttrInts(onnx::NodeProto* n, const std::string& name, const std::vector<int64_t>& v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a->add_ints(x);
  }
  static void AttrString(onnx::NodeProto* n, const std::string& name, const std::string& v) {
    auto* a = n->add_attribute();
    a->set_name(name);
    a->set_type(onnx::AttributeProto::STRING);
    a->set_s(v);
  }

  ImportResult Import(const ImportOptions& opts = {}) { return FromONNXBytes(model_.SerializeAsString(), opts, "test.onnx"); }

 private:
  static void SetType(onnx::ValueInfoProto* vi, const std::string& name, const std::vector<int64_t>& shape, int elem) {
    vi->set_name(name);
    auto* tt = vi->mutable_type()->mutable_tensor_type();
    tt->set_elem_type(elem);
    auto* s = tt->mutable_shape();
    for (int64_t d : shape) {
      auto* dim = s->add_dim();
      if (d < 0) dim->set_dim_param("batch_size"); else dim->set_dim_value(d);
    }
  }
  onnx::ModelProto model_;
};

/// Number of calls of each op in `e`.
inline std::map<std::string, int> OpCounts(const graph::Expr& e) {
  std::map<std::string, int> counts;
  graph::PostOrderVisit(e, [&](const graph::Expr& x) {
    if (auto* c = x->as<graph::CallNode>())
      if (auto* op = c->op->as<graph::OpNode>()) ++counts[op->name];
  });
  return counts;
}

/// The (single) call of op `name` in `e`, or nullptr.
inline const graph::CallNode* FindCall(const graph::Expr& e, const std::string& name) {
  const graph::CallNode* found = nullptr;
  graph::PostOrderVisit(e, [&](const graph::Expr& x) {
    if (auto* c = x->as<graph::CallNode>())
      if (auto* op = c->op->as<graph::OpNode>(); op && op->name == name) found = c;
  });
  return found;
}

/// The printed return type of an imported model's main function.
inline std::string RetType(const ImportResult& r) { return r.module.main()->ret_type->str(); }
/// The body of an imported model's main function.
inline const graph::Expr& Body(const ImportResult& r) { return r.module.main()->body; }

}  // namespace tessera::frontend::testing
