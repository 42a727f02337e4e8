// What every primitive-latency measurement returns: repeated samples in nanoseconds, summarised, or why none.
#pragma once

#include <algorithm>
#include <string>
#include <vector>

#include "contract/arg_schema.h"  // json

namespace tandem {

// A measurement repeated `samples.size()` times (each sample itself an average over many operations). Unsupported
// where the machine cannot give it (one core only, a policy refused): the reason, never a 0.
struct Measurement {
  std::vector<double> samples_ns;
  std::string unsupported;

  json to_json() const {
    if (!unsupported.empty() || samples_ns.empty())
      return {{"unsupported", unsupported.empty() ? "no sample" : unsupported}};
    std::vector<double> sorted = samples_ns;
    std::sort(sorted.begin(), sorted.end());
    return {{"median_ns", sorted[sorted.size() / 2]},
            {"min_ns", sorted.front()},
            {"max_ns", sorted.back()},
            {"samples", sorted.size()}};
  }
};

inline Measurement unsupported(const std::string& why) { return {{}, why}; }

// What a measurement between two cores says when it is given one core twice.
inline Measurement one_core_only() { return unsupported("needs two cores; this machine gives one"); }

}  // namespace tandem
