// An exponentially weighted moving average of a rate read from a monotonic counter.
#pragma once

#include <cmath>
#include <cstdint>

namespace tandem::nfvnice {

// Each update folds the rate over the last interval into the average with weight 1 - exp(-dt / tau):
// the average forgets with time constant tau whatever the update period, so a late update weighs more.
class SmoothedRate {
 public:
  explicit SmoothedRate(double tau_s) : tau_s_(tau_s) {}

  // `counter` is the counter's value at time `now_s`; the first call only sets the baseline.
  void update(uint64_t counter, double now_s) {
    if (started_ && now_s > last_s_)
      fold(static_cast<double>(counter - last_counter_) / (now_s - last_s_), now_s - last_s_);
    started_ = true;
    last_counter_ = counter;
    last_s_ = now_s;
  }
  // Folds a sample taken over `dt_s` seconds (e.g. a cost measured over an interval).
  void fold(double sample, double dt_s) {
    if (!has_value_) {
      value_ = sample;
      has_value_ = true;
      return;
    }
    double alpha = 1.0 - std::exp(-dt_s / tau_s_);
    value_ += alpha * (sample - value_);
  }
  double value() const { return value_; }
  bool has_value() const { return has_value_; }

 private:
  double tau_s_;
  bool started_ = false, has_value_ = false;
  uint64_t last_counter_ = 0;
  double last_s_ = 0, value_ = 0;
};

}  // namespace tandem::nfvnice
