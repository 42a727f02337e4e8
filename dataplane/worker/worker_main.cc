// tandem-worker: a DPDK secondary process that runs one or more NFs of a deployment on its pinned core.
// Usage (started by tandem-manager): tandem-worker <EAL args> -- --deployment PATH --worker N
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <fstream>
#include <string>

#include <rte_eal.h>
#include <rte_errno.h>
#include <rte_memzone.h>
#include <rte_service_component.h>

#include "contract/hop_trace.h"

#include "contract/eal_args.h"
#include "contract/live_args_files.h"
#include "contract/nf_report_file.h"
#include "contract/shm_layout.h"
#include "contract/start_gate.h"
#include "dataplane/ports/graph_ports.h"
#include "dataplane/ports/kernel_socket/kernel_ports.h"
#include "dataplane/ports/spare_instance_ingress.h"
#include "dataplane/runtimes/runtime.h"

using namespace tandem;

namespace {

int fail(const std::string& worker, const std::string& message) {
  fprintf(stderr, "tandem-worker %s: %s\n", worker.c_str(), message.c_str());
  return 3;
}

// How the segment's NFs take new arguments while they run: from the files the manager writes into the run's
// directory, each instance named after its generation (DPDK objects of one name cannot live twice).
std::shared_ptr<LiveArgs> live_args_from_run_dir(const Deployment& deployment, const std::vector<int>& nf_indexes,
                                                 uint64_t process_serial) {
  auto live = std::make_shared<LiveArgs>();
  live->build_core = deployment.control_core;
  const std::string& run_dir = deployment.paths.run_dir;
  live->build = [&deployment, nf_indexes, run_dir, process_serial](size_t k, uint32_t generation) {
    const NfConfig& nf = deployment.nfs.at(nf_indexes.at(k));
    std::ifstream file(live_args_path(run_dir, nf.index, generation));
    if (!file) throw std::runtime_error("its new arguments (generation " + std::to_string(generation) + ") are gone");
    NfContext context{nf.name, nf_instance_name(process_serial, nf.index, generation), nf.index};
    return nf_types().at(nf.type).create(json::parse(file), context);
  };
  live->note_refusal = [nf_indexes, run_dir](size_t k, uint32_t generation, const std::string& reason) {
    std::ofstream(live_args_refusal_path(run_dir, nf_indexes.at(k), generation)) << reason;
  };
  return live;
}

}  // namespace

