// Opening and binding the AF_PACKET socket, and summing its statistics.
#include "packet_socket.h"

#include <arpa/inet.h>
#include <linux/if_ether.h>
#include <linux/if_packet.h>
#include <net/if.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <stdexcept>

namespace tandem {

namespace {

// What one small frame takes of a socket's receive buffer (the skb's truesize: its data and bookkeeping).
constexpr uint32_t kBufferBytesPerSmallFrame = 1024;

[[noreturn]] void fail(const std::string& interface, const std::string& what) {
  throw std::runtime_error("packet socket on " + interface + ": " + what + ": " + strerror(errno));
}

}  // namespace

PacketSocket::PacketSocket(const std::string& interface, Direction direction, uint32_t queue_packets)
    : interface_(interface) {
  unsigned index = if_nametoindex(interface.c_str());
  if (index == 0) fail(interface, "no such interface in this network namespace");
  // Protocol 0 at creation: the socket takes no frame until it is bound, so none from another interface slips in.
  fd_ = socket(AF_PACKET, SOCK_RAW | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  if (fd_ < 0) fail(interface, "socket(AF_PACKET)");
  bool receive = direction == Direction::Receive;
  if (receive) {
    int one = 1;  // its own NF's frames leave on this interface in bridge mode: they are not input
    if (setsockopt(fd_, SOL_PACKET, PACKET_IGNORE_OUTGOING, &one, sizeof(one)) != 0)
      fail(interface, "PACKET_IGNORE_OUTGOING");
    if (queue_packets > 0) {
      int bytes = static_cast<int>(queue_packets * kBufferBytesPerSmallFrame / 2);  // the kernel doubles it
      if (setsockopt(fd_, SOL_SOCKET, SO_RCVBUFFORCE, &bytes, sizeof(bytes)) != 0) fail(interface, "SO_RCVBUFFORCE");
    }
  }
  sockaddr_ll address{};
  address.sll_family = AF_PACKET;
  address.sll_ifindex = static_cast<int>(index);
  address.sll_protocol = receive ? htons(ETH_P_ALL) : 0;  // a sending socket receives nothing
  if (bind(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) != 0) fail(interface, "bind");
}

PacketSocket::~PacketSocket() {
  if (fd_ >= 0) close(fd_);
}

PacketSocket::Statistics PacketSocket::statistics() {
  tpacket_stats since_last{};
  socklen_t length = sizeof(since_last);
  if (getsockopt(fd_, SOL_PACKET, PACKET_STATISTICS, &since_last, &length) == 0) {
    totals_.arrived += since_last.tp_packets;  // the kernel counts the dropped in tp_packets too
    totals_.dropped += since_last.tp_drops;
  }
  return totals_;
}

}  // namespace tandem
