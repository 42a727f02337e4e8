// The sink's capture: delivered packets written to a pcap file (libpcap), up to a limit, for Wireshark and tests.
#pragma once

#include <cstdint>
#include <string>

#include <rte_mbuf.h>

struct pcap;
struct pcap_dumper;

namespace tandem {

class PcapCapture {
 public:
  // Opens `path` for writing; throws std::runtime_error naming it when it cannot. `tsc_hz` dates the packets.
  PcapCapture(const std::string& path, uint64_t limit, double tsc_hz);
  ~PcapCapture();
  PcapCapture(const PcapCapture&) = delete;
  PcapCapture& operator=(const PcapCapture&) = delete;

  bool full() const { return written_ >= limit_; }
  // Writes the frame in `m` (without FCS), stamped with the wall-clock time of TSC `now_tsc`.
  void write(const rte_mbuf* m, uint64_t now_tsc);
  uint64_t written() const { return written_; }

 private:
  pcap* handle_ = nullptr;
  pcap_dumper* dumper_ = nullptr;
  uint64_t limit_, written_ = 0;
  double tsc_hz_;
  uint64_t start_tsc_;
  double start_wall_s_;
};

}  // namespace tandem
