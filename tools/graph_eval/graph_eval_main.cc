// tandem-graph-eval: runs packets one by one through μNF graphs in this one process, the reference of what a graph
// does to a packet (its bytes out, or where it was dropped) and to its NFs' state (their reports). The composer's
// property test compares an SFC as its VNFs chain it with the graph composed from it (tests/controlplane).
//   tandem-graph-eval < {"graphs": {NAME: {"nodes": [{name, type, args}], "edges": [{from, to, label?}]}},
//                        "packets": [HEX, ...]}
//   > {NAME: {"packets": [{"fate": "delivered"|"dropped"|"label_miss", "at": NODE, "bytes": HEX}], "reports": {NODE:
//   ...}, "cycles": {NODE: TSC cycles spent in its process()}}, "tsc_hz": N}
// Exit 2 with a message naming the graph and node for a graph it cannot run.
#include <algorithm>
#include <cstdio>
#include <iostream>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <rte_cycles.h>
#include <rte_eal.h>
#include <rte_mbuf.h>

#include "contract/arg_schema.h"
#include "contract/packet_meta.h"
#include "nfs/nf.h"

using namespace tandem;

namespace {

struct BadGraph : std::runtime_error {
  using std::runtime_error::runtime_error;
};

struct OutEdge {
  int to;
  std::string label;
};

class Graph {
 public:
  Graph(const std::string& name, const json& doc) : name_(name) {
    for (const json& node : doc.at("nodes")) {
      std::string type = node.at("type");
      auto registered = nf_types().find(type);
      if (registered == nf_types().end())
        throw BadGraph(name + ": node " + node.at("name").get<std::string>() + ": unknown type " + type);
      SpecErrors errors;
      json args = resolve_args(registered->second.args, node.value("args", json::object()), "args", errors);
      if (!errors.empty())
        throw BadGraph(name + ": node " + node.at("name").get<std::string>() + ": " + errors[0].path + ": " +
                       errors[0].message);
      index_[node.at("name")] = static_cast<int>(names_.size());
      names_.push_back(node.at("name"));
      gates_.push_back(nf_gates(registered->second, args));
      NfContext context{names_.back(), "ge" + std::to_string(counter_++),
                        static_cast<int>(names_.size() - 1)};  // rte_* names are short
      nfs_.push_back(registered->second.create(args, context));
    }
    out_.resize(names_.size());
    cycles_.assign(names_.size(), 0);
    in_degree_.assign(names_.size(), 0);
    for (const json& edge : doc.at("edges")) {
      int from = node_of(edge.at("from")), to = node_of(edge.at("to"));
      out_[from].push_back({to, edge.value("label", std::string())});
      in_degree_[to]++;
    }
    for (size_t n = 0; n < names_.size(); n++)
      if (in_degree_[n] == 0) entry_ = static_cast<int>(n);
    if (entry_ < 0) throw BadGraph(name + ": no entry node");
  }

  // The packet's fate: it runs through the graph from the entry; a parallel group's branches run one after the
  // other on the same packet (the composer only groups NFs that neither drop nor touch what the others do).
  json run(rte_mbuf* m) {
    int node = entry_;
    for (int steps = 0; steps < 4 * static_cast<int>(names_.size()) + 4; steps++) {
      std::optional<uint8_t> gate = process(node, m);
      if (!gate) return {{"fate", "dropped"}, {"at", names_[node]}};
      const std::vector<OutEdge>& out = out_[node];
      if (out.empty()) return delivered(m);
      if (!out[0].label.empty()) {  // a labelled fan-out
        const std::string& label =
            *gate < gates_[node].size() ? gates_[node][*gate] : std::string("#") + std::to_string(*gate);
        auto edge = std::find_if(out.begin(), out.end(), [&](const OutEdge& e) { return e.label == label; });
        if (edge == out.end()) return {{"fate", "label_miss"}, {"at", names_[node]}};
        node = edge->to;
      } else if (out.size() == 1) {
        node = out[0].to;
      } else {  // a fork: each branch (a line) up to the join, then the join
        int join = -1;
        for (const OutEdge& branch : out) {
          int at = branch.to;
          while (true) {
            if (!process(at, m)) return {{"fate", "dropped"}, {"at", names_[at]}};
            if (out_[at].size() != 1) throw BadGraph(name_ + ": node " + names_[at] + " is in a branch but is no line");
            int next = out_[at][0].to;
            if (is_join(next)) {
              join = next;
              break;
            }
            at = next;
          }
        }
        node = join;
      }
    }
    throw BadGraph(name_ + ": a packet did not leave the graph (a cycle?)");
  }

  json reports() const {
    json out = json::object();
    for (size_t n = 0; n < names_.size(); n++) out[names_[n]] = nfs_[n]->report();
    return out;
  }

