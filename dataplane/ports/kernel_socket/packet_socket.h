// An AF_PACKET socket bound to one network interface: the kernel-I/O NF's end of a veth.
#pragma once

#include <cstdint>
#include <string>

namespace tandem {

class PacketSocket {
 public:
  enum class Direction { Receive, Send };
  // Opens a non-blocking socket on `interface` (in the calling process's network namespace). A receiving socket
  // takes every frame that arrives on the interface and none that leaves it, with a receive buffer of about
  // `queue_packets` small frames; a sending socket receives nothing. Throws std::runtime_error naming the interface.
  PacketSocket(const std::string& interface, Direction direction, uint32_t queue_packets = 0);
  ~PacketSocket();
  PacketSocket(const PacketSocket&) = delete;
  PacketSocket& operator=(const PacketSocket&) = delete;

  int fd() const { return fd_; }
  const std::string& interface() const { return interface_; }

  // Frames that reached the socket (queued or dropped) and those it dropped because its queue was full, since it
  // was opened. The kernel resets PACKET_STATISTICS at every read: the socket keeps the sums.
  struct Statistics {
    uint64_t arrived = 0;
    uint64_t dropped = 0;
  };
  Statistics statistics();

 private:
  int fd_ = -1;
  std::string interface_;
  Statistics totals_;
};

}  // namespace tandem
