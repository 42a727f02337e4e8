// Cycle estimation by timing probe batches through a lone NF, 64 B first and a 64..1500 B sweep if size matters.
#include "cycle_estimator.h"

#include <algorithm>
#include <numeric>

#include <rte_cycles.h>

namespace tandem {

namespace {
constexpr double kProbeTimeoutSeconds = 1.0;

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}
}  // namespace

EstimatorPlan EstimatorPlan::from_json(const json& j) {
  EstimatorPlan plan;
  plan.batch = j.value("batch", plan.batch);
  plan.repetitions = j.value("repetitions", plan.repetitions);
  plan.warmup_probes = j.value("warmup_probes", plan.warmup_probes);
  plan.size_dependence = j.value("size_dependence", plan.size_dependence);
  return plan;
}

CycleEstimator::CycleEstimator(EstimatorPlan plan, double tsc_hz) : plan_(plan), hz_(tsc_hz) {}

double CycleEstimator::combine(const std::vector<std::pair<uint16_t, double>>& per_size, bool size_dependent) {
  if (per_size.empty()) return 0;
  if (!size_dependent) return per_size.front().second;
  double sum = 0;
  for (const auto& [size, cost] : per_size) sum += cost;
  return sum / static_cast<double>(per_size.size());
}

bool CycleEstimator::poll(uint64_t now_tsc, Generator& generator, const Sink& sink, const StatsZone& stats) {
  // Packets out of the NF: delivered at the sink, or dropped by the NF itself (a filtering NF).
  uint64_t accounted = sink.delivery(0).delivered + counter_read(stats.nfs[0].packets_dropped);
  switch (phase_) {
    case Phase::Done:
      return false;
    case Phase::Probe:
      target_ = accounted + plan_.batch;
      generator.emit_probe(0, plan_.batch, sizes_[size_index_], now_tsc);
      probe_start_ = rte_get_tsc_cycles();  // after the frames are built and enqueued: only the NF's time counts
      phase_ = Phase::Waiting;
      return true;
    case Phase::Waiting:
      break;
  }
  if (accounted < target_) {
    if (static_cast<double>(now_tsc - probe_start_) > kProbeTimeoutSeconds * hz_) {
      error_ = "the NF did not return a probe batch of " + std::to_string(plan_.batch) + " packets within 1 s";
      phase_ = Phase::Done;
    }
    return phase_ != Phase::Done;
  }
  if (probe_ >= plan_.warmup_probes)
    samples_.push_back(static_cast<double>(now_tsc - probe_start_) / plan_.batch);
  probe_++;
  if (samples_.size() >= plan_.repetitions) next_size();
  if (phase_ != Phase::Done) phase_ = Phase::Probe;
  return phase_ != Phase::Done;
}

void CycleEstimator::next_size() {
  medians_.emplace_back(sizes_[size_index_], median(samples_));
  samples_.clear();
  probe_ = 0;
  size_index_++;
  if (size_index_ == 2 && !swept_) {
    double small = medians_[0].second, large = medians_[1].second;
    if (large > small * (1 + plan_.size_dependence)) {
      // The cost grows with the frame: measure the sweep in between too, and average them all.
      sizes_ = {64, 1500, 128, 256, 512, 1024};
      swept_ = true;
    }
  }
  if (size_index_ >= sizes_.size()) phase_ = Phase::Done;
}

json CycleEstimator::result() const {
  json per_size = json::object();
  auto sorted = medians_;
  std::sort(sorted.begin(), sorted.end());
  for (const auto& [size, cost] : sorted) per_size[std::to_string(size)] = cost;
  double cycles = combine(sorted, swept_);
  bool complete = error_.empty() && finished();
  return {{"cycles_per_packet", complete ? json(cycles) : json()},
          {"ns_per_packet", complete ? json(cycles / hz_ * 1e9) : json()},
          {"size_dependent", swept_},
          {"per_size_cycles", per_size},
          {"batch", plan_.batch},
          {"repetitions", plan_.repetitions},
          {"error", error_.empty() ? json() : json(error_)}};
}

}  // namespace tandem
