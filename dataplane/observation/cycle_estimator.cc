// Cycle estimation by timing probe batches through a lone NF, every (batch, frame size) cell in interleaved rounds.
#include "cycle_estimator.h"

#include <algorithm>

#include <rte_cycles.h>

namespace tandem {

namespace {
constexpr double kProbeTimeoutSeconds = 1.0;
const std::vector<uint16_t> kSweepSizes = {128, 256, 512, 1024};

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  size_t middle = values.size() / 2;
  return values.size() % 2 ? values[middle] : (values[middle - 1] + values[middle]) / 2;
}

template <typename T>
std::vector<T> list_or(const json& j, const char* key, std::vector<T> fallback) {
  return j.contains(key) ? j[key].get<std::vector<T>>() : fallback;
}
}  // namespace

EstimatorPlan EstimatorPlan::from_json(const json& j) {
  EstimatorPlan plan;
  plan.batches = list_or<uint16_t>(j, "batches", plan.batches);
  plan.frame_sizes = list_or<uint16_t>(j, "frame_sizes", plan.frame_sizes);
  plan.rounds = j.value("rounds", plan.rounds);
  plan.probes_per_round = j.value("probes_per_round", plan.probes_per_round);
  plan.warmup_probes = j.value("warmup_probes", plan.warmup_probes);
  plan.round_gap_s = j.value("round_gap_s", plan.round_gap_s);
  plan.size_dependence = j.value("size_dependence", plan.size_dependence);
  return plan;
}

CycleEstimator::CycleEstimator(EstimatorPlan plan, double tsc_hz) : plan_(std::move(plan)), hz_(tsc_hz) {
  if (plan_.batches.empty() || plan_.frame_sizes.empty() || plan_.rounds == 0 || plan_.probes_per_round == 0) {
    error_ = "the estimator plan needs at least one batch, frame size, round and probe";
    phase_ = Phase::Done;
    return;
  }
  begin_pass(plan_.frame_sizes);
}

void CycleEstimator::begin_pass(const std::vector<uint16_t>& sizes) {
  cells_.clear();
  for (uint16_t batch : plan_.batches)
    for (uint16_t size : sizes) cells_.push_back({batch, size});
  round_ = 0;
  visited_ = 0;
  probe_ = 0;
}

double CycleEstimator::cell_median(const std::vector<EstimatorSample>& samples, uint16_t batch, uint16_t frame_size) {
  std::vector<double> values;
  for (const EstimatorSample& s : samples)
    if (s.batch == batch && s.frame_size == frame_size) values.push_back(s.cycles_per_packet);
  return median(values);
}

void CycleEstimator::poll(ProbeView& view, uint64_t now_tsc) {
  // Packets out of the NF: delivered at the sink, or dropped by the NF itself (a filtering NF).
  uint64_t accounted = view.sink.delivery(0).delivered + counter_read(view.stats.nfs[0].packets_dropped);
  // Each round starts one cell further, so no cell always follows the same one.
  const Cell& cell = cells_[(round_ + visited_) % cells_.size()];
  switch (phase_) {
    case Phase::Done:
      return;
    case Phase::Gap:
      if (now_tsc >= gap_end_) phase_ = Phase::Probe;
      return;
    case Phase::Probe:
      target_ = accounted + cell.batch;
      view.generator.emit_probe(0, cell.batch, cell.frame_size, now_tsc);
      probe_start_ = rte_get_tsc_cycles();  // after the frames are built and enqueued: only the NF's time counts
      phase_ = Phase::Waiting;
      return;
    case Phase::Waiting:
      break;
  }
  if (accounted < target_) {
    if (static_cast<double>(now_tsc - probe_start_) > kProbeTimeoutSeconds * hz_) {
      error_ = "the NF did not return a probe batch of " + std::to_string(cell.batch) + " packets within 1 s";
      phase_ = Phase::Done;
    }
    return;
  }
  if (probe_ >= plan_.warmup_probes) probe_cycles_.push_back(static_cast<double>(now_tsc - probe_start_) / cell.batch);
  probe_++;
  phase_ = Phase::Probe;
  if (probe_ == plan_.warmup_probes + plan_.probes_per_round) cell_done();
}

void CycleEstimator::cell_done() {
  const Cell& cell = cells_[(round_ + visited_) % cells_.size()];
  samples_.push_back({cell.batch, cell.frame_size, round_, median(probe_cycles_)});
  probe_cycles_.clear();
  probe_ = 0;
  if (++visited_ < cells_.size()) return;
  visited_ = 0;
  if (++round_ < plan_.rounds) {
    gap_end_ = rte_get_tsc_cycles() + static_cast<uint64_t>(plan_.round_gap_s * hz_);
    phase_ = Phase::Gap;
    return;
  }
  bool sweep_possible = !swept_ && std::count(plan_.frame_sizes.begin(), plan_.frame_sizes.end(), 64) &&
                        std::count(plan_.frame_sizes.begin(), plan_.frame_sizes.end(), 1500);
  uint16_t batch = plan_.batches.front();
  if (sweep_possible &&
      cell_median(samples_, batch, 1500) > cell_median(samples_, batch, 64) * (1 + plan_.size_dependence)) {
    // The cost grows with the frame: measure the sizes in between too; the control plane averages them all.
    swept_ = true;
    begin_pass(kSweepSizes);
    return;
  }
  phase_ = Phase::Done;
}

json CycleEstimator::result() const {
  json samples = json::array();
  for (const EstimatorSample& s : samples_) samples.push_back({s.batch, s.frame_size, s.round, s.cycles_per_packet});
  return {{"complete", error_.empty() && finished()},
          {"size_dependent", swept_},
          {"batches", plan_.batches},
          {"rounds", plan_.rounds},
          {"probes_per_round", plan_.probes_per_round},
          {"samples_columns", {"batch", "frame_size", "round", "cycles_per_packet"}},
          {"samples", samples},
          {"error", error_.empty() ? json() : json(error_)}};
}

json CycleEstimator::report(const ProbeView& view) const {
  json out = result();
  // The NF's own view, from the TSC around its batch function: the estimate minus ring I/O and polling.
  const NfCounters& nf = view.stats.nfs[0];
  uint64_t in = counter_read(nf.packets_in);
  out["cycles_inside_nf"] = in && !view.deployment.nfs[0].external()
                                ? json(static_cast<double>(counter_read(nf.busy_cycles)) / static_cast<double>(in))
                                : json();
  return out;
}

namespace {
const ProbeRegistration kEstimate({
    .name = "estimate",
    .help = "cycles per packet of a lone NF, timed over probe batches in interleaved rounds (UNiS's estimator, "
            "Bubble's T(b))",
    .requirements = {},
    .create = [](const json& options, double tsc_hz) -> std::unique_ptr<Probe> {
      return std::make_unique<CycleEstimator>(EstimatorPlan::from_json(options), tsc_hz);
    },
});
}  // namespace

}  // namespace tandem
