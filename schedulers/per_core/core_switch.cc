// One core's module switched, the others kept: per_core's choices for the new scheduler, or one module for all.
#include "core_switch.h"

#include <algorithm>
#include <set>

#include "core_choices.h"

namespace tandem {

SchedulerConfig with_core_switched(const Deployment& d, int core, const SchedulerConfig& chosen, std::string& why) {
  std::vector<CoreChoice> choices;
  if (d.scheduler.name == kPerCoreScheduler) {
    SpecErrors errors;
    choices = core_choices(d.scheduler.options.value("cores", json()), "scheduler.cores", errors);
    if (!errors.empty()) {
      why = errors.front().path + ": " + errors.front().message;
      return {};
    }
  } else {
    for (int nf_core : nf_cores(d)) choices.push_back({nf_core, d.scheduler});
  }
  auto found = std::find_if(choices.begin(), choices.end(), [&](const CoreChoice& c) { return c.core == core; });
  if (found == choices.end()) {
    choices.push_back({core, chosen});
    std::sort(choices.begin(), choices.end(), [](const CoreChoice& a, const CoreChoice& b) { return a.core < b.core; });
  } else {
    found->scheduler = chosen;
  }
  // Only the cores that hold NFs decide whether one module runs them all.
  std::set<int> cores = nf_cores(d);
  bool uniform = std::all_of(choices.begin(), choices.end(),
                             [&](const CoreChoice& c) { return !cores.count(c.core) || c.scheduler == chosen; });
  if (uniform) return chosen;
  return {kPerCoreScheduler, {{"cores", cores_option(choices)}}};
}

}  // namespace tandem
