// Where a kernel link's packets are at the end of a run: delivered to its receiver, still in the receiving
// socket's queue (in flight), dropped by that socket (queue full), or lost before it (the veth or the switch).
#pragma once

#include <cstdint>
#include <string>

#include "contract/arg_schema.h"  // json
#include "contract/shm_layout.h"

namespace tandem {

struct KernelLinkCount {
  uint64_t in_socket = 0;           // in flight: in the receiver's queue when it stopped
  uint64_t socket_full = 0;         // dropped by the receiving socket, its queue full
  uint64_t lost_before_socket = 0;  // sent, never reached the socket
  // Sent and not taken by a receiving NF that ended without counting its socket (it was killed): queued in the
  // socket or lost before it, they went with it.
  uint64_t lost_with_receiver = 0;
  bool exact = true;
  std::string inexact_reason;
  uint64_t dropped() const { return socket_full + lost_before_socket + lost_with_receiver; }
  json to_json() const;
};

// A link whose receiving NF was restarted: its counters, cumulative across the receiver's processes, as they were
// when its last dead process was reaped (the manager then zeroed the socket's counts, which the next process's
// socket counts from its start). What the dead took is the run's; what its socket held or dropped went with it.
struct ReceiverRestarts {
  bool restarted = false;
  uint64_t taken = 0;    // dequeued by the dead processes
  uint64_t foreign = 0;  // foreign frames they freed
};

// Frames a killed sender put into the link and did not live to count: it died after the kernel took them and before
// it counted them (and freed their mbufs). The receiver counted at least as many reaching its socket, or taking them.
uint64_t sends_not_counted(const RingCounters& link, const ReceiverRestarts& restarts = {});

// From the link's counters once its ends stopped. `socket_receiver`: an NF's packet socket, which counted what
// reached it (socket_arrived, socket_dropped); otherwise the sink's DPDK port, drained to the end, whose kernel
// ring the manager cannot count: what it never delivered counts as lost before it. With `restarts`, what neither a
// dead receiver took nor the live one's socket saw arrive is lost with a receiver (it cannot be told from a frame lost
// before the socket).
KernelLinkCount count_kernel_link(const RingCounters& link, bool socket_receiver,
                                  const ReceiverRestarts& restarts = {});

}  // namespace tandem