int main(int argc, char** argv) {
  int eal_consumed = rte_eal_init(argc, argv);
  if (eal_consumed < 0) return fail("?", std::string("EAL init failed: ") + rte_strerror(rte_errno));
  // EAL's service cores, which no worker uses, keep their tables (~200 KB) in hugepage memory that this process
  // would never free (no rte_eal_cleanup at its exit: see the end of main): freed now, while every other process
  // answers the IPC, or a service's every re-layout and restart would leave them behind.
  rte_service_finalize();
  argc -= eal_consumed;
  argv += eal_consumed;
  std::string deployment_path;
  int worker_index = -1;
  int staging_slot = -1;        // a re-layout's worker, started beside the running ones in this spare slot
  uint64_t process_serial = 0;  // its NF instances' names (nf_instance_name)
  for (int i = 1; i + 1 < argc; i += 2) {
    if (strcmp(argv[i], "--deployment") == 0) deployment_path = argv[i + 1];
    if (strcmp(argv[i], "--worker") == 0) worker_index = std::stoi(argv[i + 1]);
    if (strcmp(argv[i], "--staging") == 0) staging_slot = std::stoi(argv[i + 1]);
    if (strcmp(argv[i], "--serial") == 0) process_serial = std::stoull(argv[i + 1]);
  }
  std::ifstream file(deployment_path);
  if (!file || worker_index < 0)
    return fail("?", "usage: tandem-worker <EAL args> -- --deployment PATH --worker N [--staging SLOT]");

  Deployment deployment = parse_deployment(json::parse(file));
  const WorkerPlan& plan = deployment.workers.at(worker_index);
  const rte_memzone* zone = rte_memzone_lookup(kStatsZoneName);
  if (zone == nullptr) return fail(plan.name, "stats memzone not found: is the manager running?");
  auto& stats = *static_cast<StatsZone*>(zone->addr);
  WorkerControl& control = stats.workers[worker_index];
  // Where it says it attached: its own slot, or the spare one it was started in while another process has its own.
  WorkerControl& starting = staging_slot >= 0 ? stats.workers[staging_slot] : control;
  TraceSlot* traces = nullptr;  // run --profile
  if (deployment.trace_hops) {
    const rte_memzone* trace_zone = rte_memzone_lookup(kTraceZoneName);
    if (trace_zone == nullptr) return fail(plan.name, "trace memzone not found: is the manager running?");
    traces = static_cast<TraceSlot*>(trace_zone->addr);
  }

  bool kernel_io = plan.runtime == Runtime::KernelIo;
  std::vector<rte_ring*> rings(deployment.rings.size(), nullptr);
  for (const Segment& s : plan.segments)
    for (const std::vector<int>* ends : {&s.in_rings, &s.out_rings})
      for (int ring : *ends)
        if (!deployment.rings[ring].kernel &&
            (rings[ring] = rte_ring_lookup(ring_object(deployment.rings[ring]).c_str())) == nullptr)
          return fail(plan.name, "ring " + deployment.rings[ring].name + " not found");
  rte_mempool* pool = rte_mempool_lookup(kMbufPoolName);
  if (pool == nullptr) return fail(plan.name, "mbuf pool not found: is the manager running?");
  uint16_t burst = deployment.burst;
  std::vector<SegmentRuntime> segments;
  try {
    // A worker with a kernel link (a kernel-I/O NF's, or a DPDK NF's beside one) works in its NF's namespace, where
    // its veths are. After EAL init: its multi-process channel is a Unix socket on the file system, which every
    // namespace sees.
    const NfConfig& first = deployment.nfs.at(plan.segments.at(0).nfs.at(0));
    if (!first.netns.empty()) enter_network_namespace(first.netns);
    if (uint16_t mux = deployment.chains[first.chain].io.mux; kernel_io && mux > 1)
      burst = mux;  // a batch is what one call takes
    for (const Segment& s : plan.segments) {
      const NfConfig& last = deployment.nfs[s.nfs.back()];
      const std::vector<std::string> gates = nf_gates(nf_types().at(last.type), last.args);
      SegmentRuntime segment{any_kernel_link(deployment, s.in_rings)
                                 ? open_kernel_ingress(deployment, s, pool, stats)
                                 : park_while_spare(open_ingress(s.in_rings, rings, stats), deployment, s, stats,
                                                    plan.segments.size() == 1 ? &control : nullptr),
                             any_kernel_link(deployment, s.out_rings) ? open_kernel_egress(deployment, s, stats)
                                                                      : open_egress(deployment, s, gates, rings, stats),
                             s.nfs,
                             {}};
      segment.prefetch_distance = deployment.prefetch;
      segment.live = live_args_from_run_dir(deployment, s.nfs, process_serial);
      segment.traces = traces;
      // A worker started again after a crash takes each NF's arguments as they were: a live change's, if any (one
      // still wanted is built at its first batch, as ever).
      for (int index : s.nfs) {
        const NfConfig& nf = deployment.nfs[index];
        segment.in_branch.push_back(nf.in_branch);
        segment.hops.push_back(nf.hop);
        uint32_t generation = flag_load(stats.nf_control[index].args_running);
        segment.live->running.push_back(generation);
        if (generation != 0) {
          segment.nfs.push_back(segment.live->build(segment.nfs.size(), generation));
          continue;
        }
        NfContext context{nf.name, nf_instance_name(process_serial, index, 0), index};
        segment.nfs.push_back(nf_types().at(nf.type).create(nf.args, context));
      }
      segments.push_back(std::move(segment));
    }
  } catch (const std::exception& e) {
    return fail(plan.name, std::string("could not open its ports or create an NF: ") + e.what());
  }

  const WorkerRuntime& runtime = worker_runtime(plan.runtime);  // the manager starts only workers that have one
  starting.pid = getpid();
  flag_store(starting.ready, 1u);
  if (staging_slot >= 0) {
    // Started beside the running layout, it touches no ring or packet until the old processes have left and the
    // manager moved it to its core: then it is the worker its plan names, in that worker's slot.
    if (wait_while_staged(starting, stats) != kStagedGoOn) {
      std::fflush(nullptr);
      _exit(0);  // dismissed: the switch was refused, or the run ended first
    }
    control.pid = getpid();
    flag_store(control.ready, 1u);
  }
  // Sleep until every worker is attached, not spin: a spinning worker would starve its core's siblings through
  // their EAL initialisation once the scheduler module gives it a real-time policy. And sleep on the gate, not in
  // short naps: 63 workers waking every 200 us kept a core busy while the 64th was still starting.
  wait_at_start_gate(stats);
  try {
    runtime.run(segments, stats, worker_index, burst);
  } catch (const std::exception& e) {
    fail(plan.name, std::string("NF failed: ") + e.what());
    std::fflush(nullptr);
    _exit(3);  // nothing destroyed, as at the end below; a live change's build may still run on its thread
  }
  flag_store(control.left_loop, 1u);  // it sends no more: the manager counts kernel links once every sender said so
  std::vector<IngressPort*> inputs;
  for (SegmentRuntime& segment : segments) inputs.push_back(segment.in.get());
  finish_socket_inputs(inputs, stats);

  for (SegmentRuntime& segment : segments) segment.out->drop_held();
  for (size_t s = 0; s < segments.size(); s++) {
    json reports = json::object();
    for (size_t k = 0; k < segments[s].nfs.size(); k++) {
      int nf = segments[s].nf_indexes[k];
      if (!runtime.ran(segments[s], stats, worker_index)) continue;
      json earlier = json::array();  // the instances that new arguments replaced in this process, oldest first
      if (segments[s].live)
        for (const auto& [replaced, report] : segments[s].live->retired_reports)
          if (replaced == k) earlier.push_back(report);
      reports[deployment.nfs[nf].name] = {{"report", segments[s].nfs[k]->report()}, {"replaced", earlier}};
    }
    // NF-specific reports go through a file the manager merges into the results (contract/nf_report_file.h).
    std::ofstream(nf_report_path(deployment.paths.run_dir, worker_index, s))
        << reports.dump(-1, ' ', false, json::error_handler_t::replace);  // an NF's stray bytes cannot lose them all
  }
  // No rte_eal_cleanup(): in a secondary it frees EAL's own hugepage memory (services, ...), and a free that
  // empties a hugepage is a synchronous IPC through the primary to every other process; processes that exit at
  // the same time (other workers, an external NF's application) cannot answer, so the requests waited out EAL's
  // timeouts and the run's stop overran its 5 s. That memory is the primary's: it goes when the run ends.
  // For the same reason the NFs are not destroyed either: their ACL contexts and hash tables are hugepage memory
  // too (rte_acl_free, rte_hash_free), and a chain of seven NF processes under coop, freeing them all at once,
  // overran the stop in most runs, the firewall's or the counter's worker killed. A service's manager frees them
  // once this process is gone, while nothing else exits (dataplane/run/nf_object_reclaim.h).
  std::fflush(nullptr);
  _exit(0);
}
