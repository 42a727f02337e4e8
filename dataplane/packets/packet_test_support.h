// Test support for code that needs DPDK: an EAL without hugepages (packet_test_main.cc) and mbufs holding frames.
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

#include "contract/packet_meta.h"
#include "frame_builder.h"

namespace tandem::testing {

// The pool created by packet_test_main.cc after EAL init.
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

inline void free_all(const std::vector<rte_mbuf*>& pkts) {
  for (rte_mbuf* m : pkts) rte_pktmbuf_free(m);
}

}  // namespace tandem::testing
