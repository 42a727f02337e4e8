// Tests of one burst through a segment: counters, hop stamps, NF drops and drops at a full output ring all add up.
#include "segment.h"

#include <sched.h>
#include <sys/resource.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <thread>

#include <rte_cycles.h>
#include <rte_ring.h>

#include "dataplane/ports/ring_port.h"
#include "nfs/nf_test_support.h"

namespace tandem {
namespace {

// A ring as the data plane makes them (one producer, one consumer, the exact capacity); fails the test if it cannot.
rte_ring* make_ring(const char* name, unsigned capacity) {
  rte_ring* ring = rte_ring_create(name, capacity, SOCKET_ID_ANY, RING_F_SP_ENQ | RING_F_SC_DEQ | RING_F_EXACT_SZ);
  EXPECT_NE(ring, nullptr) << name;
  return ring;
}

TEST(WorkerLoop, SegmentBurstCountsEveryPacket) {
  static StatsZone stats{};
  rte_ring* in = make_ring("wl_in", 64);
  rte_ring* out = make_ring("wl_out", 8);
  SegmentRuntime segment{std::make_unique<RingIngress>(in, stats.rings[0]),
                         std::make_unique<RingEgress>(out, stats.rings[1], stats.nfs[3].mbufs_being_freed),
                         {3, 7},
                         {}};
  segment.nfs.push_back(testing::make_nf("ttl"));
  segment.nfs.push_back(testing::make_nf("macswap"));

  std::vector<rte_mbuf*> frames;
  for (int i = 0; i < 32; i++) frames.push_back(testing::make_frame(i));
  for (int i = 0; i < 4; i++) rte_pktmbuf_mtod_offset(frames[i], rte_ipv4_hdr*, 14)->time_to_live = 1;  // ttl drops 4
  ASSERT_EQ(rte_ring_enqueue_burst(in, reinterpret_cast<void**>(frames.data()), 32, nullptr), 32u);

  EXPECT_EQ(run_segment_once(segment, stats, 32), 32);
  EXPECT_EQ(stats.rings[0].dequeued, 32u);
  EXPECT_EQ(stats.nfs[3].packets_in, 32u);
  EXPECT_EQ(stats.nfs[3].packets_dropped, 4u);
  EXPECT_EQ(stats.nfs[7].packets_in, 28u);
  EXPECT_EQ(stats.nfs[7].packets_out, 28u);
  EXPECT_EQ(stats.rings[1].enqueued, 8u);  // the output ring holds 8
  EXPECT_EQ(stats.rings[1].dropped_full, 20u);
  EXPECT_EQ(stats.nfs[3].mbufs_being_freed, 0u);  // the journal is clear once the frees are done
  EXPECT_EQ(run_segment_once(segment, stats, 32), 0);
  EXPECT_EQ(stats.nfs[3].empty_polls, 1u);

  rte_mbuf* delivered[8];
  ASSERT_EQ(rte_ring_dequeue_burst(out, reinterpret_cast<void**>(delivered), 8, nullptr), 8u);
  for (rte_mbuf* m : delivered) {
    ASSERT_EQ(meta_of(m)->hop_count, 2);
    EXPECT_EQ(meta_of(m)->hops[0], 3);
    EXPECT_EQ(meta_of(m)->hops[1], 7);
    rte_pktmbuf_free(m);
  }
  // Every mbuf taken from the pool is back: dropped ones were freed by the runtime.
  EXPECT_EQ(rte_mempool_in_use_count(testing::test_pool()), 0u);
  rte_ring_free(in);
  rte_ring_free(out);
}

// Pipelined prefetching changes when packets' data is fetched, never what NFs do to them: at every distance,
// shorter and longer than the batch, a filtering NF and a for_each NF leave the same packets in the same state.
TEST(WorkerLoop, PrefetchingAheadChangesNoResult) {
  static StatsZone stats{};
  rte_ring* in = make_ring("pf_in", 64);
  rte_ring* out = make_ring("pf_out", 64);
  for (uint16_t distance : std::initializer_list<uint16_t>{0, 1, 7, 31, 32, 100}) {
    SegmentRuntime segment{std::make_unique<RingIngress>(in, stats.rings[0]),
                           std::make_unique<RingEgress>(out, stats.rings[1], stats.nfs[0].mbufs_being_freed),
                           {0, 1},
                           {}};
    segment.nfs.push_back(testing::make_nf("ttl"));
    segment.nfs.push_back(testing::make_nf("macswap"));
    segment.prefetch_distance = distance;
    std::vector<rte_mbuf*> frames;
    for (int i = 0; i < 32; i++) frames.push_back(testing::make_frame(i));
    for (int i = 0; i < 32; i += 5)
      rte_pktmbuf_mtod_offset(frames[i], rte_ipv4_hdr*, 14)->time_to_live = 1;  // 7 dropped
    rte_ether_addr first_src = rte_pktmbuf_mtod(frames[1], rte_ether_hdr*)->src_addr;
    ASSERT_EQ(rte_ring_enqueue_burst(in, reinterpret_cast<void**>(frames.data()), 32, nullptr), 32u);
    EXPECT_EQ(run_segment_once(segment, stats, 32), 32) << "distance " << distance;
    rte_mbuf* delivered[32];
    ASSERT_EQ(rte_ring_dequeue_burst(out, reinterpret_cast<void**>(delivered), 32, nullptr), 25u)
        << "distance " << distance;
    EXPECT_EQ(delivered[0], frames[1]);  // in order
    EXPECT_EQ(delivered[24], frames[31]);
    EXPECT_TRUE(
        rte_is_same_ether_addr(&rte_pktmbuf_mtod(delivered[0], rte_ether_hdr*)->dst_addr, &first_src));  // swapped
    for (int i = 0; i < 25; i++) rte_pktmbuf_free(delivered[i]);
  }
  EXPECT_EQ(rte_mempool_in_use_count(testing::test_pool()), 0u);
  rte_ring_free(in);
  rte_ring_free(out);
}

// run --profile: a traced packet gets one hop per NF, in order, with its arrival, batch start and end, and how much
// of its wait in the input ring the first NF spent on other batches; untraced packets leave their slots alone.
TEST(WorkerLoop, TracedPacketsGetAHopPerNf) {
  static StatsZone stats{};
  static TraceSlot traces[4]{};
  rte_ring* in = make_ring("tr_in", 64);
  rte_ring* out = make_ring("tr_out", 64);
  SegmentRuntime segment{std::make_unique<RingIngress>(in, stats.rings[0]),
                         std::make_unique<RingEgress>(out, stats.rings[1], stats.nfs[3].mbufs_being_freed),
                         {3, 7},
                         {}};
  segment.nfs.push_back(testing::make_nf("ttl"));
  segment.nfs.push_back(testing::make_nf("macswap"));
  segment.traces = traces;
  uint64_t sent = rte_rdtsc();
  segment.input_history.record(sent - 2 * BusyHistory::kSpacingCycles, 100);  // ended before the packets were sent
  segment.input_history.record(sent + 10, 200);                               // ended while they waited
  std::vector<rte_mbuf*> frames;
  for (int i = 0; i < 8; i++) {
    frames.push_back(testing::make_frame(i));
    meta_of(frames[i])->tx_tsc = sent;
  }
  for (int i = 0; i < 8; i++) meta_of(frames[i])->seq = 100 + i;
  meta_of(frames[0])->trace_slot = 1;
  traces[0].seq = 100;
  meta_of(frames[5])->trace_slot = 2;
  traces[1].seq = 105;
  meta_of(frames[6])->trace_slot = 3;  // its slot went to a later packet: nothing is written into it
  traces[2].seq = 999;
  ASSERT_EQ(rte_ring_enqueue_burst(in, reinterpret_cast<void**>(frames.data()), 8, nullptr), 8u);
  EXPECT_EQ(run_segment_once(segment, stats, 32), 8);

  for (int slot : {0, 1}) {
    const TraceSlot& trace = traces[slot];
    ASSERT_EQ(trace.hops, 2) << slot;
    EXPECT_EQ(trace.hop[0].nf, 3);
    EXPECT_EQ(trace.hop[1].nf, 7);
    EXPECT_LE(sent, trace.hop[0].arrive_tsc);
    EXPECT_LE(trace.hop[0].arrive_tsc, trace.hop[0].start_tsc);
    EXPECT_LE(trace.hop[0].start_tsc, trace.hop[0].end_tsc);
    EXPECT_LE(trace.hop[0].end_tsc, trace.hop[1].arrive_tsc);  // straight on, in the same process
    EXPECT_EQ(trace.hop[1].arrive_tsc, trace.hop[1].start_tsc);
    EXPECT_LE(trace.hop[1].start_tsc, trace.hop[1].end_tsc);
    EXPECT_EQ(trace.hop[0].busy_while_queued, 200u);
    EXPECT_EQ(trace.hop[1].busy_while_queued, 0u);  // it did not queue for the second NF
  }
  EXPECT_EQ(traces[2].hops, 0);
  EXPECT_EQ(traces[3].hops, 0);
  rte_mbuf* delivered[8];
  ASSERT_EQ(rte_ring_dequeue_burst(out, reinterpret_cast<void**>(delivered), 8, nullptr), 8u);
  rte_pktmbuf_free_bulk(delivered, 8);
  rte_ring_free(in);
  rte_ring_free(out);
}

// An NF that passes packets on and, when told, spins as long as a kernel preemption mid-batch would keep it.
class StallingNf final : public NetworkFunction {
 public:
  void process(Batch& /*batch*/) override {
    if (stall_cycles == 0) return;
    uint64_t until = rte_rdtsc() + stall_cycles;
    while (rte_rdtsc() < until) {
    }
    stall_cycles = 0;
  }
  uint64_t stall_cycles = 0;
};

// The work counter leaves out what the kernel took: a batch that lasted far beyond its usual cost counts at most
// kPreemptedFactor (4) x that cost, while the wall-time counter keeps all of it.
TEST(WorkerLoop, APreemptedBatchCountsItsUsualWorkNotItsWallTime) {
  static StatsZone stats{};
  rte_ring* in = make_ring("wk_in", 64);
  rte_ring* out = make_ring("wk_out", 64);
  SegmentRuntime segment{std::make_unique<RingIngress>(in, stats.rings[0]),
                         std::make_unique<RingEgress>(out, stats.rings[1], stats.nfs[0].mbufs_being_freed),
                         {0},
                         {}};
  auto owned = std::make_unique<StallingNf>();
  StallingNf* nf = owned.get();
  segment.nfs.push_back(std::move(owned));
  auto one_batch = [&] {
    rte_mbuf* frame = testing::make_frame(0);
    ASSERT_EQ(rte_ring_enqueue(in, frame), 0);
    ASSERT_EQ(run_segment_once(segment, stats, 32), 1);
    rte_mbuf* delivered = nullptr;
    ASSERT_EQ(rte_ring_dequeue(out, reinterpret_cast<void**>(&delivered)), 0);
    rte_pktmbuf_free(delivered);
  };
  for (int i = 0; i < 200; i++) one_batch();  // the estimate settles on a one-packet batch's cost
  const NfCounters& counters = stats.nfs[0];
  EXPECT_LE(counters.work_cycles, counters.busy_cycles);
  uint64_t busy_before = counters.busy_cycles, work_before = counters.work_cycles;
  double usual = segment.cost_estimate[0];
  uint64_t stall = rte_get_tsc_hz() / 1000;  // 1 ms: a CFS slice lost; a one-packet batch costs a microsecond or less
  nf->stall_cycles = stall;
  one_batch();
  EXPECT_GE(counters.busy_cycles - busy_before, stall);
  EXPECT_LE(counters.work_cycles - work_before, static_cast<uint64_t>(4 * usual) + 1);
  EXPECT_LT(counters.work_cycles - work_before, stall / 10) << "at most 4 x a batch's usual cost, far below the stall";
  EXPECT_EQ(rte_mempool_in_use_count(testing::test_pool()), 0u);
  rte_ring_free(in);
  rte_ring_free(out);
}

}  // namespace
}  // namespace tandem

