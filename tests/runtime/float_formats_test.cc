// runtime/float_formats.h: every code of every 8- and 4-bit format decodes to the value the
// format's definition gives and encodes back to itself; rounding, saturation and the special
// values follow ONNX Cast (values below from the ONNX spec's tables and ml_dtypes).
#include "tessera/runtime/float_formats.h"

#include <climits>
#include <cmath>
#include <cstdint>
#include <limits>

#include <gtest/gtest.h>

namespace tessera::runtime {
namespace {

const double kNaN = std::numeric_limits<double>::quiet_NaN();
const double kInf = std::numeric_limits<double>::infinity();

struct Case {
  DataType t;
  double max;
};

class EveryFormat : public ::testing::TestWithParam<Case> {};

TEST_P(EveryFormat, EveryCodeRoundTrips) {
  const DataType t = GetParam().t;
  const uint32_t n = 1u << t.bits();
  int nans = 0;
  for (uint32_t c = 0; c < n; ++c) {
    double v = DecodeFloat(t, c);
    if (std::isnan(v)) {
      ++nans;
      EXPECT_TRUE(std::isnan(DecodeFloat(t, EncodeFloat(t, v)))) << t.str() << " code " << c;
      continue;
    }
    EXPECT_EQ(EncodeFloat(t, v, /*saturate=*/false), c) << t.str() << " code " << c << " value " << v;
  }
  const int expected_nans = t == DataType::Float8E4M3FN() ? 2 : t == DataType::Float8E5M2() ? 6 : t.bits() == 4 ? 0 : 1;
  EXPECT_EQ(nans, expected_nans) << t.str();
}

TEST_P(EveryFormat, MaxAndSaturation) {
  const DataType t = GetParam().t;
  const double max = GetParam().max;
  EXPECT_EQ(DecodeFloat(t, FormatOf(t).MaxCode()), max) << t.str();
  EXPECT_EQ(DecodeFloat(t, EncodeFloat(t, 1e9, true)), max);
  EXPECT_EQ(DecodeFloat(t, EncodeFloat(t, -kInf, true)), -max);
  double over = DecodeFloat(t, EncodeFloat(t, 1e9, false));
  if (t == DataType::Float8E5M2()) EXPECT_EQ(over, kInf);
  else if (t == DataType::Float4E2M1FN()) EXPECT_EQ(over, max);  // float4 always saturates
  else EXPECT_TRUE(std::isnan(over)) << t.str();
}

INSTANTIATE_TEST_SUITE_P(Formats, EveryFormat,
                         ::testing::Values(Case{DataType::Float8E4M3FN(), 448}, Case{DataType::Float8E4M3FNUZ(), 240},
                                           Case{DataType::Float8E5M2(), 57344},
                                           Case{DataType::Float8E5M2FNUZ(), 57344},
                                           Case{DataType::Float4E2M1FN(), 6}),
                         [](const auto& info) { return info.param.t.str(); });

TEST(FloatFormats, RoundsToNearestEven) {
  const DataType e4m3 = DataType::Float8E4M3FN();
  // 0.46875 (mantissa 111, odd) and 0.5 (mantissa 000, even) are neighbours: their tie goes to 0.5.
  EXPECT_EQ(DecodeFloat(e4m3, EncodeFloat(e4m3, 0.484375)), 0.5);
  EXPECT_EQ(DecodeFloat(e4m3, EncodeFloat(e4m3, 0.4789)), 0.46875);
  EXPECT_EQ(DecodeFloat(e4m3, EncodeFloat(e4m3, 464)), 448);   // tie between 448 and 480 (beyond max)
  EXPECT_EQ(DecodeFloat(DataType::Float4E2M1FN(), EncodeFloat(DataType::Float4E2M1FN(), 0.25)), 0);  // tie -> 0
  EXPECT_EQ(DecodeFloat(DataType::Float4E2M1FN(), EncodeFloat(DataType::Float4E2M1FN(), 2.5)), 2);
  EXPECT_EQ(DecodeFloat(DataType::Float(16), EncodeFloat(DataType::Float(16), 65520)), kInf);
  EXPECT_EQ(DecodeFloat(DataType::Float(16), EncodeFloat(DataType::Float(16), 65519.99)), 65504);
  EXPECT_EQ(DecodeFloat(DataType::Float(16), EncodeFloat(DataType::Float(16), std::ldexp(1.0, -25))), 0);
  EXPECT_EQ(DecodeFloat(DataType::Float(16), EncodeFloat(DataType::Float(16), std::ldexp(1.5, -25))),
            std::ldexp(1.0, -24));
  EXPECT_EQ(EncodeFloat(DataType::BFloat16(), 1.0 + std::ldexp(1.0, -8)), 0x3F80u);  // tie -> even
  EXPECT_EQ(EncodeFloat(DataType::BFloat16(), 1.0 + 3 * std::ldexp(1.0, -8)), 0x3F82u);
}

TEST(FloatFormats, SignedZerosAndNaN) {
  EXPECT_EQ(EncodeFloat(DataType::Float8E4M3FN(), -0.0), 0x80u);
  EXPECT_EQ(EncodeFloat(DataType::Float8E4M3FNUZ(), -0.0), 0x00u);  // no negative zero
  EXPECT_EQ(EncodeFloat(DataType::Float8E5M2FNUZ(), -1e-30), 0x00u);
  EXPECT_EQ(EncodeFloat(DataType::Float8E4M3FNUZ(), kNaN), 0x80u);
  EXPECT_EQ(EncodeFloat(DataType::Float8E4M3FN(), kNaN), 0x7Fu);
  EXPECT_EQ(EncodeFloat(DataType::Float4E2M1FN(), kNaN), 0x8u);  // ml_dtypes
}

TEST(FloatFormats, E8M0RoundModes) {
  const DataType t = DataType::Float8E8M0FNU();
  EXPECT_EQ(DecodeFloat(t, EncodeFloat(t, 3.0, true, RoundMode::kUp)), 4.0);
  EXPECT_EQ(DecodeFloat(t, EncodeFloat(t, 3.0, true, RoundMode::kDown)), 2.0);
  EXPECT_EQ(DecodeFloat(t, EncodeFloat(t, 3.1, true, RoundMode::kNearest)), 4.0);  // mantissa 1.55
  EXPECT_EQ(DecodeFloat(t, EncodeFloat(t, 2.9, true, RoundMode::kNearest)), 2.0);  // mantissa 1.45
  EXPECT_EQ(DecodeFloat(t, EncodeFloat(t, 2.4, true, RoundMode::kNearest)), 2.0);
  EXPECT_EQ(DecodeFloat(t, EncodeFloat(t, 0.0)), std::ldexp(1.0, -127));
  EXPECT_TRUE(std::isnan(DecodeFloat(t, EncodeFloat(t, kInf))));
  EXPECT_EQ(EncodeFloat(t, std::ldexp(1.5, 127), true), 0xFEu);   // saturated
  EXPECT_EQ(EncodeFloat(t, std::ldexp(1.5, 127), false), 0xFFu);  // NaN
}

TEST(FloatFormats, ElementAccessors) {
  int8_t narrow[2];
  StoreFromDouble(narrow, 0, DataType::Int(4), 9.6);    // trunc 9 -> wraps to -7
  StoreFromInt64(narrow, 1, DataType::UInt(2), -1);     // wraps to 3
  EXPECT_EQ(LoadAsInt64(narrow, 0, DataType::Int(4)), -7);
  EXPECT_EQ(LoadAsInt64(narrow, 1, DataType::UInt(2)), 3);
  uint16_t half;
  StoreFromDouble(&half, 0, DataType::Float(16), 1.5);
  EXPECT_EQ(half, 0x3E00);
  EXPECT_EQ(LoadAsDouble(&half, 0, DataType::Float(16)), 1.5);
  EXPECT_THROW(LoadAsDouble(&half, 0, DataType::Handle()), UserError);
}

// Negative values of every signed width read as themselves (int32 -2 once read as 2^32 - 2: a
// Cast of a negative int32 constant folded to 4294967294), unsigned ones as their full range.
TEST(FloatFormats, SignedAndUnsignedWidthsReadExactly) {
  const int8_t i8[] = {-2, 127};
  const int16_t i16[] = {-2, -32768};
  const int32_t i32[] = {-2, INT32_MIN};
  const int64_t i64[] = {-2, INT64_MIN};
  const uint16_t u16[] = {65535};
  const uint32_t u32[] = {4294967295u};
  EXPECT_EQ(LoadAsInt64(i8, 0, DataType::Int(8)), -2);
  EXPECT_EQ(LoadAsInt64(i16, 0, DataType::Int(16)), -2);
  EXPECT_EQ(LoadAsInt64(i16, 1, DataType::Int(16)), -32768);
  EXPECT_EQ(LoadAsInt64(i32, 0, DataType::Int(32)), -2);
  EXPECT_EQ(LoadAsInt64(i32, 1, DataType::Int(32)), INT32_MIN);
  EXPECT_EQ(LoadAsInt64(i64, 1, DataType::Int(64)), INT64_MIN);
  EXPECT_EQ(LoadAsInt64(u16, 0, DataType::UInt(16)), 65535);
  EXPECT_EQ(LoadAsInt64(u32, 0, DataType::UInt(32)), 4294967295);
  EXPECT_EQ(LoadAsDouble(i32, 0, DataType::Int(32)), -2.0);
  EXPECT_EQ(LoadAsDouble(i8, 1, DataType::Int(8)), 127.0);
}

}  // namespace
}  // namespace tessera::runtime
