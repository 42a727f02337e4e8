// The arithmetic of a kernel link's end-of-run count.
#include "kernel_link_count.h"

#include <algorithm>

namespace tandem {

namespace {

// What reached the live receiver's socket of the run's frames (its foreign frames left out).
uint64_t arrived_of_the_run(const RingCounters& link, const ReceiverRestarts& restarts) {
  uint64_t arrived = counter_read(link.socket_arrived);
  uint64_t foreign = counter_read(link.foreign) - std::min(counter_read(link.foreign), restarts.foreign);
  return arrived - std::min(arrived, foreign);
}

}  // namespace

KernelLinkCount count_kernel_link(const RingCounters& link, bool socket_receiver, const ReceiverRestarts& restarts) {
  KernelLinkCount count;
  uint64_t sent = counter_read(link.enqueued), taken = counter_read(link.dequeued);
  if (taken > sent) {
    count.exact = false;
    count.inexact_reason = "its receiver took more frames than were sent into it";
    return count;
  }
  if (!socket_receiver) {
    count.lost_before_socket = sent - taken;
    return count;
  }
  if (__atomic_load_n(&link.socket_counted, __ATOMIC_ACQUIRE) == 0) {
    // The receiving NF ended without counting its socket (killed): the frames queued in it went with it.
    count.lost_with_receiver = sent - taken;
    return count;
  }
  // Foreign frames (not the run's packets) reached the socket too; the receiver took and freed them. A restarted
  // receiver's socket saw only what came after its start: the dead ones' takes are set apart.
  uint64_t arrived = arrived_of_the_run(link, restarts);
  uint64_t full = counter_read(link.socket_dropped);
  sent -= restarts.taken;  // at most taken: what the dead took is counted in `taken`, which only grows
  taken -= restarts.taken;
  // Every frame that arrived was taken, dropped or is still queued; none arrives that was not sent.
  if (arrived > sent || full + taken > arrived) {
    count.exact = false;
    count.inexact_reason = "its socket's counts disagree with its ends' (arrived " + std::to_string(arrived) +
                           ", sent " + std::to_string(sent) + ", taken " + std::to_string(taken) + ", dropped " +
                           std::to_string(full) + ")";
    count.lost_before_socket = sent - taken;
    return count;
  }
  count.socket_full = full;
  count.in_socket = arrived - full - taken;
  (restarts.restarted ? count.lost_with_receiver : count.lost_before_socket) = sent - arrived;
  return count;
}

uint64_t sends_not_counted(const RingCounters& link, const ReceiverRestarts& restarts) {
  uint64_t reached = counter_read(link.dequeued);
  if (__atomic_load_n(&link.socket_counted, __ATOMIC_ACQUIRE) != 0)
    reached = std::max(reached, restarts.taken + arrived_of_the_run(link, restarts));
  uint64_t sent = counter_read(link.enqueued);
  return reached > sent ? reached - sent : 0;
}

json KernelLinkCount::to_json() const {
  json out = {{"in_socket_at_stop", in_socket},
              {"dropped_socket_full", socket_full},
              {"lost_before_socket", lost_before_socket}};
  if (lost_with_receiver) out["lost_with_receiver"] = lost_with_receiver;
  if (!exact) out["inexact"] = inexact_reason;
  return out;
}

}  // namespace tandem
