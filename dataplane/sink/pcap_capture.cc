// Writing delivered packets to a pcap file with libpcap.
#include "pcap_capture.h"

#include <pcap/pcap.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <ctime>
#include <stdexcept>

#include <rte_cycles.h>

namespace tandem {

PcapCapture::PcapCapture(const std::string& path, uint64_t limit, double tsc_hz) : limit_(limit), tsc_hz_(tsc_hz) {
  handle_ = pcap_open_dead(DLT_EN10MB, 65535);
  if (handle_ == nullptr) throw std::runtime_error("libpcap could not make a capture handle");
  dumper_ = pcap_dump_open(handle_, path.c_str());
  if (dumper_ == nullptr) {
    std::string why = pcap_geterr(handle_);
    pcap_close(handle_);
    throw std::runtime_error("cannot write the capture " + path + ": " + why);
  }
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  start_tsc_ = rte_get_tsc_cycles();
  start_wall_s_ = static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

PcapCapture::~PcapCapture() {
  pcap_dump_close(dumper_);
  pcap_close(handle_);
}

void PcapCapture::write(const rte_mbuf* m, uint64_t now_tsc) {
  if (full()) return;
  double when = start_wall_s_ + static_cast<double>(now_tsc - start_tsc_) / tsc_hz_;
  pcap_pkthdr header{};
  double seconds = std::floor(when);
  header.ts.tv_sec = static_cast<time_t>(seconds);
  header.ts.tv_usec = static_cast<suseconds_t>((when - seconds) * 1e6);
  header.caplen = header.len = rte_pktmbuf_data_len(m);
  pcap_dump(reinterpret_cast<u_char*>(dumper_), &header, rte_pktmbuf_mtod(m, const u_char*));
  written_++;
}

}  // namespace tandem
