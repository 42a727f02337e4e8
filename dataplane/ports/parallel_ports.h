// The ports of a parallel group (μNF's branch, marker and sync): one packet processed by several branches at once.
#pragma once

#include <memory>
#include <vector>

#include "contract/batch.h"
#include "port.h"

namespace tandem {

// How a parallel group moves a packet, without copying it and without freeing anything twice:
// - the branch egress sets the packet's parallel_width to the number of branches, raises the mbuf's reference
//   count by branches - 1 and hands the same mbuf to every branch;
// - each branch's marker egress adds one to parallel_finished, atomically. The marker whose add completes the
//   count releases the packet towards the join; every other marker only drops its reference. Whichever branch
//   finishes last, the packet goes on exactly once and as soon as it is complete (packets complete out of
//   order: a slow one holds back no other);
// - a copy dropped inside a branch (a full ring) only drops its reference: the count is never completed, the
//   packet is never released, and the last reference returns the mbuf to the pool;
// - the join's ingress (JoinIngress) polls one ring per in-edge, so every ring keeps one producer.
// In copies, the accounting stays exact: generated + forked = delivered + dropped + merged + in flight.
// (The paper's public code frees an mbuf a sibling branch still holds when a ring is full, and its sync port
// releases strictly in order; reference counts and completion at the last marker avoid both.)

class BranchEgress final : public EgressPort {
 public:
  // `branches`: the first port of each branch. `forked` counts the extra references made (branches - 1 each).
  BranchEgress(std::vector<std::unique_ptr<EgressPort>> branches, uint64_t& forked);
  uint16_t tx_burst(rte_mbuf** pkts, uint16_t count, const uint8_t* gates) override;  // returns the packets sent
  unsigned room() const override;  // the least of any branch: every packet goes to all of them

 private:
  std::vector<std::unique_ptr<EgressPort>> branches_;
  uint64_t& forked_;
};

class MarkerEgress final : public EgressPort {
 public:
  // `join`: this branch's edge to the join. `merged` counts references dropped because a sibling branch will
  // release (or has released) the packet; `journal` is the runtime's free journal (free_counted.h).
  MarkerEgress(std::unique_ptr<EgressPort> join, uint64_t& merged, uint64_t& journal);
  uint16_t tx_burst(rte_mbuf** pkts, uint16_t count, const uint8_t* gates) override;  // returns the packets released
  unsigned room() const override { return join_->room(); }

 private:
  std::unique_ptr<EgressPort> join_;
  uint64_t& merged_;
  uint64_t& journal_;
  rte_mbuf* released_[kMaxBurst];
  rte_mbuf* merged_now_[kMaxBurst];
};

// A node with several in-edges: takes from each in turn, starting one further each time, so no edge starves.
class JoinIngress final : public IngressPort {
 public:
  explicit JoinIngress(std::vector<std::unique_ptr<IngressPort>> edges);
  uint16_t rx_burst(rte_mbuf** pkts, uint16_t max) override;
  unsigned waiting() const override;

 private:
  std::vector<std::unique_ptr<IngressPort>> edges_;
  size_t first_ = 0;
};

}  // namespace tandem
