// A run's accounting and results: counter snapshots, the window's rates, every packet accounted for, reports.
#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>

#include <rte_cycles.h>

#include "kernel_link_count.h"
#include "run.h"

namespace tandem {

// A chain whose generator gave up more than 5 % of what its rate had due in the window: its figures are for less
// load than the spec asked, which a reader of the results must be told.
static std::optional<std::string> generator_shortfall(const std::string& chain, uint64_t generated,
                                                      uint64_t fell_behind, double window_s) {
  if (fell_behind == 0 || fell_behind * 20 <= generated + fell_behind || window_s <= 0) return std::nullopt;
  char text[320];
  std::snprintf(text, sizeof text,
                "chain %s: the generator fell behind its rate and gave up %llu packets of the measurement window "
                "(offered %.3f of the %.3f Mpps asked): the control core could not keep up, and the chain's figures "
                "are for the load offered",
                chain.c_str(), static_cast<unsigned long long>(fell_behind),
                static_cast<double>(generated) / window_s / 1e6,
                static_cast<double>(generated + fell_behind) / window_s / 1e6);
  return std::string(text);
}

uint64_t Run::wasted_work(int chain) const {
  // Packets some NF worked on before they were dropped: at any ring but the entry, or at a gate with no edge.
  const ChainConfig& config = d_.chains[chain];
  uint64_t wasted = 0;
  for (int ring : config.rings)
    if (ring != config.entry_ring) wasted += counter_read(stats_->rings[ring].dropped_full);
  for (int nf : config.nfs) wasted += counter_read(stats_->nfs[nf].label_miss);
  return wasted;
}

json Run::external_report(int nf) const {
  for (size_t w = 0; w < d_.workers.size(); w++)
    if (externals_[w] && d_.workers[w].segments.front().nfs.front() == nf)
      return {{"application", d_.nfs[nf].args["app"]},
              {"forward_mode", d_.nfs[nf].args["forward_mode"]},
              {"port", externals_[w]->port()},
              {"forwarding_thread", externals_[w]->thread() ? json(externals_[w]->thread()) : json()},
              {"log", externals_[w]->log_path()}};
  return json::object();
}

Snapshot Run::snapshot(double now_s) {
  mirror_external_counters();
  Snapshot s;
  s.tsc_seconds = now_s;
  for (size_t c = 0; c < d_.chains.size(); c++) {
    s.generated.push_back(generator_->generated(static_cast<int>(c)));
    s.delivered.push_back(sink_->delivery(static_cast<int>(c)).delivered);
    s.delivered_bytes.push_back(sink_->delivery(static_cast<int>(c)).delivered_bytes);
    s.wasted.push_back(wasted_work(static_cast<int>(c)));
    s.entry_backpressure.push_back(counter_read(stats_->chains[c].entry_backpressure));
    s.fell_behind.push_back(generator_->fell_behind(static_cast<int>(c)));
  }
  for (size_t n = 0; n < d_.nfs.size(); n++) {
    NfCounters copy{};
    const NfCounters& live = stats_->nfs[n];
    copy.packets_in = counter_read(live.packets_in);
    copy.packets_out = counter_read(live.packets_out);
    copy.packets_dropped = counter_read(live.packets_dropped);
    copy.batches = counter_read(live.batches);
    copy.empty_polls = counter_read(live.empty_polls);
    copy.busy_cycles = counter_read(live.busy_cycles);
    copy.service_cycles = counter_read(live.service_cycles);
    copy.service_packets = counter_read(live.service_packets);
    s.nfs.push_back(copy);
  }
  for (pid_t task : task_ids_) s.os.push_back(task > 0 ? sample_os_counters(task) : OsSample{});
  return s;
}

// A worker killed between a ring operation and the counter update after it leaves that counter behind the ring.
// The ring counts every enqueue and dequeue itself, in the 32-bit tails of its producer and consumer, so after
// an unclean end the counters catch up from them (the lag is a burst at most, far below 2^31). Only then: in a
// clean run a lag would be a bug, and catching up would hide it.
void Run::catch_up_ring(int ring, bool producer) {
  if (d_.rings[ring].kernel) return;
  uint64_t& counter = producer ? stats_->rings[ring].enqueued : stats_->rings[ring].dequeued;
  uint32_t tail = producer ? rings_[ring]->prod.tail : rings_[ring]->cons.tail;
  uint32_t behind = tail - static_cast<uint32_t>(counter_read(counter));
  if (behind == 0 || behind >= (1u << 31)) return;
  counter_add(counter, uint64_t{behind});
  ring_counts_caught_up_ += behind;
}

int64_t Run::held_by_segment(const Segment& segment) const {
  int64_t held = 0;
  for (int ring : segment.in_rings) held += static_cast<int64_t>(counter_read(stats_->rings[ring].dequeued));
  for (int ring : segment.out_rings)
    held -= static_cast<int64_t>(counter_read(stats_->rings[ring].enqueued) +
                                 counter_read(stats_->rings[ring].dropped_full));
  // The rings between its NFs, which a run-to-completion segment passes by: where a service re-laid its NFs out
  // (run_relayout.cc), they were rings between processes before, drained then; what full ones dropped meanwhile left
  // the segment there (always empty and untouched otherwise, they add nothing).
  for (size_t k = 0; k + 1 < segment.nfs.size(); k++)
    for (int ring : d_.nfs[segment.nfs[k]].out_rings)
      held += static_cast<int64_t>(counter_read(stats_->rings[ring].dequeued)) -
              static_cast<int64_t>(counter_read(stats_->rings[ring].enqueued) +
                                   counter_read(stats_->rings[ring].dropped_full));
  for (int nf : segment.nfs) {
    const NfCounters& counters = stats_->nfs[nf];
    held -= static_cast<int64_t>(counter_read(counters.packets_dropped) + counter_read(counters.label_miss));
    // In copies: a fork's branch port makes some, a marker drops some (a parallel group, parallel_ports.h).
    held += static_cast<int64_t>(counter_read(counters.forked)) - static_cast<int64_t>(counter_read(counters.merged));
  }
  return held;
}

int64_t Run::lost_in_segment(const Segment& segment) const {
  uint64_t lost = 0;
  for (int nf : segment.nfs) lost += lost_at_crash_[nf];
  return static_cast<int64_t>(lost);
}

// Mbufs the accounting says are out of the pool: in rings, held by NFs (by processes alive or dead), a kernel-I/O
// NF's receive buffers (a killed one's stay out; its sockets' frames are not mbufs), and the frames a killed sender
// had handed the kernel, whose mbufs it died before freeing.
uint64_t Run::mbufs_accounted_for() const {
  int64_t accounted = static_cast<int64_t>(kernel_sends_caught_up_ + dead_receive_buffers_);
  for (const RingConfig& ring : d_.rings)
    accounted += static_cast<int64_t>(ring.kernel ? counter_read(stats_->rings[ring.index].receive_buffers)
                                                  : rte_ring_count(rings_[ring.index]));
  std::set<int> seen;  // under Bubble several workers list one segment
  for (const WorkerPlan& plan : d_.workers)
    for (const Segment& segment : plan.segments)
      if (seen.insert(segment.nfs.front()).second) accounted += held_by_segment(segment);
  return static_cast<uint64_t>(std::max<int64_t>(accounted, 0));
}

std::optional<std::string> Run::split_external_crash_losses() {
  for (size_t w = 0; w < externals_.size(); w++) {
    if (!externals_[w] || !restart_state_.count(w)) continue;  // why_not_restartable: one such NF per run
    const ExternalNf& external = *externals_[w];
    uint64_t unsent = external.unsent_by_dead_processes();
    std::string name = nf_names_of(static_cast<int>(w));
    // The last process settled what it freed (results()); its dead ones' packets are all in their segment's
    // count until the pool splits them: their mbufs are out of the pool if held, back in it if freed.
    bool pool_readable = workers_[w].exit_description == "exited with status 0";
    for (const NfCounters& counters : stats_->nfs)
      pool_readable =
          pool_readable && counter_read(counters.mbufs_being_freed) == 0 && counter_read(counters.forked) == 0;
    if (!pool_readable) {
      warnings_.push_back("NF " + name + "'s dead processes received " + std::to_string(unsent) +
                          " packets they did not send, held or freed: the pool cannot tell which in this run");
      return std::nullopt;
    }
    int64_t freed = static_cast<int64_t>(mbufs_accounted_for()) - static_cast<int64_t>(rte_mempool_in_use_count(pool_));
    if (freed < 0 || freed > static_cast<int64_t>(unsent)) {
      warnings_.push_back("NF " + name + "'s dead processes received " + std::to_string(unsent) +
                          " packets they did not send, but the pool counts " + std::to_string(freed) +
                          " of them freed: the pool does not match the counters");
      return std::nullopt;
    }
    const Segment& segment = d_.workers[w].segments.front();
    counter_add(stats_->rings[segment.out_rings.at(0)].dropped_full, static_cast<uint64_t>(freed));
    lost_at_crash_[segment.nfs.front()] += unsent - static_cast<uint64_t>(freed);
    return name;
  }
  return std::nullopt;
}

std::optional<size_t> Run::worker_holding_packets() const {
  for (const WorkerPlan& plan : d_.workers) {
    if (plan.runtime == Runtime::External || workers_[plan.index].exited) continue;  // externals keep no such count
    for (const Segment& segment : plan.segments) {
      if (any_kernel_link(d_, segment.in_rings) || any_kernel_link(d_, segment.out_rings)) continue;  // sockets'
      if (held_by_segment(segment) - lost_in_segment(segment) != 0) return static_cast<size_t>(plan.index);
    }
  }
  return std::nullopt;
}

void Run::catch_up_ring_counters() {
  for (size_t r = 0; r < rings_.size(); r++) {
    if (!d_.rings[r].kernel) {
      catch_up_ring(static_cast<int>(r), true);
      catch_up_ring(static_cast<int>(r), false);
      continue;
    }
    // A kernel link has no ring tail: what its receiver counted is what a killed sender sent at least.
    if (uint64_t uncounted = sends_not_counted(stats_->rings[r], receiver_restarts(static_cast<int>(r)))) {
      counter_add(stats_->rings[r].enqueued, uncounted);
      kernel_sends_caught_up_ += uncounted;
    }
  }
}

json Run::results() {
  mirror_external_counters();  // the applications have stopped: their ports' counters are final
  for (size_t w = 0; w < externals_.size(); w++)
    if (externals_[w] && workers_[w].exit_description == "exited with status 0")
      if (auto disagreement = externals_[w]->settle_drops(*stats_)) warnings_.push_back(*disagreement);
  double now_s = seconds_since_go(rte_get_tsc_cycles());
  if (!window_begun_) window_begin_ = snapshot(now_s);
  if (!window_ended_) {  // a failed run: the window ends at the failure
    window_end_ = snapshot(now_s);
    if (!os_at_failure_.empty()) window_end_.os = os_at_failure_;
  }
  double window_s = std::max(window_end_.tsc_seconds - window_begin_.tsc_seconds, 1e-9);

  settle_restarted_senders();
  if (killed_workers_ || !failed_nf_.empty()) catch_up_ring_counters();
  std::optional<std::string> pool_told_crash_losses = split_external_crash_losses();

  // Packets a segment holds between dequeue and enqueue. The process that ran it last holds them (under
  // Bubble several workers list the same segment and one at a time holds it); one that stopped cleanly
  // holds none. A segment whose process died inside a free has a nonzero journal (free_counted).
  std::vector<int64_t> held_by_nf(d_.nfs.size(), 0);
  bool clean_workers_hold_nothing = true;
  json interrupted_frees = json::array();
  uint64_t mbufs_being_freed = 0;
  std::vector<std::string> worker_of_nf(d_.nfs.size());
  std::vector<bool> seen(d_.nfs.size(), false);
  for (const WorkerPlan& plan : d_.workers) {
    for (const Segment& segment : plan.segments) {
      for (int nf : segment.nfs) worker_of_nf[nf] = plan.name;
      int head = segment.nfs.front();
      if (seen[head]) continue;
      seen[head] = true;
      // What a restarted NF's dead processes held is lost, not in flight (lost_at_crash_, run_restarts.cc).
      int64_t held = held_by_segment(segment) - lost_in_segment(segment);
      held_by_nf[head] = held;
      int holder =
          plan.runtime == Runtime::UserLevelThreads ? flag_load(stats_->nf_control[head].running_on) : plan.index;
      bool holder_stopped_cleanly = holder < 0 || workers_[holder].exit_description == "exited with status 0";
      if (held != 0 && holder_stopped_cleanly) clean_workers_hold_nothing = false;
      if (uint64_t freeing = counter_read(stats_->nfs[head].mbufs_being_freed)) {
        mbufs_being_freed += freeing;
        interrupted_frees.push_back({{"nf", d_.nfs[head].name},
                                     {"worker", holder < 0 ? json() : json(d_.workers[holder].name)},
                                     {"mbufs", freeing}});
      }
    }
  }

  json chains = json::array();
  uint64_t in_flight_total = 0;
  bool copies_in_flight = false;  // a parallel group's copies share mbufs: the pool then shows fewer than in flight
  bool all_exact = clean_workers_hold_nothing;
  for (const ChainConfig& chain : d_.chains) {
    int c = chain.index;
    const ChainDelivery& delivery = sink_->delivery(c);
    uint64_t generated = generator_->generated(c);
    json ring_drops = json::object(), nf_drops = json::object();
    uint64_t dropped = 0, in_rings = 0;
    int64_t in_nfs = 0;
    bool counters_match_rings = true;
    for (int r : chain.rings) {
      uint64_t drops = counter_read(stats_->rings[r].dropped_full);
      uint64_t occupancy = rte_ring_count(rings_[r]);
      if (d_.rings[r].kernel) {  // a veth between sockets: its frames are in the receiver's socket, or dropped
        KernelLinkCount link = count_kernel_link(stats_->rings[r], d_.rings[r].to >= 0, receiver_restarts(r));
        drops += link.dropped();
        occupancy = link.in_socket;
        counters_match_rings = counters_match_rings && link.exact;
      } else {
        counters_match_rings =
            counters_match_rings &&
            counter_read(stats_->rings[r].enqueued) - counter_read(stats_->rings[r].dequeued) == occupancy;
      }
      ring_drops[d_.rings[r].name] = drops;
      dropped += drops;
      in_rings += occupancy;
    }
    json label_misses = json::object(), crash_losses = json::object();
    uint64_t forked = 0, merged = 0;
    for (int n : chain.nfs) {
      if (uint64_t lost = lost_at_crash_[n]) {  // held by a process that died, its NF restarted
        crash_losses[d_.nfs[n].name] = lost;
        dropped += lost;
      }
      forked += counter_read(stats_->nfs[n].forked);
      merged += counter_read(stats_->nfs[n].merged);
      uint64_t drops = counter_read(stats_->nfs[n].packets_dropped);
      nf_drops[d_.nfs[n].name] = drops;
      dropped += drops;
      // Sent to a gate the graph gives no edge: dropped by the NF's labelled egress.
      if (uint64_t missed = counter_read(stats_->nfs[n].label_miss)) {
        label_misses[d_.nfs[n].name] = missed;
        dropped += missed;
      }
      in_nfs += held_by_nf[n];
    }
    uint64_t entry_backpressure = counter_read(stats_->chains[c].entry_backpressure);
    dropped += entry_backpressure;
    uint64_t in_flight = in_rings + static_cast<uint64_t>(in_nfs);
    in_flight_total += in_flight;
    // Counted in copies: a packet that a parallel group's fork handed to k branches is k copies until k - 1 of
    // them are merged at the markers (or dropped, each on its own).
    bool exact =
        counters_match_rings && in_nfs >= 0 && generated + forked == delivery.delivered + dropped + merged + in_flight;
    copies_in_flight = copies_in_flight || (forked > 0 && in_flight > 0);
    all_exact = all_exact && exact;
    uint64_t window_delivered = window_end_.delivered[c] - window_begin_.delivered[c];
    uint64_t window_generated = window_end_.generated[c] - window_begin_.generated[c];
    uint64_t window_fell_behind = window_end_.fell_behind[c] - window_begin_.fell_behind[c];
    if (auto shortfall = generator_shortfall(chain.name, window_generated, window_fell_behind, window_s))
      warnings_.push_back(*shortfall);
    json chain_json = {
        {"name", chain.name},
        {"nfs", json::array()},
        {"generated", generated},
        {"delivered", delivery.delivered},
        {"delivered_bytes", delivery.delivered_bytes},
        {"hop_errors", delivery.hop_errors},
        {"flow_reorders", delivery.flow_reorders ? json(*delivery.flow_reorders) : json()},
        {"dropped",
         {{"total", dropped},
          {"rings", ring_drops},
          {"nfs", nf_drops},
          {"label_misses", label_misses},
          {"lost_at_crash", crash_losses},
          {"entry_backpressure", entry_backpressure}}},
        {"wasted_work", wasted_work(c)},
        {"generator_fell_behind", generator_->fell_behind(static_cast<int>(c))},
        {"in_flight", {{"total", in_flight}, {"rings", in_rings}, {"nfs", in_nfs}}},
        {"copies", {{"forked", forked}, {"merged", merged}}},
        {"accounting_exact", exact},
        {"window",
         {{"seconds", window_s},
          {"generated", window_generated},
          {"delivered", window_delivered},
          {"offered_mpps", static_cast<double>(window_generated) / window_s / 1e6},
          {"delivered_mpps", static_cast<double>(window_delivered) / window_s / 1e6},
          {"delivered_gbps",
           static_cast<double>(window_end_.delivered_bytes[c] - window_begin_.delivered_bytes[c]) * 8 / window_s / 1e9},
          {"wasted_pps", static_cast<double>(window_end_.wasted[c] - window_begin_.wasted[c]) / window_s},
          {"entry_backpressure_pps",
           static_cast<double>(window_end_.entry_backpressure[c] - window_begin_.entry_backpressure[c]) / window_s},
          {"generator_fell_behind", window_fell_behind}}},
        {"latency_us", sink_->latency(c).summary_us(hz_)},
        {"latency_breakdown", sink_->tracing() ? sink_->breakdown(static_cast<int>(c)).to_json(d_, hz_) : json()},
    };
    for (int n : chain.nfs) chain_json["nfs"].push_back(d_.nfs[n].name);
    if (chain.from_port >= 0) chain_json["from_port"] = d_.ports[chain.from_port].name;
    if (chain.to_port >= 0) chain_json["to_port"] = d_.ports[chain.to_port].name;
    chains.push_back(chain_json);
  }

  // Every mbuf outside the pool and its caches must be one the accounting says is in flight, unless a
  // process died while handing mbufs back (the counters still balance exactly then). Such a death cuts the
  // pool's shared state mid-update: the worker's lcore cache counted twice while it flushed, or mbufs taken
  // off the lock-free stack's count but never pushed back on it. The pool can then not be checked; what it
  // shows is reported, not judged.
  uint64_t mbufs_in_use = rte_mempool_in_use_count(pool_);
  int64_t pool_difference = static_cast<int64_t>(mbufs_in_use) - static_cast<int64_t>(mbufs_accounted_for());
  json pool_matches =
      mbufs_being_freed || copies_in_flight || pool_told_crash_losses ? json() : json(pool_difference == 0);
  std::string pool_unchecked =
      mbufs_being_freed
          ? "a worker died while returning mbufs to the pool, which leaves the pool's shared state mid-update"
      : copies_in_flight ? "copies of a parallel group's packets are in flight, and copies share one mbuf"
      : pool_told_crash_losses
          ? "it told what external NF " + *pool_told_crash_losses +
                "'s dead processes held (lost at the crash) from what they freed on a full ring (dropped there)"
          : "";
  all_exact = all_exact && pool_matches != false;
  // The ports: what their Rx stages received went to a chain, across the wire, or was dropped (ethdev_port.h).
  json ports = chain_ends_ ? chain_ends_->port_reports() : json::array();
  for (const json& port : ports) all_exact = all_exact && port["exact"].get<bool>();

  collect_nf_reports("", 0);  // the processes that ran to the end wrote the NFs' last reports

  json worker_list = json::array();
  std::map<std::string, json> os_by_worker;
  for (size_t w = 0; w < d_.workers.size(); w++) {
    json os = os_rates(window_begin_.os[w], window_end_.os[w]);
    // A process that ended before the window closed has no /proc entry to read: say so, so the report does not
    // blame the machine for the empty columns.
    if (!os["unavailable"].empty() && !window_end_.os[w].cpu_ns && !workers_[w].exit_description.empty())
      os["unavailable_reason"] = "its process had ended (" + workers_[w].exit_description + ") when the window closed";
    else if (!os["unavailable"].empty() && restart_state_.count(w))
      os["unavailable_reason"] = "its process was started again during the window (another pid, other counters)";
    os_by_worker[d_.workers[w].name] = os;
    worker_list.push_back({{"name", d_.workers[w].name},
                           {"pid", workers_[w].pid},
                           {"core", d_.workers[w].core},
                           {"nfs", nf_names_of(static_cast<int>(w))},
                           {"exit", workers_[w].exit_description},
                           {"yields", counter_read(stats_->workers[w].yields)},
                           {"sleeps", counter_read(stats_->workers[w].sleeps)},
                           {"os", os}});
  }

  // An NF in no worker's plan: its chain was removed before the service re-laid its NFs out (run_relayout.cc).
  json gone_os = os_rates(OsSample{}, OsSample{});
  gone_os["unavailable_reason"] = "its chain was removed and its process ended";
  json nfs = json::array();
  for (const NfConfig& nf : d_.nfs) {
    const std::string& worker = worker_of_nf[nf.index];
    const NfCounters& a = window_begin_.nfs[nf.index];
    const NfCounters& b = window_end_.nfs[nf.index];
    const NfCounters& total = stats_->nfs[nf.index];
    uint64_t window_in = b.packets_in - a.packets_in;
    uint64_t busy = b.busy_cycles - a.busy_cycles;
    uint64_t service = b.service_cycles - a.service_cycles, service_packets = b.service_packets - a.service_packets;
    json report = nf_reports_.last(nf.name);  // none written: an application's, what Tandem knows of it
    if (report.is_null()) report = external_report(nf.index);
    nfs.push_back(
        {{"name", nf.name},
         {"type", nf.type},
         {"chain", d_.chains[nf.chain].name},
         {"core", nf.core},
         {"worker", worker.empty() ? json() : json(worker)},
         {"io", nf.kernel_io ? "kernel" : "dpdk"},
         {"args", nf.args},
         {"packets_in", counter_read(total.packets_in)},
         {"packets_out", counter_read(total.packets_out)},
         {"packets_dropped", counter_read(total.packets_dropped)},
         {"batches", counter_read(total.batches)},
         {"empty_polls", counter_read(total.empty_polls)},
         {"busy_cycles", counter_read(total.busy_cycles)},
         {"held_at_stop", held_by_nf[nf.index]},
         {"lost_at_crash", lost_at_crash_[nf.index]},
         {"window",
          {{"in_mpps", static_cast<double>(window_in) / window_s / 1e6},
           {"out_mpps", static_cast<double>(b.packets_out - a.packets_out) / window_s / 1e6},
           // An external NF's time inside its application is not visible to Tandem: unknown, not 0.
           {"busy_share", nf.external() ? json() : json(static_cast<double>(busy) / hz_ / window_s)},
           // From undisturbed batches: a batch the NF was preempted in counts other processes' time.
           {"cycles_per_packet",
            service_packets ? json(static_cast<double>(service) / static_cast<double>(service_packets)) : json()}}},
         {"report", std::move(report)},
         {"earlier_reports", nf_reports_.earlier(nf.name)},
         {"os", worker.empty() ? gone_os : os_by_worker[worker]}});
  }

  json rings = json::array();
  for (const RingConfig& ring : d_.rings) {
    rings.push_back({{"name", ring.name},
                     {"chain", d_.chains[ring.chain].name},
                     {"capacity", ring.capacity},
                     {"enqueued", counter_read(stats_->rings[ring.index].enqueued)},
                     {"dequeued", counter_read(stats_->rings[ring.index].dequeued)},
                     {"dropped_full", counter_read(stats_->rings[ring.index].dropped_full)},
                     {"occupancy_at_stop", rte_ring_count(rings_[ring.index])}});
    if (ring.kernel) {
      json kernel = count_kernel_link(stats_->rings[ring.index], ring.to >= 0, receiver_restarts(ring.index)).to_json();
      kernel["foreign_frames"] = counter_read(stats_->rings[ring.index].foreign);
      rings.back()["kernel_link"] = kernel;
      rings.back()["occupancy_at_stop"] = kernel["in_socket_at_stop"];
    }
  }

  return {
      {"name", d_.name},
      {"scheduler", scheduler_entry()},
      {"scheduler_location", "control core " + std::to_string(d_.control_core) + ", beside generator and sink"},
      {"warmup_s", d_.warmup_s},
      {"duration_s", d_.duration_s},
      {"tsc_hz", hz_},
      {"capture", d_.capture_path.empty() ? json() : json{{"path", d_.capture_path}, {"packets", sink_->captured()}}},
      {"generator_build_cycles_per_packet", generator_->build_cycles_per_packet()},
      {"chains", chains},
      {"nfs", nfs},
      {"rings", rings},
      {"ports", ports},
      {"scaling", autoscaler_ && !autoscaler_->empty() ? autoscaler_->report() : json()},
      {"workers", worker_list},
      {"accounting",
       {{"exact", all_exact},
        {"mbufs_in_use", mbufs_in_use},
        {"in_flight", in_flight_total},
        {"pool_matches_in_flight", pool_matches},
        {"pool_unchecked_because", pool_unchecked.empty() ? json() : json(pool_unchecked)},
        {"interrupted_frees", interrupted_frees},
        {"pool_difference", pool_difference},
        {"clean_workers_hold_nothing", clean_workers_hold_nothing},
        {"allocation_failures", generator_->allocation_failures()},
        {"ring_counts_caught_up", ring_counts_caught_up_},
        {"kernel_sends_caught_up", kernel_sends_caught_up_}}},
      {"changes", changes_},
      {"restarts", restarts_},
      {"nf_object_reclaim", reclaim_report_},
      {"warnings", warnings_},
      {"error", error_.empty() ? json() : json(error_)},
      {"failed_nf", failed_nf_.empty() ? json() : json(failed_nf_)},
      {"interrupted", interrupted_},
      {"profile", profile_results()}};
}

json Run::profile_results() const {
  json out = json::object();
  for (const auto& [name, probe] : probes_) {
    json report = probe->report(*probe_view_);
    if (!report.is_null()) out[name] = std::move(report);
  }
  return out;
}

}  // namespace tandem
