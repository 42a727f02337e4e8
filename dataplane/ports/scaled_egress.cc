// The scaled egress port's routing, and the change of instance count that waits for the old instances.
#include "scaled_egress.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "contract/batch.h"
#include "dataplane/packets/five_tuple.h"
#include "free_counted.h"

namespace tandem {

ScaledEgress::ScaledEgress(std::vector<ScaledInstance> instances, ScaleControl& control, size_t feeder,
                           uint64_t& journal, size_t hold_capacity)
    : instances_(std::move(instances)),
      wanted_(control.wanted),
      control_(control.feeders[feeder]),
      journal_(journal),
      hold_capacity_(hold_capacity),
      sent_mark_(instances_.size()),
      taken_mark_(instances_.size()),
      taken_marked_(instances_.size()),
      out_mark_(instances_.size()),
      backlog_(instances_.size()),
      sorted_(instances_.size()) {
  if (instances_.empty()) throw std::invalid_argument("a scaled egress needs at least one instance");
  if (feeder >= static_cast<size_t>(kMaxScaleFeeders))
    throw std::invalid_argument("a scaled NF has more feeders than ScaleControl holds");
  for (auto& batch : sorted_) batch.reserve(kMaxBurst);
  flag_store(control_.in_use, in_use_);
}

void ScaledEgress::drop(const Held& packet) {
  counter_add(control_.held_dropped, uint64_t{1});
  rte_mbuf* m = packet.m;
  free_counted(&m, 1, instances_[packet.instance].in_counters->dropped_full, journal_);
}

void ScaledEgress::drop_held() {
  for (const Held& packet : held_) drop(packet);
  held_.clear();
  for (auto& backlog : backlog_) {
    for (const Held& packet : backlog) drop(packet);
    backlog.clear();
  }
  backlog_size_ = 0;
  backlog_flows_.clear();
  publish_held();
}

void ScaledEgress::publish_held() { counter_store(control_.held_now, static_cast<uint64_t>(held())); }

// One counter summed over rings.
static uint64_t total(const std::vector<const RingCounters*>& rings, uint64_t RingCounters::*counter) {
  uint64_t sum = 0;
  for (const RingCounters* ring : rings) sum += counter_read(ring->*counter);
  return sum;
}

// What an instance has done with the packets it took: handed on (or dropped) at its out-rings, or dropped itself.
static uint64_t handed_on(const ScaledInstance& instance) {
  return counter_read(instance.nf->packets_dropped) + counter_read(instance.nf->label_miss) +
         total(instance.out_counters, &RingCounters::enqueued) +
         total(instance.out_counters, &RingCounters::dropped_full);
}

void ScaledEgress::begin_change(uint32_t target) {
  target_ = target;
  outs_marked_ = false;
  for (uint32_t k = 0; k < in_use_; k++) {
    sent_mark_[k] = counter_read(instances_[k].in_counters->enqueued);
    taken_marked_[k] = false;
  }
}

// Three steps, each a count reached: every old instance took from this port's ring what it was sent before the
// change (FIFO: so all its moved flows' packets), then handed on everything it had taken by then (it hands on in
// the order it takes), and then the next stage took from its out-rings all that was on them by then.
bool ScaledEgress::old_instances_done() {
  if (!outs_marked_) {
    for (uint32_t k = 0; k < in_use_; k++) {
      if (!taken_marked_[k]) {
        if (counter_read(instances_[k].in_counters->dequeued) < sent_mark_[k]) return false;
        taken_mark_[k] = total(instances_[k].all_in_counters, &RingCounters::dequeued);
        taken_marked_[k] = true;
      }
      if (handed_on(instances_[k]) < taken_mark_[k]) return false;
    }
    for (uint32_t k = 0; k < in_use_; k++) out_mark_[k] = total(instances_[k].out_counters, &RingCounters::enqueued);
    outs_marked_ = true;
  }
  for (uint32_t k = 0; k < in_use_; k++)
    if (total(instances_[k].out_counters, &RingCounters::dequeued) < out_mark_[k]) return false;
  return true;
}

void ScaledEgress::finish_change() {
  in_use_ = target_;
  for (const Held& packet : held_) {
    backlog_[packet.instance].push_back(packet);
    backlog_flows_[packet.hash]++;
  }
  backlog_size_ += held_.size();
  held_.clear();
  flag_store(control_.in_use, in_use_);
  counter_add(control_.switches, uint64_t{1});
}

void ScaledEgress::hold(const Held& packet, bool backlog) {
  if (held() >= hold_capacity_) return drop(packet);
  if (backlog) {
    backlog_[packet.instance].push_back(packet);
    backlog_flows_[packet.hash]++;
    backlog_size_++;
  } else {
    held_.push_back(packet);
  }
  if (held() > counter_read(control_.held_peak)) counter_store(control_.held_peak, static_cast<uint64_t>(held()));
}

// A flow's later packet queues behind its backlog while that is shorter than the room left in the instance's ring
// (the two together no longer than the ring itself); beyond, it is dropped as a full ring drops it: the instance is
// overloaded, and an ever longer backlog would only delay every packet of the moved flows.
void ScaledEgress::behind_backlog(const Held& packet) {
  if (backlog_[packet.instance].size() < instances_[packet.instance].in->room()) return hold(packet, true);
  rte_mbuf* m = packet.m;
  free_counted(&m, 1, instances_[packet.instance].in_counters->dropped_full, journal_);
}

// Each backlog's front, as far as its instance's ring has room.
void ScaledEgress::send_backlogs() {
  if (backlog_size_ == 0) return;
  for (size_t k = 0; k < instances_.size(); k++) {
    std::deque<Held>& backlog = backlog_[k];
    size_t n = std::min<size_t>({backlog.size(), instances_[k].in->room(), kMaxBurst});
    while (n > 0) {
      rte_mbuf* burst[kMaxBurst];
      for (size_t i = 0; i < n; i++) {
        burst[i] = backlog[i].m;
        auto flow = backlog_flows_.find(backlog[i].hash);
        if (--flow->second == 0) backlog_flows_.erase(flow);
      }
      instances_[k].in->tx_burst(burst, static_cast<uint16_t>(n), nullptr);
      backlog.erase(backlog.begin(), backlog.begin() + static_cast<std::ptrdiff_t>(n));
      backlog_size_ -= n;
      n = std::min<size_t>({backlog.size(), instances_[k].in->room(), kMaxBurst});
    }
  }
}

void ScaledEgress::send_sorted() {
  for (size_t k = 0; k < instances_.size(); k++) {
    std::vector<rte_mbuf*>& batch = sorted_[k];
    for (size_t sent = 0; sent < batch.size(); sent += kMaxBurst) {
      auto n = static_cast<uint16_t>(std::min<size_t>(kMaxBurst, batch.size() - sent));
      instances_[k].in->tx_burst(batch.data() + sent, n, nullptr);
    }
    batch.clear();
  }
}

// A change asked for begun, one whose old instances are done made, and the backlogs sent on.
void ScaledEgress::progress() {
  if (target_ == in_use_) {
    uint32_t wanted = std::clamp<uint32_t>(flag_load(wanted_), 1, static_cast<uint32_t>(instances_.size()));
    if (wanted != in_use_) begin_change(wanted);
  }
  if (target_ != in_use_ && old_instances_done()) finish_change();
  send_backlogs();
}

void ScaledEgress::flush() {
  if (held() == 0 && target_ == in_use_ && flag_load(wanted_) == in_use_) return;  // the usual case: nothing to do
  progress();
  publish_held();
}

uint16_t ScaledEgress::tx_burst(rte_mbuf** pkts, uint16_t count, const uint8_t* /*gates: one way on*/) {
  progress();
  // One instance and nothing held: every flow goes to it, no hash needed (a scaled NF that never scales costs
  // what a ring costs).
  if (in_use_ == 1 && target_ == 1 && held() == 0) return instances_[0].in->tx_burst(pkts, count, nullptr);
  uint64_t refused_before = 0;
  for (const ScaledInstance& instance : instances_) refused_before += counter_read(instance.in_counters->dropped_full);
  for (uint16_t i = 0; i < count; i++) {
    uint32_t hash = flow_hash(pkts[i]);
    size_t now = hash % in_use_;
    if (target_ != in_use_ && hash % target_ != now)
      hold({pkts[i], hash, hash % target_}, false);  // a moved flow: after its old instance's last packet
    else if (backlog_size_ > 0 && backlog_flows_.count(hash))
      behind_backlog({pkts[i], hash, now});
    else
      sorted_[now].push_back(pkts[i]);
  }
  send_sorted();
  publish_held();
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
