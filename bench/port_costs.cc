// The cost of μNF's ports on one core: cycles per packet through each port against the point-to-point ring port.
// Usage: build/port-costs [--packets N] [--rounds R] [--json FILE]   (no root, no hugepages: EAL runs without them)
#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_mbuf.h>
#include <rte_ring.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "contract/arg_schema.h"
#include "contract/packet_meta.h"
#include "contract/shm_layout.h"
#include "dataplane/packets/frame_builder.h"
#include "dataplane/ports/labelled_egress.h"
#include "dataplane/ports/parallel_ports.h"
#include "dataplane/ports/ring_port.h"

using namespace tandem;

namespace {

constexpr uint16_t kBurst = 32;
constexpr unsigned kRingSize = 1024;
StatsZone stats{};
uint64_t journal = 0, counter = 0;

rte_ring* ring(const std::string& name) {
  return rte_ring_create(name.c_str(), kRingSize, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ | RING_F_EXACT_SZ);
}
std::unique_ptr<EgressPort> to(rte_ring* r, int index) {
  return std::make_unique<RingEgress>(r, stats.rings[index], journal);
}
std::unique_ptr<IngressPort> from(rte_ring* r, int index) {
  return std::make_unique<RingIngress>(r, stats.rings[index]);
}

// One way packets take, set up once: hand a burst in (with its gates), and take what reached the end out.
struct Path {
  std::string name;
  std::function<void(rte_mbuf**, uint16_t, const uint8_t*)> in;
  std::function<uint16_t(rte_mbuf**)> out;
};

// Cycles per packet through `path`: bursts of kBurst frames of 64 flows in, all out, `packets` in all.
double cycles_per_packet(const Path& path, rte_mempool* pool, uint64_t packets) {
  rte_mbuf* burst[kBurst];
  rte_mbuf* done[kBurst * 4];
  uint8_t gates[kBurst];
  for (uint16_t i = 0; i < kBurst; i++) gates[i] = i % 2;
  uint64_t flow = 0, spent = 0;
  for (uint64_t sent = 0; sent < packets; sent += kBurst) {
    if (rte_pktmbuf_alloc_bulk(pool, burst, kBurst) != 0) throw std::runtime_error("pool empty: a path leaks");
    for (rte_mbuf* m : burst) {
      m->data_len = m->pkt_len = 60;
      build_frame(rte_pktmbuf_mtod(m, uint8_t*), 64, 17, flow_address(static_cast<uint32_t>(flow++ % 64), 0));
    }
    uint64_t start = rte_rdtsc();
    path.in(burst, kBurst, gates);
    uint16_t n;
    while ((n = path.out(done)) > 0) rte_pktmbuf_free_bulk(done, n);
    spent += rte_rdtsc() - start;
  }
  return static_cast<double>(spent) / static_cast<double>(packets);
}

}  // namespace

