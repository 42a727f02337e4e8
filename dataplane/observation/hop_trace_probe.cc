// The probe `hops` (run --profile): trace slots for the sampled packets, which the generator hands out, every NF's
// runtime stamps (dataplane/runtimes/hop_tracing.*) and the sink adds up into each chain's latency breakdown
// (dataplane/sink/latency_breakdown.*).
#include <rte_errno.h>
#include <rte_memzone.h>

#include <cstring>
#include <stdexcept>

#include "contract/hop_trace.h"
#include "probe.h"

namespace tandem {
namespace {

class HopTraceProbe : public Probe {
 public:
  // The workers look the zone up by name when they attach (contract/hop_trace.h); it goes with the primary.
  void before_workers(const Deployment& deployment) override {
    size_t bytes = trace_zone_bytes(deployment);
    const rte_memzone* zone = rte_memzone_reserve(kTraceZoneName, bytes, SOCKET_ID_ANY, 0);
    if (zone == nullptr)
      throw std::runtime_error(std::string("cannot reserve the trace memzone (run --profile): ") +
                               rte_strerror(rte_errno));
    slots_ = static_cast<TraceSlot*>(zone->addr);
    memset(slots_, 0, bytes);
    slot_count_ = trace_slot_count(deployment);
  }

  void attach(ProbeView& view) override {
    view.generator.trace_into(slots_, slot_count_, view.deployment.latency_sample_every,
                              view.deployment.trace_sample_every);
    view.sink.trace_from(slots_);
  }

  // The breakdowns themselves are the sink's, per chain, beside each chain's latency.
  json report(const ProbeView& view) const override {
    return {{"trace_slots", slot_count_}, {"traced_one_in", view.deployment.trace_sample_every}};
  }

 private:
  TraceSlot* slots_ = nullptr;
  size_t slot_count_ = 0;
};

const ProbeRegistration kHopTrace({
    .name = "hops",
    .help = "traces sampled packets hop by hop and breaks each chain's latency down per NF (run --profile)",
    .requirements = {},
    .create = [](const json& /*options*/, double /*tsc_hz*/) -> std::unique_ptr<Probe> {
      return std::make_unique<HopTraceProbe>();
    },
});

}  // namespace
}  // namespace tandem
