#include "tessera/tune/cost_model.h"

#include <xgboost/c_api.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <numeric>
#include <sstream>

#include "tessera/support/error.h"
#include "tessera/support/file_read.h"

namespace tessera::tune {
namespace {

// Every XGBoost call goes through this: a non-zero return is an InternalError with its message.
#define TESSERA_XGB_CALL(call)                                                                   \
  do {                                                                                           \
    if ((call) != 0) {                                                                           \
      TESSERA_THROW(InternalError, "XGBoost call failed: " #call ": ", XGBGetLastError());       \
    }                                                                                            \
  } while (0)

struct DMatrix {
  DMatrixHandle handle = nullptr;
  ~DMatrix() {
    if (handle) XGDMatrixFree(handle);
  }
};

// Checks the rows' shape; returns them row-major.
std::vector<float> Flatten(const std::vector<std::vector<float>>& features, size_t width) {
  std::vector<float> flat;
  flat.reserve(features.size() * width);
  for (size_t i = 0; i < features.size(); ++i) {
    TESSERA_ICHECK(features[i].size() == width, "cost model: feature row ", i, " has ", features[i].size(),
                   " values, expected ", width);
    for (float v : features[i]) {
      TESSERA_ICHECK(std::isfinite(v), "cost model: feature row ", i, " has a non-finite value");
    }
    flat.insert(flat.end(), features[i].begin(), features[i].end());
  }
  return flat;
}

void SetParam(BoosterHandle h, const char* name, const std::string& value) {
  TESSERA_XGB_CALL(XGBoosterSetParam(h, name, value.c_str()));
}

// A double as XGBoost parses it, without std::to_string's loss of small values.
std::string Num(double v) {
  std::ostringstream os;
  os.precision(17);
  os << v;
  return os.str();
}

}  // namespace

struct XGBCostModel::Booster {
  BoosterHandle handle = nullptr;
  ~Booster() {
    if (handle) XGBoosterFree(handle);
  }
};

XGBCostModel::XGBCostModel(XGBOptions options) : options_(options) {
  TESSERA_ICHECK(options_.num_rounds > 0 && options_.max_depth > 0 && options_.nthread > 0,
                 "cost model: bad XGBOptions");
}
XGBCostModel::~XGBCostModel() = default;
XGBCostModel::XGBCostModel(XGBCostModel&&) noexcept = default;
XGBCostModel& XGBCostModel::operator=(XGBCostModel&&) noexcept = default;

bool XGBCostModel::trained() const { return booster_ != nullptr; }

void XGBCostModel::Update(const std::vector<std::vector<float>>& features, const std::vector<double>& scores,
                          const std::vector<int>& groups) {
  TESSERA_ICHECK(scores.size() == features.size() && groups.size() == features.size(), "cost model: ",
                 features.size(), " feature rows, ", scores.size(), " scores, ", groups.size(), " groups");
  if (features.empty()) return;
  const size_t width = num_samples() > 0 ? num_features_ : features[0].size();
  TESSERA_ICHECK(width > 0, "cost model: empty feature rows");
  std::vector<float> flat = Flatten(features, width);
  for (size_t i = 0; i < scores.size(); ++i) {
    TESSERA_ICHECK(std::isfinite(scores[i]), "cost model: score ", i, " is not finite");
    TESSERA_ICHECK(groups[i] >= 0, "cost model: group ", groups[i], " of row ", i, " is negative");
  }
  num_features_ = width;
  rows_.insert(rows_.end(), flat.begin(), flat.end());
  scores_.insert(scores_.end(), scores.begin(), scores.end());
  groups_.insert(groups_.end(), groups.begin(), groups.end());
  Retrain();
}

void XGBCostModel::Retrain() {
  // XGBoost's ranking objectives want each group's rows contiguous, with the group sizes.
  const size_t n = scores_.size();
  std::vector<size_t> order(n);
  std::iota(order.begin(), order.end(), size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) { return groups_[a] < groups_[b]; });
  std::vector<float> data(n * num_features_);
  std::vector<float> labels(n);
  std::vector<unsigned> group_sizes;
  for (size_t i = 0; i < n; ++i) {
    const size_t src = order[i];
    std::copy_n(rows_.begin() + static_cast<std::ptrdiff_t>(src * num_features_), num_features_,
                data.begin() + static_cast<std::ptrdiff_t>(i * num_features_));
    labels[i] = static_cast<float>(scores_[src]);
    if (i == 0 || groups_[src] != groups_[order[i - 1]]) group_sizes.push_back(0);
    ++group_sizes.back();
  }

