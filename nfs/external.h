// Helpers of the `external` NF type, an unmodified third-party DPDK application (dpdk-testpmd) as a chain link.
#pragma once

#include <string>

namespace tandem {

// The executable `binary` names: itself if it contains a '/', else the first match on PATH; "" if none.
std::string resolve_executable(const std::string& binary);

}  // namespace tandem
