// transform_layout (TensorIR, arXiv 2207.04296, §3.3 schedule transformations; TVM's
// tir.Schedule.transform_layout): give an intermediate buffer a new shape through a
// bijective quasi-affine index map and rewrite every access of it.
//
// The map is analysed as TVM's iter-map detection does for the forms it supports: every
// output index is a mixed-radix sum  sum_t coeff_t * split_t  of "splits"
// (x // lower) % extent of the input indices x, with coeff_0 = 1 and
// coeff_{t+1} = coeff_t * extent_t; and for every input index x (extent E) its splits
// tile it exactly: lower_0 = 1, lower_{s+1} = lower_s * extent_s, product = E. Such a map
// is a bijection from the old index box onto the new one, whose extents it gives.
#include <algorithm>

#include "tessera/tir/printer.h"
#include "utils.h"

namespace tessera::tir {

using namespace sched;  // NOLINT
using ir::as_const_int;
using ir::make_const;

namespace {
constexpr const char* kPrim = "transform_layout";

/// (x // lower) % extent of input index `dim`.
struct Split {
  int dim = 0;
  int64_t lower = 1, extent = 1;
};
struct Term {
  Split split;
  int64_t coeff = 1;
};

class MapAnalyzer {
 public:
  MapAnalyzer(const IndexMap& map, const Buffer& buf) : map_(map), buf_(buf) {
    for (size_t d = 0; d < map.initial_indices.size(); ++d) dims_[map.initial_indices[d].get_var()] = static_cast<int>(d);
    for (int d = 0; d < buf.ndim(); ++d) {
      int64_t e;
      if (!as_const_int(buf->shape[d], &e)) {
        TESSERA_THROW(ScheduleError, kPrim, ": dimension ", d, " of buffer '", buf->name, "' is not a constant");
      }
      extents_.push_back(e);
    }
  }

  /// Checks the map and returns its canonical form (same variables) and the new shape.
  IndexMap Run(std::vector<int64_t>* new_shape) {
    std::vector<std::vector<Term>> outputs;
    for (size_t j = 0; j < map_.final_indices.size(); ++j) {
      out_ = static_cast<int>(j);
      std::vector<Term> terms;
      int64_t c = 0;
      Decompose(map_.final_indices[j], 1, &terms, &c);
      terms.erase(std::remove_if(terms.begin(), terms.end(), [](const Term& t) { return t.coeff == 0; }), terms.end());
      if (c != 0) {
        Fail("output ", j, " (", AsText(map_.final_indices[j]), ") has a constant offset ", c,
             "; the map must be onto the new shape (padding and offsets are not supported)");
      }
      // Mixed radix: coefficients 1, e_0, e_0 * e_1, ...
      std::sort(terms.begin(), terms.end(), [](const Term& a, const Term& b) { return a.coeff < b.coeff; });
      int64_t expect = 1;
      for (const auto& t : terms) {
        if (t.coeff != expect) {
          Fail("the map is not bijective: output ", j, " (", AsText(map_.final_indices[j]),
               ") is not a fuse a * extent(b) + b of its parts (a coefficient ", t.coeff, " where ", expect,
               " is needed)");
        }
        expect *= t.split.extent;
      }
      new_shape->push_back(expect);
      outputs.push_back(std::move(terms));
    }
    // Every input index is tiled exactly by its splits.
    std::vector<std::vector<Split>> per_dim(extents_.size());
    for (const auto& terms : outputs) {
      for (const auto& t : terms) per_dim[t.split.dim].push_back(t.split);
    }
    for (size_t d = 0; d < per_dim.size(); ++d) {
      auto& splits = per_dim[d];
      const std::string name = map_.initial_indices[d]->name_hint;
      if (splits.empty() && extents_[d] != 1) {
        Fail("the map is not bijective: index '", name, "' (extent ", extents_[d], ") is not used");
      }
      std::sort(splits.begin(), splits.end(),
                [](const Split& a, const Split& b) { return a.lower != b.lower ? a.lower < b.lower : a.extent < b.extent; });
      int64_t covered = 1;
      for (const auto& s : splits) {
        if (s.lower != covered) {
          Fail("the map is not bijective: the parts of index '", name, "' ",
               s.lower < covered ? "overlap" : "leave a gap", " (a part starting at ", s.lower, " where ", covered,
               " is needed)");
        }
        covered *= s.extent;
      }
      if (!splits.empty() && covered != extents_[d]) {
        Fail("the map is not bijective: the parts of index '", name, "' cover ", covered, " of its ", extents_[d],
             " values");
      }
    }
    // The canonical form: each output as the sum of its parts, largest coefficient first.
    IndexMap canon;
    canon.initial_indices = map_.initial_indices;
    for (size_t j = 0; j < outputs.size(); ++j) {
      DataType t = buf_->shape.empty() ? DataType::Int(32) : buf_->shape[0].dtype();
      PrimExpr e;
      for (auto it = outputs[j].rbegin(); it != outputs[j].rend(); ++it) {
        PrimExpr a = Atom(it->split, t);
        if (it->coeff != 1) a = a * make_const(t, it->coeff);
        e = e.defined() ? e + a : a;
      }
      canon.final_indices.push_back(e.defined() ? e : make_const(t, 0));
    }
    return canon;
  }

