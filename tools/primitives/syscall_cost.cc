// Timing loops of system calls: the null call, and packet-socket sends and receives on the loopback.
#include "syscall_cost.h"

#include <sys/socket.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cstring>
#include <memory>
#include <vector>

#include "clock.h"
#include "dataplane/ports/kernel_socket/packet_socket.h"

namespace tandem {

namespace {

constexpr int kCalls = 20000;
constexpr int kBatch = 32;

}  // namespace

std::map<std::string, Measurement> syscall_costs(int repetitions) {
  std::map<std::string, Measurement> out;
  for (int r = 0; r < repetitions; r++) {
    uint64_t start = now_ns();
    for (int i = 0; i < kCalls; i++) syscall(SYS_getppid);
    out["getppid"].samples_ns.push_back(static_cast<double>(now_ns() - start) / kCalls);
  }
  std::unique_ptr<PacketSocket> sender, receiver;
  try {
    receiver = std::make_unique<PacketSocket>("lo", PacketSocket::Direction::Receive, kCalls * 2);
    sender = std::make_unique<PacketSocket>("lo", PacketSocket::Direction::Send);
  } catch (const std::exception& e) {
    for (const char* name : {"sendto_packet", "recvfrom_packet", "sendmmsg_32_per_frame"})
      out[name] = unsupported(e.what());
    return out;
  }
  uint8_t frame[60] = {};
  memset(frame, 0xff, 6);  // broadcast: every receiver on the interface takes it
  frame[12] = 0x88;        // an experimental EtherType: no protocol of the kernel's handles it
  frame[13] = 0xb5;
  uint8_t buffer[2048];
  for (int r = 0; r < repetitions; r++) {
    uint64_t start = now_ns();
    for (int i = 0; i < kCalls; i++) sendto(sender->fd(), frame, sizeof(frame), 0, nullptr, 0);
    out["sendto_packet"].samples_ns.push_back(static_cast<double>(now_ns() - start) / kCalls);
    int received = 0;
    start = now_ns();
    while (recvfrom(receiver->fd(), buffer, sizeof(buffer), MSG_DONTWAIT, nullptr, nullptr) > 0) received++;
    if (received > 0) out["recvfrom_packet"].samples_ns.push_back(static_cast<double>(now_ns() - start) / received);

    std::vector<mmsghdr> messages(kBatch);
    std::vector<iovec> vectors(kBatch, iovec{frame, sizeof(frame)});
    for (int i = 0; i < kBatch; i++) {
      messages[i] = {};
      messages[i].msg_hdr.msg_iov = &vectors[i];
      messages[i].msg_hdr.msg_iovlen = 1;
    }
    start = now_ns();
    int sent = 0;
    for (int i = 0; i < kCalls / kBatch; i++) sent += std::max(0, sendmmsg(sender->fd(), messages.data(), kBatch, 0));
    if (sent > 0) out["sendmmsg_32_per_frame"].samples_ns.push_back(static_cast<double>(now_ns() - start) / sent);
    while (recvfrom(receiver->fd(), buffer, sizeof(buffer), MSG_DONTWAIT, nullptr, nullptr) > 0) {
    }
  }
  return out;
}

}  // namespace tandem
