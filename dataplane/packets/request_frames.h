// HTTP traffic's ready frames: one per flow, a TCP segment carrying that flow's request, copied by the generator.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "frame_builder.h"
#include "frame_list.h"

namespace tandem {

// The request a flow sends for `url`: a GET with a Host header, as a client's first segment.
std::string http_request(const std::string& url);

// Frame f is flow f of chain `chain` asking for urls[f] (an empty URL: a bare segment, no request), over IPv4 or
// IPv6, tagged or not, as `shape` says (its protocol is TCP's whatever it holds); throws std::invalid_argument if a
// request does not fit a frame.
FrameList request_frames(const std::vector<std::string>& urls, uint16_t chain, FrameShape shape = {});

}  // namespace tandem
