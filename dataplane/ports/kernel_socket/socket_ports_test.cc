// Tests of the kernel-I/O ports over a real packet socket: the loopback interface of a network namespace of the
// test's own (root only; skipped otherwise). Partial batches, never blocking, records kept, one or many per call.
#include "socket_ports.h"

#include <net/if.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include "contract/wire_meta.h"
#include "dataplane/packets/packet_test_support.h"

namespace tandem {
namespace {

// A fresh network namespace with its loopback up: nothing else sends there.
bool private_loopback() {
  static bool ready = [] {
    if (unshare(CLONE_NEWNET) != 0) return false;
    int fd = socket(AF_INET, SOCK_DGRAM, 0);
    ifreq request{};
    strcpy(request.ifr_name, "lo");
    bool up =
        ioctl(fd, SIOCGIFFLAGS, &request) == 0 && (request.ifr_flags |= IFF_UP, ioctl(fd, SIOCSIFFLAGS, &request) == 0);
    close(fd);
    return up;
  }();
  return ready;
}

std::vector<rte_mbuf*> frames(int count, uint64_t first_seq) {
  std::vector<rte_mbuf*> out;
  for (int i = 0; i < count; i++) {
    rte_mbuf* m = testing::make_frame(static_cast<uint32_t>(i), 64);
    meta_of(m)->seq = first_seq + static_cast<uint64_t>(i);
    stamp_hop(m, 4);
    out.push_back(m);
  }
  return out;
}

// Takes until `want` packets came or a second passed (the kernel delivers on loopback within the send call).
uint16_t take(SocketIngress& ingress, rte_mbuf** into, uint16_t want, uint16_t per_call) {
  uint16_t got = 0;
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  while (got < want && std::chrono::steady_clock::now() < deadline)
    got += ingress.rx_burst(into + got, std::min<uint16_t>(per_call, want - got));
  return got;
}

// The fewest nanoseconds one call of `call` took of 50: preemption only adds, so the minimum is the call's own cost.
template <typename Call>
double fastest_ns(Call call) {
  double fewest = 1e18;
  for (int i = 0; i < 50; i++) {
    auto start = std::chrono::steady_clock::now();
    call();
    fewest =
        std::min(fewest, std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count());
  }
  return fewest;
}

void round_trip(uint16_t mux) {
  if (!private_loopback()) GTEST_SKIP() << "needs root: a network namespace of its own and a packet socket";
  static StatsZone stats{};
  RingCounters& counters = stats.rings[mux];
  uint64_t journal = 0;
  SocketEgress egress(std::make_unique<PacketSocket>("lo", PacketSocket::Direction::Send), mux, "", counters, journal);
  SocketIngress ingress(std::make_unique<PacketSocket>("lo", PacketSocket::Direction::Receive, 1024),
                        testing::test_pool(), mux, counters);

  rte_mbuf* got[64];
  // Nothing there: it returns at once (EAGAIN), never waits. The fastest of many empty receives against the fastest
  // of as many poll() calls with a zero timeout (waiting()), one non-blocking system call each: a receive that
  // waited at all (a timeout, a poll for frames) would take tens of microseconds, far over 10 such calls.
  EXPECT_EQ(ingress.rx_burst(got, 64), 0);
  EXPECT_EQ(ingress.waiting(), 0u);
  EXPECT_LT(fastest_ns([&] { EXPECT_EQ(ingress.rx_burst(got, 64), 0); }),
            10 * fastest_ns([&] { EXPECT_EQ(ingress.waiting(), 0u); }));

  std::vector<rte_mbuf*> sent = frames(10, 1000);
  EXPECT_EQ(egress.tx_burst(sent.data(), 10, nullptr), 10);
  EXPECT_EQ(counters.enqueued, 10u);
  EXPECT_EQ(ingress.waiting(), 1u);
  // A partial batch: three asked for, three given, the rest left in the socket.
  ASSERT_EQ(take(ingress, got, 3, 3), 3);
  // What it handed on is the NF's from then on, no receive buffer (one frame a call: refilled after each), and the
  // change is told whole: a process killed now would leave counts that add up.
  EXPECT_EQ(counters.receive_buffers, mux > 1 ? mux - 3u : mux);
  EXPECT_EQ(counters.receive_buffers_changing, 0u);
  ASSERT_EQ(take(ingress, got + 3, 7, 64), 7);
  EXPECT_EQ(ingress.rx_burst(got + 10, 64), 0);
  for (int i = 0; i < 10; i++) {
    EXPECT_EQ(meta_of(got[i])->seq, 1000u + static_cast<uint64_t>(i));  // in order, records restored
    ASSERT_EQ(meta_of(got[i])->hop_count, 1);
    EXPECT_EQ(meta_of(got[i])->hops[0], 4);
    EXPECT_EQ(rte_pktmbuf_data_len(got[i]), 60);  // the trailer is gone again
  }
  EXPECT_EQ(counters.dequeued, 10u);
  EXPECT_EQ(counters.receive_buffers, mux);
  rte_pktmbuf_free_bulk(got, 10);

  ingress.finish();
  EXPECT_EQ(counters.socket_counted, 1u);
  EXPECT_EQ(counters.socket_arrived, 10u);
  EXPECT_EQ(counters.socket_dropped, 0u);
  EXPECT_EQ(counters.receive_buffers, 0u);
  EXPECT_EQ(rte_mempool_in_use_count(testing::test_pool()), 0u);  // every mbuf back: the sent, the taken, the buffers
}

TEST(SocketPorts, OneFramePerSystemCall) { round_trip(1); }
TEST(SocketPorts, ManyFramesPerSystemCall) { round_trip(4); }

TEST(SocketPorts, AForeignFrameIsCountedAndFreedNotTaken) {
  if (!private_loopback()) GTEST_SKIP() << "needs root";
  static StatsZone stats{};
  SocketIngress ingress(std::make_unique<PacketSocket>("lo", PacketSocket::Direction::Receive, 64),
                        testing::test_pool(), 8, stats.rings[0]);
  PacketSocket raw("lo", PacketSocket::Direction::Send);
  uint8_t frame[60] = {};
  ASSERT_EQ(send(raw.fd(), frame, sizeof(frame), 0), 60);
  rte_mbuf* got[8];
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  while (stats.rings[0].foreign == 0 && std::chrono::steady_clock::now() < deadline)
    EXPECT_EQ(ingress.rx_burst(got, 8), 0);
  EXPECT_EQ(stats.rings[0].foreign, 1u);
  EXPECT_EQ(stats.rings[0].dequeued, 0u);
  ingress.finish();
  EXPECT_EQ(rte_mempool_in_use_count(testing::test_pool()), 0u);
}

TEST(SocketPorts, AnInterfaceThatIsNotThereIsNamed) {
  try {
    PacketSocket socket("tandem-none0", PacketSocket::Direction::Receive);
    FAIL() << "opened a socket on an interface that does not exist";
  } catch (const std::runtime_error& e) {
    EXPECT_NE(std::string(e.what()).find("tandem-none0"), std::string::npos);
  }
}

}  // namespace
}  // namespace tandem
