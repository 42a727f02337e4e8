// The scaled egress port (μNF's auto-scaling, IV-E): flows spread over the instances a scaled NF uses now, and
// moved between them without loss or reordering when the autoscaler changes that number.
#pragma once

#include <deque>
#include <memory>
#include <unordered_map>
#include <vector>

#include "contract/shm_layout.h"
#include "port.h"
#include "ring_port.h"

namespace tandem {

// One instance of the scaled NF as the port that feeds it sees it.
struct ScaledInstance {
  std::unique_ptr<RingEgress> in;  // the ring into it, which this port alone fills
  RingCounters* in_counters;       // that ring's counters
  // Every ring into the instance: this one, and where the scaled NF follows another scaled NF, one from each of
  // that NF's instances (a join).
  std::vector<const RingCounters*> all_in_counters;
  // Where the instance's packets go: its out-rings' counters, and its own (drops, packets sent to no edge).
  std::vector<const RingCounters*> out_counters;
  const NfCounters* nf;
};

// A flow goes to instance flow_hash % in_use. When the manager asks for another number, the flows whose instance
// changes are held here, in arrival order, until each old instance has taken every packet this port sent it before
// the change, handed on all it had taken by then, and the next stage has taken those from its out-rings: only then
// can a moved flow's next packet not overtake its last one. The others flow on meanwhile. Once the change is made,
// the held packets become each new instance's backlog, sent as its ring makes room (all at once, a hold larger
// than the ring would overflow it), and a flow's later packets queue behind its backlog (behind_backlog). Held and
// backlog together take up to `hold_capacity` packets; beyond that a packet is dropped and counted at the ring it was
// for (and as held_dropped): under overload, where most of them would have met a full ring anyway.
class ScaledEgress final : public EgressPort {
 public:
  // `feeder`: this egress's slot in `control` (scale_feeders).
  ScaledEgress(std::vector<ScaledInstance> instances, ScaleControl& control, size_t feeder, uint64_t& journal,
               size_t hold_capacity);
  ~ScaledEgress() override { drop_held(); }

  uint16_t tx_burst(rte_mbuf** pkts, uint16_t count, const uint8_t* gates) override;
  // The least room of the instances in use or being switched to.
  unsigned room() const override;
  // A change made and backlogs sent as far as the rings take them, without new packets.
  void flush() override;
  // Packets still held when the worker stops: dropped, counted at the rings they were for and as held_dropped.
  void drop_held() override;

  uint32_t in_use() const { return in_use_; }
  size_t held() const { return held_.size() + backlog_size_; }

 private:
  struct Held {
    rte_mbuf* m;
    uint32_t hash;
    size_t instance;
  };
  void begin_change(uint32_t target);
  bool old_instances_done();
  void finish_change();
  void hold(const Held& packet, bool backlog);
  void behind_backlog(const Held& packet);
  void drop(const Held& packet);
  void send_backlogs();
  void send_sorted();
  void progress();
  void publish_held();

  std::vector<ScaledInstance> instances_;
  const uint32_t& wanted_;
  ScaleFeeder& control_;
  uint64_t& journal_;
  size_t hold_capacity_;
  uint32_t in_use_ = 1;
  uint32_t target_ = 1;                    // != in_use_ while a change waits for the old instances
  bool outs_marked_ = false;               // the old instances handed on what they were sent; their outs marked
  std::vector<uint64_t> sent_mark_;        // per old instance: packets this port had put on its ring at the change
  std::vector<uint64_t> taken_mark_;       // per old instance: all it had taken once it took those
  std::vector<bool> taken_marked_;         // per old instance: taken_mark_ is set
  std::vector<uint64_t> out_mark_;         // per old instance: packets on its out-rings once it handed those on
  std::deque<Held> held_;                  // moved flows' packets while the change waits, in arrival order
  std::vector<std::deque<Held>> backlog_;  // per instance: what must reach it before its flows' next packets
  size_t backlog_size_ = 0;
  std::unordered_map<uint32_t, uint32_t> backlog_flows_;  // flow hash -> its packets in a backlog
  std::vector<std::vector<rte_mbuf*>> sorted_;            // per instance, the packets of this call for it
};

}  // namespace tandem
