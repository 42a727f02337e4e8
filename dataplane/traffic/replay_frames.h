// A capture to replay as a chain's traffic: every frame of a pcap file, read once by libpcap before traffic starts.
#pragma once

#include <string>

#include "dataplane/packets/frame_list.h"

namespace tandem {

// Every packet of the (Ethernet) pcap at `path`, in order; frames shorter than the Ethernet minimum are padded
// with zeros. Throws std::runtime_error naming the file when libpcap cannot read it or a frame cannot be sent.
FrameList replay_frames(const std::string& path);

}  // namespace tandem