  DMatrix dtrain;
  TESSERA_XGB_CALL(XGDMatrixCreateFromMat(data.data(), n, num_features_, std::nanf(""), &dtrain.handle));
  TESSERA_XGB_CALL(XGDMatrixSetFloatInfo(dtrain.handle, "label", labels.data(), n));
  TESSERA_XGB_CALL(XGDMatrixSetUIntInfo(dtrain.handle, "group", group_sizes.data(), group_sizes.size()));

  auto booster = std::make_unique<Booster>();
  TESSERA_XGB_CALL(XGBoosterCreate(&dtrain.handle, 1, &booster->handle));
  BoosterHandle h = booster->handle;
  SetParam(h, "objective", "rank:pairwise");
  SetParam(h, "booster", "gbtree");
  SetParam(h, "tree_method", options_.tree_method);
  SetParam(h, "verbosity", "0");
  SetParam(h, "max_depth", std::to_string(options_.max_depth));
  SetParam(h, "eta", Num(options_.eta));
  SetParam(h, "min_child_weight", Num(options_.min_child_weight));
  SetParam(h, "gamma", Num(options_.gamma));
  SetParam(h, "subsample", Num(options_.subsample));
  SetParam(h, "nthread", std::to_string(options_.nthread));
  SetParam(h, "seed", std::to_string(options_.seed));
  for (int iter = 0; iter < options_.num_rounds; ++iter) {
    TESSERA_XGB_CALL(XGBoosterUpdateOneIter(h, iter, dtrain.handle));
  }
  booster_ = std::move(booster);
}

std::vector<double> XGBCostModel::Predict(const std::vector<std::vector<float>>& features) const {
  if (!booster_ || features.empty()) return std::vector<double>(features.size(), 0.0);
  std::vector<float> flat = Flatten(features, num_features_);
  DMatrix dm;
  TESSERA_XGB_CALL(XGDMatrixCreateFromMat(flat.data(), features.size(), num_features_, std::nanf(""), &dm.handle));
  bst_ulong len = 0;
  const float* out = nullptr;
  // option_mask 0: the plain margin-transformed prediction; ntree_limit 0: every tree;
  // training 0: no dropout / subsampling.
  TESSERA_XGB_CALL(XGBoosterPredict(booster_->handle, dm.handle, 0, 0, 0, &len, &out));
  TESSERA_ICHECK(len == features.size(), "cost model: XGBoost returned ", len, " predictions for ",
                 features.size(), " rows");
  return std::vector<double>(out, out + len);
}

void XGBCostModel::Save(const std::string& path) const {
  TESSERA_ICHECK(booster_ != nullptr, "cost model: Save before any training");
  bst_ulong len = 0;
  const char* bytes = nullptr;
  TESSERA_XGB_CALL(XGBoosterSaveModelToBuffer(booster_->handle, R"({"format": "json"})", &len, &bytes));
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(bytes, static_cast<std::streamsize>(len));
  out.close();
  TESSERA_CHECK(out.good(), "cannot write the cost model to '", path,
                "': check that its folder exists and is writable");
}

void XGBCostModel::Load(const std::string& path) {
  const std::string bytes = ReadRegularFile(path, "cost model");
  auto booster = std::make_unique<Booster>();
  TESSERA_XGB_CALL(XGBoosterCreate(nullptr, 0, &booster->handle));
  if (XGBoosterLoadModelFromBuffer(booster->handle, bytes.data(), bytes.size()) != 0) {
    TESSERA_THROW(UserError, "cannot load the cost model '", path, "': ", XGBGetLastError(),
                  " (expected a file written by XGBCostModel::Save)");
  }
  bst_ulong num_features = 0;
  TESSERA_XGB_CALL(XGBoosterGetNumFeature(booster->handle, &num_features));
  SetParam(booster->handle, "nthread", std::to_string(options_.nthread));
  booster_ = std::move(booster);
  num_features_ = num_features;
  rows_.clear();
  scores_.clear();
  groups_.clear();
}

}  // namespace tessera::tune