 private:
  template <typename... Args>
  [[noreturn]] void Fail(Args&&... args) const {
    TESSERA_THROW(ScheduleError, kPrim, ": index map ", map_.str(), " on buffer '", buf_->name, "': ",
                  std::forward<Args>(args)...);
  }

  PrimExpr Atom(const Split& s, DataType t) const {
    PrimExpr x = map_.initial_indices[s.dim];
    int64_t e = extents_[s.dim];
    if (s.lower == 1 && s.extent == e) return x;
    if (s.lower == 1) return ir::floormod(x, make_const(t, s.extent));
    if (s.lower * s.extent == e) return ir::floordiv(x, make_const(t, s.lower));
    return ir::floormod(ir::floordiv(x, make_const(t, s.lower)), make_const(t, s.extent));
  }

  int Dim(const PrimExpr& e) const {
    if (auto* v = e.as<ir::VarNode>()) {
      auto it = dims_.find(v);
      if (it == dims_.end()) {
        Fail("output ", out_, " uses variable '", v->name_hint, "', which is not one of the map's indices");
      }
      return it->second;
    }
    return -1;
  }

  void CheckDivides(int dim, int64_t c, const PrimExpr& e) const {
    if (c <= 0) Fail("output ", out_, " (", AsText(e), ") divides by ", c, "; divisors must be positive constants");
    if (extents_[dim] % c != 0) {
      Fail("dimension ", dim, " ('", map_.initial_indices[dim]->name_hint, "') has extent ", extents_[dim],
           ", which is not divisible by ", c, "; transform_layout does not pad (pad_value is not supported)");
    }
  }

  /// The split an atom is, or Fail for a form outside the supported quasi-affine ones.
  Split AtomSplit(const PrimExpr& e) const {
    int d;
    int64_t c1, c2;
    if ((d = Dim(e)) >= 0) return Split{d, 1, extents_[d]};
    if (auto* fd = e.as<ir::FloorDivNode>(); fd && as_const_int(fd->b, &c1)) {
      if ((d = Dim(fd->a)) >= 0) {  // x // c
        CheckDivides(d, c1, e);
        return Split{d, c1, extents_[d] / c1};
      }
      if (auto* fm = fd->a.as<ir::FloorModNode>(); fm && as_const_int(fm->b, &c2) && (d = Dim(fm->a)) >= 0) {
        CheckDivides(d, c2, e);  // (x % c2) // c1, c1 | c2
        if (c1 <= 0 || c2 % c1 != 0) Fail("output ", out_, " (", AsText(e), "): ", c1, " does not divide ", c2);
        return Split{d, c1, c2 / c1};
      }
    }
    if (auto* fm = e.as<ir::FloorModNode>(); fm && as_const_int(fm->b, &c2)) {
      if ((d = Dim(fm->a)) >= 0) {  // x % c
        CheckDivides(d, c2, e);
        return Split{d, 1, c2};
      }
      if (auto* fd = fm->a.as<ir::FloorDivNode>(); fd && as_const_int(fd->b, &c1) && (d = Dim(fd->a)) >= 0) {
        if (c1 <= 0 || c2 <= 0) Fail("output ", out_, " (", AsText(e), "): divisors must be positive constants");
        CheckDivides(d, c1 * c2, e);  // (x // c1) % c2
        return Split{d, c1, c2};
      }
    }
    Fail("output ", out_, " (", AsText(e),
         ") is not quasi-affine in the supported forms (an index x, x // c, x % c, (x // c1) % c2, sums of "
         "constant multiples of these); other maps are not supported");
  }

