// Test support for NFs: a batch run through an NF, and an NF made with its type's defaults; the EAL and the frames
// come from dataplane/packets/packet_test_support.h.
#pragma once

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <rte_mbuf.h>

#include "contract/batch.h"
#include "dataplane/packets/packet_test_support.h"
#include "nfs/nf.h"

namespace tandem::testing {

// Runs `nf` over `frames`; returns the packets kept with their gates, frees the dropped ones and reports how many.
struct BatchOutcome {
  std::vector<rte_mbuf*> kept;
  uint16_t dropped = 0;
  std::vector<uint8_t> gates;  // of the kept packets, in order
};

inline BatchOutcome run_batch(NetworkFunction& nf, std::vector<rte_mbuf*> frames) {
  std::vector<rte_mbuf*> dropped(frames.size());
  std::vector<uint8_t> gates(frames.size(), 0);
  Batch batch{frames.data(), static_cast<uint16_t>(frames.size()), dropped.data(), 0, gates.data()};
  nf.process(batch);
  BatchOutcome out{{frames.begin(), frames.begin() + batch.count},
                   batch.dropped_count,
                   {gates.begin(), gates.begin() + batch.count}};
  rte_pktmbuf_free_bulk(dropped.data(), batch.dropped_count);
  return out;
}

// `args` with the type's defaults filled in, as the data plane hands them to an NF.
inline json resolved_args(const std::string& type, const json& args = json::object()) {
  SpecErrors errors;
  json resolved = resolve_args(nf_types().at(type).args, args, "args", errors);
  EXPECT_TRUE(errors.empty()) << (errors.empty() ? "" : errors[0].path + ": " + errors[0].message);
  return resolved;
}

inline std::unique_ptr<NetworkFunction> make_nf(const std::string& type, const json& args = json::object()) {
  json resolved = resolved_args(type, args);
  static int counter = 0;
  return nf_types().at(type).create(resolved, {type, "test" + std::to_string(counter++), 0});
}

}  // namespace tandem::testing
