// What the kernel dropped before a net_af_packet device saw it: frames its packet ring could not hold. DPDK's
// net_af_packet (22.11) does not report these (its imissed stays 0), so they are read from its socket here.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace tandem {

// Frames dropped since the last call by the kernel at this process's packet sockets bound to `interface`, from
// PACKET_STATISTICS (which the kernel resets as it is read); nullopt where no such socket is open.
std::optional<uint64_t> packet_socket_drops(const std::string& interface);

}  // namespace tandem
