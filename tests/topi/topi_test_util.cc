#include "topi_test_util.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>
#include <type_traits>

#include "tessera/tir/transform/lower.h"
#include "tessera/topi/util.h"
#include "tessera/topi/x86/schedule.h"
#include "tir_interp.h"
#ifdef TESSERA_TOPI_TEST_JIT
#include "tessera/codegen/codegen_llvm.h"
#include "tessera/driver/resolve_target.h"
#include "tessera/runtime/ndarray.h"
#endif

namespace tessera::topi::testing {

Data Random(size_t n, uint32_t seed, double lo, double hi) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  Data d(n);
  for (double& v : d) v = static_cast<float>(dist(gen));
  return d;
}

bool HaveJIT() {
#ifdef TESSERA_TOPI_TEST_JIT
  return true;
#else
  return false;
#endif
}

namespace {

#ifdef TESSERA_TOPI_TEST_JIT
template <typename T>
void CopyIn(const Data& d, void* p) {
  // An integer element goes through int64, which wraps an out-of-range value (-777 as uint8 is 247)
  // where a direct double -> narrow-integer conversion would be undefined behaviour.
  for (size_t i = 0; i < d.size(); ++i) {
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) static_cast<T*>(p)[i] = static_cast<T>(static_cast<int64_t>(d[i]));
    else static_cast<T*>(p)[i] = static_cast<T>(d[i]);
  }
}
template <typename T>
void CopyOut(const void* p, Data* d) {
  for (size_t i = 0; i < d->size(); ++i) (*d)[i] = static_cast<double>(static_cast<const T*>(p)[i]);
}

// Converts between the tests' doubles and the buffer's element type.
void Convert(DataType t, Data* d, void* p, bool in) {
  if (t == DataType::Float(32)) in ? CopyIn<float>(*d, p) : CopyOut<float>(p, d);
  else if (t == DataType::Float(64)) in ? CopyIn<double>(*d, p) : CopyOut<double>(p, d);
  else if (t == DataType::Int(32)) in ? CopyIn<int32_t>(*d, p) : CopyOut<int32_t>(p, d);
  else if (t == DataType::Int(64)) in ? CopyIn<int64_t>(*d, p) : CopyOut<int64_t>(p, d);
  else if (t == DataType::UInt(8)) in ? CopyIn<uint8_t>(*d, p) : CopyOut<uint8_t>(p, d);
  else if (t == DataType::Int(8)) in ? CopyIn<int8_t>(*d, p) : CopyOut<int8_t>(p, d);
  else FAIL() << "JIT test harness: unsupported dtype " << t.str();
}
#endif

}  // namespace

void RunJIT(const tir::PrimFunc& flat, std::vector<Data>& storage) {
#ifndef TESSERA_TOPI_TEST_JIT
  FAIL() << "this build has no LLVM codegen";
#else
  tir::IRModule mod;
  mod.Add(flat);
  runtime::Module m = codegen::BuildJIT(mod, driver::HostTarget());
  std::vector<runtime::NDArray> arrays;
  std::vector<void*> args;
  for (size_t i = 0; i < storage.size(); ++i) {
    DataType t = flat->params[i]->dtype;
    arrays.push_back(runtime::NDArray::Empty({static_cast<int64_t>(storage[i].size())}, t));
    Convert(t, &storage[i], arrays.back().raw_data(), true);
    args.push_back(arrays.back().raw_data());
  }
  ASSERT_EQ(m.GetKernel(flat->name)(args.data()), 0);
  for (size_t i = 0; i < storage.size(); ++i) Convert(flat->params[i]->dtype, &storage[i], arrays[i].raw_data(), false);
#endif
}

const target::Target& TestTarget() {
  static const target::Target t = target::Target::Parse("avx2");
  return t;
}

x86::ScheduleOptions TestOptions(KnobContext* knobs) {
  x86::ScheduleOptions opt = x86::ScheduleOptionsFor(TestTarget());
  opt.knobs = knobs;
  return opt;
}

