// Reading a pcap file's frames with libpcap for replay.
#include "replay_frames.h"

#include <pcap/pcap.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <stdexcept>

namespace tandem {

FrameList replay_frames(const std::string& path) {
  FrameList frames;
  char error[PCAP_ERRBUF_SIZE] = "";
  std::unique_ptr<pcap_t, decltype(&pcap_close)> capture(pcap_open_offline(path.c_str(), error), pcap_close);
  if (!capture) throw std::runtime_error("cannot replay " + path + ": " + error);
  if (pcap_datalink(capture.get()) != DLT_EN10MB)
    throw std::runtime_error("cannot replay " + path + ": not an Ethernet capture");
  pcap_pkthdr* header = nullptr;
  const u_char* data = nullptr;
  int status;
  while ((status = pcap_next_ex(capture.get(), &header, &data)) == 1) {
    size_t length = std::max<size_t>(header->caplen, kMinFrame - kFcsBytes);
    if (header->caplen != header->len || length + kFcsBytes > kMaxFrame)
      throw std::runtime_error("cannot replay " + path + ": packet " + std::to_string(frames.count()) +
                               " is cut short or too long");
    memcpy(frames.append(static_cast<uint16_t>(length + kFcsBytes)), data, header->caplen);
  }
  if (status == PCAP_ERROR) throw std::runtime_error("cannot replay " + path + ": " + pcap_geterr(capture.get()));
  if (frames.empty()) throw std::runtime_error("cannot replay " + path + ": it holds no packets");
  return frames;
}

}  // namespace tandem
