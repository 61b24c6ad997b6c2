// The tuner's statistical cost model (AutoTVM, arXiv 1805.08166, §4: gradient-boosted trees over
// loop-program features trained with a rank loss): XGBoost through its C API (Debian
// libxgboost-dev), objective "rank:pairwise".
//
// Samples: one fixed-length feature vector per measured candidate (ExtractFeatures,
// feature_extractor.h), a score (normalized throughput: higher is better, e.g. the task's best
// time / this candidate's time, 0 for a failed one) and a group (the candidate's task id). The
// pairwise objective only learns the order of candidates within a group, so scores of different
// tasks need not be comparable, and the model transfers across tasks: it is warm-started from
// every record of the database (issue 19, "transfer").
//
// Update adds samples and retrains from scratch on everything it has (the data is small: a few
// thousand samples), deterministically (fixed seed, fixed thread count). Predict returns one
// score per row (only its order is meaningful); before any training it returns zeros.
//
// Errors: InternalError for inconsistent arguments (sizes, feature widths, non-finite values) and
// for a failing XGBoost call (with XGBGetLastError()); UserError when Save / Load cannot write or
// read the file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tessera::tune {

struct XGBOptions {
  int num_rounds = 150;          ///< boosting rounds per (re)training
  int max_depth = 6;
  double eta = 0.2;              ///< learning rate
  double min_child_weight = 1;
  double gamma = 1e-4;           ///< minimum loss reduction to split
  double subsample = 1.0;
  int nthread = 1;               ///< XGBoost's threads (1: deterministic, leaves cores to measurement)
  uint64_t seed = 0;             ///< XGBoost's seed (pair sampling, subsampling)
  std::string tree_method = "hist";  ///< "hist" (fast, histogram splits) or "exact"
};

class XGBCostModel {
 public:
  explicit XGBCostModel(XGBOptions options = {});
  ~XGBCostModel();
  XGBCostModel(XGBCostModel&&) noexcept;
  XGBCostModel& operator=(XGBCostModel&&) noexcept;
  XGBCostModel(const XGBCostModel&) = delete;
  XGBCostModel& operator=(const XGBCostModel&) = delete;

  /// Adds `features.size()` samples and retrains on every sample added so far.
  ///   features: one row per sample, every row (in this and every earlier call) of the same
  ///             length, finite values;
  ///   scores:   one per row, finite, higher is better (normalized throughput);
  ///   groups:   one per row, the sample's group (task) id >= 0; rows of one group need not be
  ///             contiguous (they are grouped, stably, before training) and a group id names the
  ///             same group across calls.
  /// An empty batch retrains nothing. InternalError on inconsistent arguments or an XGBoost error.
  void Update(const std::vector<std::vector<float>>& features, const std::vector<double>& scores,
              const std::vector<int>& groups);

  /// One predicted score per row (higher = predicted faster; compare within a task only).
  /// Zeros before any training. InternalError when a row's length differs from the trained one.
  std::vector<double> Predict(const std::vector<std::vector<float>>& features) const;

  /// Number of samples trained on (0 after Load: the samples are not saved).
  size_t num_samples() const { return scores_.size(); }
  /// Whether a trained booster is present (after an Update with samples, or Load).
  bool trained() const;
  /// Feature-vector length of the trained model (0 before training).
  size_t num_features() const { return num_features_; }

  /// Saves the trained booster to `path` (XGBoost's JSON model format). InternalError before
  /// training, UserError when the file cannot be written.
  void Save(const std::string& path) const;
  /// Replaces the booster by the one saved at `path` (its samples are not restored: a later
  /// Update retrains from the new samples only). UserError when the file cannot be loaded.
  void Load(const std::string& path);

 private:
  struct Booster;
  void Retrain();

  XGBOptions options_;
  size_t num_features_ = 0;
  std::vector<float> rows_;     // num_samples() x num_features_, row-major, in Update order
  std::vector<double> scores_;
  std::vector<int> groups_;
  std::unique_ptr<Booster> booster_;
};

}  // namespace tessera::tune
