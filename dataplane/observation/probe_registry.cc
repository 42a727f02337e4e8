// The table of probe types, filled by the static registrations in each probe's file.
#include "probe.h"

#include <stdexcept>

namespace tandem {

namespace {
std::map<std::string, ProbeType>& registry() {
  static std::map<std::string, ProbeType> types;
  return types;
}

const ProbeType& probe_type(const std::string& name) {
  auto type = registry().find(name);
  if (type == registry().end()) throw std::runtime_error("unknown probe '" + name + "' in the run's profile");
  return type->second;
}
}  // namespace

const std::map<std::string, ProbeType>& probe_types() { return registry(); }

ProbeRegistration::ProbeRegistration(ProbeType type) { registry().emplace(type.name, std::move(type)); }

std::map<std::string, std::unique_ptr<Probe>> create_probes(const json& profile, double tsc_hz) {
  std::map<std::string, std::unique_ptr<Probe>> probes;
  if (!profile.is_object()) return probes;
  for (const auto& [name, options] : profile.items()) probes[name] = probe_type(name).create(options, tsc_hz);
  return probes;
}

MachineRequirements probe_requirements(const json& profile) {
  MachineRequirements needs;
  if (!profile.is_object()) return needs;
  for (const auto& [name, _] : profile.items()) needs |= probe_type(name).requirements;
  return needs;
}

json probe_catalog() {
  json probes = json::array();
  for (const auto& [name, type] : probe_types()) probes.push_back({{"name", name}, {"help", type.help}});
  return probes;
}

}  // namespace tandem