  void Decompose(const PrimExpr& e, int64_t scale, std::vector<Term>* terms, int64_t* c) const {
    int64_t v;
    if (auto* imm = e.as<ir::IntImmNode>()) {
      *c += scale * imm->value;
    } else if (auto* add = e.as<ir::AddNode>()) {
      Decompose(add->a, scale, terms, c);
      Decompose(add->b, scale, terms, c);
    } else if (auto* sub = e.as<ir::SubNode>()) {
      Decompose(sub->a, scale, terms, c);
      Decompose(sub->b, -scale, terms, c);
    } else if (auto* mul = e.as<ir::MulNode>(); mul && as_const_int(mul->b, &v)) {
      Decompose(mul->a, scale * v, terms, c);
    } else if (mul && as_const_int(mul->a, &v)) {
      Decompose(mul->b, scale * v, terms, c);
    } else {
      Split s = AtomSplit(e);
      for (auto& t : *terms) {
        if (t.split.dim == s.dim && t.split.lower == s.lower && t.split.extent == s.extent) {
          t.coeff += scale;
          return;
        }
      }
      terms->push_back(Term{s, scale});
    }
  }

  const IndexMap& map_;
  const Buffer& buf_;
  std::map<const VarNode*, int> dims_;
  std::vector<int64_t> extents_;
  int out_ = 0;
};

/// Rewrites every use of `from` (loads, stores, read / write regions, alloc_buffers) to `to`.
class LayoutRewriter : public StmtExprMutator {
 public:
  LayoutRewriter(Buffer from, Buffer to, IndexMap map) : from_(std::move(from)), to_(std::move(to)), map_(std::move(map)) {}

 protected:
  PrimExpr VisitExpr_(const BufferLoadNode* op, const PrimExpr& e) override {
    PrimExpr n = StmtExprMutator::VisitExpr_(op, e);
    auto* l = n.as<BufferLoadNode>();
    return l->buffer.same_as(from_) ? BufferLoadNode::make(to_, MapIndices(l->indices)) : n;
  }
  Stmt VisitStmt_(const BufferStoreNode* op, const Stmt& s) override {
    Stmt n = StmtExprMutator::VisitStmt_(op, s);
    auto* st = n.as<BufferStoreNode>();
    return st->buffer.same_as(from_) ? BufferStoreNode::make(to_, st->value, MapIndices(st->indices)) : n;
  }
  Stmt VisitStmt_(const BlockNode* op, const Stmt& s) override {
    Stmt n = StmtExprMutator::VisitStmt_(op, s);
    auto* b = n.as<BlockNode>();
    bool uses = false;
    for (const auto& r : b->reads) uses |= r.buffer.same_as(from_);
    for (const auto& r : b->writes) uses |= r.buffer.same_as(from_);
    for (const auto& a : b->alloc_buffers) uses |= a.same_as(from_);
    if (!uses) return n;
    auto regions = [&](std::vector<BufferRegion> rs) {
      for (auto& r : rs) {
        if (r.buffer.same_as(from_)) r = MapRegion(r);
      }
      return rs;
    };
    std::vector<Buffer> allocs = b->alloc_buffers;
    for (auto& a : allocs) {
      if (a.same_as(from_)) a = to_;
    }
    return BlockNode::make(b->name_hint, b->iter_vars, regions(b->reads), regions(b->writes), b->body, b->init, allocs,
                           b->annotations);
  }

 private:
  std::vector<PrimExpr> MapIndices(const std::vector<PrimExpr>& idx) const {
    std::map<const VarNode*, PrimExpr> vmap;
    for (size_t d = 0; d < idx.size(); ++d) vmap[map_.initial_indices[d].get_var()] = idx[d];
    std::vector<PrimExpr> out;
    for (const auto& f : map_.final_indices) out.push_back(Simplify(Substitute(f, vmap)));
    return out;
  }

