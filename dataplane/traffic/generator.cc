// Packet generation: build frames for the chain's flows and sizes, pace them on the TSC, count entry drops.
#include "generator.h"

#include <algorithm>

#include <rte_cycles.h>
#include <rte_mbuf.h>
#include <rte_memcpy.h>

#include "contract/batch.h"
#include "contract/packet_meta.h"
#include "dataplane/packets/frame_builder.h"
#include "dataplane/packets/request_frames.h"
#include "replay_frames.h"

namespace tandem {

Generator::Generator(const Deployment& deployment, rte_mempool* pool, std::vector<std::unique_ptr<EgressPort>> entries,
                     StatsZone& stats, std::vector<std::unique_ptr<PortReceiver>> receivers)
    : pool_(pool), burst_(deployment.burst), receivers_(std::move(receivers)) {
  for (const ChainConfig& chain : deployment.chains)
    streams_.push_back(stream_of(chain, std::move(entries.at(chain.index)), stats));
}

void Generator::open_chain(const ChainConfig& chain, std::unique_ptr<EgressPort> entry, StatsZone& stats,
                           uint64_t now_tsc) {
  streams_.push_back(stream_of(chain, std::move(entry), stats));
  streams_.back().start_tsc = now_tsc;
}

void Generator::take_from_port(const EthdevPort& port, PortReceiver::Route route, std::unique_ptr<PortReceiver> stage) {
  for (auto& receiver : receivers_)
    if (&receiver->port() == &port) return receiver->add_route(std::move(route));
  receivers_.push_back(std::move(stage));
}

void Generator::close_chain(int chain) {
  streams_[chain].removed = true;
  for (auto& receiver : receivers_) receiver->close_route(chain);
}

void Generator::stop_port(const EthdevPort& port) {
  std::erase_if(receivers_, [&](const auto& receiver) { return &receiver->port() == &port; });
  for (auto& receiver : receivers_) receiver->stop_passing_to(&port);
}

Generator::Stream Generator::stream_of(const ChainConfig& chain, std::unique_ptr<EgressPort> entry,
                                       StatsZone& stats) const {
  Stream stream;
  stream.chain = &chain;
  stream.entry = std::move(entry);
  stream.control = &stats.chains[chain.index];
  stream.sizes = size_schedule(chain.traffic.sizes);
  stream.shape = {
      .protocol = chain.traffic.protocol, .ip_version = chain.traffic.ip_version, .vlan = chain.traffic.vlan};
  stream.requests = request_frames(chain.traffic.http_urls, static_cast<uint16_t>(chain.index), stream.shape);
  if (!chain.traffic.pcap.empty()) stream.replay = replay_frames(chain.traffic.pcap);
  if (stream.requests.empty() && stream.replay.empty())  // the size mix is theirs only
    stream.templates =
        FrameTemplates(stream.sizes, chain.traffic.flows, stream.shape, static_cast<uint16_t>(chain.index));
  stream.replay_loop = chain.traffic.pcap_loop;
  double hz = static_cast<double>(rte_get_tsc_hz());
  stream.packets_per_cycle = chain.traffic.rate_pps / hz;
  for (double pps : chain.traffic.rate_steps_pps) stream.step_packets_per_cycle.push_back(pps / hz);
  stream.step_cycles = static_cast<uint64_t>(chain.traffic.step_seconds * hz);
  stream.from_port = chain.from_port >= 0;
  return stream;
}

void Generator::start(uint64_t now_tsc) {
  for (Stream& stream : streams_) stream.start_tsc = now_tsc;
}

void Generator::hold(uint64_t now_tsc) {
  if (held_since_ == 0) held_since_ = std::max<uint64_t>(now_tsc, 1);
}

void Generator::release(uint64_t now_tsc) {
  if (held_since_ == 0) return;
  for (Stream& stream : streams_) stream.start_tsc += now_tsc - held_since_;
  held_since_ = 0;
}

void Generator::poll(uint64_t now_tsc) {
  if (held_since_ != 0) return;
  for (auto& receiver : receivers_)
    receiver->poll(burst_,
                   [&](int chain, rte_mbuf** pkts, uint16_t count) { admit(streams_[chain], pkts, count, now_tsc); });
  for (Stream& stream : streams_) {
    if (stream.from_port || stream.removed) continue;
    // As fast as possible means as fast as the entry takes: frames a full ring would refuse are not built.
    // Building and freeing them cost the control core a burst per loop, time the sink and a scheduler that
    // decides on this core (unis) then lacked.
    // A closed entry (NFVnice's backpressure) takes nothing: shedding a burst per loop there would count
    // ~1.7 G "offered" packets a second, none of them a rate anyone asked for.
    bool paced = stream.packets_per_cycle > 0 || !stream.step_packets_per_cycle.empty();
    if (!paced && flag_load(stream.control->entry_closed) != 0) continue;
    uint64_t count = std::min<uint64_t>(burst_, stream.entry->room());
    if (paced) {
      uint64_t elapsed = now_tsc - stream.start_tsc;
      uint64_t due = stream.step_packets_per_cycle.empty()
                         ? static_cast<uint64_t>(static_cast<double>(elapsed) * stream.packets_per_cycle)
                         : stepped_packets_due(stream.step_packets_per_cycle, stream.step_cycles, elapsed);
      // A capture replayed once: nothing falls due after its last frame, which ends the chain's traffic. A frame
      // given up is sent later instead (the capture is the traffic's content, whole).
      if (!stream.replay.empty() && !stream.replay_loop)
        due = std::min<uint64_t>(due, stream.given_up + stream.replay.count());
      // At least a burst behind is made up, whatever the burst.
      PacingStep step =
          pacing_step(due, stream.generated, stream.given_up, std::max<uint64_t>(burst_, kMostLagMadeUp), burst_);
      stream.given_up += step.give_up;
      count = step.send;
    }
    // A capture replayed once ends the chain's traffic with its last frame.
    if (!stream.replay.empty() && !stream.replay_loop)
      count = std::min<uint64_t>(count, stream.replay.count() - stream.replay_cursor);
    if (count > 0) emit(stream, static_cast<uint16_t>(count), now_tsc);
  }
}

PacingStep pacing_step(uint64_t due, uint64_t generated, uint64_t given_up, uint64_t most_lag, uint64_t burst) {
  uint64_t owed = due - std::min(due, given_up);  // what the rate still asks of it
  if (owed <= generated) return {};
  uint64_t lag = owed - generated;
  uint64_t give_up = lag > most_lag ? lag - most_lag : 0;
  return {.send = std::min(lag - give_up, burst), .give_up = give_up};
}

uint64_t stepped_packets_due(const std::vector<double>& steps_per_cycle, uint64_t step_cycles, uint64_t elapsed) {
  double per_period = 0;
  for (double step : steps_per_cycle) per_period += step * static_cast<double>(step_cycles);
  uint64_t period = step_cycles * steps_per_cycle.size();
  double due = static_cast<double>(elapsed / period) * per_period;
  uint64_t into_period = elapsed % period;
  for (size_t i = 0; i < steps_per_cycle.size() && into_period > 0; i++) {
    uint64_t in_step = std::min(into_period, step_cycles);
    due += static_cast<double>(in_step) * steps_per_cycle[i];
    into_period -= in_step;
  }
  return static_cast<uint64_t>(due);
}

void Generator::emit(Stream& stream, uint16_t count, uint64_t now_tsc, uint16_t frame_size) {
  if (flag_load(stream.control->entry_closed) != 0) {
    // Shed at the chain's entry (NFVnice backpressure): the packets arrived and are dropped before any
    // mbuf or NF work is spent on them.
    stream.generated += count;
    counter_add(stream.control->entry_backpressure, static_cast<uint64_t>(count));
    if (!stream.replay.empty()) stream.advance_replay(count);  // the shed frames of a capture were its next ones
    return;
  }
  rte_mbuf* pkts[kMaxBurst];
  if (rte_pktmbuf_alloc_bulk(pool_, pkts, count) != 0) {
    allocation_failures_ += count;
    return;
  }
  const TrafficConfig& traffic = stream.chain->traffic;
  uint64_t build_start = rte_rdtsc();
  for (uint16_t i = 0; i < count; i++) {
    rte_mbuf* m = pkts[i];
    uint16_t size = frame_size;
    const uint8_t* ready = nullptr;
    // A capture or HTTP requests decide the frame and its size, also for the estimator's probes (frame_size != 0):
    // what an HTTP μNF costs depends on the request it parses, not on a template of the probe's size.
    if (!stream.replay.empty()) {  // a capture: its next frame, whatever its size
      size = stream.replay.frame_size(stream.replay_cursor);
      ready = stream.replay.frame(stream.replay_cursor);
      stream.advance_replay(1);
    } else if (!stream.requests.empty()) {  // HTTP: the flow's request decides the size
      size = stream.requests.frame_size(stream.flow_cursor);
      ready = stream.requests.frame(stream.flow_cursor);
    } else {
      if (size == 0) {
        size = stream.sizes[stream.size_cursor];
        if (++stream.size_cursor == stream.sizes.size()) stream.size_cursor = 0;  // no division per frame
      }
      ready = stream.templates.frame(size, stream.flow_cursor);
    }
    uint16_t length = size - kFcsBytes;
    m->data_len = length;
    m->pkt_len = length;
    uint8_t* data = rte_pktmbuf_mtod(m, uint8_t*);
    if (ready)
      rte_memcpy(data, ready, length);
    else
      build_frame(data, size, stream.shape,
                  flow_address(stream.flow_cursor, static_cast<uint16_t>(stream.chain->index)));
    if (++stream.flow_cursor == traffic.flows) stream.flow_cursor = 0;
  }
  build_cycles_ += rte_rdtsc() - build_start;
  built_ += count;
  stamp_and_send(stream, pkts, count, now_tsc);
}

void Generator::admit(Stream& stream, rte_mbuf** pkts, uint16_t count, uint64_t now_tsc) {
  if (flag_load(stream.control->entry_closed) != 0) {  // shed at the entry, as the generator's own would be
    stream.generated += count;
    counter_add(stream.control->entry_backpressure, static_cast<uint64_t>(count));
    rte_pktmbuf_free_bulk(pkts, count);
    return;
  }
  stamp_and_send(stream, pkts, count, now_tsc);
}

void Generator::stamp_and_send(Stream& stream, rte_mbuf** pkts, uint16_t count, uint64_t now_tsc) {
  for (uint16_t i = 0; i < count; i++) {
    PacketMeta* meta = meta_of(pkts[i]);
    meta->seq = stream.generated + i;
    meta->tx_tsc = now_tsc;
    meta->chain = static_cast<uint16_t>(stream.chain->index);
    clear_hops(meta);
  }
  if (traces_) {
    // Only the latency-sampled packets of the burst are candidates: one division a burst, none a packet.
    uint64_t first = stream.generated, end = first + count;
    for (uint64_t seq = (first + latency_every_ - 1) / latency_every_ * latency_every_; seq < end;
         seq += latency_every_) {
      if (!traced_sample(seq / latency_every_, trace_every_ / latency_every_)) continue;
      uint32_t slot = next_trace_slot_;
      if (++next_trace_slot_ == trace_slots_) next_trace_slot_ = 0;
      TraceSlot& trace = traces_[slot];
      trace.hops = trace.untraced = 0;
      trace.seq = seq;
      meta_of(pkts[seq - first])->trace_slot = slot + 1;
    }
  }
  stream.generated += count;
  stream.entry->tx_burst(pkts, count, nullptr);  // a full entry drops what it cannot take, counted as its ring's
}

}  // namespace tandem
