// counter: a monitoring NF that keeps per-flow packet and byte counts in a DPDK rte_hash table.
#include <cerrno>
#include <string>
#include <vector>

#include <rte_errno.h>
#include <rte_hash.h>
#include <rte_jhash.h>

#include "dataplane/packets/five_tuple.h"
#include "nf.h"

namespace tandem {
namespace {

std::string table_name(const std::string& unique_name) { return "flows_" + unique_name; }

// The table's key: the 13-byte 5-tuple padded with zeros to a whole number of 32-bit words, because rte_jhash reads
// a key's tail as a whole word (found by the fuzzer under ASan: a 3-byte over-read of the key on the stack).
struct FlowKey {
  FiveTuple tuple;
  uint8_t padding[3] = {};
};
static_assert(sizeof(FlowKey) % sizeof(uint32_t) == 0);

struct FlowCount {
  uint64_t packets;
  uint64_t bytes;
};

class Counter final : public NetworkFunction {
 public:
  Counter(uint32_t max_flows, const NfContext& context) : counts_(max_flows) {
    std::string name = table_name(context.unique_name);
    rte_hash_parameters params{};
    params.name = name.c_str();
    params.entries = max_flows;
    params.key_len = sizeof(FlowKey);
    params.hash_func = rte_jhash;
    params.socket_id = SOCKET_ID_ANY;
    // Where an allocation fails rte_hash_create logs it, and the rte_errno it leaves told a user nothing (a table
    // of 16,777,216 flows in a service's memory: ENOENT, "No such file or directory").
    rte_errno = 0;
    table_ = rte_hash_create(&params);
    if (table_ == nullptr)
      throw std::runtime_error("cannot make its flow table of " + std::to_string(max_flows) +
                               " entries (rte_hash_create, " + name + "): " +
                               (rte_errno == 0 || rte_errno == ENOENT
                                    ? "most likely too little hugepage memory left for it (lower max_flows)"
                                    : rte_strerror(rte_errno)));
  }
  ~Counter() override { rte_hash_free(table_); }

  void process(Batch& batch) override {
    batch.for_each([&](uint16_t i) {
      std::optional<FiveTuple> tuple = five_tuple_of(batch.pkts[i]);
      if (!tuple) {
        untracked_++;
        return;
      }
      FlowKey key{*tuple};
      int32_t slot = rte_hash_add_key(table_, &key);  // returns the existing slot for a known key
      if (slot < 0) {
        table_full_++;
        return;
      }
      counts_[slot].packets++;
      counts_[slot].bytes += rte_pktmbuf_pkt_len(batch.pkts[i]);
    });
  }

  json report() const override {
    return {{"flows", rte_hash_count(table_)}, {"untracked_packets", untracked_}, {"table_full_packets", table_full_}};
  }

 private:
  rte_hash* table_ = nullptr;
  std::vector<FlowCount> counts_;
  uint64_t untracked_ = 0;   // non-IPv4 packets
  uint64_t table_full_ = 0;  // packets of flows that did not fit in the table
};

const NfRegistration registration({
    .name = "counter",
    .help = "Counts packets and bytes per flow (5-tuple) in an rte_hash table; forwards everything.",
    .args = {{.name = "max_flows",
              .type = ArgType::Integer,
              .default_value = 65536,
              .help = "flow table capacity",
              .min = 16,
              .max = 1 << 24}},
    .create =
        [](const json& args, const NfContext& context) {
          return std::make_unique<Counter>(args["max_flows"].get<uint32_t>(), context);
        },
    .release_objects =
        [](const std::string& unique_name) {
          rte_hash* table = rte_hash_find_existing(table_name(unique_name).c_str());
          if (table == nullptr) return 0;
          rte_hash_free(table);
          return 1;
        },
    .descriptor = {.stateful = true,
                   .reads = {HeaderField::EthType, HeaderField::Ipv4VersionIhl, HeaderField::Ipv4Protocol,
                             HeaderField::Ipv4Src, HeaderField::Ipv4Dst, HeaderField::L4SrcPort,
                             HeaderField::L4DstPort}},
});

}  // namespace
}  // namespace tandem
