// The scaled egress port's routing, and the change of instance count that waits for the old instances.
#include "scaled_egress.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "contract/batch.h"
#include "contract/five_tuple.h"
#include "free_counted.h"

namespace tandem {

ScaledEgress::ScaledEgress(std::vector<ScaledInstance> instances, ScaleControl& control, size_t feeder, uint64_t& journal,
                           size_t hold_capacity)
    : instances_(std::move(instances)), wanted_(control.wanted), control_(control.feeders[feeder]), journal_(journal), hold_capacity_(hold_capacity),
      sent_mark_(instances_.size()), taken_mark_(instances_.size()), taken_marked_(instances_.size()), out_mark_(instances_.size()), sorted_(instances_.size()) {
  if (instances_.empty()) throw std::invalid_argument("a scaled egress needs at least one instance");
  if (feeder >= static_cast<size_t>(kMaxScaleFeeders)) throw std::invalid_argument("a scaled NF has more feeders than ScaleControl holds");
  for (auto& batch : sorted_) batch.reserve(kMaxBurst);
  flag_store(control_.in_use, in_use_);
}

void ScaledEgress::drop_held() {
  for (auto& [m, instance] : held_) {
    counter_add(control_.held_dropped, uint64_t{1});
    free_counted(&m, 1, instances_[instance].in_counters->dropped_full, journal_);
  }
  held_.clear();
}

// What an instance has done with the packets it took: handed on (or dropped) at its out-rings, or dropped itself.
static uint64_t handed_on(const ScaledInstance& instance) {
  uint64_t done = counter_read(instance.nf->packets_dropped) + counter_read(instance.nf->label_miss);
  for (const RingCounters* out : instance.out_counters) done += counter_read(out->enqueued) + counter_read(out->dropped_full);
  return done;
}

void ScaledEgress::begin_change(uint32_t target) {
  target_ = target;
  outs_marked_ = false;
  for (uint32_t k = 0; k < in_use_; k++) {
    sent_mark_[k] = counter_read(instances_[k].in_counters->enqueued);
    taken_marked_[k] = false;
  }
}

static uint64_t taken(const ScaledInstance& instance) {
  uint64_t total = 0;
  for (const RingCounters* in : instance.all_in_counters) total += counter_read(in->dequeued);
  return total;
}

// Three steps, each a count reached: every old instance took from this port's ring what it was sent before the
// change (FIFO: so all its moved flows' packets), then handed on everything it had taken by then (it hands on in
// the order it takes), and then the next stage took from its out-rings all that was on them by then.
bool ScaledEgress::old_instances_done() {
  if (!outs_marked_) {
    for (uint32_t k = 0; k < in_use_; k++) {
      if (!taken_marked_[k]) {
        if (counter_read(instances_[k].in_counters->dequeued) < sent_mark_[k]) return false;
        taken_mark_[k] = taken(instances_[k]);
        taken_marked_[k] = true;
      }
      if (handed_on(instances_[k]) < taken_mark_[k]) return false;
    }
    for (uint32_t k = 0; k < in_use_; k++) {
      out_mark_[k] = 0;
      for (const RingCounters* out : instances_[k].out_counters) out_mark_[k] += counter_read(out->enqueued);
    }
    outs_marked_ = true;
  }
  for (uint32_t k = 0; k < in_use_; k++) {
    uint64_t taken = 0;
    for (const RingCounters* out : instances_[k].out_counters) taken += counter_read(out->dequeued);
    if (taken < out_mark_[k]) return false;
  }
  return true;
}

void ScaledEgress::finish_change() {
  in_use_ = target_;
  for (auto& [m, instance] : held_) sorted_[instance].push_back(m);
  held_.clear();
  send_sorted();
  flag_store(control_.in_use, in_use_);
  counter_add(control_.switches, uint64_t{1});
}

void ScaledEgress::hold(rte_mbuf* m, size_t instance) {
  if (held_.size() >= hold_capacity_) {
    counter_add(control_.held_dropped, uint64_t{1});
    free_counted(&m, 1, instances_[instance].in_counters->dropped_full, journal_);
    return;
  }
  held_.emplace_back(m, instance);
  if (held_.size() > counter_read(control_.held_peak)) counter_store(control_.held_peak, static_cast<uint64_t>(held_.size()));
}

void ScaledEgress::send_sorted() {
  for (size_t k = 0; k < instances_.size(); k++) {
    std::vector<rte_mbuf*>& batch = sorted_[k];
    // The hold may release more than a burst at once.
    for (size_t sent = 0; sent < batch.size(); sent += kMaxBurst) {
      auto n = static_cast<uint16_t>(std::min<size_t>(kMaxBurst, batch.size() - sent));
      instances_[k].in->tx_burst(batch.data() + sent, n, nullptr);
    }
    batch.clear();
  }
}

uint16_t ScaledEgress::tx_burst(rte_mbuf** pkts, uint16_t count, const uint8_t* /*gates: one way on*/) {
  if (target_ == in_use_) {
    uint32_t wanted = std::clamp<uint32_t>(flag_load(wanted_), 1, static_cast<uint32_t>(instances_.size()));
    if (wanted != in_use_) begin_change(wanted);
  }
  if (target_ != in_use_ && old_instances_done()) finish_change();
  uint64_t refused_before = 0;
  for (const ScaledInstance& instance : instances_) refused_before += counter_read(instance.in_counters->dropped_full);
  for (uint16_t i = 0; i < count; i++) {
    uint32_t hash = flow_hash(pkts[i]);
    size_t now = hash % in_use_;
    if (target_ != in_use_ && hash % target_ != now)
      hold(pkts[i], hash % target_);  // a moved flow: after its old instance's last packet
    else
      sorted_[now].push_back(pkts[i]);
  }
  send_sorted();
  uint64_t refused = 0;
  for (const ScaledInstance& instance : instances_) refused += counter_read(instance.in_counters->dropped_full);
  return static_cast<uint16_t>(count - std::min<uint64_t>(count, refused - refused_before));
}

unsigned ScaledEgress::room() const {
  unsigned least = std::numeric_limits<unsigned>::max();
  for (uint32_t k = 0; k < std::max(in_use_, target_); k++) least = std::min(least, instances_[k].in->room());
  return least;
}

}  // namespace tandem