  /// The image of a region: a point maps to a point; otherwise each output dimension is
  /// bounded over the region (the whole dimension when it cannot be bounded to a constant extent).
  BufferRegion MapRegion(const BufferRegion& r) const {
    bool point = true;
    for (const auto& rg : r.region) point &= ir::is_one(rg.extent);
    BufferRegion out{to_, {}};
    if (point) {
      std::vector<PrimExpr> mins;
      for (const auto& rg : r.region) mins.push_back(rg.min);
      for (const auto& m : MapIndices(mins)) out.region.emplace_back(m, make_const(m.dtype(), 1));
      return out;
    }
    std::map<const VarNode*, PrimExpr> vmap;
    std::map<const VarNode*, Range> relax;
    std::vector<Var> fresh;
    for (size_t d = 0; d < r.region.size(); ++d) {
      fresh.emplace_back("t" + std::to_string(d), r.region[d].min.dtype());
      vmap[map_.initial_indices[d].get_var()] = fresh.back();
      relax[fresh.back().get_var()] = r.region[d];
    }
    for (size_t j = 0; j < map_.final_indices.size(); ++j) {
      Bound b = EvalBound(Substitute(map_.final_indices[j], vmap), relax);
      int64_t diff;
      if (b.ok && ConstDiff(b.hi, b.lo, &diff) && !UsesAnyVar(b.lo, [&] {
            std::set<const VarNode*> s;
            for (auto& v : fresh) s.insert(v.get_var());
            return s;
          }())) {
        out.region.emplace_back(b.lo, make_const(b.lo.dtype(), diff + 1));
      } else {
        out.region.emplace_back(make_const(to_->shape[j].dtype(), 0), to_->shape[j]);
      }
    }
    return out;
  }

  Buffer from_, to_;
  IndexMap map_;
};
}  // namespace

void Schedule::transform_layout(const BlockRV& block, int buffer_index, bool is_write_buffer, const IndexMap& index_map) {
  BlockInfo info = ScheduleAccess::ResolveBlock(*this, block, kPrim);
  const BlockNode* b = info.block;
  const auto& regions = is_write_buffer ? b->writes : b->reads;
  const char* kind = is_write_buffer ? "writes" : "reads";
  if (buffer_index < 0 || buffer_index >= static_cast<int>(regions.size())) {
    TESSERA_THROW(ScheduleError, kPrim, ": block '", b->name_hint, "' ", kind, " ", regions.size(),
                  " buffers; buffer_index ", buffer_index, " is out of range");
  }
  const Buffer buf = regions[buffer_index].buffer;
  for (const auto& p : func_->params) {
    if (p.same_as(buf)) {
      TESSERA_THROW(ScheduleError, kPrim, ": buffer '", buf->name, "' is a parameter of function '", func_->name,
                    "'; the layout of an argument is changed at graph level (AlterOpLayout), only buffers "
                    "allocated in the function can be transformed");
    }
  }
  bool allocated = false;
  for (const auto& bi : CollectBlocks(func_->body)) {
    for (const auto& a : bi.block->alloc_buffers) allocated |= a.same_as(buf);
  }
  if (!allocated) {
    TESSERA_THROW(ScheduleError, kPrim, ": buffer '", buf->name, "' is not allocated in function '", func_->name, "'");
  }
  if (static_cast<int>(index_map.initial_indices.size()) != buf.ndim()) {
    TESSERA_THROW(ScheduleError, kPrim, ": index map ", index_map.str(), " takes ", index_map.initial_indices.size(),
                  " indices but buffer '", buf->name, "' has rank ", buf.ndim());
  }
  std::vector<int64_t> shape;
  IndexMap canon = MapAnalyzer(index_map, buf).Run(&shape);
  DataType t = buf->shape.empty() ? DataType::Int(32) : buf->shape[0].dtype();
  std::vector<PrimExpr> new_shape;
  for (int64_t e : shape) new_shape.push_back(make_const(t, e));
  Buffer nb = Buffer::make(buf->name, buf->dtype, new_shape, buf->scope);
  Stmt body = LayoutRewriter(buf, nb, canon).VisitStmt(func_->body);
  ScheduleAccess::Commit(*this, body,
                         Instruction{kPrim, {RVRef{'b', block.id}},
                                     {{"buffer_index", int64_t{buffer_index}},
                                      {"is_write_buffer", int64_t{is_write_buffer ? 1 : 0}},
                                      {"index_map", canon.str()}},
                                     {}});
}

}  // namespace tessera::tir
