// The TVMScript-like printer (tir/printer.h).
#include "tessera/tir/printer.h"

#include <cmath>
#include <map>
#include <set>
#include <sstream>

#include "tessera/ir/expr_functor.h"
#include "tessera/ir/op.h"

namespace tessera::tir {

namespace {

// A block iter var's kind as the text form names it: spatial(...), reduce(...), scan(...).
const char* IterTypeName(IterVarType t) {
  switch (t) {
    case IterVarType::kDataPar: return "spatial";
    case IterVarType::kCommReduce: return "reduce";
    case IterVarType::kOrdered: return "scan";
  }
  return "?";
}

using namespace tessera::ir;

// Binding strength of an expression's top operator (higher binds tighter).
int Precedence(ExprKind k) {
  switch (k) {
    case ExprKind::kOr: return 1;
    case ExprKind::kAnd: return 2;
    case ExprKind::kNot: return 3;
    case ExprKind::kEQ: case ExprKind::kNE: case ExprKind::kLT: case ExprKind::kLE:
    case ExprKind::kGT: case ExprKind::kGE: return 4;
    case ExprKind::kAdd: case ExprKind::kSub: return 5;
    case ExprKind::kMul: case ExprKind::kFloorDiv: case ExprKind::kFloorMod: return 6;
    default: return 10;
  }
}

const char* InfixOp(ExprKind k, DataType t) {
  switch (k) {
    case ExprKind::kAdd: return " + ";
    case ExprKind::kSub: return " - ";
    case ExprKind::kMul: return " * ";
    case ExprKind::kDiv: return t.is_float() || t.is_bfloat16() ? " / " : nullptr;
    case ExprKind::kFloorDiv: return " // ";
    case ExprKind::kFloorMod: return " % ";
    case ExprKind::kEQ: return " == ";
    case ExprKind::kNE: return " != ";
    case ExprKind::kLT: return " < ";
    case ExprKind::kLE: return " <= ";
    case ExprKind::kGT: return " > ";
    case ExprKind::kGE: return " >= ";
    case ExprKind::kAnd: return " and ";
    case ExprKind::kOr: return " or ";
    default: return nullptr;
  }
}

const char* CallName(ExprKind k) {
  switch (k) {
    case ExprKind::kDiv: return "truncdiv";
    case ExprKind::kMod: return "truncmod";
    case ExprKind::kMin: return "min";
    case ExprKind::kMax: return "max";
    default: return "?";
  }
}

class Printer {
 public:
  std::string Expr(const PrimExpr& e) {
    std::ostringstream os;
    PrintExpr(os, e, 0);
    return os.str();
  }

  void PrintStmt(const Stmt& s, int indent) {
    if (!s.defined()) return;
    switch (s->kind) {
      case StmtKind::kBufferStore: {
        auto* x = s.as<BufferStoreNode>();
        Line(indent) << BufName(x->buffer) << "[" << List(x->indices) << "] = " << Expr(x->value) << "\n";
        return;
      }
      case StmtKind::kFor: {
        auto* x = s.as<ForNode>();
        PrimExpr end = is_zero(x->min) ? x->extent : x->min + x->extent;
        auto& os = Line(indent) << "for " << VarName(x->loop_var.get_var()) << " in range(" << Expr(x->min)
                                << ", " << Expr(end) << ")";
        if (x->for_kind != ForKind::kSerial) os << " " << ForKindName(x->for_kind);
        os << ":";
        if (!x->annotations.empty()) os << "  # " << Annotations(x->annotations);
        os << "\n";
        PrintStmt(x->body, indent + 1);
        return;
      }
      case StmtKind::kSeqStmt:
        if (s.as<SeqStmtNode>()->seq.empty()) Line(indent) << "pass\n";
        for (const auto& st : s.as<SeqStmtNode>()->seq) PrintStmt(st, indent);
        return;
      case StmtKind::kIfThenElse: {
        auto* x = s.as<IfThenElseNode>();
        Line(indent) << "if " << Expr(x->condition) << ":\n";
        PrintStmt(x->then_case, indent + 1);
        if (x->else_case.defined()) {
          Line(indent) << "else:\n";
          PrintStmt(x->else_case, indent + 1);
        }
        return;
      }
      case StmtKind::kLetStmt: {
        auto* x = s.as<LetStmtNode>();
        Line(indent) << VarName(x->var.get_var()) << ": " << x->var.dtype().str() << " = " << Expr(x->value) << "\n";
        PrintStmt(x->body, indent);
        return;
      }
      case StmtKind::kEvaluate:
        Line(indent) << "evaluate(" << Expr(s.as<EvaluateNode>()->value) << ")\n";
        return;
      case StmtKind::kAllocate: {
        auto* x = s.as<AllocateNode>();
        Line(indent) << BufName(x->buffer) << " = allocate(" << Shape(x->buffer) << ", \"" << x->buffer->dtype.str()
                     << "\", \"" << x->buffer->scope << "\")\n";
        PrintStmt(x->body, indent);
        return;
      }
      case StmtKind::kBlock: PrintBlock(s.as<BlockNode>(), nullptr, indent); return;
      case StmtKind::kBlockRealize: {
        auto* x = s.as<BlockRealizeNode>();
        PrintBlock(x->block_node(), x, indent);
        return;
      }
    }
  }

