// Where a worker leaves its NFs' own reports as it ends, for the manager to merge into the results: one file per
// worker and segment in the run's directory. In it, by NF name: {"report": what the running instance counted,
// "replaced": what each instance that new arguments replaced in the process had counted, oldest first}.
#pragma once

#include <string>

namespace tandem {

inline std::string nf_report_path(const std::string& run_dir, int worker, size_t segment) {
  return run_dir + "/nf-report-" + std::to_string(worker) + "-" + std::to_string(segment) + ".json";
}

}  // namespace tandem
