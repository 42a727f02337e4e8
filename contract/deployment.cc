// Parsing of the run's JSON into a Deployment, and the sizes derived from it.
#include "deployment.h"

#include <netinet/in.h>

#include <algorithm>
#include <bitset>
#include <charconv>
#include <map>
#include <regex>
#include <stdexcept>

#include "json_integers.h"
#include "shm_layout.h"

namespace tandem {

namespace {

TrafficConfig parse_traffic(const json& t) {
  TrafficConfig traffic;
  traffic.rate_pps = t.value("rate_pps", 0.0);
  traffic.rate_steps_pps = t.value("rate_steps_pps", std::vector<double>{});
  traffic.mean_rate_pps = t.value("mean_rate_pps", 0.0);
  traffic.step_seconds = t.value("step_seconds", 1.0);
  for (const auto& entry : t.at("sizes"))
    traffic.sizes.emplace_back(integer_at<uint16_t>(entry.at(0), "traffic.sizes"), entry.at(1).get<double>());
  traffic.flows = integer_or<decltype(traffic.flows)>(t, "flows", 1u);
  traffic.protocol = t.value("protocol", std::string("udp")) == "tcp" ? IPPROTO_TCP : IPPROTO_UDP;
  traffic.ip_version = integer_or<decltype(traffic.ip_version)>(t, "ip_version", 4u);
  if (traffic.ip_version != 4 && traffic.ip_version != 6)
    throw std::invalid_argument("traffic.ip_version must be 4 or 6");
  traffic.vlan = integer_or<decltype(traffic.vlan)>(t, "vlan", 0u);
  if (traffic.vlan > 4094) throw std::invalid_argument("traffic.vlan must be 0 (none) to 4094");
  traffic.http_urls = t.value("http_urls", std::vector<std::string>{});
  traffic.pcap = t.value("pcap", std::string());
  traffic.pcap_loop = t.value("pcap_loop", true);
  if (!traffic.http_urls.empty() && traffic.http_urls.size() != traffic.flows)
    throw std::invalid_argument("traffic.http_urls must give one URL per flow");
  return traffic;
}

json worker_to_json(const WorkerPlan& plan) {
  json segments = json::array();
  for (const Segment& s : plan.segments) segments.push_back({{"nfs", s.nfs}});
  return {{"index", plan.index},       {"name", plan.name},    {"core", plan.core},
          {"lcore_id", plan.lcore_id}, {"segments", segments}, {"runtime", runtime_name(plan.runtime)}};
}

WorkerPlan worker_from_json(const json& j, const std::vector<NfConfig>& nfs) {
  WorkerPlan plan;
  plan.index = integer_at<decltype(plan.index)>(j.at("index"), "workers[].index");
  plan.name = j.at("name");
  plan.core = integer_at<decltype(plan.core)>(j.at("core"), "workers[].core");
  plan.lcore_id = integer_at<decltype(plan.lcore_id)>(j.at("lcore_id"), "workers[].lcore_id");
  for (const auto& s : j.at("segments")) {
    std::vector<int> members;
    for (const auto& member : s.at("nfs")) members.push_back(integer_at<int>(member, "workers[].segments[].nfs"));
    plan.segments.push_back(segment_of(nfs, members));
  }
  plan.runtime = runtime_from_name(j.at("runtime"));
  return plan;
}

// Forks (several unlabelled out-edges), and along each of their branches the NFs in it and the last one, up to
// the join (the first NF with several in-edges). The control plane checked the shape; what is left throws.
void mark_parallel_groups(Deployment& d, const ChainConfig& chain) {
  for (int fork : chain.nfs) {
    NfConfig& f = d.nfs[fork];
    // Edges into one scaled NF's instances are one edge: its scaled egress sends each packet to one of them.
    if (!f.out_rings.empty() && d.rings[f.out_rings[0]].to >= 0 && d.nfs[d.rings[f.out_rings[0]].to].scale_group >= 0)
      continue;
    bool unlabelled =
        std::all_of(f.out_rings.begin(), f.out_rings.end(), [&](int ring) { return d.rings[ring].label.empty(); });
    if (f.out_rings.size() < 2 || !unlabelled) continue;
    for (int ring : f.out_rings) {
      std::vector<int>& branch = f.branches.emplace_back();
      int nf = d.rings[ring].to;
      while (true) {
        NfConfig& node = d.nfs[nf];
        if (node.in_rings.size() != 1 || node.out_rings.size() != 1 || d.rings[node.out_rings[0]].to < 0)
          throw std::runtime_error("chain " + chain.name + ": a branch after " + f.name +
                                   " is not a line of NFs that re-joins (at " + node.name + ")");
        node.in_branch = true;
        branch.push_back(nf);
        int next = d.rings[node.out_rings[0]].to;
        if (d.nfs[next].in_rings.size() > 1) {
          node.ends_branch = true;
          break;
        }
        nf = next;
      }
    }
  }
}

// The instances of each scaled NF (the control plane made them: nodes with "scale_group", the name of instance 1,
// and "instance"), and on instance 1 the rule of its autoscaler.
void parse_scale_groups(const json& nodes, const ChainConfig& chain, const std::map<std::string, int>& local_of,
                        Deployment& d) {
  for (size_t i = 0; i < nodes.size(); i++) {
    if (!nodes[i].contains("scale_group")) continue;
    auto head = local_of.find(nodes[i].at("scale_group").get<std::string>());
    if (head == local_of.end()) throw std::runtime_error("chain " + chain.name + ": a scale group names an unknown NF");
    NfConfig& nf = d.nfs[chain.nfs[i]];
    NfConfig& first = d.nfs[chain.nfs[static_cast<size_t>(head->second)]];
    nf.scale_group = first.index;
    nf.instance = integer_at<int>(nodes[i].at("instance"), "instance");
    if (!first.scale) {
      const json& rule = nodes[static_cast<size_t>(head->second)].at("scale");
      first.scale = ScaleConfig{{},
                                rule.at("window_ms").get<double>() / 1e3,
                                rule.at("cooldown_ms").get<double>() / 1e3,
                                rule.at("idle_ms").get<double>() / 1e3,
                                rule.at("idle_below").get<double>()};
    }
    first.scale->instances.push_back(nf.index);
  }
}

// A chain's NFs (in topological order), its rings (entry, one per edge, one per exit node) and each NF's
// place in the graph. A chain without "edges" is a line: consecutive NFs joined.
void parse_chain(const json& c, Deployment& d) {
  ChainConfig chain;
  chain.index = static_cast<int>(d.chains.size());
  chain.name = c.at("name");
  chain.traffic = parse_traffic(c.at("traffic"));
  chain.from_port = integer_or(c, "from_port", -1);
  chain.to_port = integer_or(c, "to_port", -1);
  chain.from_sources = c.value("from_sources", std::vector<std::string>{});
  uint32_t capacity = integer_or(c, "ring_capacity", 2048u);
  const json& nodes = c.at("nfs");
  json io_nfs = json::array();
  if (c.contains("io") && c["io"].value("kind", std::string("dpdk")) == "kernel") {
    const json& io = c.at("io");
    chain.io = {true,
                integer_or(io, "mux", uint16_t{1}),
                io.value("link", std::string("b2b")),
                io.value("generator_interface", std::string()),
                io.value("sink_interface", std::string()),
                io.value("entry_next_hop", std::string())};
    io_nfs = io.value("nfs", json::array());  // by place in `nfs`, once the control plane made the namespaces
  }
  if (nodes.empty()) throw std::runtime_error("chain " + chain.name + " has no NFs");
  std::map<std::string, int> local_of;  // name -> place in chain.nfs
  for (size_t i = 0; i < nodes.size(); i++) {
    NfConfig nf;
    nf.index = static_cast<int>(d.nfs.size());
    nf.hop = static_cast<uint8_t>(nf.index % kMaxNfs);  // a service's added NF beyond kMaxNfs: nf_hops says its own
    nf.name = nodes[i].at("name");
    nf.type = nodes[i].at("type");
    nf.args = nodes[i].value("args", json::object());
    nf.core = integer_at<int>(nodes[i].at("core"), "core");
    nf.cost_cycles = nodes[i].value("cost_cycles", 0.0);
    nf.weight = nodes[i].value("weight", 1.0);
    nf.batch = integer_or<decltype(nf.batch)>(nodes[i], "batch", 0u);
    if (std::string restart = nodes[i].value("restart", std::string("never")); restart == "always")
      nf.restart = NfConfig::Restart::kAlways;
    else if (restart == "on-failure")
      nf.restart = NfConfig::Restart::kOnFailure;
    else if (restart != "never")
      throw std::runtime_error("NF " + nf.name + ": restart must be never, on-failure or always, not " + restart);
    if (nodes[i].contains("planned_rate_pps")) nf.planned_rate_pps = nodes[i].at("planned_rate_pps").get<double>();
    nf.chain = chain.index;
    // Each NF's own `io` where the chain mixes them; the chain's otherwise.
    nf.kernel_io = chain.io.enabled && nodes[i].value("io", std::string("kernel")) == "kernel";
    if (i < io_nfs.size()) {
      nf.netns = io_nfs[i].at("netns");
      nf.in_interface = io_nfs[i].at("in");
      nf.out_interface = io_nfs[i].at("out");
      nf.out_next_hop = io_nfs[i].value("next_hop", std::string());
    }
    nf.spec_path =
        nodes[i].value("spec_path", "chains[" + std::to_string(chain.index) + "].nfs[" + std::to_string(i) + "]");
    local_of[nf.name] = static_cast<int>(i);
    chain.nfs.push_back(nf.index);
    d.nfs.push_back(nf);
  }
  parse_scale_groups(nodes, chain, local_of, d);
  auto add_ring = [&](const std::string& name, int from, int to, const std::string& label, const std::string& path) {
    bool kernel =
        (from >= 0 && d.nfs[from].kernel_io) || (to >= 0 && d.nfs[to].kernel_io);  // a socket at one end or both
    RingConfig ring{static_cast<int>(d.rings.size()),
                    chain.name + ":" + name,
                    capacity,
                    chain.index,
                    from,
                    to,
                    label,
                    path,
                    kernel};
    if (from >= 0) d.nfs[from].out_rings.push_back(ring.index);
    if (to >= 0) d.nfs[to].in_rings.push_back(ring.index);
    chain.rings.push_back(ring.index);
    d.rings.push_back(ring);
    return ring.index;
  };
  json edges = json::array();
  if (c.contains("edges")) {
    edges = c.at("edges");
  } else {
    for (size_t i = 1; i < nodes.size(); i++)
      edges.push_back({{"from", nodes[i - 1].at("name")}, {"to", nodes[i].at("name")}});
  }
  chain.entry_ring = add_ring("entry", -1, chain.nfs.front(), "", "");
  for (const json& edge : edges) {
    auto local = [&](const std::string& field) {
      auto found = local_of.find(edge.at(field).get<std::string>());
      if (found == local_of.end())
        throw std::runtime_error("chain " + chain.name + ": an edge names an unknown NF " + edge.at(field).dump());
      return found->second;
    };
    int from = local("from"), to = local("to");
    // The control plane sends the NFs in topological order; depths and segments rely on it.
    if (to <= from) throw std::runtime_error("chain " + chain.name + ": its NFs are not in topological order");
    add_ring(nodes[from].at("name").get<std::string>() + "->" + nodes[to].at("name").get<std::string>(),
             chain.nfs[from], chain.nfs[to], edge.value("label", std::string()),
             edge.value("spec_path", std::string()));
  }
  std::vector<int> exits;
  for (int nf : chain.nfs)
    if (d.nfs[nf].out_rings.empty()) exits.push_back(nf);
  for (int nf : exits)
    chain.exit_rings.push_back(add_ring(exits.size() == 1 ? "exit" : d.nfs[nf].name + "->exit", nf, -1, "", ""));
  for (size_t i = 1; i < chain.nfs.size(); i++)
    if (d.nfs[chain.nfs[i]].in_rings.empty())
      throw std::runtime_error("chain " + chain.name + " has more than one entry NF");
  for (int nf : chain.nfs)
    for (int ring : d.nfs[nf].in_rings)
      if (d.rings[ring].from >= 0) d.nfs[nf].depth = std::max(d.nfs[nf].depth, d.nfs[d.rings[ring].from].depth + 1);
  mark_parallel_groups(d, chain);
  d.chains.push_back(chain);
}

constexpr std::pair<Runtime, const char*> kRuntimeNames[] = {{Runtime::PollLoop, "poll_loop"},
                                                             {Runtime::UserLevelThreads, "user_level_threads"},
                                                             {Runtime::External, "external"},
                                                             {Runtime::KernelIo, "kernel_io"}};

}  // namespace

const char* runtime_name(Runtime runtime) {
  for (const auto& [value, name] : kRuntimeNames)
    if (value == runtime) return name;
  throw std::logic_error("a runtime without a name");
}

Runtime runtime_from_name(const std::string& name) {
  for (const auto& [value, known] : kRuntimeNames)
    if (name == known) return value;
  throw std::runtime_error("unknown worker runtime '" + name + "'");
}

namespace {

// The entries of `doc[key]`, an object keyed by the index of what each is for ("3": ...), each index checked to be
// one of `count` (`what` names them in the error).
std::vector<std::pair<size_t, json>> by_index(const json& doc, const std::string& key, size_t count,
                                              const std::string& what) {
  std::vector<std::pair<size_t, json>> entries;
  const json object = doc.value(key, json::object());  // held: items() refers to it
  for (const auto& [index, value] : object.items()) {
    size_t at = 0;
    auto [end, error] = std::from_chars(index.data(), index.data() + index.size(), at);
    if (error != std::errc() || end != index.data() + index.size() || at >= count)
      throw std::runtime_error(key + " names " + what + " " + index + ", which is not there");
    entries.emplace_back(at, value);
  }
  return entries;
}

}  // namespace

Deployment parse_deployment(const json& doc) {
  Deployment d;
  d.name = doc.value("name", std::string("tandem"));
  d.control_core = integer_or<decltype(d.control_core)>(doc, "control_core", 0);
  d.burst = integer_or<decltype(d.burst)>(doc, "burst", 32);
  d.prefetch = integer_or<decltype(d.prefetch)>(doc, "prefetch", 0);
  d.duration_s = doc.value("duration", 5.0);
  d.warmup_s = doc.value("warmup", 0.5);
  d.drain_s = doc.value("drain", 0.2);
  d.latency_sample_every = integer_or<decltype(d.latency_sample_every)>(doc, "latency_sample_every", 16u);
  d.live_metrics = doc.value("live_metrics", false);
  d.service = doc.value("serve", false);
  d.trace_sample_every = integer_or<decltype(d.trace_sample_every)>(doc, "trace_sample_every", kTraceSampleEvery);
  if (d.trace_sample_every < d.latency_sample_every || d.trace_sample_every % d.latency_sample_every != 0)
    throw std::runtime_error("trace_sample_every must be a multiple of latency_sample_every");
  if (doc.contains("capture")) {
    d.capture_path = doc["capture"].at("path").get<std::string>();
    d.capture_limit = integer_at<uint64_t>(doc["capture"].at("limit"), "capture.limit");
  }
  d.profile = doc.value("profile", json());
  d.trace_hops = d.profile.is_object() && d.profile.contains("hops");  // the probe's workers stamp their hops
  d.scheduler.name = doc.at("scheduler").at("name");
  d.scheduler.options = doc.at("scheduler").value("options", json::object());
  for (const auto& p : doc.value("ports", json::array()))
    d.ports.push_back(port_from_json(p, static_cast<int>(d.ports.size())));
  for (const auto& c : doc.at("chains")) append_chain(d, c);
  if (doc.contains("workers"))
    for (const auto& w : doc.at("workers")) d.workers.push_back(worker_from_json(w, d.nfs));
  for (const auto& [ring, object] : by_index(doc, "ring_objects", d.rings.size(), "ring"))
    d.rings[ring].object = object.get<std::string>();
  for (const auto& [nf, hop] : by_index(doc, "nf_hops", d.nfs.size(), "NF")) {
    d.nfs[nf].hop = integer_at<uint8_t>(hop, "nf_hops");
    if (d.nfs[nf].hop >= kMaxNfs)
      throw std::runtime_error("nf_hops gives NF " + std::to_string(nf) + " a stamp beyond kMaxNfs");
  }
  if (doc.contains("paths")) {
    const json& p = doc.at("paths");
    d.paths = {p.value("file_prefix", ""),   p.value("huge_dir", ""),   p.value("run_dir", ""),
               p.value("worker_binary", ""), p.value("cgroup_dir", ""), p.value("cpu_cgroup_dir", "")};
  }
  return d;
}

PortConfig port_from_json(const json& p, int index) {
  PortConfig port;
  port.index = index;
  port.name = p.at("name");
  port.device = p.at("device");
  port.pass_unhandled = p.value("unhandled", std::string("pass")) == "pass";
  port.wire = p.value("wire", false);
  port.spec_path = p.value("spec_path", "ports[" + std::to_string(port.index) + "]");
  return port;
}

namespace {

// Whether every NF, ring and chain of `d` has its slot in the stats zone.
bool within_stats_zone(const Deployment& d) {
  return d.nfs.size() <= static_cast<size_t>(kLifetimeNfs) && d.rings.size() <= static_cast<size_t>(kLifetimeRings) &&
         d.chains.size() <= static_cast<size_t>(kLifetimeChains);
}

bool removed(const std::vector<bool>& chain_removed, int chain) {
  return static_cast<size_t>(chain) < chain_removed.size() && chain_removed[chain];
}

// What `d` runs at once: its chains', NFs' and rings' number, but a removed chain's.
struct LiveCount {
  size_t chains = 0, nfs = 0, rings = 0;
};

LiveCount live_count(const Deployment& d, const std::vector<bool>& chain_removed) {
  LiveCount live;
  for (const ChainConfig& chain : d.chains)
    if (!removed(chain_removed, chain.index)) {
      live.chains++;
      live.nfs += chain.nfs.size();
      live.rings += chain.rings.size();
    }
  return live;
}

}  // namespace

void append_chain(Deployment& d, const json& c) {
  parse_chain(c, d);
  const ChainConfig& chain = d.chains.back();
  for (int port : {chain.from_port, chain.to_port})
    if (port >= static_cast<int>(d.ports.size()))
      throw std::runtime_error("chain " + chain.name + " names port " + std::to_string(port) + ", which is not there");
  if (!within_stats_zone(d))
    throw std::runtime_error("deployment too large: at most " + std::to_string(kLifetimeNfs) + " NFs, " +
                             std::to_string(kLifetimeRings) + " rings and " + std::to_string(kLifetimeChains) +
                             " chains over a run's life");
}

std::optional<std::string> beyond_stats_zone(const Deployment& next, const std::vector<bool>& chain_removed) {
  LiveCount live = live_count(next, chain_removed);
  if (live.nfs > static_cast<size_t>(kMaxNfs) || live.rings > static_cast<size_t>(kMaxRings) ||
      live.chains > static_cast<size_t>(kMaxChains))
    return "a run holds " + std::to_string(kMaxNfs) + " NFs, " + std::to_string(kMaxRings) + " rings and " +
           std::to_string(kMaxChains) + " chains at once, and with this chain it would hold " +
           std::to_string(live.nfs) + " NFs, " + std::to_string(live.rings) + " rings and " +
           std::to_string(live.chains) + " chains: remove one first";
  if (within_stats_zone(next)) return std::nullopt;
  return "a service holds " + std::to_string(kLifetimeNfs) + " NFs, " + std::to_string(kLifetimeRings) + " rings and " +
         std::to_string(kLifetimeChains) +
         " chains over its life (a removed chain's counters stay in "
         "its results), and with this chain it would have held " +
         std::to_string(next.nfs.size()) + " NFs, " + std::to_string(next.rings.size()) + " rings and " +
         std::to_string(next.chains.size()) + " chains: restart the service to add it";
}

bool give_hops(Deployment& next, size_t first_new, const std::vector<bool>& chain_removed) {
  std::bitset<kMaxNfs> taken;
  for (size_t n = 0; n < first_new && n < next.nfs.size(); n++)
    if (!removed(chain_removed, next.nfs[n].chain)) taken.set(next.nfs[n].hop);
  size_t hop = 0;
  for (size_t n = first_new; n < next.nfs.size(); n++) {
    while (hop < taken.size() && taken.test(hop)) hop++;
    if (hop == taken.size()) return false;
    next.nfs[n].hop = static_cast<uint8_t>(hop++);
  }
  return true;
}

bool give_lcore_ids(Deployment& next, size_t first_new, const std::vector<bool>& chain_removed,
                    const std::vector<bool>& kept, int highest) {
  std::vector<bool> taken(static_cast<size_t>(std::max(highest, 0)) + 1, false);
  taken[0] = true;  // the manager's
  for (size_t w = 0; w < first_new && w < next.workers.size(); w++) {
    const WorkerPlan& plan = next.workers[w];
    bool gone = std::all_of(plan.segments.begin(), plan.segments.end(), [&](const Segment& segment) {
      return removed(chain_removed, next.nfs[segment.nfs.front()].chain);
    });
    if ((!gone || (w < kept.size() && kept[w])) && static_cast<size_t>(plan.lcore_id) < taken.size())
      taken[static_cast<size_t>(plan.lcore_id)] = true;
  }
  size_t lcore = 1;
  for (size_t w = first_new; w < next.workers.size(); w++) {
    while (lcore < taken.size() && taken[lcore]) lcore++;
    if (lcore == taken.size()) return false;
    next.workers[w].lcore_id = static_cast<int>(lcore++);
  }
  return true;
}

json deployment_to_json(const Deployment& deployment, const json& original) {
  json doc = original;
  for (size_t c = 0; c < deployment.chains.size(); c++)
    for (size_t p = 0; p < deployment.chains[c].nfs.size(); p++)
      doc["chains"][c]["nfs"][p]["args"] = deployment.nfs[deployment.chains[c].nfs[p]].args;
  doc["scheduler"]["options"] = deployment.scheduler.options;
  doc["workers"] = json::array();
  for (const WorkerPlan& plan : deployment.workers) doc["workers"].push_back(worker_to_json(plan));
  doc.erase("ring_objects");
  for (const RingConfig& ring : deployment.rings)
    if (!ring.object.empty()) doc["ring_objects"][std::to_string(ring.index)] = ring.object;
  doc.erase("nf_hops");
  for (const NfConfig& nf : deployment.nfs)
    if (nf.hop != nf.index) doc["nf_hops"][std::to_string(nf.index)] = nf.hop;
  return doc;
}

bool PortConfig::pci() const {
  // Domain:bus:device.function, as DPDK's allow list and dpdk-devbind write it; the domain may be left out.
  static const std::regex address(R"(^([0-9a-fA-F]{4}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]$)");
  return std::regex_match(device, address);
}

bool any_kernel_link(const Deployment& deployment, const std::vector<int>& rings) {
  return std::any_of(rings.begin(), rings.end(), [&](int ring) { return deployment.rings[ring].kernel; });
}

unsigned mbuf_pool_size(const Deployment& deployment, const std::vector<bool>& chain_gone,
                        const std::set<int>& port_gone) {
  auto gone = [&](int chain) { return chain < static_cast<int>(chain_gone.size()) && chain_gone[chain]; };
  unsigned mbufs = 8192 + (deployment.service ? kServiceSpareMbufs : 0);
  for (const RingConfig& ring : deployment.rings)
    if (!gone(ring.chain)) mbufs += ring.capacity;
  // A port's receive and send descriptors each hold an mbuf, and the Rx stage a burst.
  for (const PortConfig& port : deployment.ports)
    if (!port_gone.count(port.index)) mbufs += 2 * 1024u + deployment.burst;
  for (const NfConfig& nf : deployment.nfs) {
    if (gone(nf.chain)) continue;
    mbufs += kMbufCache * 3 / 2 + 2u * deployment.burst;
    for (int ring : nf.in_rings)  // a packet socket's receive buffers, one per I/O vector
      if (deployment.rings[ring].kernel) mbufs += deployment.chains[nf.chain].io.mux;
    if (nf.scale) mbufs += scaled_hold_capacity(deployment, nf.index);  // what its egress may hold
  }
  return mbufs;
}

unsigned scaled_hold_capacity(const Deployment& deployment, int scale_group, int feeder) {
  unsigned rings = 0;
  for (int instance : deployment.nfs.at(scale_group).scale->instances)
    for (int ring : deployment.nfs[instance].in_rings)
      if (feeder < 0 || deployment.rings[ring].from == feeder) rings += deployment.rings[ring].capacity;
  return 2 * rings;
}

std::vector<int> scale_feeders(const Deployment& deployment, int scale_group) {
  std::vector<int> feeders;
  for (int ring : deployment.nfs.at(scale_group).in_rings) feeders.push_back(deployment.rings[ring].from);
  return feeders;
}

std::set<int> nf_cores(const Deployment& deployment) {
  std::set<int> cores;
  for (const NfConfig& nf : deployment.nfs) cores.insert(nf.core);
  return cores;
}

std::string core_list(const std::set<int>& cores) {
  std::string list;
  for (int core : cores) list += (list.empty() ? "" : ", ") + std::to_string(core);
  return list;
}

namespace {
bool same_process(const WorkerPlan& a, const WorkerPlan& b) {
  if (a.runtime != b.runtime || a.core != b.core || a.segments.size() != b.segments.size()) return false;
  for (size_t s = 0; s < a.segments.size(); s++)
    if (a.segments[s].nfs != b.segments[s].nfs) return false;
  return true;
}
}  // namespace

bool same_layout(const std::vector<WorkerPlan>& a, const std::vector<WorkerPlan>& b) {
  if (a.size() != b.size()) return false;
  for (size_t w = 0; w < a.size(); w++)
    if (!same_process(a[w], b[w])) return false;
  return true;
}

std::vector<WorkerPlan> in_running_order(std::vector<WorkerPlan> plan, const std::vector<WorkerPlan>& running) {
  auto place = [&](const WorkerPlan& process) {
    for (size_t w = 0; w < running.size(); w++)
      if (same_process(process, running[w])) return w;
    return running.size();
  };
  std::stable_sort(plan.begin(), plan.end(),
                   [&](const WorkerPlan& a, const WorkerPlan& b) { return place(a) < place(b); });
  for (size_t w = 0; w < plan.size(); w++) {
    // A running process keeps the lcore id it runs under (a service may have given it one a removed chain's process
    // gave back: give_lcore_ids); lcore 0 is the manager's.
    size_t at = place(plan[w]);
    plan[w].index = static_cast<int>(w);
    plan[w].lcore_id = at < running.size() ? running[at].lcore_id : plan[w].index + 1;
  }
  return plan;
}

bool switches_in_place(const std::vector<WorkerPlan>& plan, const std::vector<WorkerPlan>& running) {
  return std::none_of(running.begin(), running.end(),
                      [](const WorkerPlan& w) { return w.runtime == Runtime::UserLevelThreads; }) &&
         same_layout(in_running_order(plan, running), running);
}

Segment segment_of(const std::vector<NfConfig>& all_nfs, std::vector<int> nfs) {
  Segment segment{all_nfs.at(nfs.front()).in_rings, {}, all_nfs.at(nfs.back()).out_rings};
  segment.nfs = std::move(nfs);
  return segment;
}

}  // namespace tandem
