// The table of scheduler modules, filled by the static registrations in each module's file.
#include "scheduler.h"

namespace tandem {

namespace {
std::map<std::string, SchedulerType>& registry() {
  static std::map<std::string, SchedulerType> types;
  return types;
}
}  // namespace

const std::map<std::string, SchedulerType>& scheduler_types() { return registry(); }

SchedulerRegistration::SchedulerRegistration(SchedulerType type) { registry().emplace(type.name, std::move(type)); }

MachineRequirements scheduler_requirements(const SchedulerType& type, const Deployment& deployment) {
  return type.deployment_requirements ? type.deployment_requirements(deployment)
                                      : type.requirements(deployment.scheduler.options);
}

std::vector<WorkerPlan> one_worker_per_nf(const Deployment& deployment) {
  std::vector<WorkerPlan> plans;
  for (const NfConfig& nf : deployment.nfs) {
    WorkerPlan plan;
    plan.index = static_cast<int>(plans.size());
    plan.name = nf.name;
    plan.core = nf.core;
    plan.lcore_id = plan.index + 1;  // lcore 0 is the manager's
    plan.runtime = nf.external() ? Runtime::External : nf.kernel_io ? Runtime::KernelIo : Runtime::PollLoop;
    plan.segments.push_back(segment_of(deployment.nfs, {nf.index}));
    plans.push_back(plan);
  }
  return plans;
}

std::vector<WorkerPlan> Scheduler::plan_workers(const Deployment& deployment) const {
  return one_worker_per_nf(deployment);
}

}  // namespace tandem