int main(int argc, char** argv) {
  const char* eal_args[] = {"port-costs",  "--no-huge", "--no-pci",       "--no-shconf",
                            "-m",          "256",       "--no-telemetry", "--log-level=lib.eal:error",
                            "--lcores=0@0"};
  if (rte_eal_init(sizeof(eal_args) / sizeof(eal_args[0]), const_cast<char**>(eal_args)) < 0) {
    fprintf(stderr, "port-costs: EAL init failed\n");
    return 1;
  }
  uint64_t packets = 2'000'000;
  int rounds = 5;
  std::string json_path;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--packets") == 0) packets = std::stoull(argv[i + 1]);
    if (strcmp(argv[i], "--rounds") == 0) rounds = std::stoi(argv[i + 1]);
    if (strcmp(argv[i], "--json") == 0) json_path = argv[i + 1];
  }
  rte_mempool* pool =
      rte_pktmbuf_pool_create("bench_pool", 8191, 256, kMbufPrivSize, RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
  if (pool == nullptr) {
    fprintf(stderr, "port-costs: cannot create the pool\n");
    return 1;
  }
  std::vector<rte_ring*> r;
  for (int i = 0; i < 7; i++) r.push_back(ring("bench" + std::to_string(i)));

  std::vector<Path> paths;
  auto p2p = std::make_shared<std::unique_ptr<EgressPort>>(to(r[0], 0));
  auto p2p_in = std::make_shared<std::unique_ptr<IngressPort>>(from(r[0], 0));
  paths.push_back({"point-to-point (one ring)",
                   [=](rte_mbuf** m, uint16_t n, const uint8_t*) { (*p2p)->tx_burst(m, n, nullptr); },
                   [=](rte_mbuf** m) { return (*p2p_in)->rx_burst(m, kBurst * 4); }});

  auto two_edges = [&](int a, int b) {
    std::vector<std::unique_ptr<IngressPort>> edges;
    edges.push_back(from(r[a], a));
    edges.push_back(from(r[b], b));
    return std::make_shared<JoinIngress>(std::move(edges));
  };
  {
    std::vector<std::unique_ptr<EgressPort>> by_gate;
    by_gate.push_back(to(r[1], 1));
    by_gate.push_back(to(r[2], 2));
    auto labelled = std::make_shared<LabelledEgress>(std::move(by_gate), counter, journal);
    auto join = two_edges(1, 2);
    paths.push_back({"labelled egress, 2 gates, and a join",
                     [=](rte_mbuf** m, uint16_t n, const uint8_t* g) { labelled->tx_burst(m, n, g); },
                     [=](rte_mbuf** m) { return join->rx_burst(m, kBurst * 4); }});
  }
  {
    std::vector<std::unique_ptr<EgressPort>> branches;
    branches.push_back(to(r[3], 3));
    branches.push_back(to(r[4], 4));
    auto branch = std::make_shared<BranchEgress>(std::move(branches), counter);
    auto marker_a = std::make_shared<MarkerEgress>(to(r[5], 5), counter, journal);
    auto marker_b = std::make_shared<MarkerEgress>(to(r[6], 6), counter, journal);
    auto take_a = std::make_shared<std::unique_ptr<IngressPort>>(from(r[3], 3));
    auto take_b = std::make_shared<std::unique_ptr<IngressPort>>(from(r[4], 4));
    std::vector<std::unique_ptr<IngressPort>> edges;
    edges.push_back(from(r[5], 5));
    edges.push_back(from(r[6], 6));
    auto join = std::make_shared<JoinIngress>(std::move(edges));
    // Both branches on this one core, in turn: branch, each marker, the join (no NF work: the ports alone).
    paths.push_back({"branch (2 ways), 2 markers and a join",
                     [=](rte_mbuf** m, uint16_t n, const uint8_t*) {
                       branch->tx_burst(m, n, nullptr);
                       rte_mbuf* copies[kBurst * 4];
                       uint16_t got = (*take_a)->rx_burst(copies, kBurst * 4);
                       marker_a->tx_burst(copies, got, nullptr);
                       got = (*take_b)->rx_burst(copies, kBurst * 4);
                       marker_b->tx_burst(copies, got, nullptr);
                     },
                     [=](rte_mbuf** m) { return join->rx_burst(m, kBurst * 4); }});
  }

  std::vector<std::vector<double>> per_path(paths.size());
  for (int round = 0; round < rounds; round++)  // interleaved: a slow spell of the machine hits every path alike
    for (size_t p = 0; p < paths.size(); p++) per_path[p].push_back(cycles_per_packet(paths[p], pool, packets));
  json out = json::array();
  auto median = [](std::vector<double> v) {
    std::sort(v.begin(), v.end());
    return v[v.size() / 2];
  };
  double base = median(per_path[0]);
  printf("%-48s %12s %12s\n", "port", "cyc/packet", "vs ring");
  for (size_t p = 0; p < paths.size(); p++) {
    double cycles = median(per_path[p]);
    printf("%-48s %12.1f %12.2f\n", paths[p].name.c_str(), cycles, cycles / base);
    out.push_back(
        {{"port", paths[p].name}, {"cycles_per_packet", cycles}, {"rounds", per_path[p]}, {"vs_ring", cycles / base}});
  }
  if (rte_mempool_in_use_count(pool) != 0) {
    fprintf(stderr, "port-costs: %u mbufs not back in the pool: a port leaks\n", rte_mempool_in_use_count(pool));
    return 1;
  }
  if (!json_path.empty())
    std::ofstream(json_path) << json{{"burst", kBurst}, {"packets", packets}, {"ports", out}}.dump(1);
  rte_eal_cleanup();
  return 0;
}
