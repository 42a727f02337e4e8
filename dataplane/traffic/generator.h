// The built-in traffic generator: paced per-chain packet streams sent out of each chain's entry port; for a chain
// fed by a port, the frames its Rx stage received, stamped as the generator stamps its own.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <rte_mempool.h>
#include <rte_ring.h>

#include "contract/deployment.h"
#include "contract/hop_trace.h"
#include "contract/shm_layout.h"
#include "dataplane/packets/frame_list.h"
#include "dataplane/ports/ethdev/port_receiver.h"
#include "dataplane/ports/port.h"
#include "frame_templates.h"

namespace tandem {

// How far a paced stream may fall behind its rate and still make it up, in packets: what a NIC's receive ring of
// 4096 descriptors holds through a stall of the control core, delivered in bursts once the loop is back (a service's
// control core stalls for up to ~8 ms over a dozen times a second here, mostly while the VM's own tasks take the
// core: 1,600 packets at 200 kpps). Beyond it, what was due is given up, as the NIC would have missed it, and counted
// (Generator::fell_behind): made up later it would have offered a window more than the rate asked (a loaded host
// offered 5.66 of 5 Mpps that way).
inline constexpr uint64_t kMostLagMadeUp = 4096;

// Packets due `elapsed` cycles after the start at a rate of `steps_per_cycle[i]` packets per cycle during the
// i-th `step_cycles` (cycling through the steps): the integral of a stepped rate.
uint64_t stepped_packets_due(const std::vector<double>& steps_per_cycle, uint64_t step_cycles, uint64_t elapsed);

// What a paced stream does now, `due` packets having come due since its start and `generated` sent, `given_up` given
// up before: it sends what is due and not sent, at most `burst`; of a lag beyond `most_lag`, the excess is given up.
struct PacingStep {
  uint64_t send = 0;
  uint64_t give_up = 0;
};
PacingStep pacing_step(uint64_t due, uint64_t generated, uint64_t given_up, uint64_t most_lag, uint64_t burst);

class Generator {
 public:
  // `entries[c]` is chain c's entry port (chain_ends.h); `receivers`, the Rx stages of the ports that feed chains.
  Generator(const Deployment& deployment, rte_mempool* pool, std::vector<std::unique_ptr<EgressPort>> entries,
            StatsZone& stats, std::vector<std::unique_ptr<PortReceiver>> receivers = {});
  void start(uint64_t now_tsc);
  // Emits the packets due by now (at most one burst per chain), stamping sequence number and TSC; and one burst from
  // each port's Rx stage, stamped the same way.
  void poll(uint64_t now_tsc);
  // Emits `count` frames of one size into a chain's entry now, unpaced (the cycle estimator's probes).
  void emit_probe(int chain, uint16_t count, uint16_t frame_size, uint64_t now_tsc) {
    emit(streams_[chain], count, now_tsc, frame_size);
  }
  // A chain added to a running service, its traffic paced from `now_tsc` (its index is the next one).
  // A chain added to a running service that takes its frames from `port`: its route on the port's Rx stage, or
  // `stage` (made for it) where no chain took from the port before.
  void take_from_port(const EthdevPort& port, PortReceiver::Route route, std::unique_ptr<PortReceiver> stage);
  void open_chain(const ChainConfig& chain, std::unique_ptr<EgressPort> entry, StatsZone& stats, uint64_t now_tsc);
  // A chain removed from a running service: none of its packets are generated or taken from a port from now on.
  void close_chain(int chain);
  // A service's workers re-laid out (a live scheduler switch): nothing is generated or taken from the ports until
  // `release`, the ports' frames waiting in their queues; paced streams then go on where they were, the held time
  // skipped rather than made up in one burst (which full rings would drop).
  void hold(uint64_t now_tsc);
  void release(uint64_t now_tsc);
  // A port removed from a running service: its Rx stage gone, and no other port's passes frames to it.
  void stop_port(const EthdevPort& port);
  // Packets that entered the chain: generated, or received on its port.
  uint64_t generated(int chain) const { return streams_[chain].generated; }
  // Packets its rate had due that were given up, the generator having fallen too far behind (kMostLagMadeUp).
  uint64_t fell_behind(int chain) const { return streams_[chain].given_up; }
  // run --profile: the packets traced_packet() picks (one in `trace_every`, among one in `latency_every`) get one
  // of the `slots` of `zone` each.
  void trace_into(TraceSlot* zone, uint32_t slots, uint32_t latency_every, uint32_t trace_every) {
    traces_ = zone;
    trace_slots_ = slots;
    latency_every_ = latency_every;
    trace_every_ = trace_every;
  }
  // Packets that could not be allocated (pool exhausted): not generated, reported as a warning.
  uint64_t allocation_failures() const { return allocation_failures_; }
  // TSC cycles spent writing frames into mbufs, per frame, over the run. Those mbufs were last written on the
  // NFs' core, so this rises in the VM's slow mode (README, Results); it also differs between schedulers, by
  // how their NFs leave the mbufs (each run reports it: generator_build_cycles_per_packet).
  double build_cycles_per_packet() const {
    return built_ ? static_cast<double>(build_cycles_) / static_cast<double>(built_) : 0;
  }

