// Tests of NF descriptors: the parallel rule, byte offsets to fields, and every NF type held to what it declares.
#include "descriptor.h"

#include <cstring>
#include <map>
#include <vector>

#include "contract/deployment.h"
#include "nf_test_support.h"

namespace tandem {
namespace {

using F = HeaderField;

const NfDescriptor& of(const std::string& type) { return nf_types().at(type).descriptor; }

TEST(Descriptor, PerLayerActionFollowsTheFields) {
  EXPECT_EQ(of("ttl").access(Layer::L3), Access::ReadWrite);
  EXPECT_EQ(of("ttl").access(Layer::L2), Access::ReadOnly);  // the EtherType says whether it is IPv4
  EXPECT_EQ(of("ttl").access(Layer::L4), Access::Nop);
  EXPECT_EQ(of("firewall").access(Layer::L4), Access::ReadOnly);
  EXPECT_EQ(of("macswap").access(Layer::L3), Access::Nop);
  EXPECT_EQ(of("cost").access(Layer::Payload), Access::Nop);
}

TEST(Descriptor, ParallelOnlyWithoutDropsAndWithoutConflictingFields) {
  EXPECT_TRUE(may_run_in_parallel(of("counter"), of("counter")));  // the paper's example: two counting functions
  EXPECT_TRUE(
      may_run_in_parallel(of("macswap"), of("counter")));  // macswap writes L2 addresses the counter never reads
  EXPECT_FALSE(may_run_in_parallel(of("macswap"), of("firewall")));  // the firewall may drop
  // One layer, disjoint fields: finer than the paper's per-layer rule, which would refuse both.
  NfDescriptor writes_ttl{.reads = {F::Ipv4Ttl}, .writes = {F::Ipv4Ttl}},
      reads_addresses{.reads = {F::Ipv4Src, F::Ipv4Dst}};
  EXPECT_TRUE(may_run_in_parallel(writes_ttl, reads_addresses));
  NfDescriptor reads_ttl{.reads = {F::Ipv4Ttl}};
  EXPECT_FALSE(may_run_in_parallel(writes_ttl, reads_ttl));
  EXPECT_FALSE(may_run_in_parallel(reads_ttl, writes_ttl));
}

TEST(Descriptor, ByteOffsetsMapToTheirFields) {
  EXPECT_EQ(field_at(0, 20, false), F::EthDst);
  EXPECT_EQ(field_at(11, 20, false), F::EthSrc);
  EXPECT_EQ(field_at(13, 20, false), F::EthType);
  EXPECT_EQ(field_at(22, 20, false), F::Ipv4Ttl);
  EXPECT_EQ(field_at(25, 20, false), F::Ipv4Checksum);
  EXPECT_EQ(field_at(34 + 2, 24, false), F::Ipv4Options);  // a 24-byte header: 4 bytes of options, then L4
  EXPECT_EQ(field_at(34 + 4, 24, false), F::L4SrcPort);
  EXPECT_EQ(field_at(34, 20, false), F::L4SrcPort);
  EXPECT_EQ(field_at(39, 20, false), F::L4Length);
  EXPECT_EQ(field_at(41, 20, false), F::L4Checksum);
  EXPECT_EQ(field_at(42, 20, false), F::Payload);
  EXPECT_EQ(field_at(38, 20, true), F::L4Other);  // TCP's sequence number
  EXPECT_EQ(field_at(50, 20, true), F::L4Checksum);
  EXPECT_EQ(field_at(54, 20, true), F::Payload);
}

// The frames both tests below send: UDP and TCP of many flows, some with TTL 1, some with a broken checksum, and two
// HTTP requests (one an attack).
std::vector<rte_mbuf*> mixed_frames() {
  std::vector<rte_mbuf*> frames;
  for (uint32_t flow = 0; flow < 32; flow++) {
    rte_mbuf* m = testing::make_frame(flow, flow % 2 ? 128 : 96, flow % 4 < 2 ? IPPROTO_UDP : IPPROTO_TCP);
    auto* ip = rte_pktmbuf_mtod_offset(m, rte_ipv4_hdr*, sizeof(rte_ether_hdr));
    if (flow % 8 == 3) ip->time_to_live = 1;
    if (flow % 8 == 5) ip->hdr_checksum ^= 0x0101;
    frames.push_back(m);
  }
  for (const char* url : {"/index.html", "/item?id=1%27%20OR%20%271%27%3D%271"})  // for the NFs that read requests
    frames.push_back(testing::make_tcp_frame_with(std::string("GET ") + url + " HTTP/1.1\r\nHost: h\r\n\r\n", 40));
  return frames;
}

// What a batch became: each kept frame's bytes and gate, and how many were dropped.
struct Fate {
  std::vector<std::vector<uint8_t>> kept;
  std::vector<uint8_t> gates;
  uint16_t dropped;
  bool operator==(const Fate&) const = default;
};

Fate fate_of(NetworkFunction& nf) {
  testing::BatchOutcome out = testing::run_batch(nf, mixed_frames());
  Fate fate{{}, out.gates, out.dropped};
  for (rte_mbuf* m : out.kept) {
    const uint8_t* data = rte_pktmbuf_mtod(m, const uint8_t*);
    fate.kept.emplace_back(data, data + rte_pktmbuf_data_len(m));
  }
  testing::free_all(out.kept);
  return fate;
}

// The composer merges two identical μNFs in a row only when neither is declared random: every other NF type, fresh,
// must do the same to the same frames twice over. drop, which draws its verdict, is declared random (and shown to be).
TEST(Descriptor, AnNfNotDeclaredRandomDoesTheSameToTheSameFrames) {
  for (const auto& [name, type] : nf_types()) {
    if (name == kExternalNfType) continue;
    SCOPED_TRACE(name);
    auto first = testing::make_nf(name), second = testing::make_nf(name);
    if (type.descriptor.random) continue;
    EXPECT_TRUE(fate_of(*first) == fate_of(*second)) << "two fresh instances differ: declare it random";
  }
  EXPECT_TRUE(of("drop").random);
  auto half = testing::make_nf("drop", {{"fraction", 0.5}});
  uint16_t dropped = 0;
  for (int round = 0; round < 8; round++) dropped = static_cast<uint16_t>(dropped + fate_of(*half).dropped);
  EXPECT_GT(dropped, 0);
  EXPECT_LT(dropped, 8 * 34);
}

// Every NF type (but the external application, which runs in a process of its own) processes the mixed frames: every
// byte it changes must lie in a field its descriptor says it writes, a frame whose length changes needs `payload`
// written, a drop needs may_drop, and every gate it sends a packet to must be one it declares.
TEST(Descriptor, EveryNfTypeChangesOnlyWhatItDeclares) {
  for (const auto& [name, type] : nf_types()) {
    if (name == kExternalNfType) continue;
    SCOPED_TRACE(name);
    auto nf = testing::make_nf(name);
    std::vector<rte_mbuf*> frames = mixed_frames();
    std::map<rte_mbuf*, std::vector<uint8_t>> before;
    for (rte_mbuf* m : frames) {
      const uint8_t* data = rte_pktmbuf_mtod(m, const uint8_t*);
      before[m].assign(data, data + rte_pktmbuf_data_len(m));
    }
    testing::BatchOutcome out = testing::run_batch(*nf, frames);
    if (out.dropped > 0) EXPECT_TRUE(type.descriptor.may_drop) << out.dropped << " dropped";
    size_t gates = nf_gates(type, testing::resolved_args(name)).size();
    for (uint8_t gate : out.gates) EXPECT_LT(gate, std::max<size_t>(1, gates)) << "a gate it does not declare";
    for (rte_mbuf* m : out.kept) {
      const std::vector<uint8_t>& old = before.at(m);
      const uint8_t* data = rte_pktmbuf_mtod(m, const uint8_t*);
      bool tcp = old[14 + 9] == IPPROTO_TCP;
      size_t ip_header = (old[14] & 0x0f) * 4u;
      FieldSet changed;
      if (rte_pktmbuf_data_len(m) != old.size()) changed = changed | FieldSet{F::Payload};
      for (size_t i = 0; i < std::min<size_t>(old.size(), rte_pktmbuf_data_len(m)); i++)
        if (data[i] != old[i]) changed = changed | FieldSet{field_at(i, ip_header, tcp)};
      EXPECT_TRUE(changed.subset_of(type.descriptor.writes)) << "changed fields outside the declared writes";
      EXPECT_TRUE(changed.subset_of(type.descriptor.reads | type.descriptor.writes));
    }
    testing::free_all(out.kept);
  }
}

}  // namespace
}  // namespace tandem