namespace tandem {
namespace {

// A segment of one allow-all firewall (NF 2) between rings `in` and `out`, which takes live argument changes.
SegmentRuntime firewall_segment_with_live_args(rte_ring* in, rte_ring* out, StatsZone& stats) {
  SegmentRuntime segment{std::make_unique<RingIngress>(in, stats.rings[0]),
                         std::make_unique<RingEgress>(out, stats.rings[1], stats.nfs[2].mbufs_being_freed),
                         {2},
                         {}};
  segment.nfs.push_back(testing::make_nf("firewall", {{"default", "allow"}}));
  segment.live = std::make_shared<LiveArgs>();
  return segment;
}

// A live argument change is built beside the running instance, which carries every batch until the new one is ready
// and swapped in between two batches: each batch meets the old arguments or the new, whole. A generation that cannot
// be built is refused, its reason kept, and the running instance goes on.
TEST(WorkerLoop, NewArgumentsAreBuiltBesideAndSwappedInBetweenTwoBatches) {
  static StatsZone stats{};
  rte_ring* in = make_ring("la_in", 64);
  rte_ring* out = make_ring("la_out", 64);
  SegmentRuntime segment = firewall_segment_with_live_args(in, out, stats);
  std::string refused_reason;
  std::atomic<bool> may_finish{false};  // holds the build back, so that batches run while it is under way
  segment.live->build = [&](size_t, uint32_t generation) {
    while (!may_finish.load()) std::this_thread::yield();
    if (generation == 2) throw std::runtime_error("no memory for its rules");
    return testing::make_nf("firewall", {{"default", "deny"}});
  };
  segment.live->note_refusal = [&](size_t, uint32_t, const std::string& reason) { refused_reason = reason; };
  auto burst = [&](int packets) {
    std::vector<rte_mbuf*> frames;
    for (int i = 0; i < packets; i++) frames.push_back(testing::make_frame(i));
    ASSERT_EQ(rte_ring_enqueue_burst(in, reinterpret_cast<void**>(frames.data()), packets, nullptr),
              static_cast<unsigned>(packets));
  };
  auto raise = [&](uint32_t generation) {
    flag_store(stats.nf_control[2].args_wanted, generation);
    stats.nf_control[2].segment_changes++;
  };
  auto drain_out = [&] {
    rte_mbuf* taken[64];
    unsigned n = rte_ring_dequeue_burst(out, reinterpret_cast<void**>(taken), 64, nullptr);
    rte_pktmbuf_free_bulk(taken, n);
    return n;
  };
  // Batches until `done` (the build's outcome is seen), each batch empty: bounded by time, not by this host's speed.
  auto until = [&](auto done) {
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!done() && std::chrono::steady_clock::now() < deadline) run_segment_once(segment, stats, 32);
    return done();
  };