 private:
  struct Stream {
    const ChainConfig* chain;
    std::unique_ptr<EgressPort> entry;
    ChainControl* control;
    std::vector<uint16_t> sizes;
    FrameShape shape;          // what its frames are made of: protocol, IP version, tag
    FrameTemplates templates;  // of every size in `sizes` and every flow, when they fit the budget
    FrameList requests;        // HTTP traffic: frame f is flow f's request, sized by it (then `sizes` is not used)
    FrameList replay;          // a capture replayed instead: its frames in turn (then neither is used)
    size_t replay_cursor = 0;
    bool replay_loop = true;
    size_t size_cursor = 0;
    uint32_t flow_cursor = 0;
    uint64_t generated = 0;
    uint64_t start_tsc = 0;
    double packets_per_cycle = 0;                // 0 = as fast as possible
    std::vector<double> step_packets_per_cycle;  // a stepped rate instead (may be empty)
    uint64_t step_cycles = 0;
    uint64_t given_up = 0;   // packets due that it gave up, having fallen further behind
    bool from_port = false;  // its traffic comes from a port's Rx stage: nothing to generate
    bool removed = false;    // the chain was removed (a service's live change): nothing more to generate

    // Moves the capture's cursor past `frames` frames, back to its start at the end when it loops.
    void advance_replay(size_t frames) {
      replay_cursor += frames;
      if (replay_loop && replay_cursor >= replay.count()) replay_cursor %= replay.count();  // divides only on a wrap
    }
  };

  Stream stream_of(const ChainConfig& chain, std::unique_ptr<EgressPort> entry, StatsZone& stats) const;
  // `frame_size` 0 = the chain's size mix.
  void emit(Stream& stream, uint16_t count, uint64_t now_tsc, uint16_t frame_size = 0);
  // Stamps `count` frames as the chain's next ones (sequence numbers, TSC, traces) and sends them into its entry.
  void stamp_and_send(Stream& stream, rte_mbuf** pkts, uint16_t count, uint64_t now_tsc);
  // A port's frames for `stream`'s chain, shed at once where its entry is closed (NFVnice's backpressure).
  void admit(Stream& stream, rte_mbuf** pkts, uint16_t count, uint64_t now_tsc);

  rte_mempool* pool_;
  uint16_t burst_;
  std::vector<Stream> streams_;
  std::vector<std::unique_ptr<PortReceiver>> receivers_;
  uint64_t allocation_failures_ = 0;
  uint64_t held_since_ = 0;  // 0: not held
  TraceSlot* traces_ = nullptr;
  uint32_t trace_slots_ = 1;
  uint32_t latency_every_ = 16, trace_every_ = 256;
  uint32_t next_trace_slot_ = 0;
  uint64_t build_cycles_ = 0, built_ = 0;
};

}  // namespace tandem
