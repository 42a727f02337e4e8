// Access to the IPv4 header of an Ethernet frame in an mbuf, shared by the NFs and ports that read L3/L4 fields.
#pragma once

#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_mbuf.h>

namespace tandem {

// Returns the IPv4 header, or nullptr when the frame is too short or not IPv4.
inline rte_ipv4_hdr* ipv4_header(rte_mbuf* m) {
  if (rte_pktmbuf_data_len(m) < sizeof(rte_ether_hdr) + sizeof(rte_ipv4_hdr)) return nullptr;
  auto* eth = rte_pktmbuf_mtod(m, rte_ether_hdr*);
  if (eth->ether_type != rte_cpu_to_be_16(RTE_ETHER_TYPE_IPV4)) return nullptr;
  return reinterpret_cast<rte_ipv4_hdr*>(eth + 1);
}

}  // namespace tandem