  raise(1);
  burst(16);
  EXPECT_EQ(run_segment_once(segment, stats, 32), 16);  // the build is under way: the old rules carry these
  EXPECT_EQ(drain_out(), 16u);
  EXPECT_EQ(stats.nf_control[2].args_running, 0u);
  may_finish = true;
  ASSERT_TRUE(until([&] { return flag_load(stats.nf_control[2].args_running) == 1u; }));
  burst(16);
  EXPECT_EQ(run_segment_once(segment, stats, 32), 16);
  EXPECT_EQ(stats.nfs[2].packets_dropped, 16u);  // all denied by the new rules, none by the old
  EXPECT_GT(stats.nf_control[2].args_build_cycles, 0u);

  raise(2);  // cannot be built: refused, the deny-all instance keeps running
  ASSERT_TRUE(until([&] { return flag_load(stats.nf_control[2].args_refused) == 2u; }));
  EXPECT_EQ(stats.nf_control[2].args_running, 1u);
  EXPECT_EQ(refused_reason, "no memory for its rules");
  burst(8);
  EXPECT_EQ(run_segment_once(segment, stats, 32), 8);
  EXPECT_EQ(stats.nfs[2].packets_dropped, 24u);
  EXPECT_EQ(segment.live->retired.size(), 1u);  // the allow-all instance, kept, never run again
  // What it counted, taken at the swap: the 16 packets it carried while the new rules were built, all allowed.
  ASSERT_EQ(segment.live->retired_reports.size(), 1u);
  EXPECT_EQ(segment.live->retired_reports[0].first, 0u);
  EXPECT_EQ(segment.live->retired_reports[0].second.value("allowed", -1), 16);
  EXPECT_EQ(segment.nfs[0]->report().value("denied", -1), 24);  // the deny-all instance: every packet since

