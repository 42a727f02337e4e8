// Unit tests for the latency breakdown's arithmetic on synthetic traces.
#include "latency_breakdown.h"

#include <gtest/gtest.h>

namespace tandem {
namespace {

constexpr double kHz = 1e6;  // one cycle a microsecond: cycles read as microseconds

Deployment two_nfs() {
  Deployment d;
  d.nfs.resize(2);
  d.nfs[0].name = "fw1";
  d.nfs[1].name = "fw2";
  return d;
}

TraceSlot trace(std::initializer_list<HopTrace> hops) {
  TraceSlot slot{};
  for (const HopTrace& hop : hops) slot.hop[slot.hops++] = hop;
  return slot;
}

TEST(LatencyBreakdown, PartsTelescopeToTheEndToEndLatency) {
  LatencyBreakdown breakdown(2);
  // Sent at 100; fw1 takes it at 110 (queued 10, 4 of them behind other work), ends at 130; fw2 takes it at 160
  // (queued 30, 30 behind other work... capped at the wait), ends at 170; the sink gets it at 175.
  breakdown.add(trace({{110, 112, 130, 4, 0}, {160, 161, 170, 45, 1}}), 100, 175);
  json j = breakdown.to_json(two_nfs(), kHz);
  EXPECT_EQ(j["traced_packets"], 1u);
  EXPECT_DOUBLE_EQ(j["end_to_end_us"].get<double>(), 75);
  EXPECT_DOUBLE_EQ(j["exit_queue_us"].get<double>(), 5);
  const json& fw1 = j["nfs"][0];
  EXPECT_EQ(fw1["nf"], "fw1");
  EXPECT_DOUBLE_EQ(fw1["queue_us"].get<double>(), 10);
  EXPECT_DOUBLE_EQ(fw1["queue_behind_other_work_us"].get<double>(), 4);
  EXPECT_DOUBLE_EQ(fw1["queue_not_running_us"].get<double>(), 6);
  EXPECT_DOUBLE_EQ(fw1["in_nf_us"].get<double>(), 20);
  const json& fw2 = j["nfs"][1];
  EXPECT_DOUBLE_EQ(fw2["queue_us"].get<double>(), 30);
  EXPECT_DOUBLE_EQ(fw2["queue_behind_other_work_us"].get<double>(), 30);
  EXPECT_DOUBLE_EQ(fw2["queue_not_running_us"].get<double>(), 0);
  double sum = j["exit_queue_us"].get<double>();
  for (const json& nf : j["nfs"]) sum += nf["queue_us"].get<double>() + nf["in_nf_us"].get<double>();
  EXPECT_DOUBLE_EQ(sum, j["end_to_end_us"].get<double>());
}

TEST(LatencyBreakdown, AClockOfAnotherCoreALittleAheadGivesAWaitALittleBelowZeroNotAWrappedOne) {
  // fw1 (on its core) ended the batch at 130 by its clock; the sink read 128 on its own: a wait of -2 cycles, not
  // 2^64 - 2, and the parts still add up to the end to end.
  LatencyBreakdown breakdown(2);
  breakdown.add(trace({{110, 112, 130, 4, 0}}), 100, 128);
  json j = breakdown.to_json(two_nfs(), kHz);
  EXPECT_DOUBLE_EQ(j["exit_queue_us"].get<double>(), -2);
  EXPECT_DOUBLE_EQ(j["end_to_end_us"].get<double>(), 28);
  EXPECT_DOUBLE_EQ(j["nfs"][0]["queue_us"].get<double>() + j["nfs"][0]["in_nf_us"].get<double>() - 2, 28);
}

TEST(LatencyBreakdown, MeansArePerTracedPacketAndAnNfNotPassedAddsNothing) {
  LatencyBreakdown breakdown(2);
  breakdown.add(trace({{110, 110, 120, 0, 0}}), 100, 130);                         // fw1 only: 30
  breakdown.add(trace({{110, 110, 120, 0, 0}, {140, 140, 150, 0, 1}}), 100, 170);  // both: 70
  json j = breakdown.to_json(two_nfs(), kHz);
  EXPECT_DOUBLE_EQ(j["end_to_end_us"].get<double>(), 50);
  EXPECT_EQ(j["nfs"][1]["visits"], 1u);
  EXPECT_DOUBLE_EQ(j["nfs"][1]["queue_us"].get<double>(), 10);  // 20 over two packets
}

TEST(LatencyBreakdown, AnUnknownSplitIsCountedNotGuessed) {
  LatencyBreakdown breakdown(2);
  breakdown.add(trace({{110, 110, 120, kBusyUnknown, 0}}), 100, 130);
  json j = breakdown.to_json(two_nfs(), kHz);
  EXPECT_EQ(j["nfs"][0]["queue_split_unknown"], 1u);
  EXPECT_DOUBLE_EQ(j["nfs"][0]["queue_us"].get<double>(), 10);
  EXPECT_DOUBLE_EQ(j["nfs"][0]["queue_behind_other_work_us"].get<double>(), 0);
  EXPECT_DOUBLE_EQ(j["nfs"][0]["queue_not_running_us"].get<double>(), 0);
}

TEST(LatencyBreakdown, APathLongerThanATraceKeepsIsCountedApart) {
  LatencyBreakdown breakdown(2);
  TraceSlot slot{};
  slot.hops = kMaxTracedHops + 1;
  breakdown.add(slot, 100, 200);
  json j = breakdown.to_json(two_nfs(), kHz);
  EXPECT_EQ(j["too_long"], 1u);
  EXPECT_EQ(j["traced_packets"], 0u);
  EXPECT_EQ(j["end_to_end_us"], 0.0);
}

}  // namespace
}  // namespace tandem