  std::string Func(const PrimFunc& f) {
    std::ostringstream head;
    head << "@prim_func\ndef " << f->name << "(";
    // Shape vars are named first so that they keep their own names in every param's shape.
    std::string svars;
    for (size_t i = 0; i < f->shape_vars.size(); ++i) {
      svars += (i ? ", " : "") + VarName(f->shape_vars[i].get_var()) + ": " + f->shape_vars[i].dtype().str();
    }
    for (size_t i = 0; i < f->params.size(); ++i) {
      const Buffer& b = f->params[i];
      head << (i ? ", " : "") << BufName(b) << ": Buffer(" << Shape(b) << ", \"" << b->dtype.str() << "\")";
    }
    head << "):\n";
    if (!f->shape_vars.empty()) head << "  # shape_vars: " << svars << "\n";
    for (const auto& [k, v] : f->attrs) head << "  # attr " << k << " = \"" << v << "\"\n";
    PrintStmt(f->body, 1);
    return head.str() + out_.str();
  }

  std::ostringstream out_;

 private:
  std::ostream& Line(int indent) {
    for (int i = 0; i < indent; ++i) out_ << "  ";
    return out_;
  }

  std::string Unique(const std::string& base) {
    std::string name = base.empty() ? "v" : base;
    for (int k = 1; used_.count(name); ++k) name = base + "_" + std::to_string(k);
    used_.insert(name);
    return name;
  }
  std::string VarName(const VarNode* v) {
    auto it = var_names_.find(v);
    if (it != var_names_.end()) return it->second;
    return var_names_[v] = Unique(v->name_hint);
  }
  std::string BufName(const Buffer& b) {
    // Keyed by the data variable: a 1-d view made by FlattenBuffer is the same memory
    // and prints under the same name as the buffer it views.
    auto it = buf_names_.find(b->data.get_var());
    if (it != buf_names_.end()) return it->second;
    return buf_names_[b->data.get_var()] = Unique(b->name);
  }

  std::string List(const std::vector<PrimExpr>& v) {
    std::string s;
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + Expr(v[i]);
    return s;
  }
  std::string Shape(const Buffer& b) {
    std::string s = "(" + List(b->shape);
    return s + (b->shape.size() == 1 ? ",)" : ")");
  }
  std::string Annotations(const std::map<std::string, PrimExpr>& a) {
    std::string s = "{";
    for (const auto& [k, v] : a) s += (s.size() > 1 ? ", \"" : "\"") + k + "\": " + Expr(v);
    return s + "}";
  }
  std::string Region(const BufferRegion& r) {
    std::string s = BufName(r.buffer) + "[";
    for (size_t i = 0; i < r.region.size(); ++i) {
      const Range& rg = r.region[i];
      s += i ? ", " : "";
      if (is_one(rg.extent)) {
        s += Expr(rg.min);
      } else {
        s += Expr(rg.min) + ":" + Expr(is_zero(rg.min) ? rg.extent : rg.min + rg.extent);
      }
    }
    return s + "]";
  }

  void PrintBlock(const BlockNode* b, const BlockRealizeNode* realize, int indent) {
    Line(indent) << "with block(\"" << b->name_hint << "\"):\n";
    int in = indent + 1;
    for (size_t i = 0; i < b->iter_vars.size(); ++i) {
      const IterVar& iv = b->iter_vars[i];
      auto& os = Line(in) << VarName(iv.var.get_var()) << " = "
                          << IterTypeName(iv.iter_type) << "(" << Expr(iv.dom.min)
                          << ", " << Expr(iv.dom.extent);
      if (realize) os << ", " << Expr(realize->iter_values[i]);
      os << ")\n";
    }
    if (realize && !is_one(realize->predicate)) Line(in) << "where(" << Expr(realize->predicate) << ")\n";
    auto regions = [&](const char* what, const std::vector<BufferRegion>& rs) {
      auto& os = Line(in) << what << "(";
      for (size_t i = 0; i < rs.size(); ++i) os << (i ? ", " : "") << Region(rs[i]);
      os << ")\n";
    };
    if (!b->reads.empty() || !b->writes.empty()) {
      regions("reads", b->reads);
      regions("writes", b->writes);
    }
    if (!b->annotations.empty()) Line(in) << "block_attr(" << Annotations(b->annotations) << ")\n";
    for (const auto& buf : b->alloc_buffers) {
      Line(in) << BufName(buf) << " = alloc_buffer(" << Shape(buf) << ", \"" << buf->dtype.str() << "\""
               << (buf->scope == "global" ? "" : ", scope=\"" + buf->scope + "\"") << ")\n";
    }
    if (b->init.defined()) {
      Line(in) << "with init():\n";
      PrintStmt(b->init, in + 1);
    }
    PrintStmt(b->body, in);
  }

