// Parsing of the run's JSON into a Deployment, and the sizes derived from it.
#include "deployment.h"

#include <netinet/in.h>

#include <stdexcept>

#include "shm_layout.h"

namespace tandem {

namespace {

TrafficConfig parse_traffic(const json& t) {
  TrafficConfig traffic;
  traffic.rate_pps = t.value("rate_pps", 0.0);
  traffic.rate_steps_pps = t.value("rate_steps_pps", std::vector<double>{});
  traffic.mean_rate_pps = t.value("mean_rate_pps", 0.0);
  traffic.step_seconds = t.value("step_seconds", 1.0);
  for (const auto& entry : t.at("sizes")) traffic.sizes.emplace_back(entry.at(0).get<uint16_t>(), entry.at(1).get<double>());
  traffic.flows = t.value("flows", 1u);
  traffic.protocol = t.value("protocol", std::string("udp")) == "tcp" ? IPPROTO_TCP : IPPROTO_UDP;
  traffic.http_urls = t.value("http_urls", std::vector<std::string>{});
  traffic.pcap = t.value("pcap", std::string());
  traffic.pcap_loop = t.value("pcap_loop", true);
  if (!traffic.http_urls.empty() && traffic.http_urls.size() != traffic.flows)
    throw std::invalid_argument("traffic.http_urls must give one URL per flow");
  return traffic;
}

json worker_to_json(const WorkerPlan& plan) {
  json segments = json::array();
  for (const Segment& s : plan.segments) segments.push_back({{"in_ring", s.in_ring}, {"nfs", s.nfs}, {"out_ring", s.out_ring}});
  return {{"index", plan.index}, {"name", plan.name}, {"core", plan.core}, {"lcore_id", plan.lcore_id}, {"segments", segments},
          {"runtime", runtime_name(plan.runtime)}};
}

WorkerPlan worker_from_json(const json& j) {
  WorkerPlan plan;
  plan.index = j.at("index");
  plan.name = j.at("name");
  plan.core = j.at("core");
  plan.lcore_id = j.at("lcore_id");
  for (const auto& s : j.at("segments")) plan.segments.push_back({s.at("in_ring"), s.at("nfs").get<std::vector<int>>(), s.at("out_ring")});
  plan.runtime = runtime_from_name(j.at("runtime"));
  return plan;
}

constexpr std::pair<Runtime, const char*> kRuntimeNames[] = {
    {Runtime::PollLoop, "poll_loop"}, {Runtime::UserLevelThreads, "user_level_threads"}, {Runtime::External, "external"}};

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

Deployment parse_deployment(const json& doc) {
  Deployment d;
  d.name = doc.value("name", std::string("tandem"));
  d.control_core = doc.value("control_core", 0);
  d.burst = doc.value("burst", 32);
  d.duration_s = doc.value("duration", 5.0);
  d.warmup_s = doc.value("warmup", 0.5);
  d.drain_s = doc.value("drain", 0.2);
  d.latency_sample_every = doc.value("latency_sample_every", 16u);
  if (doc.contains("capture")) {
    d.capture_path = doc["capture"].at("path").get<std::string>();
    d.capture_limit = doc["capture"].at("limit").get<uint64_t>();
  }
  d.profile = doc.value("profile", json());
  d.scheduler.name = doc.at("scheduler").at("name");
  d.scheduler.options = doc.at("scheduler").value("options", json::object());
  for (const auto& c : doc.at("chains")) {
    ChainConfig chain;
    chain.index = static_cast<int>(d.chains.size());
    chain.name = c.at("name");
    chain.traffic = parse_traffic(c.at("traffic"));
    uint32_t capacity = c.value("ring_capacity", 2048u);
    const json& nfs = c.at("nfs");
    for (size_t position = 0; position <= nfs.size(); position++) {
      RingConfig ring;
      ring.index = static_cast<int>(d.rings.size());
      ring.capacity = capacity;
      ring.chain = chain.index;
      if (position == 0)
        ring.name = chain.name + ":entry";
      else if (position == nfs.size())
        ring.name = chain.name + ":exit";
      else
        ring.name = chain.name + ":" + nfs[position - 1].at("name").get<std::string>() + "->" + nfs[position].at("name").get<std::string>();
      chain.rings.push_back(ring.index);
      d.rings.push_back(ring);
    }
    for (size_t position = 0; position < nfs.size(); position++) {
      NfConfig nf;
      nf.index = static_cast<int>(d.nfs.size());
      nf.name = nfs[position].at("name");
      nf.type = nfs[position].at("type");
      nf.args = nfs[position].value("args", json::object());
      nf.core = nfs[position].at("core");
      nf.cost_cycles = nfs[position].value("cost_cycles", 0.0);
      nf.weight = nfs[position].value("weight", 1.0);
      nf.batch = nfs[position].value("batch", 0u);
      if (nfs[position].contains("planned_rate_pps")) nf.planned_rate_pps = nfs[position].at("planned_rate_pps").get<double>();
      nf.chain = chain.index;
      nf.position = static_cast<int>(position);
      chain.nfs.push_back(nf.index);
      d.nfs.push_back(nf);
    }
    d.chains.push_back(chain);
  }
  if (doc.contains("workers"))
    for (const auto& w : doc.at("workers")) d.workers.push_back(worker_from_json(w));
  if (doc.contains("paths")) {
    const json& p = doc.at("paths");
    d.paths = {p.value("file_prefix", ""), p.value("huge_dir", ""), p.value("run_dir", ""), p.value("worker_binary", ""),
               p.value("cgroup_dir", ""), p.value("cpu_cgroup_dir", "")};
  }
  if (d.nfs.size() > static_cast<size_t>(kMaxNfs) || d.rings.size() > static_cast<size_t>(kMaxRings))
    throw std::runtime_error("deployment too large: at most " + std::to_string(kMaxNfs) + " NFs and " + std::to_string(kMaxRings) + " rings");
  return d;
}

json deployment_to_json(const Deployment& deployment, const json& original) {
  json doc = original;
  for (size_t c = 0; c < deployment.chains.size(); c++)
    for (size_t p = 0; p < deployment.chains[c].nfs.size(); p++)
      doc["chains"][c]["nfs"][p]["args"] = deployment.nfs[deployment.chains[c].nfs[p]].args;
  doc["scheduler"]["options"] = deployment.scheduler.options;
  doc["workers"] = json::array();
  for (const WorkerPlan& plan : deployment.workers) doc["workers"].push_back(worker_to_json(plan));
  return doc;
}

unsigned mbuf_pool_size(const Deployment& deployment) {
  unsigned mbufs = 8192;
  for (const RingConfig& ring : deployment.rings) mbufs += ring.capacity;
  mbufs += static_cast<unsigned>(deployment.nfs.size()) * (kMbufCache * 3 / 2 + 2u * deployment.burst);
  return mbufs;
}

std::string spec_path(const NfConfig& nf) {
  return "chains[" + std::to_string(nf.chain) + "].nfs[" + std::to_string(nf.position) + "]";
}

}  // namespace tandem
