// A port added to a running service: the control plane checked it as a spec's `ports` entry (and refuses devices
// that read or make files: a request may not make Tandem read a file for the requester); the manager opens its
// device beside the running ports, between two turns of the loop. Nothing takes from it or sends to it until a chain
// added after it names it: what the device receives meanwhile stays in its receive queue, or the device drops it
// and counts it (its report's device counters).
#include <rte_cycles.h>

#include "dataplane/ports/ethdev/ethdev_port.h"
#include "run.h"

namespace tandem {

namespace {

json refused(const json& command, const std::string& field, const std::string& message) {
  return addition_refusal(command, "port", field, message);
}

}  // namespace

void Run::add_port(const json& command, double now_s) {
  if (!d_.service || !chain_ends_)
    return answer_change(refused(command, "request", "only a service (./tandem serve) takes new ports"));
  if (!command.contains("port") || !command["port"].is_object())
    return answer_change(refused(command, "port", "the port is missing"));
  PortConfig port;
  try {
    port = port_from_json(command["port"], static_cast<int>(d_.ports.size()));
  } catch (const std::exception& e) {
    return answer_change(refused(command, "port", e.what()));
  }
  for (const PortConfig& other : d_.ports)
    if (other.name == port.name)
      return answer_change(refused(command, "port.name", "a port named '" + port.name + "' is in the service"));
  // Its receive queue takes mbufs from the pool: the room kept for additions must hold them beside the chains'.
  Deployment next = d_;
  next.ports.push_back(port);
  unsigned needed = mbuf_pool_size(next) - kServiceSpareMbufs;
  if (needed > pool_->size)
    return answer_change(refused(command, "port",
                                 "the service's packet pool (" + std::to_string(pool_->size) +
                                     " mbufs) has no room for its queues (" + std::to_string(needed) +
                                     " needed): restart with it"));
  uint64_t begin = rte_get_tsc_cycles();
  // The loop waits while the device opens (milliseconds for a packet socket): the rings may fill meanwhile.
  uint64_t ring_drops_before = ring_drops_now();
  try {
    chain_ends_->open_added_port(port);
  } catch (const PortOpenError& e) {
    return answer_change(refused(command, e.field, e.reason));
  }
  d_.ports.push_back(port);
  // The workers' copy of the deployment names it too: a chain added later refers to it by index.
  original_["ports"].push_back(command["port"]);
  json reply = {{"event", "change"},
                {"id", command.value("id", json())},
                {"op", "add_port"},
                {"port", port.name},
                {"state", "applied"},
                {"t_requested", now_s},
                {"t_done", now_s},
                {"open_us", static_cast<double>(rte_get_tsc_cycles() - begin) / hz_ * 1e6},
                {"ring_drops_during", ring_drops_now() - ring_drops_before}};
  answer_applied(reply, begin);
}

}  // namespace tandem
