// The probe `switch_latency`: how long each process-controller backend takes to switch two idle NFs.
#include <stdexcept>

#include "probe.h"
#include "schedulers/mechanisms/process_controller.h"
#include "schedulers/mechanisms/switch_latency.h"

namespace tandem {
namespace {

class SwitchLatencyProbe : public Probe {
 public:
  explicit SwitchLatencyProbe(const json& options)
      : backends_(options.value("backends", kProcessControllerBackends)), rounds_(options.value("rounds", 200u)) {}

  // The backends' controllers park and activate the workers themselves: no scheduler may hold them meanwhile.
  bool takes_workers_over() const override { return true; }

  void after_traffic(ProbeView& view) override {
    const Deployment& d = view.deployment;
    if (view.worker_pids.size() < 2 || d.workers[0].core != d.workers[1].core)
      throw std::runtime_error("the switch-latency probe needs two workers on one core");
    measured_ =
        measure_switch_latency(backends_, {view.worker_pids[0], &view.stats.workers[0].heartbeat},
                               {view.worker_pids[1], &view.stats.workers[1].heartbeat}, d.paths.cgroup_dir, rounds_);
  }

  json report(const ProbeView& /*view*/) const override { return measured_; }

 private:
  std::vector<std::string> backends_;
  uint32_t rounds_;
  json measured_;  // null until measured
};

const ProbeRegistration kSwitchLatency({
    .name = "switch_latency",
    .help = "each process-controller backend's switch latency, between two idle NFs on one core",
    // The freezer backend freezes the workers through the run's cgroup, whatever the run's scheduler.
    .requirements = MachineRequirements(MachineResource::CgroupV2Dir),
    .create = [](const json& options, double /*tsc_hz*/) -> std::unique_ptr<Probe> {
      return std::make_unique<SwitchLatencyProbe>(options);
    },
});

}  // namespace
}  // namespace tandem
