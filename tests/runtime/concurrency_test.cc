// One loaded model run from several threads at once (issue 15): one Module shared by every thread,
// one GraphExecutor per thread (graph_executor.h, "Threads"). Outputs must equal a single-threaded
// run on the same inputs. scripts/test.sh --tsan runs this test under ThreadSanitizer.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>
#include <vector>

#include "tessera/runtime/graph_executor.h"
#include "tessera/runtime/run_model.h"
#include "tessera/runtime/thread_pool.h"
#include "test_util.h"

namespace tessera::runtime {
namespace {

constexpr int kThreads = 4;
constexpr int kRunsPerThread = 200;

// The fixture's input for (thread, run): distinct values, both signs (relu matters).
NDArray Input(int thread, int run) {
  NDArray x = NDArray::Empty({2, 4}, DataType::Float(32));
  for (int i = 0; i < 8; ++i) x.data<float>()[i] = static_cast<float>((thread * 31 + run * 7 + i * 3) % 17) - 8.5f;
  return x;
}

std::vector<float> Values(const NDArray& a) {
  const float* p = a.data<float>();
  return std::vector<float>(p, p + a.NumElements());
}

// Every output of one run, flattened, in graph order.
std::vector<std::vector<float>> Outputs(GraphExecutor& ex) {
  std::vector<std::vector<float>> out;
  for (int i = 0; i < ex.NumOutputs(); ++i) out.push_back(Values(ex.GetOutput(i)));
  return out;
}

TEST(Concurrency, OneModuleFourThreadsEachWithItsExecutor) {
  SetNumThreads(2);  // the pool has a worker, so launches from the threads compete for it
  const Module module = Module::LoadFromFile(TESSERA_FIXTURE_MODEL);
  // The reference: every (thread, run) input, run on this thread alone.
  std::vector<std::vector<std::vector<std::vector<float>>>> expected(kThreads);
  {
    GraphExecutor ex(module);
    for (int t = 0; t < kThreads; ++t)
      for (int r = 0; r < kRunsPerThread; ++r) {
        ex.SetInput("x", Input(t, r));
        ex.Run();
        expected[t].push_back(Outputs(ex));
      }
  }
  std::atomic<int> mismatches{0}, errors{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      try {
        GraphExecutor ex(module);  // num_threads 0: the pool is left as it is
        while (!go.load()) std::this_thread::yield();
        for (int r = 0; r < kRunsPerThread; ++r) {
          ex.SetInput("x", Input(t, r));
          ex.Run();
          if (Outputs(ex) != expected[t][r]) mismatches++;
        }
      } catch (const std::exception& e) {
        ADD_FAILURE() << "thread " << t << ": " << e.what();
        errors++;
      }
    });
  }
  go = true;
  for (auto& th : threads) th.join();
  EXPECT_EQ(errors.load(), 0);
  EXPECT_EQ(mismatches.load(), 0) << "of " << kThreads * kRunsPerThread << " runs";
}

TEST(Concurrency, RunModelFromFourThreadsWhileAnotherResizesThePool) {
  // RunModel builds an executor per call; a SetNumThreads on one thread while others launch used
  // to let a launch index worker slots of the old, larger pool (thread_pool.cc, Launch).
  const Module module = Module::LoadFromFile(TESSERA_FIXTURE_MODEL);
  const std::vector<NamedTensor> inputs = {{"x", Input(1, 2)}};
  SetNumThreads(4);
  const RunModelResult reference = RunModel(module, inputs);
  std::atomic<bool> stop{false};
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      for (int r = 0; r < 50; ++r) {
        const RunModelResult got = RunModel(module, inputs);
        for (size_t i = 0; i < got.outputs.size(); ++i)
          if (Values(got.outputs[i].value) != Values(reference.outputs[i].value)) mismatches++;
      }
    });
  }
  std::thread resizer([&] {
    for (int i = 0; !stop.load(); ++i) SetNumThreads(1 + i % 4);
  });
  for (auto& th : threads) th.join();
  stop = true;
  resizer.join();
  EXPECT_EQ(mismatches.load(), 0);
  SetNumThreads(2);
}

TEST(Concurrency, ModulesLoadedOnSeveralThreadsAtOnce) {
  // Every Module connects the library's one launch global to the pool (module.cc). One Module lives
  // throughout, so the library stays loaded: an unload and a reload at the same address would look
  // to ThreadSanitizer like a race between the old copy's reads and the new copy's store.
  const Module keep_loaded = Module::LoadFromFile(TESSERA_FIXTURE_MODEL);
  std::vector<std::thread> threads;
  std::atomic<int> errors{0};
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      try {
        for (int r = 0; r < 20; ++r) {
          GraphExecutor ex(Module::LoadFromFile(TESSERA_FIXTURE_MODEL));
          ex.SetInput("x", Input(t, r));
          ex.Run();
        }
      } catch (const std::exception& e) {
        ADD_FAILURE() << e.what();
        errors++;
      }
    });
  }
  for (auto& th : threads) th.join();
  EXPECT_EQ(errors.load(), 0);
}

}  // namespace
}  // namespace tessera::runtime
