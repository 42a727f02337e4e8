// Live metrics: every counter of the run at one instant, cumulative since the start, for the control plane to
// serve while the run lasts (run --metrics). Rates are the reader's business: Prometheus differentiates counters.
#include <chrono>

#include <rte_ring.h>

#include "run.h"

namespace tandem {

json Run::live_metrics() {
  json chains = json::array();
  for (size_t c = 0; c < d_.chains.size(); c++) {
    const ChainDelivery& delivery = sink_->delivery(static_cast<int>(c));
    chains.push_back({{"name", d_.chains[c].name},
                      {"generated", generator_->generated(static_cast<int>(c))},
                      {"delivered", delivery.delivered},
                      {"delivered_bytes", delivery.delivered_bytes},
                      {"hop_errors", delivery.hop_errors},
                      {"entry_backpressure", counter_read(stats_->chains[c].entry_backpressure)},
                      {"generator_fell_behind", generator_->fell_behind(static_cast<int>(c))},
                      {"latency", sink_->latency_histogram(static_cast<int>(c)).to_json()}});
  }
  json rings = json::array();
  for (const RingConfig& ring : d_.rings) {
    const RingCounters& counters = stats_->rings[ring.index];
    rings.push_back({{"name", ring.name},
                     {"chain", d_.chains[ring.chain].name},
                     {"enqueued", counter_read(counters.enqueued)},
                     {"dropped_full", counter_read(counters.dropped_full)},
                     {"occupancy", rte_ring_count(rings_[ring.index])},
                     {"capacity", ring.capacity}});
  }
  json nfs = json::array();
  for (const NfConfig& nf : d_.nfs) {
    const NfCounters& counters = stats_->nfs[nf.index];
    nfs.push_back({{"name", nf.name},
                   {"chain", d_.chains[nf.chain].name},
                   {"packets_in", counter_read(counters.packets_in)},
                   {"packets_out", counter_read(counters.packets_out)},
                   {"packets_dropped", counter_read(counters.packets_dropped)},
                   {"label_miss", counter_read(counters.label_miss)},
                   {"busy_cycles", counter_read(counters.busy_cycles)},
                   {"batches", counter_read(counters.batches)}});
  }
  json workers = json::array();
  for (size_t w = 0; w < d_.workers.size(); w++) {
    // A counter /proc does not give (or a worker that has exited) is left out, never reported as zero.
    OsSample os = task_ids_[w] > 0 ? sample_os_counters(task_ids_[w]) : OsSample{};
    json worker = {{"name", d_.workers[w].name},
                   {"core", d_.workers[w].core},
                   {"nfs", nf_names_of(static_cast<int>(w))},
                   {"yields", counter_read(stats_->workers[w].yields)},
                   {"sleeps", counter_read(stats_->workers[w].sleeps)}};
    if (os.voluntary_switches) worker["voluntary_switches"] = *os.voluntary_switches;
    if (os.involuntary_switches) worker["involuntary_switches"] = *os.involuntary_switches;
    if (os.cpu_ns) worker["cpu_ns"] = *os.cpu_ns;
    if (os.wait_ns) worker["wait_ns"] = *os.wait_ns;
    if (os.migrations) worker["migrations"] = *os.migrations;
    workers.push_back(worker);
  }
  // When the counters were read, on the wall clock: Prometheus stamps the samples with it, so a report that
  // reaches a scrape late (the control core is busy) does not skew a rate.
  double unix_time = std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
  return {{"unix_time", unix_time},
          {"tsc_hz", hz_},
          {"chains", chains},
          {"rings", rings},
          {"nfs", nfs},
          {"workers", workers},
          {"ports", chain_ends_ ? chain_ends_->port_reports() : json::array()},
          {"scheduler", attached_ ? scheduler_->live_metrics(*view_) : json::object()}};
}

}  // namespace tandem
