// Schedule: TensorIR schedule primitives over one PrimFunc (TensorIR, arXiv 2207.04296,
// §3.3-3.4; TVM's tvm.tir.Schedule).
//
//   tir::Schedule sch(func);
//   BlockRV c = sch.get_block("C");
//   auto loops = sch.get_loops(c);                  // outermost first
//   auto tiles = sch.split(loops[0], {-1, 16});     // -1: inferred (ceil(extent / 16))
//   sch.reorder({tiles[1], loops[1]});
//   sch.parallel(tiles[0]);
//   tir::PrimFunc scheduled = sch.func();
//   std::cout << sch.trace().str();                 // b0 = sch.get_block("C") ...
//
// Handles (BlockRV, LoopRV) are "random variables" in TVM's sense: small ids into the
// schedule's symbol table, resolved against the *current* function every time they are
// used. A BlockRV names a block (block names are unique within a function); a LoopRV
// names a loop by its loop variable, which transformations that keep the loop also keep.
// Using a handle to a loop or block that a transformation removed (split and fuse
// replace their loops; compute_inline removes its block) throws ScheduleError naming
// the primitive that removed it.
//
// Every primitive checks its preconditions and throws ScheduleError (a UserError) saying
// why a request is illegal; a failed primitive leaves the function and the trace
// unchanged. Every successful call is appended to trace() as an Instruction, so a
// schedule can be printed, serialized and replayed (trace.h).
//
// Loop variables created by primitives are named after the loop they come from:
// split(i) gives i_0, i_1, ...; fuse(i, j) gives i_j_fused; loops built by compute_at /
// reverse_compute_at / cache_read / cache_write are ax0, ax1, ...; decompose_padding's
// copies of loops keep the names of the loops they copy.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "tessera/support/error.h"
#include "tessera/tir/function.h"
#include "tessera/tir/schedule/index_map.h"
#include "tessera/tir/schedule/trace.h"

namespace tessera::tir {

/// An illegal schedule request: the message says which primitive, which loop / block, and why.
class ScheduleError : public UserError {
 public:
  using UserError::UserError;
};

class Schedule {
 public:
  /// Schedules `func`, whose body must be the BlockRealize of a root block (as
  /// te::create_prim_func builds it). Block names must be unique (ScheduleError otherwise).
  explicit Schedule(PrimFunc func);

  /// The current (scheduled) function.
  const PrimFunc& func() const { return func_; }
  const PrimFunc& mod() const { return func_; }
  /// Every primitive applied so far, in order.
  const Trace& trace() const { return trace_; }

  // ------------------------------------------------------------ lookup
  /// The block named `name`. Throws if there is none.
  BlockRV get_block(const std::string& name);
  /// The loops around `block` up to its enclosing block (the scope), outermost first.
  std::vector<LoopRV> get_loops(const BlockRV& block);

  // ------------------------------------------------------------ loop transformations
  /// Splits `loop` (extent n, serial, no annotations) into factors.size() >= 2
  /// nested loops, outermost first. At most one factor may be -1: it is inferred as
  /// ceil(n / product of the others). When the product exceeds n, every block under
  /// the loop gets the predicate `fused index < n` so the extra iterations do nothing.
  /// A symbolic n (dynamic shapes) needs the one -1: its loop's extent is
  /// floordiv(n + p - 1, p) and the predicate is always added (LoopPartition later splits
  /// off the tail).
  std::vector<LoopRV> split(const LoopRV& loop, const std::vector<int64_t>& factors);
  /// Fuses a perfectly nested chain of >= 2 serial loops (each loop's body is exactly the
  /// next loop) into one loop of extent equal to the product of their extents (an
  /// expression when one is symbolic; no extent may use a fused loop's variable).
  LoopRV fuse(const std::vector<LoopRV>& loops);
  /// Puts the given loops, which must all lie on one perfectly nested chain (no branch
  /// between the outermost and innermost of them), into the given order; loops of the
  /// chain that are not listed keep their positions.
  void reorder(const std::vector<LoopRV>& loops);
  /// Marks a loop parallel. Only loops bound to spatial (data-parallel) block iter vars,
  /// not nested in another parallel loop.
  void parallel(const LoopRV& loop);
  /// Marks a loop vectorized: constant extent, spatial bindings only, and no loop or
  /// second block inside it.
  void vectorize(const LoopRV& loop);
  /// Marks a loop to be fully unrolled: constant extent.
  void unroll(const LoopRV& loop);

