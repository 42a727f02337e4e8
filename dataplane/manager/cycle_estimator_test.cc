// Tests of how the cycle estimator turns per-size medians into one estimate.
#include "cycle_estimator.h"

#include <gtest/gtest.h>

namespace tandem {
namespace {

TEST(CycleEstimator, FixedCostNfsUseThe64ByteMedian) {
  EXPECT_DOUBLE_EQ(CycleEstimator::combine({{64, 60}, {1500, 61}}, false), 60);
}

TEST(CycleEstimator, SizeDependentNfsAverageOverTheSweep) {
  EXPECT_DOUBLE_EQ(CycleEstimator::combine({{64, 100}, {128, 200}, {1500, 600}}, true), 300);
}

TEST(CycleEstimator, PlanFromJsonKeepsDefaultsForWhatIsLeftOut) {
  EstimatorPlan plan = EstimatorPlan::from_json({{"batch", 256}});
  EXPECT_EQ(plan.batch, 256);
  EXPECT_EQ(plan.repetitions, EstimatorPlan{}.repetitions);
}

}  // namespace
}  // namespace tandem
