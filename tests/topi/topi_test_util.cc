#include "topi_test_util.h"

#include <gtest/gtest.h>

#include <cmath>
#include <random>

#include "tessera/topi/util.h"
#include "tessera/topi/x86/schedule.h"
#include "tir_interp.h"

namespace tessera::topi::testing {

Data Random(size_t n, uint32_t seed, double lo, double hi) {
  std::mt19937 gen(seed);
  std::uniform_real_distribution<double> dist(lo, hi);
  Data d(n);
  for (double& v : d) v = static_cast<float>(dist(gen));
  return d;
}

std::vector<Data> Run(const std::vector<te::Tensor>& inputs, const std::vector<te::Tensor>& outputs,
                      const std::vector<Data>& in_data, Mode mode) {
  std::vector<te::Tensor> args = inputs;
  args.insert(args.end(), outputs.begin(), outputs.end());
  tir::PrimFunc f = te::create_prim_func(args, "kernel");
  if (mode == Mode::kScheduled) f = x86::DefaultSchedule(f);
  std::vector<Data> storage = in_data;
  for (const te::Tensor& o : outputs) storage.emplace_back(static_cast<size_t>(Product(ConstShape(o))), 0.0);
  std::vector<Data*> ptrs;
  for (Data& d : storage) ptrs.push_back(&d);
  RunPrimFunc(f, ptrs);
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

void CheckAllModes(const std::vector<te::Tensor>& inputs, const te::Tensor& output, const std::vector<Data>& in_data,
                   const Data& want, double tol) {
  ExpectNear(Run(inputs, {output}, in_data, Mode::kUnscheduled)[0], want, tol, "unscheduled");
  ExpectNear(Run(inputs, {output}, in_data, Mode::kScheduled)[0], want, tol, "scheduled (x86 default)");
}

}  // namespace tessera::topi::testing
