// Checks shared by the schedule primitive tests: the ScheduleError a request must raise, and
// the Trace round trip (print, JSON, replay onto a fresh PrimFunc).
#pragma once

#include <gtest/gtest.h>

#include <functional>
#include <string>

#include "tessera/tir/printer.h"
#include "tessera/tir/schedule/schedule.h"
#include "tessera/tir/schedule/trace.h"
#include "tessera/tir/structural_equal.h"
#include "funcs.h"

/// `stmt` must throw a ScheduleError whose message contains `fragment`.
#define EXPECT_SCHEDULE_ERROR(stmt, fragment)                                              \
  do {                                                                                     \
    try {                                                                                  \
      stmt;                                                                                \
      ADD_FAILURE() << "expected ScheduleError containing: " << (fragment);               \
    } catch (const ::tessera::tir::ScheduleError& e) {                                     \
      EXPECT_NE(std::string(e.what()).find(fragment), std::string::npos) << e.what();      \
    }                                                                                      \
  } while (0)

namespace tessera::tir::testing {

/// PadConv1D(n) (funcs.h) with C's loop split by 4 and the padding block P computed at the
/// tile loop: P then covers the 4 + 2 padded elements one tile reads.
inline Schedule PadConvTiledComputeAt(int64_t n) {
  Schedule sch(PadConv1D(n));
  BlockRV p = sch.get_block("P");
  auto l = sch.get_loops(sch.get_block("C"));
  auto t = sch.split(l[0], {-1, 4});
  sch.compute_at(p, t[0]);
  return sch;
}

/// sch's trace survives JSON (same text both ways) and, replayed onto make(), gives a
/// structurally equal PrimFunc and the same trace.
inline void ExpectTraceRoundTrip(const Schedule& sch, const std::function<PrimFunc()>& make) {
  const std::string json = sch.trace().ToJSON();
  Trace parsed = Trace::FromJSON(json);
  EXPECT_EQ(parsed.str(), sch.trace().str());
  EXPECT_EQ(parsed.ToJSON(), json);
  Schedule replay(make());
  parsed.ApplyToSchedule(replay);
  EXPECT_TRUE(StructuralEqual(replay.func(), sch.func())) << AsText(replay.func()) << "\nvs\n" << AsText(sch.func());
  EXPECT_EQ(replay.trace().str(), sch.trace().str());
}

}  // namespace tessera::tir::testing
