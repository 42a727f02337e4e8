// Test support for code that needs DPDK: an EAL without hugepages and a pool of test frames.
#pragma once

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include <netinet/in.h>

#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

#include "contract/batch.h"
#include "dataplane/manager/frame_builder.h"
#include "contract/packet_meta.h"
#include "nfs/nf.h"

namespace tandem::testing {

// The pool created by nf_test_main.cc after EAL init.
rte_mempool* test_pool();

// An mbuf holding a valid frame of flow `flow` (see flow_address) with the given size and protocol.
inline rte_mbuf* make_frame(uint32_t flow = 0, uint16_t size = 64, uint8_t protocol = IPPROTO_UDP) {
  rte_mbuf* m = rte_pktmbuf_alloc(test_pool());
  uint16_t length = size - kFcsBytes;
  m->data_len = m->pkt_len = length;
  memset(rte_pktmbuf_mtod(m, void*), 0, length);
  build_frame(rte_pktmbuf_mtod(m, uint8_t*), size, protocol, flow_address(flow, 0));
  clear_hops(meta_of(m));
  return m;
}

// A TCP frame of flow `flow` whose segment carries `payload` (e.g. an HTTP request), with valid checksums.
inline rte_mbuf* make_tcp_frame_with(const std::string& payload, uint32_t flow = 0) {
  constexpr size_t kHeaders = sizeof(rte_ether_hdr) + sizeof(rte_ipv4_hdr) + 20;
  auto size = static_cast<uint16_t>(std::max<size_t>(kMinFrame, kHeaders + payload.size() + kFcsBytes));
  rte_mbuf* m = rte_pktmbuf_alloc(test_pool());
  uint16_t length = size - kFcsBytes;
  m->data_len = m->pkt_len = length;
  uint8_t* data = rte_pktmbuf_mtod(m, uint8_t*);
  memset(data, 0, length);
  memcpy(data + kHeaders, payload.data(), payload.size());
  build_frame(data, size, IPPROTO_TCP, flow_address(flow, 0));
  clear_hops(meta_of(m));
  return m;
}

// Runs `nf` over `frames`; returns the packets kept with their gates, frees the dropped ones and reports how many.
struct BatchOutcome {
  std::vector<rte_mbuf*> kept;
  uint16_t dropped = 0;
  std::vector<uint8_t> gates;  // of the kept packets, in order
};

inline BatchOutcome run_batch(NetworkFunction& nf, std::vector<rte_mbuf*> frames) {
  std::vector<rte_mbuf*> dropped(frames.size());
  std::vector<uint8_t> gates(frames.size(), 0);
  Batch batch{frames.data(), static_cast<uint16_t>(frames.size()), dropped.data(), 0, gates.data()};
  nf.process(batch);
  BatchOutcome out{{frames.begin(), frames.begin() + batch.count}, batch.dropped_count, {gates.begin(), gates.begin() + batch.count}};
  rte_pktmbuf_free_bulk(dropped.data(), batch.dropped_count);
  return out;
}

// `args` with the type's defaults filled in, as the data plane hands them to an NF.
inline json resolved_args(const std::string& type, const json& args = json::object()) {
  SpecErrors errors;
  json resolved = resolve_args(nf_types().at(type).args, args, "args", errors);
  EXPECT_TRUE(errors.empty()) << (errors.empty() ? "" : errors[0].path + ": " + errors[0].message);
  return resolved;
}

inline std::unique_ptr<NetworkFunction> make_nf(const std::string& type, const json& args = json::object()) {
  json resolved = resolved_args(type, args);
  static int counter = 0;
  return nf_types().at(type).create(resolved, {type, "test" + std::to_string(counter++), 0});
}

inline void free_all(const std::vector<rte_mbuf*>& pkts) {
  for (rte_mbuf* m : pkts) rte_pktmbuf_free(m);
}

}  // namespace tandem::testing
