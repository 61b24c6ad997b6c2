// The calling convention between generated kernels and the runtime.
//
// Every kernel that codegen emits (one per PrimFunc) has the C signature
//
//     int32_t <name>(void* const* args);
//
// where args[i] is the data pointer (64-byte aligned, row-major, dense) of the
// i-th buffer parameter of the PrimFunc, inputs first, then outputs. Static shapes are
// compiled into the kernel. It returns 0 (kKernelOk) on success, else one of the
// kKernel* status codes below, which the graph executor turns into an error naming the node.
//
// Dynamic shapes: a kernel whose PrimFunc has shape_vars (tir/function.h: the symbolic
// extents of its params' shapes, e.g. "seq", "batch_size") takes one extra slot after the
// buffer pointers,
//
//     args[num_buffer_params] = (const int64_t*) values   // shape_vars.size() values,
//                                                          // in shape_vars order
//
// read once on entry (each value converted to its Var's dtype, int32 for TE shapes; it must
// fit, and be >= 0: the kernel assumes it). The caller keeps the array alive for the call. A kernel without shape vars
// has no extra slot.
//
// A kernel reaches the runtime only through function-pointer globals that the
// generated module defines and the loader fills in right after loading it (the
// approach of TVM's __TVMBackendParallelLaunch context pointers), so a model
// library has no undefined symbols and no link-time dependency on the runtime:
//
//     TesseraParallelLaunchFn __tessera_parallel_launch;
//
// A kernel of an external codegen (BYOC, graph JSON "external") may come with
//
//     int32_t <name>__init(char* message, int64_t capacity);
//
// which the graph executor calls once when it is built (load time): the backend prepares its
// state (oneDNN primitives) there and, on failure, writes a NUL-terminated reason into message and
// returns non-zero; the executor then throws a UserError naming the kernel and its backend.
//
// Parallel loops (For with kind = parallel) are outlined by codegen into a task
// function and run by __tessera_parallel_launch on the runtime thread pool.
#pragma once

#include <cstdint>

extern "C" {

/// The signature of every generated kernel.
typedef int32_t (*TesseraKernelFn)(void* const* args);

/// The optional load-time initializer of an external kernel (see above).
typedef int32_t (*TesseraKernelInitFn)(char* message, int64_t capacity);

/// One task of a parallel loop: runs the share `task_id` of `num_tasks` shares.
/// `closure` points to the values the loop body captured. Returns 0 on success.
typedef int32_t (*TesseraParallelTaskFn)(int32_t task_id, int32_t num_tasks, void* closure);

/// Runs task(0..n-1, n, closure) on the thread pool, n = num_tasks, or when num_tasks <= 0
/// the pool's choice (8 shares per thread, claimed dynamically; 1 with one thread). Returns 0
/// when every task returned 0.
typedef int32_t (*TesseraParallelLaunchFn)(TesseraParallelTaskFn task, void* closure,
                                           int32_t num_tasks);

}  // extern "C"

namespace tessera::runtime {

/// Status codes a kernel returns.
inline constexpr int32_t kKernelOk = 0;
/// A heap buffer of the kernel (tir Allocate, "global" scope) could not be allocated.
inline constexpr int32_t kKernelOutOfMemory = -1;
/// An index read at run time lies outside [-n, n) of the axis it indexes (ir::checked_index:
/// the indices of ONNX Gather, GatherElements, GatherND, ScatterElements, ScatterND).
inline constexpr int32_t kKernelIndexOutOfRange = -2;

/// Names of the symbols every model library exports (see module.h for the loader).
inline constexpr const char* kParallelLaunchSymbol = "__tessera_parallel_launch";
/// Suffix of an external kernel's load-time initializer (<kernel>__init).
inline constexpr const char* kKernelInitSuffix = "__init";
/// NUL-terminated JSON of the executor graph (graph_executor.h describes it).
inline constexpr const char* kGraphJsonSymbol = "__tessera_graph_json";
/// Serialized parameters (param_io.h) and their size in bytes (an int64 global).
inline constexpr const char* kParamsBlobSymbol = "__tessera_params_blob";
inline constexpr const char* kParamsSizeSymbol = "__tessera_params_size";
/// NUL-terminated record of the Tessera version, triple and features the library was built
/// for (artifact_info.h); the loader checks it before any kernel runs.
inline constexpr const char* kTargetInfoSymbol = "__tessera_target_info";
/// uint64 ArtifactContentHash of the graph JSON and the params blob (artifact_info.h), recorded
/// at compile time; the loader recomputes it and refuses a library whose data changed.
inline constexpr const char* kContentHashSymbol = "__tessera_content_hash";

}  // namespace tessera::runtime
