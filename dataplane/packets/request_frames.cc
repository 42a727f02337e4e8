// Building the per-flow HTTP request frames once, before traffic starts.
#include "request_frames.h"

#include <algorithm>
#include <cstring>
#include <stdexcept>

#include <netinet/in.h>
#include <rte_ether.h>
#include <rte_ip.h>
#include <rte_tcp.h>

namespace tandem {

std::string http_request(const std::string& url) {
  return "GET " + url + " HTTP/1.1\r\nHost: tandem.test\r\nUser-Agent: tandem-generator\r\nAccept: */*\r\n\r\n";
}

FrameList request_frames(const std::vector<std::string>& urls, uint16_t chain, FrameShape shape) {
  shape.protocol = IPPROTO_TCP;
  const size_t kHeaders = shape.header_bytes();
  FrameList frames;
  for (uint32_t flow = 0; flow < urls.size(); flow++) {
    std::string request = urls[flow].empty() ? std::string() : http_request(urls[flow]);  // "": a bare segment
    size_t size = std::max<size_t>(kMinFrame, kHeaders + request.size() + kFcsBytes);
    if (size > kMaxFrame) throw std::invalid_argument("the request for " + urls[flow] + " does not fit one frame");
    uint8_t* frame = frames.append(static_cast<uint16_t>(size));
    memcpy(frame + kHeaders, request.data(), request.size());
    build_frame(frame, static_cast<uint16_t>(size), shape, flow_address(flow, chain));
  }
  return frames;
}

}  // namespace tandem
