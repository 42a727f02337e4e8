// Counting a wire's losses from the sequence numbers that arrive.
#include "wire_sequence.h"

namespace tandem {

bool WireSequence::saw(uint64_t seq) {
  if (seq >= expected_) {
    if (seq - expected_ > kMostAhead) {
      implausible_++;
      return false;
    }
    // The numbers skipped are lost until they come late; their marks (a window's worth at most) are cleared.
    uint64_t skipped = seq - expected_;
    for (uint64_t n = expected_; n < seq && n - expected_ < kWindow; n++) seen_[n % kWindow] = false;
    lost_ += skipped;
    expected_ = seq + 1;
    mark(seq);
    received_++;
    return true;
  }
  if (expected_ - seq <= kWindow && marked(seq)) {
    duplicates_++;
    return true;
  }
  if (expected_ - seq <= kWindow) mark(seq);
  if (lost_ > 0) lost_--;  // an older frame than the window: its gap filled, unchecked (see kWindow)
  late_++;
  received_++;
  return true;
}

}  // namespace tandem
