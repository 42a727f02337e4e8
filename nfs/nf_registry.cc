// The table of NF types, filled by the static registrations in each NF's file.
#include "nf.h"

namespace tandem {

namespace {
std::map<std::string, NfType>& registry() {
  static std::map<std::string, NfType> types;
  return types;
}
}  // namespace

const std::map<std::string, NfType>& nf_types() { return registry(); }

std::vector<std::string> nf_gates(const NfType& type, const json& args) {
  return type.gates_of ? type.gates_of(args) : type.descriptor.gates;
}

std::string nf_instance_name(uint64_t process_serial, int nf_index, uint32_t generation) {
  std::string name = std::to_string(process_serial) + "_" + std::to_string(nf_index);
  return generation == 0 ? name : name + "g" + std::to_string(generation);
}

NfRegistration::NfRegistration(NfType type) { registry().emplace(type.name, std::move(type)); }

}  // namespace tandem
