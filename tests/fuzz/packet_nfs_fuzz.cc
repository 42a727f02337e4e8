// libFuzzer target: one frame of attacker-chosen bytes through every NF that parses packets, under ASan and UBSan.
// Each NF must keep or drop the frame (never lose or duplicate it), and every report must stay writable as JSON.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include <rte_eal.h>
#include <rte_mbuf.h>

#include "contract/packet_meta.h"
#include "fuzz_eal.h"
#include "nfs/nf.h"

using namespace tandem;

namespace {

rte_mempool* pool = nullptr;
std::vector<std::unique_ptr<NetworkFunction>> nfs;  // made once: validate_url's Hyperscan database is slow to build

std::unique_ptr<NetworkFunction> make(const std::string& type, const json& args = json::object()) {
  static int made = 0;
  SpecErrors errors;
  json resolved = resolve_args(nf_types().at(type).args, args, "args", errors);
  if (!errors.empty()) {
    fprintf(stderr, "fuzz: bad arguments for %s: %s\n", type.c_str(), errors[0].message.c_str());
    abort();
  }
  return nf_types().at(type).create(resolved, {type, "fuzz" + std::to_string(made++), 0});
}

// Runs `m` through `nf`: it comes back kept or dropped, exactly once.
void run_one(NetworkFunction& nf, rte_mbuf* m) {
  rte_mbuf* pkts[1] = {m};
  rte_mbuf* dropped[1] = {nullptr};
  uint8_t gates[1] = {0};
  Batch batch{pkts, 1, dropped, 0, gates};
  nf.process(batch);
  if (batch.count + batch.dropped_count != 1) abort();
  if ((batch.count == 1 ? pkts[0] : dropped[0]) != m) abort();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  pool = start_eal_with_a_pool();
  json rules = json::array({{{"src", "10.0.0.0/8"}, {"dst_port", "80-90"}, {"proto", "tcp"}, {"action", "deny"}},
                            {{"dst", "192.168.0.0/16"}, {"action", "allow"}}});
  nfs.push_back(make("checkip"));
  nfs.push_back(make("firewall", {{"rules", rules}, {"default", "deny"}}));
  nfs.push_back(make("counter"));
  nfs.push_back(make("http_classifier"));
  nfs.push_back(make("validate_url"));
  nfs.push_back(make("validate_url", {{"engine", "crs"}}));  // our glue around ModSecurity: what it is handed
  nfs.push_back(make("ipsec"));
  nfs.push_back(make("macswap"));
  nfs.push_back(make("ttl"));
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > RTE_MBUF_DEFAULT_DATAROOM) return -1;  // no frame is larger than one buffer here
  auto count_url = make("count_url");  // new each time: its report then holds this input's URL whatever came before
  for (size_t n = 0; n <= nfs.size(); n++) {
    NetworkFunction& nf = n < nfs.size() ? *nfs[n] : *count_url;
    rte_mbuf* m = rte_pktmbuf_alloc(pool);
    if (m == nullptr) abort();
    // Each NF reads the input as it came: the ones before it may have changed or grown its copy (ttl, ipsec).
    memcpy(rte_pktmbuf_append(m, static_cast<uint16_t>(size)), data, size);
    clear_hops(meta_of(m));
    run_one(nf, m);
    rte_pktmbuf_free(m);
  }
  for (const auto& nf : nfs) (void)nf->report().dump();  // the strict handler aborts on bytes that are not UTF-8
  (void)count_url->report().dump();
  return 0;
}