  // ------------------------------------------------------------ block transformations
  /// Inlines a block that is a single BufferStore `B[v0, v1, ...] = f(...)` indexed by its
  /// (spatial) iter vars into every block that reads B, then removes it and its loops.
  /// B must not be a function parameter.
  void compute_inline(const BlockRV& block);
  /// Inlines a consumer block `C[g(v)] = f(B[v0, v1, ...], ...)` into the single block
  /// that produces B (a single store, no reduction), which then stores C directly. A load index
  /// may also be 0 on a dimension of extent 1 (how broadcasts index unit dims), and the block
  /// may have iter vars of extent 1 that index nothing.
  void reverse_compute_inline(const BlockRV& block);
  /// Moves a producer block under `loop` of its consumers, computing exactly the region of
  /// its output that the blocks under `loop` read (TensorIR §3.3 region analysis; a
  /// dimension that cannot be bounded is widened to the buffer's full range).
  void compute_at(const BlockRV& block, const LoopRV& loop);
  /// Moves a consumer block under `loop` of its producer, computing exactly the region
  /// that the producers under `loop` have written. Throws ScheduleError when that region is
  /// not a box (its bounding box holds elements a later iteration writes: rows fused across
  /// two dims and tiled), when it cannot be bounded, or when a block between reads / writes
  /// what the moved block writes / reads.
  void reverse_compute_at(const BlockRV& block, const LoopRV& loop);
  /// Adds a buffer `<B>_<scope>` and a block that copies the block's `read_buffer_index`-th
  /// read buffer B into it, just before the block's loop nest; the block then reads the
  /// copy. Returns the copy block. scope: "global", "local" or "shared".
  BlockRV cache_read(const BlockRV& block, int read_buffer_index, const std::string& scope);
  /// The block writes a new buffer `<B>_<scope>` instead of its `write_buffer_index`-th
  /// write buffer B; a block after its loop nest copies it back to B. Returns that block.
  BlockRV cache_write(const BlockRV& block, int write_buffer_index, const std::string& scope);
  /// Moves the init of a reduction block into a new block `<name>_init` placed right before
  /// `loop` (an ancestor of the block above every loop bound to a reduction iter var).
  /// Returns the init block.
  BlockRV decompose_reduction(const BlockRV& block, const LoopRV& loop);

  /// Factors a reduction over `loop` (TensorIR arXiv 2207.04296 §3.3; TVM's
  /// Schedule.rfactor). The block under `loop`, `out[s] = combine(out[s], x(s, r))` with an
  /// init, combine one of + * min max, becomes two:
  ///   - `<name>_rf` (returned), in its place under the same loops: one iter var per loop bound
  ///     to a reduction iter var, `loop`'s data-parallel. It reduces into the new buffer
  ///     `<out>_rf`: out's shape with extent(loop) inserted at dimension factor_axis, indexed
  ///     there by loop - min(loop);
  ///   - the write-back block, which keeps the name `<name>` (so handles to it stay valid):
  ///     out[s] = combine over f < extent(loop) of out_rf[..., f, ...], under copies of the
  ///     spatial loops inside the outermost reduction loop and a new loop `<loop>_wb` over f,
  ///     placed right after that outermost reduction loop.
  /// E.g. split a row sum's k into (k_0, k_1 = 16) and rfactor(k_1): the rf block's k_1 is
  /// spatial, so it can be vectorized with contiguous loads (16 partial sums per row), and
  /// the write-back adds 16 numbers per row. factor_axis may be negative (counted from the
  /// end, -1: the new dimension last). For floats the result is reassociated.
  /// ScheduleError when: `loop` does not have exactly one block under it; the block is not
  /// of that form (its output read outside the combiner, a stored index using a reduction
  /// iter var); `loop` is not bound to a reduction iter var, or a reduction loop also binds a
  /// spatial iter var or has a range depending on an enclosing loop; factor_axis is out of
  /// [-(rank + 1), rank].
  BlockRV rfactor(const LoopRV& loop, int factor_axis);

