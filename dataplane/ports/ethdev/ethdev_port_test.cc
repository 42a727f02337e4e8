// Tests of a spec's DPDK device and its Rx stage, on DPDK's net_ring device (what it sends comes back as received):
// frames sorted by chain and source prefix, unhandled frames passed or dropped, and every frame counted.
#include "ethdev_port.h"

#include <rte_ip.h>

#include <stdexcept>
#include <vector>

#include "dataplane/packets/ip_view.h"
#include "dataplane/packets/packet_test_support.h"
#include "port_receiver.h"

namespace tandem {
namespace {

PortConfig ring_port(const std::string& name) {
  PortConfig config;
  config.name = name;
  config.device = "net_ring_" + name;
  config.spec_path = "ports[0]";
  return config;
}

rte_mbuf* from_source(const char* address) {
  rte_mbuf* m = testing::make_frame();
  inet_pton(AF_INET, address, &ipv4_header(m)->src_addr);
  return m;
}

rte_mbuf* arp_frame() {
  rte_mbuf* m = testing::make_frame();
  rte_pktmbuf_mtod(m, rte_ether_hdr*)->ether_type = rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP);
  return m;
}

rte_mbuf* neighbour_solicitation() {
  rte_mbuf* m = testing::make_ipv6_frame(IPPROTO_ICMPV6);
  rte_pktmbuf_mtod(m, uint8_t*)[ip_in_frame(m).l4_offset] = 135;
  return m;
}

// Sends `frames` out of `port` (net_ring: they come back in) and lets `receiver` take them; by chain, what came.
std::vector<std::vector<rte_mbuf*>> loop_through(EthdevPort& port, PortReceiver& receiver,
                                                 std::vector<rte_mbuf*> frames, int chains) {
  port.transmit(frames.data(), static_cast<uint16_t>(frames.size()));
  std::vector<std::vector<rte_mbuf*>> by_chain(chains);
  receiver.poll(32, [&](int chain, rte_mbuf** pkts, uint16_t count) {
    by_chain[chain].insert(by_chain[chain].end(), pkts, pkts + count);
  });
  return by_chain;
}

TEST(EthdevPort, IpFramesGoToTheChainAndTheRestIsDroppedAndCounted) {
  EthdevPort port(ring_port("a"), testing::test_pool());
  PortReceiver receiver(port, {{0, {}}}, nullptr);
  auto by_chain = loop_through(port, receiver,
                               {testing::make_frame(1), arp_frame(), testing::make_frame(2),
                                testing::make_ipv6_frame(IPPROTO_UDP), neighbour_solicitation()},
                               1);
  ASSERT_EQ(by_chain[0].size(), 3u);  // two IPv4 frames and one IPv6 frame, in order
  EXPECT_EQ(ip_in_frame(by_chain[0][2]).version, 6);
  const PortCounters& counters = port.counters();
  EXPECT_EQ(counters.transmitted, 5u);
  EXPECT_EQ(counters.received, 5u);
  EXPECT_EQ(counters.to_chains, 3u);
  EXPECT_EQ(counters.unhandled_dropped, 2u);  // ARP and neighbour discovery: no port to pass them to
  EXPECT_TRUE(port.report()["exact"].get<bool>());
  testing::free_all(by_chain[0]);
  port.close();
  EXPECT_EQ(rte_mempool_in_use_count(testing::test_pool()), 0u);
}

TEST(EthdevPort, SourcePrefixesTellChainsApartAndUnhandledFramesCrossTheWire) {
  EthdevPort left(ring_port("left"), testing::test_pool());
  EthdevPort right(ring_port("right"), testing::test_pool());
  PortReceiver receiver(
      left, {{0, {SourcePrefix("198.18.1.0/24")}}, {1, {SourcePrefix("198.18.2.0/24"), SourcePrefix("2001:db8::/32")}}},
      &right);
  auto by_chain = loop_through(left, receiver,
                               {from_source("198.18.1.7"), from_source("198.18.2.9"), from_source("198.18.3.1"),
                                testing::make_ipv6_frame(IPPROTO_TCP), arp_frame(), from_source("198.18.1.200")},
                               2);
  EXPECT_EQ(by_chain[0].size(), 2u);
  EXPECT_EQ(by_chain[1].size(), 2u);  // 198.18.2.9 and 2001:db8::1
  // 198.18.3.1 (no chain's source) and the ARP frame went out of the other port untouched.
  const PortCounters& counters = left.counters();
  EXPECT_EQ(counters.passed, 2u);
  EXPECT_EQ(right.counters().transmitted, 2u);
  rte_mbuf* crossed[4];
  ASSERT_EQ(right.receive(crossed, 4), 2);
  EXPECT_EQ(rte_pktmbuf_mtod(crossed[1], rte_ether_hdr*)->ether_type, rte_cpu_to_be_16(RTE_ETHER_TYPE_ARP));
  rte_pktmbuf_free_bulk(crossed, 2);
  EXPECT_TRUE(left.report()["exact"].get<bool>());
  for (auto& frames : by_chain) testing::free_all(frames);
}

TEST(EthdevPort, ARemovedChainsFramesAreDroppedAndCountedNeverPassedAround) {
  EthdevPort left(ring_port("cl"), testing::test_pool());
  EthdevPort right(ring_port("cr"), testing::test_pool());
  PortReceiver receiver(left, {{0, {SourcePrefix("198.18.1.0/24")}}, {1, {}}}, &right);
  receiver.close_route(0);  // chain 0 removed: its frames would otherwise be unhandled, and passed to the right
  auto by_chain = loop_through(left, receiver,
                               {from_source("198.18.1.7"), from_source("198.18.2.9"), from_source("198.18.1.8")}, 2);
  EXPECT_TRUE(by_chain[0].empty());
  EXPECT_EQ(by_chain[1].size(), 1u);
  const PortCounters& counters = left.counters();
  EXPECT_EQ(counters.for_removed_chains, 2u);
  EXPECT_EQ(counters.passed, 0u);
  EXPECT_EQ(right.counters().transmitted, 0u);
  EXPECT_TRUE(left.report()["exact"].get<bool>());
  // The right port removed: unhandled frames are not passed to it any more, but dropped and counted.
  receiver.stop_passing_to(&right);
  right.mark_removed();
  right.close();
  EXPECT_TRUE(right.report()["removed"].get<bool>());
  EXPECT_TRUE(loop_through(left, receiver, {arp_frame()}, 2)[1].empty());
  EXPECT_EQ(counters.unhandled_dropped, 1u);
  EXPECT_TRUE(left.report()["exact"].get<bool>());
  testing::free_all(by_chain[1]);
  left.close();
  EXPECT_EQ(rte_mempool_in_use_count(testing::test_pool()), 0u);
}

TEST(EthdevPort, ABadDeviceIsRefusedNamingTheField) {
  PortConfig config = ring_port("x");
  config.device = "net_no_such_driver0,iface=eth9";
  config.spec_path = "ports[3]";
  try {
    EthdevPort port(config, testing::test_pool());
    FAIL() << "opened a device with no driver";
  } catch (const PortOpenError& error) {
    EXPECT_EQ(error.field, "ports[3].device");
    EXPECT_EQ(error.reason.find("net_no_such_driver0,iface=eth9: DPDK cannot create this device"), 0u) << error.reason;
  }
}

TEST(SourcePrefix, ReadsPrefixesAndRefusesTheRest) {
  uint8_t inside[4] = {198, 18, 1, 77}, outside[4] = {198, 18, 2, 1};
  EXPECT_TRUE(SourcePrefix("198.18.1.0/24").contains(4, inside));
  EXPECT_FALSE(SourcePrefix("198.18.1.0/24").contains(4, outside));
  EXPECT_TRUE(SourcePrefix("198.18.0.0/15").contains(4, outside));
  EXPECT_TRUE(SourcePrefix("198.18.1.77").contains(4, inside));  // no length: one host
  EXPECT_FALSE(SourcePrefix("::/0").contains(4, inside));        // another family never matches
  for (const char* bad : {"198.18.1.0/33", "198.18.1/24", "x", "198.18.1.0/", "::1/129", "1.2.3.4/-1"})
    EXPECT_THROW(SourcePrefix{bad}, std::invalid_argument) << bad;
}

}  // namespace
}  // namespace tandem
