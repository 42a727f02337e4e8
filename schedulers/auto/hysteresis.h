// auto's hysteresis: another policy takes over only when predicted better by a margin, several decisions running.
#pragma once

#include <string>

namespace tandem::autosched {

// Predictions move with every measurement; a switch costs a detach and an attach. A candidate must beat the
// current policy's merit by `margin` (a fraction) in `confirmations` consecutive decisions, the same candidate
// each time, so a load near the line between two policies never flaps between them.
class Hysteresis {
 public:
  Hysteresis(double margin, int confirmations) : margin_(margin), confirmations_(confirmations) {}

  // One decision: the current policy's merit and the best candidate's (larger is better); true: switch to `best` now.
  bool switch_now(const std::string& current, double current_merit, const std::string& best, double best_merit) {
    if (best == current || !(best_merit > current_merit * (1 + margin_))) {
      pending_.clear();
      count_ = 0;
      return false;
    }
    if (best != pending_) {
      pending_ = best;
      count_ = 0;
    }
    if (++count_ < confirmations_) return false;
    pending_.clear();
    count_ = 0;
    return true;
  }

 private:
  double margin_;
  int confirmations_;
  std::string pending_;
  int count_ = 0;
};

}  // namespace tandem::autosched
