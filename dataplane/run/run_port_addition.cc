// A port added to a running service: the control plane checked it as a spec's `ports` entry (and refuses devices
// that read or make files: a request may not make Tandem read a file for the requester); the manager opens its
// device on a thread of its own (a packet socket takes tens of ms to open, in which the loop would move no packet:
// full rings dropped packets under coop when it opened in the loop, bench/live_changes.py) and the port joins the
// running ones between two turns of the loop once open. Nothing takes from it or sends to it until a chain added
// after it names it: what the device receives meanwhile stays in its receive queue, or the device drops it and counts
// it (its report's device counters). One port is opened or closed at a time (run_port_removal.cc closes one).
#include <rte_cycles.h>

#include <future>

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
  if (port_work_)
    return answer_change(
        refused(command, "request", "port '" + port_work_->name + "' is being opened or closed: ask again once it is"));
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
  unsigned needed = mbuf_pool_size(next, chain_removed_, ports_removed_) - kServiceSpareMbufs;
  if (needed > pool_->size)
    return answer_change(refused(command, "port",
                                 "the service's packet pool (" + std::to_string(pool_->size) +
                                     " mbufs) has no room for its queues (" + std::to_string(needed) +
                                     " needed): restart with it"));
  // The thread touches only the new device and the pool (lock-free: DPDK's lf_stack), which the loop's use of the
  // other ports never waits on.
  rte_mempool* pool = pool_;
  PortWork work;
  work.command = command;
  work.name = port.name;
  work.requested_s = now_s;
  work.begin_tsc = rte_get_tsc_cycles();
  work.ring_drops_before = ring_drops_each();
  work.config = port;
  work.opened = std::async(std::launch::async, [port, pool] { return std::make_unique<EthdevPort>(port, pool); });
  port_work_ = std::move(work);
}

void Run::port_opened(double now_s) {
  PortWork work = std::move(*port_work_);
  port_work_.reset();
  std::unique_ptr<EthdevPort> opened;
  try {
    opened = work.opened.get();
  } catch (const PortOpenError& e) {
    return answer_change(refused(work.command, e.field, e.reason));
  } catch (const std::exception& e) {
    return answer_change(refused(work.command, "port", e.what()));
  }
  chain_ends_->adopt_added_port(std::move(opened));
  d_.ports.push_back(work.config);
  // The workers' copy of the deployment names it too: a chain added later refers to it by index.
  original_["ports"].push_back(work.command["port"]);
  json reply = port_work_reply(work, now_s);
  reply["open_us"] = static_cast<double>(rte_get_tsc_cycles() - work.begin_tsc) / hz_ * 1e6;
  answer_applied(reply, work.begin_tsc);
}

json Run::port_work_reply(const PortWork& work, double now_s) const {
  return {{"event", "change"},
          {"id", work.command.value("id", json())},
          {"op", work.command.value("op", json())},
          {"port", work.name},
          {"state", "applied"},
          {"t_requested", work.requested_s},
          {"t_done", now_s},
          {"ring_drops_during", ring_drops_since(work.ring_drops_before)},
          {"ring_drops_by_ring", ring_drops_by_ring_since(work.ring_drops_before)}};
}

void Run::follow_port_work(double now_s, bool wait) {
  if (!port_work_) return;
  bool opening = port_work_->opened.valid();
  auto ready = [&](auto& future) {
    return wait || future.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
  };
  if (opening && ready(port_work_->opened))
    port_opened(now_s);
  else if (!opening && ready(port_work_->closed))
    port_closed(now_s);
}

}  // namespace tandem
