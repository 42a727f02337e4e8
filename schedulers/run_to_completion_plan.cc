// Run-to-completion worker plans: maximal runs of NFs joined by single edges on one core become segments.
#include "run_to_completion_plan.h"

namespace tandem {

int consecutive_feeder(const Deployment& deployment, const NfConfig& nf) {
  if (nf.in_rings.size() != 1) return -1;
  const RingConfig& in = deployment.rings[nf.in_rings[0]];
  if (in.from < 0 || !in.label.empty()) return -1;
  const NfConfig& feeder = deployment.nfs[in.from];
  return feeder.out_rings.size() == 1 && feeder.core == nf.core ? in.from : -1;
}

std::vector<WorkerPlan> run_to_completion_workers(const Deployment& deployment,
                                                  const std::function<bool(const NfConfig&)>& joins,
                                                  const std::string& name_prefix, int first_index) {
  std::vector<WorkerPlan> plans;
  auto worker_for_core = [&](int core) -> WorkerPlan& {
    for (WorkerPlan& plan : plans)
      if (plan.core == core) return plan;
    WorkerPlan plan;
    plan.index = first_index + static_cast<int>(plans.size());
    plan.name = name_prefix + std::to_string(core);
    plan.core = core;
    plan.lcore_id = plan.index + 1;  // lcore 0 is the manager's
    plans.push_back(plan);
    return plans.back();
  };
  // Along the graph in topological order: a segment goes on to the next NF while the last is its consecutive feeder
  // and the next joins too.
  std::vector<bool> placed(deployment.nfs.size(), false);
  for (const ChainConfig& chain : deployment.chains)
    for (int first : chain.nfs) {
      if (placed[first] || !joins(deployment.nfs[first])) continue;
      std::vector<int> nfs = {first};
      placed[first] = true;
      while (true) {
        const NfConfig& last = deployment.nfs[nfs.back()];
        if (last.out_rings.size() != 1) break;
        int next = deployment.rings[last.out_rings[0]].to;
        if (next < 0 || placed[next] || consecutive_feeder(deployment, deployment.nfs[next]) != last.index ||
            !joins(deployment.nfs[next]))
          break;
        nfs.push_back(next);
        placed[next] = true;
      }
      worker_for_core(deployment.nfs[first].core).segments.push_back(segment_of(deployment.nfs, nfs));
    }
  return plans;
}

}  // namespace tandem
