// The cost of system calls (SCC Table 2): a null one (getppid) and the network I/O calls a kernel-I/O NF makes,
// sendto and recvfrom of a 64 B frame on an AF_PACKET socket, and sendmmsg of 32 frames per frame.
#pragma once

#include <map>
#include <string>

#include "measurement.h"

namespace tandem {

// Run in a network namespace of the caller's own (the frames go out on its loopback, to no one but the receiving
// socket).
std::map<std::string, Measurement> syscall_costs(int repetitions);

}  // namespace tandem