std::vector<Data> Run(const std::vector<te::Tensor>& inputs, const std::vector<te::Tensor>& outputs,
                      const std::vector<Data>& in_data, Mode mode) {
  std::vector<te::Tensor> args = inputs;
  args.insert(args.end(), outputs.begin(), outputs.end());
  tir::PrimFunc f = te::create_prim_func(args, "kernel");
  if (mode != Mode::kUnscheduled) f = x86::DefaultSchedule(f, x86::ScheduleOptionsFor(TestTarget()));
  if (mode == Mode::kScheduledFlat || mode == Mode::kJIT) f = tir::transform::LowerToFlat(f);
  std::vector<Data> storage = in_data;
  for (const te::Tensor& o : outputs) storage.emplace_back(static_cast<size_t>(Product(ConstShape(o))), -777.0);
  if (mode == Mode::kJIT) {
    RunJIT(f, storage);
  } else {
    std::vector<Data*> ptrs;
    for (Data& d : storage) ptrs.push_back(&d);
    RunPrimFunc(f, ptrs);
  }
  return std::vector<Data>(storage.begin() + inputs.size(), storage.end());
}

void ExpectNear(const Data& got, const Data& want, double tol, const char* what) {
  ASSERT_EQ(got.size(), want.size()) << what;
  int bad = 0;
  for (size_t i = 0; i < got.size() && bad < 5; ++i) {
    if (!(std::fabs(got[i] - want[i]) <= tol * (1 + std::fabs(want[i])))) {
      ADD_FAILURE() << what << ": element " << i << " got " << got[i] << " want " << want[i];
      ++bad;
    }
  }
}

void CheckScheduledRuns(const tir::PrimFunc& scheduled, const std::vector<Data>& inputs, size_t out_size,
                        const Data& want, double tol, const std::string& what) {
  std::vector<Data> storage = inputs;
  storage.emplace_back(out_size, -777.0);
  std::vector<Data*> ptrs;
  for (Data& d : storage) ptrs.push_back(&d);
  RunPrimFunc(scheduled, ptrs);
  ExpectNear(storage.back(), want, tol, (what + " (blocks)").c_str());
  const tir::PrimFunc flat = tir::transform::LowerToFlat(scheduled);
  std::fill(storage.back().begin(), storage.back().end(), -777.0);
  RunPrimFunc(flat, ptrs);
  ExpectNear(storage.back(), want, tol, (what + " (flat)").c_str());
  if (HaveJIT()) {
    std::fill(storage.back().begin(), storage.back().end(), -777.0);
    RunJIT(flat, storage);
    ExpectNear(storage.back(), want, tol, (what + " (JIT)").c_str());
  }
}

void CheckAllModes(const std::vector<te::Tensor>& inputs, const te::Tensor& output, const std::vector<Data>& in_data,
                   const Data& want, double tol) {
  ExpectNear(Run(inputs, {output}, in_data, Mode::kUnscheduled)[0], want, tol, "unscheduled");
  ExpectNear(Run(inputs, {output}, in_data, Mode::kScheduled)[0], want, tol, "scheduled (x86 default)");
  ExpectNear(Run(inputs, {output}, in_data, Mode::kScheduledFlat)[0], want, tol, "scheduled, lowered to flat");
  if (HaveJIT()) ExpectNear(Run(inputs, {output}, in_data, Mode::kJIT)[0], want, tol, "scheduled, LLVM JIT");
}

Data PackRef(const Data& w, int64_t n, int64_t k, const GemmPackTile& t) {
  const int64_t nb = t.PaddedN(n) / t.bn;
  Data out(nb * k * t.bn, 0.0);
  for (int64_t b = 0; b < nb; ++b)
    for (int64_t kk = 0; kk < k; ++kk)
      for (int64_t l = 0; l < t.bn; ++l)
        if (b * t.bn + l < n) out[(b * k + kk) * t.bn + l] = w[(b * t.bn + l) * k + kk];
  return out;
}

}  // namespace tessera::topi::testing
