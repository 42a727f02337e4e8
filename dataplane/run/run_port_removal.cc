// A port removed from a running service: once no chain takes from it or sends to it (their removal drained them), its
// Rx stage stops, no other port passes frames to it, its counters are read, and its device is closed on a thread of
// its own while the loop goes on: the port's report stays in the results, marked removed. Its name stays taken, as a
// removed chain's does (the results name each once).
#include <algorithm>
#include <future>

#include <rte_cycles.h>

#include "run.h"

namespace tandem {

namespace {

json refused(const json& command, const std::string& message) { return removal_refusal(command, "port", message); }

}  // namespace

std::string Run::why_port_cannot_go(int port) const {
  if (ports_removed_.count(port)) return "the port was removed already";
  std::string users;
  for (const ChainConfig& chain : d_.chains) {
    if (chain.from_port != port && chain.to_port != port) continue;
    bool gone = chain_removed_[chain.index];
    for (const ChainRemoval& removal : removals_)
      if (removal.chain == chain.index) gone = false;  // still draining through it
    if (!gone) users += (users.empty() ? "" : ", ") + chain.name;
  }
  if (addition_) {
    const ChainConfig& added = addition_->next.chains.back();
    if (added.from_port == port || added.to_port == port) users += (users.empty() ? "" : ", ") + added.name;
  }
  if (!users.empty()) return "chains " + users + " take from it or send to it: remove them first";
  return "";
}

void Run::remove_port(const json& command, double now_s) {
  if (!d_.service || !chain_ends_ || !generator_)
    return answer_change(refused(command, "only a service (./tandem serve) removes ports"));
  std::string name = command.value("port", std::string());
  auto found = std::find_if(d_.ports.begin(), d_.ports.end(), [&](const PortConfig& p) { return p.name == name; });
  if (found == d_.ports.end()) return answer_change(refused(command, "no port named '" + name + "'"));
  int index = found->index;
  if (std::string why = why_port_cannot_go(index); !why.empty()) return answer_change(refused(command, why));
  if (port_work_)
    return answer_change(
        refused(command, "port '" + port_work_->name + "' is being opened or closed: ask again once it is"));
  EthdevPort* port = chain_ends_->port(index);
  generator_->stop_port(*port);
  sink_->stop_port(port);
  port->mark_removed();  // its counters read now: nothing moves through it any more
  ports_removed_.insert(index);
  // Closed on a thread of its own (a packet socket's rings unmapped: ~90 ms in which the loop would move no packet);
  // the loop no longer touches the device, and its report reads only what mark_removed() left.
  PortWork work;
  work.command = command;
  work.name = name;
  work.requested_s = now_s;
  work.begin_tsc = rte_get_tsc_cycles();
  work.ring_drops_before = ring_drops_each();
  work.port = port;
  work.closed = std::async(std::launch::async, [port] { port->close(); });
  port_work_ = std::move(work);
}

void Run::port_closed(double now_s) {
  PortWork work = std::move(*port_work_);
  port_work_.reset();
  work.closed.get();
  json reply = port_work_reply(work, now_s);
  reply["close_us"] = static_cast<double>(rte_get_tsc_cycles() - work.begin_tsc) / hz_ * 1e6;
  reply["report"] = work.port->report();
  answer_applied(reply, work.begin_tsc);
}

}  // namespace tandem
