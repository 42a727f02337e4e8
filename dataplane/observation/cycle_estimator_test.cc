// Tests of the cycle estimator's plan and of the per-cell medians it decides the size sweep from.
#include "cycle_estimator.h"

#include <gtest/gtest.h>

namespace tandem {
namespace {

TEST(CycleEstimator, CellMedianTakesOnlyThatCellsRounds) {
  std::vector<EstimatorSample> samples = {
      {512, 64, 0, 100}, {512, 64, 1, 300}, {512, 64, 2, 110}, {512, 1500, 0, 900}, {64, 64, 0, 5000}};
  EXPECT_DOUBLE_EQ(CycleEstimator::cell_median(samples, 512, 64), 110);
  EXPECT_DOUBLE_EQ(CycleEstimator::cell_median(samples, 512, 1500), 900);
  EXPECT_DOUBLE_EQ(CycleEstimator::cell_median(samples, 256, 64), 0);
}

TEST(CycleEstimator, CellMedianOfAnEvenCountIsTheMeanOfTheMiddleTwo) {
  std::vector<EstimatorSample> samples = {{16, 64, 0, 10}, {16, 64, 1, 20}, {16, 64, 2, 40}, {16, 64, 3, 1000}};
  EXPECT_DOUBLE_EQ(CycleEstimator::cell_median(samples, 16, 64), 30);
}

TEST(CycleEstimator, PlanFromJsonKeepsDefaultsForWhatIsLeftOut) {
  EstimatorPlan plan = EstimatorPlan::from_json({{"batches", {16, 1024}}, {"rounds", 3}});
  EXPECT_EQ(plan.batches, (std::vector<uint16_t>{16, 1024}));
  EXPECT_EQ(plan.rounds, 3u);
  EXPECT_EQ(plan.probes_per_round, EstimatorPlan{}.probes_per_round);
  EXPECT_EQ(plan.frame_sizes, (std::vector<uint16_t>{64, 1500}));
}

TEST(CycleEstimator, AnEmptyPlanIsAnErrorNotAHang) {
  EstimatorPlan plan;
  plan.batches.clear();
  CycleEstimator estimator(plan, 2e9);
  EXPECT_TRUE(estimator.finished());
  EXPECT_FALSE(estimator.result()["error"].is_null());
}

}  // namespace
}  // namespace tandem
