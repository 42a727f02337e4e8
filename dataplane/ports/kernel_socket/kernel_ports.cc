// Entering the NF's namespace and opening its sockets on the interfaces the deployment names.
#include "kernel_ports.h"

#include <fcntl.h>
#include <sched.h>
#include <unistd.h>

#include <rte_cycles.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

#include "socket_ports.h"

namespace tandem {

void enter_network_namespace(const std::string& netns) {
  std::string path = "/run/netns/" + netns;
  int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw std::runtime_error("network namespace " + netns + ": " + strerror(errno));
  int rc = setns(fd, CLONE_NEWNET);
  int error = errno;
  close(fd);
  if (rc != 0) throw std::runtime_error("cannot enter network namespace " + netns + ": " + strerror(error));
}

namespace {

const NfConfig& only_nf(const Deployment& deployment, const Segment& segment) {
  if (segment.nfs.size() != 1 || segment.in_rings.size() != 1 || segment.out_rings.size() != 1)
    throw std::logic_error("a kernel-I/O worker runs one NF with one link in and one out");
  return deployment.nfs[segment.nfs.front()];
}

}  // namespace

std::unique_ptr<IngressPort> open_kernel_ingress(const Deployment& deployment, const Segment& segment,
                                                 rte_mempool* pool, StatsZone& stats) {
  const NfConfig& nf = only_nf(deployment, segment);
  int link = segment.in_rings.front();
  auto socket = std::make_unique<PacketSocket>(nf.in_interface, PacketSocket::Direction::Receive,
                                               deployment.rings[link].capacity);
  return std::make_unique<SocketIngress>(std::move(socket), pool, deployment.chains[nf.chain].io.mux,
                                         stats.rings[link]);
}

std::unique_ptr<EgressPort> open_kernel_egress(const Deployment& deployment, const Segment& segment, StatsZone& stats) {
  const NfConfig& nf = only_nf(deployment, segment);
  int link = segment.out_rings.front();
  auto socket = std::make_unique<PacketSocket>(nf.out_interface, PacketSocket::Direction::Send);
  return std::make_unique<SocketEgress>(std::move(socket), deployment.chains[nf.chain].io.mux, nf.out_next_hop,
                                        stats.rings[link], stats.nfs[nf.index].mbufs_being_freed);
}

namespace {

// How long a worker waits at the end for the manager to say every sender has stopped: past it, the counts are
// taken anyway, and a frame sent later shows as lost on its link (the accounting says so).
constexpr uint64_t kQuietWaitMs = 1000;

}  // namespace

void finish_socket_inputs(const std::vector<IngressPort*>& inputs, StatsZone& stats) {
  std::vector<SocketIngress*> sockets;
  for (IngressPort* input : inputs)
    if (auto* socket = dynamic_cast<SocketIngress*>(input)) sockets.push_back(socket);
  if (sockets.empty()) return;
  uint64_t deadline = rte_get_tsc_cycles() + rte_get_tsc_hz() / 1000 * kQuietWaitMs;
  while (!flag_load(stats.kernel_links_quiet) && rte_get_tsc_cycles() < deadline) usleep(200);
  for (SocketIngress* socket : sockets) socket->finish();
}

}  // namespace tandem
