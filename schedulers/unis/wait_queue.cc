// Algorithm 1 of UNiS (Sec. 4.4.2) for one core.
#include "wait_queue.h"

#include <algorithm>
#include <limits>

namespace tandem::unis {
namespace {

// Packets an NF certainly processed between two readings of its rings: what left its ingress or entered its
// egress (arrivals upstream and departures downstream only hide some of them).
uint32_t packets_moved(uint32_t ingress_before, uint32_t egress_before, uint32_t ingress_now, uint32_t egress_now) {
  uint32_t drained = ingress_before > ingress_now ? ingress_before - ingress_now : 0;
  uint32_t filled = egress_now > egress_before ? egress_now - egress_before : 0;
  return std::max(drained, filled);
}

}  // namespace

CoreQueue::CoreQueue(std::vector<ScheduledNf> nfs, bool occupancy_rules, SliceStart slice_start,
                     uint64_t idle_handover_cycles, uint64_t residue_wait_cycles)
    : nfs_(std::move(nfs)),
      occupancy_rules_(occupancy_rules),
      idle_handover_cycles_(idle_handover_cycles),
      residue_wait_cycles_(residue_wait_cycles),
      residue_since_(nfs_.size()),
      slice_start_(slice_start) {
  for (size_t i = 1; i < nfs_.size(); i++) queue_.push_back(i);
}

const ScheduledNf& CoreQueue::start(uint64_t now_tsc) {
  running_ = 0;
  idle_since_.reset();
  last_reading_.valid = false;
  slice_.reset(now_tsc, nfs_[0].slice_cycles);
  return nfs_[0];
}

void CoreQueue::observe_turn(uint64_t now_tsc, const std::vector<uint32_t>& occupancy) {
  if (turn_.seen_working) return;
  const ScheduledNf& current = nfs_[running_];
  uint32_t seen = packets_moved(turn_.ingress, turn_.egress, occupancy[current.ingress], occupancy[current.egress]);
  if (seen == 0) return;
  turn_.seen_working = true;
  // It began at least `seen` packets' worth of its estimated cost ago (an NF faster than its estimate began
  // later than that, so its slice is, if anything, cut short), and not before the decision.
  auto worked = static_cast<uint64_t>(static_cast<double>(seen) * current.cost_cycles);
  uint64_t began = std::max(turn_.decided_tsc, now_tsc > worked ? now_tsc - worked : 0);
  slice_.reset(began, current.slice_cycles);
}

std::optional<YieldReason> CoreQueue::yield_reason(uint64_t now_tsc, const std::vector<uint32_t>& occupancy,
                                                   const Errand& errand) const {
  const ScheduledNf& current = nfs_[running_];
  const bool on_errand = errand && errand(current);  // it needs the core for its errand, packets or not
  if (occupancy_rules_ && !on_errand && starved_of_input(current, occupancy)) return YieldReason::kInputStarved;
  if (occupancy_rules_ && egress_full(current, occupancy)) return YieldReason::kOutputFull;
  if (slice_.expired(now_tsc)) return YieldReason::kSliceExpired;
  return std::nullopt;
}

uint64_t CoreQueue::next_check_tsc(uint64_t now_tsc, const std::vector<uint32_t>& occupancy, uint64_t interval_cycles) {
  uint64_t soonest = now_tsc + interval_cycles;
  if (queue_.empty()) return std::numeric_limits<uint64_t>::max();  // alone on its core: nothing to decide, ever
  if (!occupancy_rules_) return std::max(soonest, slice_.deadline());
  const ScheduledNf& current = nfs_[running_];
  uint32_t in = occupancy[current.ingress], out = occupancy[current.egress];
  double cycles_per_packet = current.cost_cycles;
  if (last_reading_.valid && now_tsc > last_reading_.tsc) {
    if (uint32_t seen = packets_moved(last_reading_.ingress, last_reading_.egress, in, out); seen > 0)
      cycles_per_packet = std::min(cycles_per_packet, static_cast<double>(now_tsc - last_reading_.tsc) / seen);
  }
  last_reading_ = {.tsc = now_tsc, .ingress = in, .egress = out, .valid = true};
  uint32_t margin = std::min(in > current.theta_min ? in - current.theta_min : 0u,
                             out < current.theta_max ? current.theta_max - out : 0u);
  auto quiet = static_cast<uint64_t>(static_cast<double>(margin) * cycles_per_packet * kPredictionSafety);
  return std::max(soonest, std::min(now_tsc + quiet, slice_.deadline()));
}

std::optional<Switch> CoreQueue::decide(uint64_t now_tsc, const std::vector<uint32_t>& occupancy,
                                        const std::function<void(const ScheduledNf&)>& before_judging,
                                        const Errand& errand) {
  observe_turn(now_tsc, occupancy);
  const ScheduledNf& current = nfs_[running_];
  std::optional<YieldReason> why = yield_reason(now_tsc, occupancy, errand);
  if (!why || queue_.empty()) return std::nullopt;
  // Lines 8-12: requeue the running NF, then take NFs from the front until one has work and room.
  // At most one pass: reaching the running NF again means nobody else is worth a switch.
  queue_.push_back(running_);
  size_t candidate = queue_.front();
  queue_.pop_front();
  if (occupancy_rules_) {
    auto unfit = [&](size_t position) {
      if (before_judging) before_judging(nfs_[position]);
      bool starved = starved_of_input(nfs_[position], occupancy) && !residue_waited(position, now_tsc, occupancy) &&
                     !(errand && errand(nfs_[position]));
      return starved || egress_full(nfs_[position], occupancy);
    };
    while (candidate != running_ && unfit(candidate)) {
      queue_.push_back(candidate);
      candidate = queue_.front();
      queue_.pop_front();
    }
    // Low load: nobody's ingress reaches theta_min, and the running NF has had nothing at all for the handover
    // time. Keeping it would make every packet below theta_min wait for arrivals that may never come (a ping, a TCP
    // handshake: real traffic stalled for seconds): the first NF in queue order with any packet and room takes the
    // core instead. Under load the running NF's input refills, or another's passes theta_min, within the handover
    // time; handing over at once there cost light NFs a quarter of their rate in switches of a few packets each.
    bool idle = occupancy[current.ingress] == 0;
    if (!idle) idle_since_.reset();
    if (idle && !idle_since_) idle_since_ = now_tsc;
    if (candidate == running_ && idle && idle_handover_cycles_ != kNever &&
        now_tsc - *idle_since_ >= idle_handover_cycles_) {
      auto waiting = std::find_if(queue_.begin(), queue_.end(), [&](size_t position) {
        return occupancy[nfs_[position].ingress] > 0 && !egress_full(nfs_[position], occupancy);
      });
      if (waiting != queue_.end()) {
        candidate = *waiting;
        queue_.erase(waiting);
        queue_.push_back(running_);
      }
    }
  }
  if (candidate == running_) return std::nullopt;  // keeps the core; the expired slice is re-examined next interval
  // Lines 13-18.
  Switch change{current.nf, nfs_[candidate].nf, *why};
  running_ = candidate;
  residue_since_[candidate].reset();  // its wait ends with this turn
  idle_since_.reset();
  last_reading_.valid = false;
  slice_.reset(now_tsc, nfs_[candidate].slice_cycles);
  turn_ = {.decided_tsc = now_tsc,
           .ingress = occupancy[nfs_[candidate].ingress],
           .egress = occupancy[nfs_[candidate].egress],
           .seen_working = slice_start_ == SliceStart::kDecision};
  return change;
}

// Under load the paper's rule leaves packets below theta_min where they are until more arrive: a chain whose entry
// closed (its last packets), a scaled NF's old instance (its last flows, which the egress holds the moved ones'
// packets behind) or a light chain beside a busy one then wait forever, since the core is never idle either. Packets
// that have waited the residue time make their NF worth a turn; the wait is measured from the first decision that
// saw them, so an NF is given one at most every residue time, a small share of switches under load.
bool CoreQueue::residue_waited(size_t position, uint64_t now_tsc, const std::vector<uint32_t>& occupancy) {
  std::optional<uint64_t>& since = residue_since_[position];
  if (residue_wait_cycles_ == kNever || occupancy[nfs_[position].ingress] == 0) {
    since.reset();
    return false;
  }
  if (!since) since = now_tsc;
  return now_tsc - *since >= residue_wait_cycles_;
}

std::vector<int> CoreQueue::waiting() const {
  std::vector<int> out;
  for (size_t position : queue_) out.push_back(nfs_[position].nf);
  return out;
}

}  // namespace tandem::unis