  void PrintImm(std::ostream& os, const PrimExpr& e) {
    if (auto* i = e.as<IntImmNode>()) {
      if (e.dtype().is_bool()) {
        os << (i->value ? "True" : "False");
      } else if (e.dtype() == DataType::Int(32)) {
        os << i->value;
      } else {
        os << e.dtype().str() << "(" << i->value << ")";
      }
      return;
    }
    double v = e.as<FloatImmNode>()->value;
    std::ostringstream num;
    num.precision(9);
    num << v;
    std::string s = num.str();
    if (std::isfinite(v) && s.find_first_of(".e") == std::string::npos) s += ".0";
    if (e.dtype() == DataType::Float(32) && std::isfinite(v)) {
      os << s << "f";
    } else {
      os << e.dtype().str() << "(" << s << ")";
    }
  }

  void PrintExpr(std::ostream& os, const PrimExpr& e, int parent_prec) {
    if (!e.defined()) {
      os << "<undefined>";
      return;
    }
    ExprKind k = e->kind;
    PrimExpr a, b;
    if (GetBinaryOperands(e, &a, &b)) {
      if (const char* op = InfixOp(k, a.dtype())) {
        int p = Precedence(k);
        bool paren = p < parent_prec;
        if (paren) os << "(";
        PrintExpr(os, a, p);
        os << op;
        PrintExpr(os, b, p + 1);  // left-associative: a - (b - c) keeps its parentheses
        if (paren) os << ")";
      } else {
        os << CallName(k) << "(";
        PrintExpr(os, a, 0);
        os << ", ";
        PrintExpr(os, b, 0);
        os << ")";
      }
      return;
    }
    switch (k) {
      case ExprKind::kIntImm: case ExprKind::kFloatImm:
        if (parent_prec > 5 && (e.as<IntImmNode>() ? e.as<IntImmNode>()->value < 0 : e.as<FloatImmNode>()->value < 0)) {
          os << "(";
          PrintImm(os, e);
          os << ")";
        } else {
          PrintImm(os, e);
        }
        return;
      case ExprKind::kStringImm: os << "\"" << e.as<StringImmNode>()->value << "\""; return;
      case ExprKind::kVar: os << VarName(e.as<VarNode>()); return;
      case ExprKind::kNot: {
        bool paren = Precedence(k) < parent_prec;
        os << (paren ? "(not " : "not ");
        PrintExpr(os, e.as<NotNode>()->a, Precedence(k));
        if (paren) os << ")";
        return;
      }
      case ExprKind::kSelect: {
        auto* x = e.as<SelectNode>();
        os << "select(" << Expr(x->condition) << ", " << Expr(x->true_value) << ", " << Expr(x->false_value) << ")";
        return;
      }
      case ExprKind::kCast: os << e.dtype().str() << "(" << Expr(e.as<CastNode>()->value) << ")"; return;
      case ExprKind::kCall: {
        auto* x = e.as<CallNode>();
        os << x->op << "(" << List(x->args) << ")";
        return;
      }
      case ExprKind::kRamp: {
        auto* x = e.as<RampNode>();
        os << "ramp(" << Expr(x->base) << ", " << Expr(x->stride) << ", " << x->lanes << ")";
        return;
      }
      case ExprKind::kBroadcast: {
        auto* x = e.as<BroadcastNode>();
        os << "broadcast(" << Expr(x->value) << ", " << x->lanes << ")";
        return;
      }
      case ExprKind::kLet: {
        auto* x = e.as<LetNode>();
        os << "let(" << VarName(x->var.get_var()) << " = " << Expr(x->value) << ", " << Expr(x->body) << ")";
        return;
      }
      case ExprKind::kBufferLoad: {
        auto* x = e.as<BufferLoadNode>();
        os << BufName(x->buffer) << "[" << List(x->indices) << "]";
        return;
      }
      case ExprKind::kReduce: os << "reduce(<te>)"; return;
      default: os << "<expr kind " << static_cast<int>(k) << ">"; return;
    }
  }

  std::map<const VarNode*, std::string> var_names_;
  std::map<const VarNode*, std::string> buf_names_;
  std::set<std::string> used_;
};

}  // namespace

std::string AsText(const PrimExpr& e) { return Printer().Expr(e); }
std::string AsText(const Stmt& s) {
  Printer p;
  p.PrintStmt(s, 0);
  return p.out_.str();
}
std::string AsText(const PrimFunc& f) { return Printer().Func(f); }
std::string AsText(const IRModule& m) {
  std::string s;
  for (const auto& f : m.functions()) s += AsText(f) + "\n";
  return s;
}

std::ostream& operator<<(std::ostream& os, const Stmt& s) { return os << AsText(s); }
std::ostream& operator<<(std::ostream& os, const PrimFunc& f) { return os << AsText(f); }

}  // namespace tessera::tir
