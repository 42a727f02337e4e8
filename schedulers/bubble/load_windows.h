// When Bubble's load measurement is on: a short window (default 30 ms) at the start of every period
// (default 1 s), so the TSC reads cost nothing the rest of the time.
#pragma once

#include <cstdint>

namespace tandem::bubble {

class LoadWindows {
 public:
  enum class Event { None, Open, Close };

  LoadWindows(uint64_t period_cycles, uint64_t window_cycles) : period_(period_cycles), window_(window_cycles) {}

  // Called from the scheduler's tick: Open at the start of each period, Close `window` after it opened.
  Event poll(uint64_t now_tsc) {
    if (open_) {
      if (now_tsc - opened_at_ < window_) return Event::None;
      open_ = false;
      return Event::Close;
    }
    if (started_ && now_tsc - opened_at_ < period_) return Event::None;
    started_ = open_ = true;
    opened_at_ = now_tsc;
    return Event::Open;
  }
  bool open() const { return open_; }
  uint64_t opened_at() const { return opened_at_; }

 private:
  uint64_t period_, window_;
  uint64_t opened_at_ = 0;
  bool started_ = false, open_ = false;
};

}  // namespace tandem::bubble