  // What each NF cost, in TSC cycles, over every packet it was given (what a detector costs per request).
  json cycles() const {
    json out = json::object();
    for (size_t n = 0; n < names_.size(); n++) out[names_[n]] = cycles_[n];
    return out;
  }

 private:
  int node_of(const std::string& name) const {
    auto found = index_.find(name);
    if (found == index_.end()) throw BadGraph(name_ + ": an edge names unknown node " + name);
    return found->second;
  }
  bool is_join(int node) const { return in_degree_[node] > 1; }
  // One NF on a batch of one: the gate it chose, or nothing when it dropped the packet (then freed here).
  std::optional<uint8_t> process(int node, rte_mbuf* m) {
    rte_mbuf* pkts[1] = {m};
    rte_mbuf* dropped[1];
    uint8_t gates[1] = {0};
    Batch batch{pkts, 1, dropped, 0, gates};
    uint64_t start = rte_rdtsc();
    nfs_[node]->process(batch);
    cycles_[node] += rte_rdtsc() - start;
    if (batch.count == 0) {
      rte_pktmbuf_free(m);
      return std::nullopt;
    }
    return gates[0];
  }
  static json delivered(rte_mbuf* m) {
    static const char* digits = "0123456789abcdef";
    std::string hex;
    const auto* bytes = rte_pktmbuf_mtod(m, const uint8_t*);
    for (uint32_t i = 0; i < rte_pktmbuf_pkt_len(m); i++) {
      hex += digits[bytes[i] >> 4];
      hex += digits[bytes[i] & 15];
    }
    rte_pktmbuf_free(m);
    return {{"fate", "delivered"}, {"bytes", hex}};
  }

  std::string name_;
  std::vector<std::string> names_;
  std::vector<std::vector<std::string>> gates_;
  std::map<std::string, int> index_;
  std::vector<std::unique_ptr<NetworkFunction>> nfs_;
  std::vector<std::vector<OutEdge>> out_;
  std::vector<int> in_degree_;
  std::vector<uint64_t> cycles_;
  int entry_ = -1;
  static inline int counter_ = 0;
};

rte_mbuf* packet_from_hex(rte_mempool* pool, const std::string& hex) {
  rte_mbuf* m = rte_pktmbuf_alloc(pool);
  if (m == nullptr) throw std::runtime_error("the packet pool is empty");
  if (hex.size() % 2 != 0 || hex.size() / 2 > rte_pktmbuf_tailroom(m))
    throw BadGraph("a packet of odd or too many hex digits");
  auto* data = reinterpret_cast<uint8_t*>(rte_pktmbuf_append(m, static_cast<uint16_t>(hex.size() / 2)));
  for (size_t i = 0; i < hex.size() / 2; i++)
    data[i] = static_cast<uint8_t>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
  clear_hops(meta_of(m));
  return m;
}

}  // namespace

int main() {
  const char* eal_args[] = {
      "tandem-graph-eval",         "--no-huge",   "--no-pci", "--no-shconf", "-m", "256", "--no-telemetry",
      "--log-level=lib.eal:error", "--lcores=0@0"};
  try {
    json doc = json::parse(std::string(std::istreambuf_iterator<char>(std::cin), std::istreambuf_iterator<char>()));
    if (rte_eal_init(sizeof(eal_args) / sizeof(eal_args[0]), const_cast<char**>(eal_args)) < 0) {
      fprintf(stderr, "tandem-graph-eval: DPDK EAL init failed\n");
      return 1;
    }
    rte_mempool* pool =
        rte_pktmbuf_pool_create("eval_pool", 1023, 0, kMbufPrivSize, RTE_MBUF_DEFAULT_BUF_SIZE, SOCKET_ID_ANY);
    if (pool == nullptr) throw std::runtime_error("cannot create the packet pool");
    json out = json::object();
    for (const auto& [name, graph_doc] : doc.at("graphs").items()) {
      Graph graph(name, graph_doc);
      json fates = json::array();
      for (const json& hex : doc.at("packets"))
        fates.push_back(graph.run(packet_from_hex(pool, hex.get<std::string>())));
      out[name] = {{"packets", fates}, {"reports", graph.reports()}, {"cycles", graph.cycles()}};
    }
    out["tsc_hz"] = rte_get_tsc_hz();
    printf("%s\n", out.dump().c_str());
    return 0;
  } catch (const BadGraph& e) {
    fprintf(stderr, "tandem-graph-eval: %s\n", e.what());
    return 2;
  } catch (const std::exception& e) {
    fprintf(stderr, "tandem-graph-eval: %s\n", e.what());
    return 2;
  }
}