  // ------------------------------------------------------------ layout and padding
  /// Gives the block's `buffer_index`-th read (is_write_buffer = false) or write buffer B,
  /// of shape S, a new layout: B' of the shape index_map maps S onto, with every access
  /// B[x] in every block (loads and stores in bodies and inits, read / write regions)
  /// rewritten to B'[index_map(x)] and the allocation replaced. TVM's
  /// Schedule.transform_layout; TensorIR (arXiv 2207.04296) §3.3, e.g. NCHW -> NCHW16c:
  ///   transform_layout(b, 0, true, lambda n, c, h, w: (n, c // 16, h, w, c % 16))
  /// turns B: (1, 32, 8, 8) into B: (1, 2, 8, 8, 16). Region annotations are mapped
  /// exactly for points, bounded otherwise (the whole new dimension when unbounded).
  /// Supported maps are the bijective quasi-affine ones: every output is a fuse
  /// a * extent(b) + b (mixed radix) of parts x, x // c, x % c, (x // c1) % c2 of the input
  /// indices, and the parts of each input index tile it exactly; this covers identity,
  /// permutation, split of a dimension by a constant factor and fuse of dimensions.
  /// ScheduleError when: buffer_index is out of range; B is a function parameter (argument
  /// layouts change at graph level, AlterOpLayout) or not allocated in the function; the
  /// map's arity differs from B's rank; an extent is not divisible by a factor of the map
  /// (no implicit padding: pad_value is not supported); the map has a constant offset, is
  /// not of the supported forms, or is not bijective (an index unused, parts overlapping).
  /// Recorded with the map in canonical form (index_map.h's text).
  void transform_layout(const BlockRV& block, int buffer_index, bool is_write_buffer, const IndexMap& index_map);
  /// Splits a padding block  out[v] = select(in_bounds(v), f(v), pad_value)  into
  ///   - `<name>_pad_const`: out[v] = pad_value over the block's whole domain, under copies
  ///     of the loops from `loop` down to the block, placed right before `loop`; and
  ///   - the block itself, now out[v] = f(v) with no condition over the in-bound region only.
  /// in_bounds must be a conjunction of bounds `v_d >= c`, `v_d > c`, `v_d < c`, `v_d <= c`
  /// (either side) of the iter vars indexing the store by integer constants; pad_value must
  /// not depend on the iter vars or read a buffer. A loop (at or below `loop`, with only this
  /// block inside) that binds a bounded iter var directly is shrunk to the in-bound extent
  /// and the iter var rebased to 0 (out[v + lo] = f(v + lo)); other bounds become block
  /// predicates. Clamps min / max that the in-bound region makes redundant are removed from
  /// f (topi's pad reads x[min(max(i - b, 0), n - 1)]). Returns the pad block.
  /// TVM's Schedule.decompose_padding; TensorIR (arXiv 2207.04296) §3.3 schedule transformations.
  /// ScheduleError when `loop` is not an ancestor of the block, or the block is not of
  /// that form (the message names which part: reduction, body, value, condition, pad value),
  /// or the in-bound region is empty or the whole domain (nothing to decompose).
  BlockRV decompose_padding(const BlockRV& block, const LoopRV& loop);

  /// Sets annotation `key` of a loop or block to `value` (an IntImm, FloatImm or StringImm).
  void annotate(const LoopRV& loop, const std::string& key, const PrimExpr& value);
  void annotate(const BlockRV& block, const std::string& key, const PrimExpr& value);

  // ------------------------------------------------------------ introspection
  /// The For / Block a handle refers to in the current function (throws like the primitives).
  const ForNode* GetFor(const LoopRV& loop) const;
  const BlockNode* GetBlock(const BlockRV& block) const;
  /// The handle's name in the trace: "b0", "l3".
  std::string name_of(const BlockRV& rv) const { return "b" + std::to_string(rv.id); }
  std::string name_of(const LoopRV& rv) const { return "l" + std::to_string(rv.id); }

  /// Internal state shared by the primitive implementations (src/tir/schedule/).
  struct Symbol {
    bool is_block = false;
    std::string block_name;  ///< blocks
    Var loop_var;            ///< loops
  };

 private:
  friend struct ScheduleAccess;
  BlockRV NewBlockRV(const std::string& name);
  LoopRV NewLoopRV(const Var& loop_var);
  const Symbol& Lookup(int64_t id, bool is_block, const char* primitive) const;

  PrimFunc func_;
  Trace trace_;
  std::vector<Symbol> symbols_;
  /// Loops (by loop var) and blocks (by name) that a primitive removed, with its name.
  std::map<const ir::VarNode*, std::string> removed_loops_;
  std::map<std::string, std::string> removed_blocks_;
  std::vector<Var> removed_loop_vars_;  ///< keeps the keys of removed_loops_ alive
};

}  // namespace tessera::tir
