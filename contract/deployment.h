// The deployment a run executes: chains, NFs, rings, traffic and worker processes, parsed from the run's JSON.
#pragma once

#include <cstdint>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "arg_schema.h"
#include "shm_layout.h"

namespace tandem {

struct TrafficConfig {
  double rate_pps = 0;  // 0 = as fast as the generator can
  // If given, the rate follows these steps (pps, 0 = none), one every step_seconds, cycling; rate_pps is unused.
  std::vector<double> rate_steps_pps;
  std::string pcap;       // a capture replayed instead of built frames (absolute path); empty: none
  bool pcap_loop = true;  // start the capture again at its end; false: the chain's traffic ends with it
  // Per flow: the URL of its HTTP requests (TCP, sized by the request; "": a bare TCP segment); empty list: none.
  std::vector<std::string> http_urls;
  double mean_rate_pps = 0;  // on average, as the control plane resolved it: rate_pps or the steps' mean; 0 = unknown
  double step_seconds = 1;
  std::vector<std::pair<uint16_t, double>> sizes;  // frame size in bytes (with FCS) and weight
  uint32_t flows = 1;
  uint8_t protocol = 17;   // IPPROTO_UDP or IPPROTO_TCP
  uint8_t ip_version = 4;  // 4 or 6 (dataplane/packets/frame_builder.h: the addresses)
  uint16_t vlan = 0;       // an 802.1Q tag with this id on every frame; 0: untagged
};

// The NF type of an unmodified third-party application (nfs/external.cc).
inline constexpr const char* kExternalNfType = "external";

// A scaled NF (μNF's auto-scaling, IV-E): its instances, each an NF of its own with its own ring from the one
// upstream NF, and the rule by which the manager's autoscaler changes how many of them take flows.
struct ScaleConfig {
  std::vector<int> instances;  // global NF indexes, instance 1 (the NF as the spec names it) first
  double window_s = 0.1;       // drops at the instances' input rings over this long: one more instance
  double cooldown_s = 0.5;     // no decision this long after the last one took effect
  double idle_s = 1.0;         // the instances' work fitting in one fewer over this long, without drops: one fewer
  double idle_below = 0.5;     // "fits": their busy share summed stays below idle_below x (instances - 1)
};

struct NfConfig {
  int index = 0;  // global, never given twice in a run: also the NF's slot in the stats zone
  // What it stamps on the packets it processes (contract/packet_meta.h), below kMaxNfs: its index where that is below
  // kMaxNfs, else one a removed chain's NF gave back (a service's added chain: give_hops).
  uint8_t hop = 0;
  std::string name;
  std::string type;
  json args;
  int core = 0;
  int chain = 0;
  int depth = 0;               // the longest path from its chain's entry node to it, in edges (in a line: its position)
  std::vector<int> in_rings;   // the rings that feed it (several at a join)
  std::vector<int> out_rings;  // the rings it feeds (several at a fan-out), each labelled or not (RingConfig)
  std::string spec_path;       // where the spec gives it, for messages: "chains[0].nfs[2]", "chains[1].graph.nodes[0]"
  // A parallel group (μNF): a fork hands every packet to all its branches at once (its out-edges, several and
  // unlabelled); a branch is a line of NFs; the branches re-join at one node.
  bool in_branch = false;    // it runs in a branch: it stamps the packet's branch hop set, not the ordered record
  bool ends_branch = false;  // the last NF of a branch (its egress: a marker port)
  std::vector<std::vector<int>> branches;           // a fork's: each branch's NFs (global indexes), in order
  bool forks() const { return !branches.empty(); }  // its out-rings are a group's branches (its egress: a branch port)
  double cost_cycles = 0;  // estimated TSC cycles per packet (cycle estimator or spec); 0 = not estimated
  double weight = 1;       // priority weight (NF's times its chain's), for schedulers that share CPU by weight
  uint32_t batch = 0;      // initial batch size for bubble from the spec; 0 = from the rates
  // The chain rate the placement solver planned for this NF (auto placement), which Bubble's initial batches
  // follow instead of the offered rate; absent when the spec placed the NFs.
  std::optional<double> planned_rate_pps;
  // An unmodified application in its own process (nfs/external.h): it stamps no hops and keeps no NfCounters;
  // the manager mirrors its port's counters instead.
  bool external() const { return type == kExternalNfType; }
  // A kernel-I/O NF (its `io`, or its chain's, is kernel): it runs in the kernel-I/O runtime. Every NF with a
  // kernel link (one of its own, or a DPDK NF beside one in a chain that mixes them) enters network namespace
  // `netns` and takes frames from a packet socket on `in_interface` where its in-link is kernel, handing them on
  // through one on `out_interface` where its out-link is (the same interface through a switch), addressed to
  // `out_next_hop` where the switch forwards by MAC. Empty until the control plane has made the namespaces (a
  // `--check` sees none), and for a DPDK NF between rings.
  bool kernel_io = false;
  std::string netns;
  std::string in_interface;
  std::string out_interface;
  std::string out_next_hop;
  // An instance of a scaled NF: `scale_group` is the global index of its instance 1 (the NF that holds `scale`),
  // `instance` its number (1-based); -1 and 0 for an NF that is not scaled.
  int scale_group = -1;
  int instance = 0;
  std::optional<ScaleConfig> scale;  // on instance 1 only
  // When its worker's process dies while traffic runs: kNever ends the run naming it; the others restart the worker
  // under the same name, its rings and counters kept (dataplane/run/run_restarts.cc).
  enum class Restart { kNever, kOnFailure, kAlways } restart = Restart::kNever;
};

// One edge of a chain's graph, and the single-producer, single-consumer ring that carries it.
struct RingConfig {
  int index = 0;
  std::string name;  // e.g. "fw3:entry", "fw3:fw1->fw2", "fw3:exit"; "web:cls->waf" for a labelled edge
  uint32_t capacity = 0;
  int chain = 0;
  int from = -1;          // the NF that feeds it; -1: the generator (the chain's entry ring)
  int to = -1;            // the NF it feeds; -1: the sink (an exit ring)
  std::string label;      // the output gate of `from` whose packets it carries (a labelled fan-out); empty: all
  std::string spec_path;  // the edge in the spec, for messages: "chains[0].graph.edges[1]"; empty: implied by a list
  // A kernel link instead of a ring: a veth (through a switch or back to back) between packet sockets; it holds
  // no mbufs, and its counters come from both ends and the receiving socket (contract/shm_layout.h).
  bool kernel = false;
  // The DPDK ring's name where it is not ring_object_name(index) (contract/eal_args.h ring_object): a chain added
  // to a service and refused may leave its rings behind (where the manager may not free them), and a later chain's
  // rings take the same indices. The deployment file carries it (`ring_objects`), so workers find their rings.
  std::string object;
};

// How a chain's kernel links move packets (`io: kernel` in the spec, for the chain or some of its NFs): system
// calls of up to `mux` frames, NFs linked back to back or through a switch; where the first (last) NF is
// kernel-I/O, the manager's generator (sink) reaches it through DPDK's net_af_packet on a veth of the root
// namespace (`generator_interface`, `sink_interface`). A link is kernel where an NF at either end is kernel-I/O.
inline constexpr uint16_t kMaxKernelMux = 256;

struct KernelIo {
  bool enabled = false;      // the chain has kernel-I/O NFs (all, or some beside DPDK NFs)
  uint16_t mux = 1;          // 1: recvfrom/sendto per frame; N: recvmmsg/sendmmsg of up to N frames
  std::string link = "b2b";  // b2b | bridge | ovs | ovs-userspace
  std::string generator_interface;
  std::string sink_interface;
  std::string entry_next_hop;  // the first NF's MAC where a switch forwards by destination; empty otherwise
};

// A DPDK device the spec names (`ports:`), or a lab host's link: the manager's Rx stage takes frames from it into
// the chains it feeds, and its Tx stage sends the chains' output out of it (dataplane/ports/ethdev/).
struct PortConfig {
  int index = 0;
  std::string name;  // the spec's name (a lab host's name for its link)
  // A PCI address ("0000:3b:00.0", bound to a DPDK driver by the user) or a virtual device: its driver's name and
  // arguments ("net_af_packet0,iface=veth1", "net_tap0,iface=tdm0", "net_ring0", "net_null0").
  std::string device;
  // Frames no chain of this port handles (not IP, IPv6 neighbour discovery, an address no chain's `source`
  // matches): passed untouched to the port that chain sends to (a bump in the wire), or dropped and counted.
  bool pass_unhandled = true;
  // The link leads to another Tandem node (a VXLAN between nodes): frames leave numbered, with the link trailer
  // (dataplane/ports/wire/), and come in with it, so that the wire's losses are counted.
  bool wire = false;
  std::string spec_path;  // "ports[0]", "lab.hosts[1]"
  bool pci() const;       // the device is a PCI address
};

// A chain is a graph of NFs: one entry node fed by the generator, edges, and exit nodes feeding the sink. A
// chain given as a list is the graph whose edges join consecutive NFs.
struct ChainConfig {
  int index = 0;
  std::string name;
  std::vector<int> nfs;    // global NF indexes in topological order (in a line: chain order)
  std::vector<int> rings;  // every ring of the chain: the entry first, then the edges, then the exits
  int entry_ring = 0;
  std::vector<int> exit_rings;
  TrafficConfig traffic;
  KernelIo io;
  // Real traffic instead of the generator's: the port (PortConfig::index) whose Rx stage feeds the entry, and the
  // source prefixes it takes for this chain where several chains share the port ("198.18.1.0/24"; none: every IP
  // frame); -1: the generator. The port the exits' packets leave by; -1: the sink frees them.
  int from_port = -1;
  std::vector<std::string> from_sources;
  int to_port = -1;
};

// NFs of one chain executed by one worker as consecutive function calls: each NF but the last has one edge,
// to the next. Its ports are the first NF's in-rings and the last NF's out-rings.
struct Segment {
  std::vector<int> in_rings;
  std::vector<int> nfs;
  std::vector<int> out_rings;
};

// The segment of `nfs` (consecutive along single edges; the caller's to ensure), with its rings.
Segment segment_of(const std::vector<NfConfig>& all_nfs, std::vector<int> nfs);

// One worker process: pinned to `core`, it polls its segments round-robin.
// How a worker process runs its segments: one field of the worker plan, chosen by the scheduler module's plan.
enum class Runtime {
  PollLoop,  // tandem-worker's poll loop over every segment (dataplane/runtimes/poll_loop/)
  // tandem-worker with each segment a user-level thread that yields after every batch, running only the NFs it
  // holds in the stats zone's nf_control (Bubble; dataplane/runtimes/user_level_threads/)
  UserLevelThreads,
  External,  // an external NF's application (its single segment), started and stopped by the manager's ExternalNf
  KernelIo,  // tandem-worker in the NF's network namespace, blocking in poll() while its sockets are empty
             // (dataplane/runtimes/kernel_io/)
};

const char* runtime_name(Runtime runtime);
Runtime runtime_from_name(const std::string& name);  // throws std::runtime_error on an unknown name

struct WorkerPlan {
  int index = 0;
  std::string name;
  int core = 0;
  int lcore_id = 0;  // unique per process: mempool caches are indexed by lcore id in shared memory
  std::vector<Segment> segments;
  Runtime runtime = Runtime::PollLoop;
};

// Whether two plans run the same NFs in the same processes on the same cores (what a live scheduler switch keeps).
bool same_layout(const std::vector<WorkerPlan>& a, const std::vector<WorkerPlan>& b);
// `plan` with each process that runs as one of `running` does (the same NFs in the same segments, on the same core,
// in the same runtime) at that one's place, the others after them in the plan's order; indices numbered anew, and
// lcore ids too but a running process's, which it keeps. A module numbers its processes its own way (in the NFs' order,
// by core): what makes two plans of the same processes the same layout, and a chain's added processes come after the
// running ones.
std::vector<WorkerPlan> in_running_order(std::vector<WorkerPlan> plan, const std::vector<WorkerPlan>& running);
// Whether a module that plans `plan` takes over the `running` processes as they are (a switch in place): the same
// processes in any order, and no user-level threads, which are placed as their module attaches (another module, or
// the same with other options, starts them anew).
bool switches_in_place(const std::vector<WorkerPlan>& plan, const std::vector<WorkerPlan>& running);

struct SchedulerConfig {
  std::string name;
  json options;                                             // resolved, with defaults
  bool operator==(const SchedulerConfig&) const = default;  // the same module with the same options
};

struct RunPaths {
  std::string file_prefix;  // DPDK --file-prefix shared by the manager and its workers
  std::string huge_dir;     // hugetlbfs mount for this run
  std::string run_dir;      // where deployment.json and results.json are written
  std::string worker_binary;
  std::string cgroup_dir;      // a cgroup v2 directory the control plane made for the run, if the scheduler asked
  std::string cpu_cgroup_dir;  // a cgroup directory with the cpu controller (v1 or v2) made for the run, if asked
};

// One packet in 512 traced: a cold cache line for the generator and one for the sink per traced packet cost
// 1.4-2.9 % of throughput at one in 256 (bench/results/profiler-cost.md), above the 2 % the profiler may take.
inline constexpr uint32_t kTraceSampleEvery = 512;

struct Deployment {
  std::string name;
  int control_core = 0;
  uint16_t burst = 32;
  uint16_t prefetch = 0;  // the pipelined prefetch distance k of every NF's batches (contract/batch.h)
  double duration_s = 5;  // 0: until SIGINT or SIGTERM ends the traffic (chains fed by ports), then the drain
  double warmup_s = 0.5;
  double drain_s = 0.2;
  uint32_t latency_sample_every = 16;
  // Each progress event carries a snapshot of every counter (run --metrics: the control plane serves them).
  bool live_metrics = false;
  // A service (./tandem serve): chains may be added while it runs, so its mbuf pool has room for them.
  bool service = false;
  // run --profile: one packet in trace_sample_every (on average) carries per-hop timestamps, and the sink breaks
  // its latency down by hop (contract/hop_trace.h). They are drawn from the packets whose latency is sampled (a
  // multiple of latency_sample_every), pseudo-randomly, so they are a fair subset of them.
  bool trace_hops = false;  // the run's profile names the probe `hops` (dataplane/observation/hop_trace_probe.cc)
  uint32_t trace_sample_every = kTraceSampleEvery;
  // Delivered packets written to a pcap file by the sink (every chain's, in delivery order); empty path: none.
  std::string capture_path;
  uint64_t capture_limit = 0;
  std::vector<NfConfig> nfs;
  std::vector<ChainConfig> chains;
  std::vector<RingConfig> rings;
  std::vector<PortConfig> ports;
  SchedulerConfig scheduler;
  std::vector<WorkerPlan> workers;  // filled by the scheduler module's plan
  RunPaths paths;
  // A profiling run instead of traffic: {"estimate": {...}} (cycle estimator), {"switch_latency": {...}}.
  json profile;
};

// Parses the JSON written by the control plane (and, once planned, by the manager for its workers).
// Structural problems were caught by the control plane; what is left throws std::runtime_error.
Deployment parse_deployment(const json& doc);
json deployment_to_json(const Deployment& deployment, const json& original);
// The cores that hold the deployment's NFs, and such a set as a message lists it ("1, 2").
std::set<int> nf_cores(const Deployment& deployment);
std::string core_list(const std::set<int>& cores);
// One more chain, as the control plane describes chains, parsed after the deployment's own: its NFs and rings take
// the next indices, so every index already given out stays what it was. Throws std::runtime_error as parsing does.
void append_chain(Deployment& deployment, const json& chain);
// Where `next` (a service's chains with one appended, as far as append_chain read it) outgrows what a run holds at
// once (kMaxNfs, ... of the chains not removed: `chain_removed`, by index) or over its life (kLifetimeNfs, ...): the
// refusal a service's user needs. nullopt where it fits.
std::optional<std::string> beyond_stats_zone(const Deployment& next, const std::vector<bool>& chain_removed);
// Gives the NFs of `next` from `first_new` on the lowest hop stamps that no NF of a chain not removed holds (removed
// ones gave theirs back: their packets drained). False where too few are free (beyond_stats_zone says why first).
bool give_hops(Deployment& next, size_t first_new, const std::vector<bool>& chain_removed);
// Gives the workers of `next` from `first_new` on the lowest lcore ids (1 to `highest`: above are applications')
// that no worker of `next` before them holds, but those whose every NF is of a removed chain (`chain_removed`: its
// processes are gone) and those `kept` names (by worker index: a killed one, which may have died inside its mempool
// cache). False where too few are free.
bool give_lcore_ids(Deployment& next, size_t first_new, const std::vector<bool>& chain_removed,
                    const std::vector<bool>& kept, int highest = kMaxWorkers);
// A port as the control plane writes it (a spec's `ports` entry resolved), with its index among the deployment's.
PortConfig port_from_json(const json& port, int index);

// Packets the scaled egress of `feeder` may hold while flows move between a scaled NF's instances
// (dataplane/ports/scaled_egress.h): twice what its rings to the instances hold. The old instances drain their rings
// before moved flows go on, and under overload the moved flows' packets meanwhile arrive up to about as fast as
// the old instances empty them. feeder -1: every feeder's together (a scaled NF after a scaled NF has one feeder
// an instance before it), what the run's mbuf pool must add.
unsigned scaled_hold_capacity(const Deployment& deployment, int scale_group, int feeder = -1);

// The NFs whose egress feeds a scaled NF's instances, in a fixed order: one NF, or each instance of the scaled NF
// before it. Feeder k writes ScaleControl::feeders[k].
std::vector<int> scale_feeders(const Deployment& deployment, int scale_group);

inline constexpr unsigned kMbufCache = 256;  // per-lcore mempool cache

// Whether any of `rings` (indexes into deployment.rings) is a kernel link: a veth, not a ring.
bool any_kernel_link(const Deployment& deployment, const std::vector<int>& rings);

// Mbufs the run's pool needs: every ring full, every process's cache and bursts, and slack for the generator.
// Sized per NF (an upper bound on worker processes), so it can be computed before workers are planned. A service
// counts only what it still runs: `chain_gone` (per chain) and `port_gone` (PortConfig::index) name what was removed,
// whose rings were drained and whose queues closed, their mbufs back in the pool.
unsigned mbuf_pool_size(const Deployment& deployment, const std::vector<bool>& chain_gone = {},
                        const std::set<int>& port_gone = {});
// What a service's pool holds beyond its own chains' needs, for chains added while it runs.
inline constexpr unsigned kServiceSpareMbufs = 16384;

// Where an NF sits in the spec, for error messages: "chains[C].nfs[P]" or "chains[C].graph.nodes[N]".
inline const std::string& spec_path(const NfConfig& nf) { return nf.spec_path; }

}  // namespace tandem
