// build(): the compilation pipeline, from a graph IR module to a deployable artifact.
//
// The pipeline, top to bottom (each step a named pass taking and returning a module, on the
// pass infrastructure of ir/pass.h; with `dump_ir_dir` set the IR is written after every step
// as NN_<step>.txt, with `time_passes` a table of step times goes to stderr):
//
//   target: options.target resolved once (resolve_target.h: `native` -> the host's CPU and
//           features); every step below gets that explicit target::Target, none asks the host
//   graph:  InferType → LegalizeLowPrecision → SimplifyInference → FoldConstant → FoldScaleAxis
//           → FoldConstant → EliminateCommonSubexpr → DeadCodeElimination → UnflattenReductions
//           [→ MergeComposite (the backends' patterns) → AnnotateTarget → MergeCompilerRegions → PartitionGraph → InlineExternalFunctions,
//              with --byoc: the named backends' regions become external functions, still in NCHW;
//              those a backend finds not worth a call (dnnl: no conv / dense / matmul / pool /
//              softmax) go back to Tessera's path]
//           → FuseAttention (matmul → softmax → matmul as one nn.attention kernel)
//           → AlterOpLayout → WinogradConv2d → PackGemmWeights → FuseOps → InferType
//           (AlterOpLayout's NCHWc block, where the target lists blocks to choose from (AVX-512),
//           and WinogradConv2d's tile per conv workload are knobs: with `tuning_db`, the
//           database's decisions, tune/rewrite_choice.h; else the strategy's choices)
//           (the passes after PartitionGraph do not enter external functions: graph/functor.h)
//           (graph/transform/pass.h lists each pass's opt_level)
//   plan:   GraphExecutorCodegen (executor graph JSON, params, memory plan, kernels;
//           reshape-only functions become zero-copy aliases; external functions become nodes
//           calling their global_symbol); for a main with control flow (an If on a run-time
//           condition) VMCodegen instead: a VM executable (runtime/vm.h) in the same place
//           of the library, run by the VirtualMachine (runtime::MakeExecutor picks it)
//   external: ExternalCodegen: each --byoc backend's source for its external functions
//           (byoc/external_codegen.h), compiled by the system compiler (byoc/compile_external.h):
//           linked into the library beside the LLVM object, or for the JIT loaded from a
//           temporary shared library
//   each kernel (a primitive function):
//           LowerPrimitiveFunctions (topi computes → te → TensorIR PrimFunc, then its schedule: the
//             best record of `tuning_db` for the kernel's workload and the target, replayed from
//             its trace, else the default schedule; then, with `tuning_db`, the end-to-end check's
//             verdict on this build's fingerprint, tune/model_check.h: when `tessera tune` found the
//             tuned build slower than the default one, everything from the graph passes is redone
//             without the database, or without its graph rewrite decisions when those were slower,
//             or with the kernels it found slower in the model at their default schedules)
//           → the TIR passes of LowerToFlat, each its own step (LowerStorageTypeCasts,
//             CompactBufferAllocation, LowerInitBlock, LowerBlocks, FlattenBuffer, Simplify,
//             LoopPartition, Simplify, VectorizeLoop, UnrollLoop, Simplify, RemoveNoOp,
//             VerifyFlat; tir/transform/lower.h lists their opt_levels)
//   codegen: CodegenLLVM (object file with the kernels, the graph JSON and the params) → a
//            shared library via the system linker, or an in-process JIT module.
//
// FoldConstant evaluates constant subgraphs with this same pipeline (constant_evaluator.h).
#pragma once

#include <cstddef>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "tessera/byoc/external_codegen.h"
#include "tessera/graph/module.h"
#include "tessera/runtime/module.h"
#include "tessera/runtime/ndarray.h"
#include "tessera/target/target.h"
#include "tessera/tune/rewrite_choice.h"
#include "tessera/tune/task.h"

