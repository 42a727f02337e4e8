// The UNiS cycle estimator: times batches of packets through one NF running alone on its core.
#pragma once

#include <cstdint>
#include <vector>

#include "dataplane/arg_schema.h"
#include "dataplane/shm_layout.h"
#include "generator.h"
#include "sink.h"

namespace tandem {

struct EstimatorPlan {
  uint16_t batch = 512;       // packets pushed per probe (at most the input ring's capacity)
  uint32_t repetitions = 30;  // probes per frame size; the median is kept
  uint32_t warmup_probes = 10;
  double size_dependence = 0.10;  // 1500 B costing this much more than 64 B => average over a size sweep

  static EstimatorPlan from_json(const json& j);
};

// Drives the deployment's single chain of one NF from the manager's loop: push a batch into the NF's input
// ring, wait until every packet is at its output (or dropped by the NF), and divide the time by the batch.
// This is UNiS's black-box estimate: it includes the NF's ring I/O, as in the paper.
class CycleEstimator {
 public:
  CycleEstimator(EstimatorPlan plan, double tsc_hz);
  // One step; returns false once every probe is done.
  bool poll(uint64_t now_tsc, Generator& generator, const Sink& sink, const StatsZone& stats);
  bool finished() const { return phase_ == Phase::Done; }
  json result() const;

  // The estimate from per-size medians: the 64 B cost, or the mean over the sweep when the NF's cost
  // depends on the frame size (the paper's treatment of variable-cost NFs).
  static double combine(const std::vector<std::pair<uint16_t, double>>& per_size, bool size_dependent);

 private:
  enum class Phase { Probe, Waiting, Done };
  void next_size();

  EstimatorPlan plan_;
  double hz_;
  std::vector<uint16_t> sizes_ = {64, 1500};
  bool swept_ = false;  // the 64..1500 sweep was added after the first two sizes disagreed
  size_t size_index_ = 0;
  uint32_t probe_ = 0;
  std::vector<double> samples_;  // cycles per packet for the current size
  std::vector<std::pair<uint16_t, double>> medians_;
  Phase phase_ = Phase::Probe;
  uint64_t probe_start_ = 0, target_ = 0;
  std::string error_;
};

}  // namespace tandem
