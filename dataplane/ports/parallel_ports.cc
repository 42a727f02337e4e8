// The burst functions of a parallel group's ports: fan-out by reference count, completion at the last marker, the join.
#include "parallel_ports.h"

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "contract/packet_meta.h"
#include "contract/shm_layout.h"
#include "free_counted.h"

namespace tandem {

BranchEgress::BranchEgress(std::vector<std::unique_ptr<EgressPort>> branches, uint64_t& forked)
    : branches_(std::move(branches)), forked_(forked) {
  if (branches_.size() < 2 || branches_.size() > std::numeric_limits<uint8_t>::max())
    throw std::invalid_argument("a parallel group has 2 to 255 branches");
}

uint16_t BranchEgress::tx_burst(rte_mbuf** pkts, uint16_t count, const uint8_t* /*gates: every branch gets all*/) {
  auto width = static_cast<uint8_t>(branches_.size());
  for (uint16_t i = 0; i < count; i++) {
    PacketMeta* meta = meta_of(pkts[i]);
    meta->parallel_width = width;
    meta->parallel_finished = 0;  // published to the branches by the rings' enqueue (a release)
    rte_mbuf_refcnt_update(pkts[i], static_cast<int16_t>(width - 1));
  }
  counter_add(forked_, static_cast<uint64_t>(count) * (width - 1));
  uint16_t copies_accepted = 0;
  // A branch that refuses a copy frees it, which only drops that reference; the siblings' copies stay valid.
  for (auto& branch : branches_) copies_accepted += branch->tx_burst(pkts, count, nullptr);
  return copies_accepted;
}

unsigned BranchEgress::room() const {
  unsigned least = std::numeric_limits<unsigned>::max();
  for (const auto& branch : branches_) least = std::min(least, branch->room());
  return least;
}

MarkerEgress::MarkerEgress(std::unique_ptr<EgressPort> join, uint64_t& merged, uint64_t& journal)
    : join_(std::move(join)), merged_(merged), journal_(journal) {}

uint16_t MarkerEgress::tx_burst(rte_mbuf** pkts, uint16_t count, const uint8_t* /*gates*/) {
  uint16_t released = 0, merged = 0;
  for (uint16_t i = 0; i < count; i++) {
    PacketMeta* meta = meta_of(pkts[i]);
    // Acquire-release: the branch that completes the count sees every sibling's writes to the packet before
    // handing it on. Only one add can reach the width.
    uint32_t finished = __atomic_add_fetch(&meta->parallel_finished, 1, __ATOMIC_ACQ_REL);
    if (finished >= meta->parallel_width)
      released_[released++] = pkts[i];
    else
      merged_now_[merged++] = pkts[i];
  }
  // A sibling releases these: drop only this branch's reference (the mbuf goes back to the pool with the last).
  if (merged > 0) free_counted(merged_now_, merged, merged_, journal_);
  return released > 0 ? join_->tx_burst(released_, released, nullptr) : 0;
}

JoinIngress::JoinIngress(std::vector<std::unique_ptr<IngressPort>> edges) : edges_(std::move(edges)) {
  if (edges_.empty()) throw std::invalid_argument("a join needs at least one in-edge");
}

uint16_t JoinIngress::rx_burst(rte_mbuf** pkts, uint16_t max) {
  uint16_t taken = 0;
  for (size_t k = 0; k < edges_.size() && taken < max; k++) {
    size_t edge = first_ + k < edges_.size() ? first_ + k : first_ + k - edges_.size();
    taken += edges_[edge]->rx_burst(pkts + taken, static_cast<uint16_t>(max - taken));
  }
  first_ = first_ + 1 == edges_.size() ? 0 : first_ + 1;
  return taken;
}

unsigned JoinIngress::waiting() const {
  unsigned waiting = 0;
  for (const auto& edge : edges_) waiting += edge->waiting();
  return waiting;
}

}  // namespace tandem
