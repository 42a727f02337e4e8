// UNiS's per-core wait queue and Algorithm 1: which NF runs on a shared core, for how long, and when it is preempted.
#pragma once

#include <cstdint>
#include <deque>
#include <functional>
#include <optional>
#include <vector>

#include "contract/deployment.h"
#include "tsc_timer.h"

namespace tandem::unis {

// What Algorithm 1 knows of an NF: where its packets come from and go to, and its time slice.
struct ScheduledNf {
  int nf = 0;                 // global NF index
  int worker = 0;             // the process the controller switches
  int ingress = 0;            // interface index (interface_monitor.h): one ring in a line
  int egress = 0;             // interface index
  uint64_t slice_cycles = 0;  // cost x slice fraction x capacity(egress)
  uint32_t theta_min = 0;     // preempt when the ingress holds no more than this
  uint32_t theta_max = 0;     // preempt when the egress holds at least this
  double cost_cycles = 0;     // estimated cycles per packet: how fast it can move its rings' occupancy
};

// When UNiS reads only the running NFs' rings, it reads them again no sooner than this fraction of the time the
// NF needs to reach a threshold. The time per packet is the smaller of the estimated cost and what the NF was
// seen to do since the last reading: the estimator's cost can be far above the NF's pace in a chain (macswap:
// 78 cycles estimated, 12-13 in a chain, its packets already in the core's cache). Taking half of that time
// leaves room for an NF that speeds up to twice its pace; one that speeds up more is seen late, its egress
// filling past theta_max towards the ring's end.
constexpr double kPredictionSafety = 0.5;

// The paper's parameters (Sec. 4.5): time_slice = cost x gamma x capacity(egress), theta_min = batch - 8,
// theta_max = gamma x capacity(egress). `fraction` stands for gamma in the slice so it can be swept alone.
inline uint64_t time_slice_cycles(double cost_cycles, double fraction, uint32_t egress_capacity) {
  return static_cast<uint64_t>(cost_cycles * fraction * static_cast<double>(egress_capacity));
}
inline uint32_t default_theta_min(uint32_t burst) { return burst > 8 ? burst - 8 : 0; }
inline uint32_t default_theta_max(double gamma, uint32_t egress_capacity) {
  return static_cast<uint32_t>(gamma * static_cast<double>(egress_capacity) + 0.5);
}

// Why the running NF had to yield (Algorithm 1, line 6); the first that holds, in this order.
enum class YieldReason { kInputStarved, kOutputFull, kSliceExpired };

struct Switch {
  int from;  // global NF indexes
  int to;
  YieldReason why;
};

// When a turn's time slice starts. The paper starts it with the decision; but the NF runs only once the
// process controller's switch reaches its core, on this KVM guest 10-14 us later (a reschedule IPI), a third
// of a light NF's 38 us slice. Its turns then end by the clock after ~1,100 packets instead of at theta_max
// (1,536), and every packet pays a third more switches. kFirstProgress starts the slice when the NF is first
// seen to have moved its rings (drained its ingress or filled its egress), dated back by its estimated cost.
enum class SliceStart { kDecision, kFirstProgress };

// Whether an NF must run for something other than packets (a live change to take): it is worth a turn with no input,
// and keeps the turn while it lasts (the slice and a full output still end it). Tandem's addition: UNiS's NFs only
// ever need the core for packets.
using Errand = std::function<bool(const ScheduledNf&)>;

// One core's scheduling state. `occupancy` in decide() is indexed by ring, as sampled by the interface monitor.
class CoreQueue {
 public:
  // `nfs` in wait-queue order; the first one runs first. `occupancy_rules` = false is the paper's ablation:
  // preempt only when the slice expires, and take the next NF in the queue whatever its rings hold.
  // `idle_handover_cycles`: how long the running NF's input must have stayed empty before it hands the core to an NF
  // with packets below theta_min (low load: decide()); kNever: never (the paper).
  // `residue_wait_cycles`: how long packets below theta_min may wait in a waiting NF's ingress before that NF is
  // worth a turn all the same (under load: decide()); kNever: never (the paper).
  CoreQueue(std::vector<ScheduledNf> nfs, bool occupancy_rules, SliceStart slice_start = SliceStart::kDecision,
            uint64_t idle_handover_cycles = 0, uint64_t residue_wait_cycles = kNever);
  static constexpr uint64_t kNever = UINT64_MAX;

