// Choice of the NF to move and where, for Bubble's scale events.
#include "migration.h"

namespace tandem::bubble {

std::vector<ScaleDecision> decide_scaling(const std::vector<SchedulerLoad>& schedulers, double mu) {
  std::vector<double> utilisation;
  for (const SchedulerLoad& s : schedulers) utilisation.push_back(s.utilisation);
  std::vector<ScaleDecision> decisions;
  for (size_t i = 0; i < schedulers.size(); i++) {
    const SchedulerLoad& source = schedulers[i];
    if (utilisation[i] <= mu) continue;
    ScaleDecision decision{.worker = source.worker, .migration = std::nullopt, .reason = ""};
    std::optional<size_t> destination;
    for (size_t j = 0; j < schedulers.size(); j++)
      if (j != i && utilisation[j] < mu && (!destination || utilisation[j] < utilisation[*destination]))
        destination = j;
    if (source.nfs.size() < 2) {
      decision.reason = "it runs a single NF";
    } else if (!destination) {
      decision.reason = "no under-utilised scheduler to take an NF";
    } else {
      for (auto nf = source.nfs.rbegin(); nf != source.nfs.rend(); ++nf)
        if (utilisation[*destination] + nf->load <= mu) {
          decision.migration = Migration{.nf = nf->nf, .from = source.worker, .to = schedulers[*destination].worker};
          utilisation[*destination] += nf->load;
          utilisation[i] -= nf->load;
          break;
        }
      if (!decision.migration) decision.reason = "no NF's load fits under mu on the least-utilised scheduler";
    }
    decisions.push_back(decision);
  }
  return decisions;
}

}  // namespace tandem::bubble
