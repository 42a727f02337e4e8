// What auto's model tests share: a decision's prediction for one policy.
#pragma once

#include <stdexcept>
#include <string>

#include "policy_model.h"

namespace tandem::autosched {

inline const Prediction& of(const Decision& d, const std::string& policy) {
  for (const Prediction& p : d.predictions)
    if (p.policy == policy) return p;
  throw std::logic_error("no prediction for " + policy);
}

}  // namespace tandem::autosched