  // Starts the first NF of the queue and its slice timer; returns it.
  const ScheduledNf& start(uint64_t now_tsc);
  // Algorithm 1, lines 6-18: if the running NF must yield the core and another NF is worth running,
  // requeue the running one, take the candidate and restart the timer. Returns the switch to carry out.
  // `before_judging`, if given, is called with each candidate before its rings are looked at in `occupancy`
  // (so they can be read then, and only the candidates looked at are read).
  // `errand`, if given, says which NFs must run for something other than packets.
  std::optional<Switch> decide(uint64_t now_tsc, const std::vector<uint32_t>& occupancy,
                               const std::function<void(const ScheduledNf&)>& before_judging = {},
                               const Errand& errand = {});
  // With SliceStart::kFirstProgress: once per turn, when the running NF's rings show it has worked since the
  // decision, moves its slice to start then. decide() calls it; a caller that asks must_yield() first, too.
  void observe_turn(uint64_t now_tsc, const std::vector<uint32_t>& occupancy);
  // Algorithm 1, line 6: whether the running NF must yield (slice expired, or, with the occupancy rules,
  // its ingress holds no more than theta_min or its egress at least theta_max).
  bool must_yield(uint64_t now_tsc, const std::vector<uint32_t>& occupancy, const Errand& errand = {}) const {
    return yield_reason(now_tsc, occupancy, errand).has_value();
  }
  std::optional<YieldReason> yield_reason(uint64_t now_tsc, const std::vector<uint32_t>& occupancy,
                                          const Errand& errand = {}) const;
  // The earliest time must_yield() could turn true, given the running NF's rings as sampled now: packets only
  // leave its ingress and enter its egress as fast as it processes them (arrivals upstream and departures
  // downstream only delay both thresholds), so neither is reached before margin x cycles per packet, taken at
  // kPredictionSafety. Never sooner than `interval_cycles` (T) from now, never later than the slice's end.
  // Remembers this reading, to see the NF's pace at the next one.
  uint64_t next_check_tsc(uint64_t now_tsc, const std::vector<uint32_t>& occupancy, uint64_t interval_cycles);

  const ScheduledNf& running() const { return nfs_[running_]; }
  // The waiting NFs, front first (global NF indexes), for tests and reports.
  std::vector<int> waiting() const;
  const std::vector<ScheduledNf>& nfs() const { return nfs_; }

 private:
  bool starved_of_input(const ScheduledNf& nf, const std::vector<uint32_t>& occupancy) const {
    return occupancy[nf.ingress] <= nf.theta_min;
  }
  bool egress_full(const ScheduledNf& nf, const std::vector<uint32_t>& occupancy) const {
    return occupancy[nf.egress] >= nf.theta_max;
  }

  std::vector<ScheduledNf> nfs_;
  std::deque<size_t> queue_;  // positions in nfs_, waiting
  size_t running_ = 0;
  struct Reading {
    uint64_t tsc = 0;
    uint32_t ingress = 0, egress = 0;
    bool valid = false;  // taken during the running NF's current turn
  } last_reading_;
  TscTimer slice_;
  bool occupancy_rules_;
  // Whether the NF at `position` has had packets below theta_min for the residue wait, as judged now.
  bool residue_waited(size_t position, uint64_t now_tsc, const std::vector<uint32_t>& occupancy);

  uint64_t idle_handover_cycles_;
  uint64_t residue_wait_cycles_;
  std::optional<uint64_t> idle_since_;                  // when the running NF's input was first seen empty, this turn
  std::vector<std::optional<uint64_t>> residue_since_;  // per NF: when its waiting ingress was first seen non-empty
  SliceStart slice_start_;
  struct TurnStart {
    uint64_t decided_tsc = 0;
    uint32_t ingress = 0, egress = 0;  // the NF's rings when it was chosen
    bool seen_working = true;          // or the slice already starts at the decision
  } turn_;
};

}  // namespace tandem::unis
