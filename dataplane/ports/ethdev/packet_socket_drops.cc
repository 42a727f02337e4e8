// Finding this process's packet sockets on an interface (/proc/self/fd) and reading their drop counters.
#include "packet_socket_drops.h"

#include <linux/if_packet.h>
#include <net/if.h>
#include <sys/socket.h>

#include <cstdlib>
#include <filesystem>

namespace tandem {

std::optional<uint64_t> packet_socket_drops(const std::string& interface) {
  unsigned index = if_nametoindex(interface.c_str());
  if (index == 0) return std::nullopt;
  std::optional<uint64_t> drops;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc/self/fd", error)) {
    int fd = std::atoi(entry.path().filename().c_str());
    sockaddr_ll address{};
    socklen_t length = sizeof address;
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&address), &length) != 0 || address.sll_family != AF_PACKET ||
        static_cast<unsigned>(address.sll_ifindex) != index)
      continue;
    tpacket_stats stats{};
    socklen_t stats_length = sizeof stats;
    if (getsockopt(fd, SOL_PACKET, PACKET_STATISTICS, &stats, &stats_length) == 0)
      drops = drops.value_or(0) + stats.tp_drops;
  }
  return drops;
}

}  // namespace tandem