namespace tessera::driver {

struct BuildOptions {
  /// Target string (target/target.h): "native" / "llvm -mcpu=native" (the host), a tag
  /// ("avx2", "avx512", "aarch64", ...) or e.g. "llvm -mtriple=x86_64-pc-linux-gnu -mcpu=znver4".
  /// Resolved once per build (driver/resolve_target.h); every step gets the resolved Target.
  std::string target = "llvm -mcpu=native";
  /// When non-empty, the IR after every pipeline step is written into this directory.
  std::string dump_ir_dir;
  /// Print the wall time of every pipeline step to stderr.
  bool time_passes = false;
  /// Passes run when their opt_level <= this (graph/transform/pass.h). 0: no fusion (one kernel
  /// per operator), no folding; 3: everything.
  int opt_level = 3;
  /// Names of passes not to run (required steps such as InferType and FuseOps always run). A name
  /// that is no pass of the pipeline is a UserError listing the passes.
  std::vector<std::string> disabled_passes;
  /// A tuning database (tune/database.h, written by `tessera tune`): each graph rewrite knob with
  /// a decision for this target and Tessera version takes it (tune/rewrite_choice.h), and each
  /// kernel whose workload has a record gets the best one's schedule (the hand-written schedule
  /// is itself a record, so a tuned schedule is used only when it measured faster). Empty: no
  /// database. UserError when the file does not exist or is corrupt.
  std::string tuning_db;
  /// With `tuning_db`: follow the database's end-to-end verdict on this build (tune/model_check.h,
  /// written by `tessera tune`): when it found the tuned build slower than the default one (or its
  /// outputs different), build without the database (a note on stderr; BuildSummary::
  /// tuning_rejected). With no verdict on this build while the database holds verdicts of others
  /// (tuned since, or its default schedules changed: the fingerprint names both builds), a note says
  /// so and the records are applied. driver::TuneModel turns this off to build the tuned model it checks.
  bool apply_model_check = true;
  /// With `tuning_db`: build the database's graph rewrite decisions (else every rewrite at its
  /// fallback, the tuned kernels still applied). The end-to-end check times the build both ways.
  bool apply_rewrite_decisions = true;
  /// With `tuning_db`: workload hashes (tune::WorkloadHash) whose kernels get the default schedule
  /// even when the database has a record for them. The end-to-end check's verdict names those whose
  /// tuned kernel ran slower in the model (tune/model_check.h, untuned_workloads) and the build
  /// following it fills this in; the check builds its per-kernel variants with it.
  std::set<std::string> untuned_workloads;
  /// With `tuning_db`: workload hash -> ProgramId (tune/model_check.h) of the record to build its
  /// kernels with instead of the best one (one of Database::TopPrograms). The end-to-end check's
  /// verdict names the workloads whose best record ran slower in the model and whose runner-up did
  /// not (ModelCheckVerdict::workload_programs). A program the database no longer has: a warning,
  /// and the default schedule. `untuned_workloads` wins over this.
  std::map<std::string, std::string> workload_programs;
  /// External codegens (BYOC, byoc/external_codegen.h) to offload to, in priority order
  /// ("dnnl", "csource"); empty: none. A name no backend has is a UserError listing them.
  std::vector<std::string> byoc;
  /// Inputs the model was specialized for at import (frontend::ImportResult::input_values, each
  /// value of its input's dtype and shape): the library checks at every run that each gets this value, a UserError
  /// naming the input otherwise (graph JSON "guards", runtime/graph_executor.h).
  std::map<std::string, runtime::NDArray> input_guards;
  /// Pass options, "FuseOps.max_depth" -> "8" (ir::PassContext::options).
  std::map<std::string, std::string> pass_options;
  /// Check the graph IR invariants after every graph pass (graph/verify.h). On by default in
  /// debug builds.
#ifdef NDEBUG
  bool verify_ir = false;
#else
  bool verify_ir = true;
#endif
};

/// What build() produced, for reports (`tessera compile`, `tessera inspect`).
struct BuildSummary {
  int num_kernels = 0;          ///< distinct kernels (Tessera's own)
  int num_external = 0;         ///< external functions (BYOC)
  int num_nodes = 0;            ///< kernel calls per run
  size_t storage_bytes = 0;     ///< planned activation memory (inputs included)
  size_t unplanned_bytes = 0;   ///< the same without storage reuse
  size_t param_bytes = 0;
  int tuned_kernels = 0;        ///< kernels scheduled from a tuning record (BuildOptions::tuning_db)
  /// With a tuning database: the tuned build's fingerprint (tune/model_check.h); empty without one.
  std::string tuning_fingerprint;
  /// The database's end-to-end check found the tuned build slower: built without the database.
  bool tuning_rejected = false;
  /// The check found the tuned kernels faster with the graph rewrites at their fallbacks: built so.
  bool rewrites_rejected = false;
  /// Kernels built with the default schedule although the database has a record for them
  /// (BuildOptions::untuned_workloads, from the end-to-end check's verdict or the caller).
  int untuned_kernels = 0;
};

/// The built model before it is written out.
struct BuiltModel {
  std::string object;  ///< ELF object: kernels + executor graph + params
  std::vector<byoc::ExternalSource> external;  ///< the BYOC backends' sources, to compile and link
  BuildSummary summary;
  target::Target target;  ///< the resolved target it was built for
};

/// Runs the pipeline. `output_names` names main's results. Throws UserError /
/// UnsupportedError for models it cannot compile, naming the op.
BuiltModel Build(const graph::IRModule& mod, const std::vector<std::string>& output_names,
                 const BuildOptions& options = {});

/// Build + link into a shared library at `out_path` (what `tessera compile` writes). A link
/// failure for another architecture says to link with a cross compiler ($CC).
BuildSummary BuildSharedLibrary(const graph::IRModule& mod, const std::vector<std::string>& output_names,
                                const std::string& out_path, const BuildOptions& options = {});

/// The tuning tasks of a model (tune/task.h): the graph pipeline as Build runs it without a
/// database (every graph rewrite knob at its fallback), then every kernel's unscheduled PrimFunc
/// with its template schedules, deduplicated by workload hash (weights = kernel calls per run).
/// With `choices`, also the graph rewrites' knobs (tune/rewrite_choice.h): for each knob and each
/// other value, the passes from AlterOpLayout on run again with only that knob changed; the
/// kernels that value brings are appended as tasks (TuneTask::rewrite "<knob>=<value>"), and the
/// knob with each value's own kernels is appended to `choices`. Throws as Build does.
std::vector<tune::TuneTask> ExtractTasks(const graph::IRModule& mod, const std::vector<std::string>& output_names,
                                         const BuildOptions& options = {},
                                         std::vector<tune::RewriteChoice>* choices = nullptr);

/// One kernel of a build with a tuning database, as the database schedules it.
struct TunedKernel {
  std::string kernel;    ///< its name (the symbol the executor graph's nodes call)
  std::string workload;  ///< tune::WorkloadHash of its unscheduled PrimFunc
  std::string program;   ///< tune::ProgramId of the record that schedules it, "-" for the default schedule
  /// tune::TraceId of its default schedule's trace: the program the build without the database runs.
  std::string default_id;
  /// The record's trace is the default schedule's (the hand schedule is a record too): the same kernel.
  bool default_program = false;
};

/// The build with `options.tuning_db` as the database makes it, without code generation: the graph
/// passes with the database's decisions, each kernel's best record (BuildOptions::untuned_workloads
/// excepted), and the fingerprint over them (tune::TuningFingerprint). The end-to-end check verdict
/// is not followed (this is the build it is about). UserError without a database; otherwise throws
/// as Build does.
struct TunedBuild {
  std::string fingerprint;
  std::vector<TunedKernel> kernels;  ///< in the executor plan's order
};
TunedBuild DescribeTunedBuild(const graph::IRModule& mod, const std::vector<std::string>& output_names,
                              const BuildOptions& options);

/// DescribeTunedBuild(...).fingerprint.
std::string TuningFingerprint(const graph::IRModule& mod, const std::vector<std::string>& output_names,
                              const BuildOptions& options);

/// Build + JIT into this process: a runtime::Module the GraphExecutor can run (tests, tuning).
runtime::Module BuildJIT(const graph::IRModule& mod, const std::vector<std::string>& output_names,
                         const BuildOptions& options = {});
/// BuildJIT for a target already resolved (ResolveTarget); `options.target` is not read. Throws
/// UserError when the target's code cannot run on this machine (RunsOnHost).
runtime::Module BuildJIT(const graph::IRModule& mod, const std::vector<std::string>& output_names,
                         const target::Target& target, const BuildOptions& options = {});

}  // namespace tessera::driver
