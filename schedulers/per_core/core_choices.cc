// Reading and checking per_core's choice of a module for each core.
#include "core_choices.h"

#include <set>

#include "schedulers/scheduler.h"

namespace tandem {

std::vector<CoreChoice> core_choices(const json& cores, const std::string& path, SpecErrors& errors) {
  std::vector<CoreChoice> choices;
  if (!cores.is_array() || cores.empty()) {
    errors.push_back({path, "must list each NF core's scheduler: [{core: N, name: SCHEDULER, options: {...}}]"});
    return choices;
  }
  std::set<int> seen;
  for (size_t i = 0; i < cores.size(); i++) {
    const json& entry = cores[i];
    std::string where = path + "[" + std::to_string(i) + "]";
    if (!entry.is_object()) {
      errors.push_back({where, "must be a mapping {core: N, name: SCHEDULER, options: {...}}, got " + entry.dump()});
      continue;
    }
    for (const auto& [key, value] : entry.items())
      if (key != "core" && key != "name" && key != "options")
        errors.push_back({where + "." + key, "unknown field (known: core, name, options)"});
    const json core = entry.value("core", json());
    if (!core.is_number_integer() || core.get<long long>() < 0 || core.get<long long>() > kMaxCoreNumber) {
      errors.push_back(
          {where + ".core", "must be a core number (0-" + std::to_string(kMaxCoreNumber) + "), got " + core.dump()});
      continue;
    }
    if (!seen.insert(core.get<int>()).second) {
      errors.push_back({where + ".core", "core " + core.dump() + " is given twice"});
      continue;
    }
    const json name = entry.value("name", json());
    auto type = name.is_string() ? scheduler_types().find(name.get<std::string>()) : scheduler_types().end();
    if (type == scheduler_types().end()) {
      std::string known;
      for (const auto& [known_name, unused] : scheduler_types())
        if (known_name != kPerCoreScheduler && known_name != "auto") known += (known.empty() ? "" : ", ") + known_name;
      errors.push_back({where + ".name", "must be a scheduler (" + known + "), got " + name.dump()});
      continue;
    }
    if (type->first == kPerCoreScheduler || type->first == "auto") {
      errors.push_back({where + ".name", type->first + " decides for several cores: it cannot run one of per_core's"});
      continue;
    }
    size_t before = errors.size();
    json options =
        resolve_args(type->second.options, entry.value("options", json::object()), where + ".options", errors);
    if (errors.size() == before) choices.push_back({core.get<int>(), {type->first, options}});
  }
  return choices;
}

json cores_option(const std::vector<CoreChoice>& choices) {
  json cores = json::array();
  for (const CoreChoice& choice : choices)
    cores.push_back({{"core", choice.core}, {"name", choice.scheduler.name}, {"options", choice.scheduler.options}});
  return cores;
}

}  // namespace tandem
