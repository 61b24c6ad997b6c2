// The XGBoost cost model (tune/cost_model.h): it learns the order of a synthetic score from
// features, within groups, deterministically; before training it predicts zeros.
#include "tessera/tune/cost_model.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <random>

#include "tessera/support/error.h"

namespace tessera::tune {
namespace {

constexpr int kWidth = 8;

// A score that depends non-linearly on a few features; the rest are noise.
double TrueScore(const std::vector<float>& x) {
  return 2.0 * x[0] + std::sin(3.0 * x[1]) + x[2] * x[3] - 0.5 * (x[4] > 0.5f ? 1.0 : 0.0);
}

struct Data {
  std::vector<std::vector<float>> features;
  std::vector<double> scores;
  std::vector<int> groups;
};

Data MakeData(int n, int num_groups, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> u(0.0f, 1.0f);
  Data d;
  for (int i = 0; i < n; ++i) {
    std::vector<float> x(kWidth);
    for (float& v : x) v = u(rng);
    d.scores.push_back(TrueScore(x));
    d.features.push_back(std::move(x));
    d.groups.push_back(i % num_groups);  // interleaved: the model groups them itself
  }
  return d;
}

// Kendall's tau-a between two sequences.
double KendallTau(const std::vector<double>& a, const std::vector<double>& b) {
  long concordant = 0, discordant = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    for (size_t j = i + 1; j < a.size(); ++j) {
      const double s = (a[i] - a[j]) * (b[i] - b[j]);
      if (s > 0) ++concordant;
      else if (s < 0) ++discordant;
    }
  }
  return static_cast<double>(concordant - discordant) / static_cast<double>(a.size() * (a.size() - 1) / 2);
}

TEST(XGBCostModelTest, PredictsZerosBeforeTraining) {
  XGBCostModel model;
  EXPECT_FALSE(model.trained());
  EXPECT_EQ(model.num_samples(), 0u);
  EXPECT_EQ(model.Predict(MakeData(5, 1, 1).features), std::vector<double>(5, 0.0));
  EXPECT_TRUE(model.Predict({}).empty());
}

TEST(XGBCostModelTest, LearnsTheRankingOnHeldOutSamples) {
  const Data train = MakeData(400, 4, 7);
  const Data test = MakeData(200, 1, 99);
  XGBCostModel model;
  model.Update(train.features, train.scores, train.groups);
  EXPECT_TRUE(model.trained());
  EXPECT_EQ(model.num_samples(), 400u);
  EXPECT_EQ(model.num_features(), static_cast<size_t>(kWidth));
  const std::vector<double> pred = model.Predict(test.features);
  ASSERT_EQ(pred.size(), test.scores.size());
  const double tau = KendallTau(pred, test.scores);
  EXPECT_GT(tau, 0.6) << "Kendall tau of predicted vs true order on held-out samples";

  // The predicted best is among the true top 10 %.
  const size_t best = std::max_element(pred.begin(), pred.end()) - pred.begin();
  std::vector<double> sorted = test.scores;
  std::sort(sorted.rbegin(), sorted.rend());
  EXPECT_GE(test.scores[best], sorted[test.scores.size() / 10]);
  RecordProperty("kendall_tau", std::to_string(tau));
}

TEST(XGBCostModelTest, UpdateAccumulatesSamplesAndImproves) {
  const Data test = MakeData(200, 1, 5);
  XGBCostModel model;
  const Data small = MakeData(24, 2, 11);
  model.Update(small.features, small.scores, small.groups);
  const double tau_small = KendallTau(model.Predict(test.features), test.scores);
  const Data more = MakeData(400, 2, 12);
  model.Update(more.features, more.scores, more.groups);
  EXPECT_EQ(model.num_samples(), 424u);
  const double tau_more = KendallTau(model.Predict(test.features), test.scores);
  EXPECT_GT(tau_more, tau_small);
  EXPECT_GT(tau_more, 0.6);
}

TEST(XGBCostModelTest, OnlyTheOrderWithinAGroupMatters) {
  // Group 1's scores are group 0's shifted by +100: a pairwise model learns the same order.
  Data d = MakeData(300, 1, 21);
  Data shifted = d;
  for (double& s : shifted.scores) s += 100.0;
  for (int& g : shifted.groups) g = 1;
  XGBCostModel model;
  model.Update(d.features, d.scores, d.groups);
  model.Update(shifted.features, shifted.scores, shifted.groups);
  const Data test = MakeData(150, 1, 22);
  EXPECT_GT(KendallTau(model.Predict(test.features), test.scores), 0.6);
}

TEST(XGBCostModelTest, TrainingIsDeterministic) {
  const Data train = MakeData(200, 3, 3);
  const Data test = MakeData(50, 1, 4);
  XGBCostModel a, b;
  a.Update(train.features, train.scores, train.groups);
  b.Update(train.features, train.scores, train.groups);
  EXPECT_EQ(a.Predict(test.features), b.Predict(test.features));
}

TEST(XGBCostModelTest, SaveAndLoadGiveTheSamePredictions) {
  const Data train = MakeData(200, 2, 8);
  const Data test = MakeData(50, 1, 9);
  XGBCostModel model;
  model.Update(train.features, train.scores, train.groups);
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("tessera_cost_model_" + std::to_string(::getpid()) + ".json")).string();
  model.Save(path);
  XGBCostModel loaded;
  loaded.Load(path);
  std::filesystem::remove(path);
  EXPECT_TRUE(loaded.trained());
  EXPECT_EQ(loaded.num_features(), static_cast<size_t>(kWidth));
  EXPECT_EQ(loaded.num_samples(), 0u);
  EXPECT_EQ(loaded.Predict(test.features), model.Predict(test.features));
  EXPECT_THROW(loaded.Load("/nonexistent/model.json"), UserError);
}

TEST(XGBCostModelTest, DegenerateDataTrainsWithoutError) {
  // One sample; then groups of one and equal scores: nothing to rank, but no error either.
  XGBCostModel model;
  Data d = MakeData(6, 6, 2);
  model.Update({d.features[0]}, {1.0}, {0});
  model.Update(d.features, std::vector<double>(6, 0.5), d.groups);
  EXPECT_EQ(model.num_samples(), 7u);
  for (double p : model.Predict(d.features)) EXPECT_TRUE(std::isfinite(p));
  model.Update({}, {}, {});  // an empty batch changes nothing
  EXPECT_EQ(model.num_samples(), 7u);
}

TEST(XGBCostModelTest, InconsistentArgumentsAreInternalErrors) {
  XGBCostModel model;
  Data d = MakeData(10, 1, 1);
  EXPECT_THROW(model.Update(d.features, {1.0}, d.groups), InternalError);
  Data ragged = d;
  ragged.features[3].pop_back();
  EXPECT_THROW(model.Update(ragged.features, ragged.scores, ragged.groups), InternalError);
  Data nan = d;
  nan.features[2][1] = std::nanf("");
  EXPECT_THROW(model.Update(nan.features, nan.scores, nan.groups), InternalError);
  model.Update(d.features, d.scores, d.groups);
  EXPECT_THROW(model.Predict({std::vector<float>(kWidth + 1, 0.0f)}), InternalError);
  EXPECT_THROW(XGBCostModel().Save("/tmp/never_written.json"), InternalError);
}

}  // namespace
}  // namespace tessera::tune
