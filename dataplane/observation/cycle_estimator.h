// The cycle estimator: times probe batches through one NF running alone on its core, in interleaved rounds.
#pragma once

#include <cstdint>
#include <vector>

#include "contract/arg_schema.h"
#include "probe.h"

namespace tandem {

struct EstimatorPlan {
  // Batch sizes to time (each at most the input ring's capacity and the run's burst). One for UNiS's cost;
  // Bubble's T(b) = k*b + c model times several in the same run.
  std::vector<uint16_t> batches = {512};
  // Passes over every (batch, size) cell. Cells are interleaved within a pass, and passes are spread over
  // time, so a slow phase of the machine (a busy neighbour, a frequency change) hits every cell alike
  // instead of skewing one, and shows up as spread between rounds instead of as a wrong estimate.
  uint32_t rounds = 9;
  uint32_t probes_per_round = 5;  // timed probes per cell and round; their median is the round's sample
  uint32_t warmup_probes = 2;     // untimed probes before a cell's timed ones (the other cells evicted its state)
  double round_gap_s = 0.05;      // idle time between rounds
  // Frame sizes of the first pass. With 64 and 1500 B, an NF whose 1500 B cost is more than size_dependence
  // above its 64 B cost is measured again over the sizes in between (a size sweep), and the mean is its cost.
  std::vector<uint16_t> frame_sizes = {64, 1500};
  double size_dependence = 0.10;

  static EstimatorPlan from_json(const json& j);
};

// One round's sample of one cell: the median cycles per packet of its timed probes.
struct EstimatorSample {
  uint16_t batch, frame_size;
  uint32_t round;
  double cycles_per_packet;
};

// Drives the deployment's single chain of one NF from the manager's loop: push a batch into the NF's input
// ring, wait until every packet is at its output (or dropped by the NF), and divide the time by the batch.
// This is UNiS's black-box estimate: it includes the NF's ring I/O, as in the paper. The statistics over the
// rounds (estimate, spread, line fit) are the control plane's: this class only measures. The probe `estimate`.
class CycleEstimator : public Probe {
 public:
  CycleEstimator(EstimatorPlan plan, double tsc_hz);
  bool drives_traffic() const override { return true; }
  // One step: send a probe batch, or see whether the last one is through.
  void poll(ProbeView& view, uint64_t now_tsc) override;
  bool finished() const override { return phase_ == Phase::Done; }
  // The samples, with the NF's own count of cycles per packet beside them.
  json report(const ProbeView& view) const override;
  json result() const;  // the samples alone

  // The median over rounds of one cell's samples; 0 when it has none.
  static double cell_median(const std::vector<EstimatorSample>& samples, uint16_t batch, uint16_t frame_size);

 private:
  enum class Phase { Probe, Waiting, Gap, Done };
  struct Cell {
    uint16_t batch, frame_size;
  };
  void cell_done();
  void begin_pass(const std::vector<uint16_t>& sizes);

  EstimatorPlan plan_;
  double hz_;
  std::vector<Cell> cells_;  // the current pass's cells; a round visits each, starting one further each round
  bool swept_ = false;       // the 128..1024 B sweep was added after 64 B and 1500 B disagreed
  uint32_t round_ = 0;
  size_t visited_ = 0;                // cells done in this round
  uint32_t probe_ = 0;                // probes done in this cell this round, warm-up included
  std::vector<double> probe_cycles_;  // this cell's timed probes this round
  std::vector<EstimatorSample> samples_;
  Phase phase_ = Phase::Probe;
  uint64_t probe_start_ = 0, target_ = 0, gap_end_ = 0;
  std::string error_;
};

}  // namespace tandem