  EXPECT_EQ(drain_out(), 0u);
  EXPECT_EQ(rte_mempool_in_use_count(testing::test_pool()), 0u);
  rte_ring_free(in);
  rte_ring_free(out);
}

// A build runs on the build core under SCHED_IDLE (the control core's loop naps for it); one still unfinished a
// second later is given the default policy at nice 19, since SCHED_IDLE gets nothing beside another busy task there.
TEST(WorkerLoop, ABuildRunsIdleOnTheBuildCoreAndIsRaisedWhenItTakesLong) {
  static StatsZone stats{};
  rte_ring* in = make_ring("idle_in", 64);
  rte_ring* out = make_ring("idle_out", 64);
  SegmentRuntime segment = firewall_segment_with_live_args(in, out, stats);
  cpu_set_t allowed;
  ASSERT_EQ(sched_getaffinity(0, sizeof allowed, &allowed), 0);
  int build_core = 0;
  while (!CPU_ISSET(build_core, &allowed)) build_core++;
  segment.live->build_core = build_core;
  std::atomic<int> policy_at_start{-1}, core{-1}, policy_at_end{-1}, nice_at_end{-100};
  segment.live->build = [&](size_t, uint32_t) {
    policy_at_start = sched_getscheduler(0);
    core = sched_getcpu();
    // Waits to be raised, as a build that SCHED_IDLE starves would (bounded: the test's own deadline is 10 s).
    auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(8);
    while (sched_getscheduler(0) != SCHED_OTHER && std::chrono::steady_clock::now() < deadline)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    policy_at_end = sched_getscheduler(0);
    nice_at_end = getpriority(PRIO_PROCESS, static_cast<id_t>(gettid()));
    return testing::make_nf("firewall", {{"default", "deny"}});
  };
  segment.live->note_refusal = [](size_t, uint32_t, const std::string&) {};
  flag_store(stats.nf_control[2].args_wanted, 1u);
  stats.nf_control[2].segment_changes++;
  auto begin = std::chrono::steady_clock::now();
  auto deadline = begin + std::chrono::seconds(10);
  while (flag_load(stats.nf_control[2].args_running) != 1u && std::chrono::steady_clock::now() < deadline) {
    run_segment_once(segment, stats, 32);
    std::this_thread::sleep_for(std::chrono::milliseconds(1));  // batches of an idle NF: nothing else on the core
  }
  ASSERT_EQ(flag_load(stats.nf_control[2].args_running), 1u);
  EXPECT_EQ(policy_at_start, SCHED_IDLE);
  EXPECT_EQ(core, build_core);
  EXPECT_EQ(policy_at_end, SCHED_OTHER);
  EXPECT_EQ(nice_at_end, 19);
  EXPECT_GE(std::chrono::steady_clock::now() - begin, std::chrono::milliseconds(1000));  // not raised before 1 s
  rte_ring_free(in);
  rte_ring_free(out);
}

}  // namespace
}  // namespace tandem
