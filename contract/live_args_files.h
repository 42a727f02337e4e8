// Where a live argument change travels from the manager to the NF's runtime: one file per NF and generation in the
// run's directory, written whole before the generation is raised in the stats zone (so a runtime never reads half of
// it), and beside it the runtime's reason when it could not build an instance from them.
#pragma once

#include <cstdint>
#include <string>

namespace tandem {

inline std::string live_args_path(const std::string& run_dir, int nf, uint32_t generation) {
  return run_dir + "/nf-args-" + std::to_string(nf) + "-" + std::to_string(generation) + ".json";
}

inline std::string live_args_refusal_path(const std::string& run_dir, int nf, uint32_t generation) {
  return run_dir + "/nf-args-" + std::to_string(nf) + "-" + std::to_string(generation) + ".refused";
}

}  // namespace tandem
