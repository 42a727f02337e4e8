// What a wire port's receiver makes of the sequence numbers that come in: frames received, the gaps the wire lost,
// frames that came late (after a later one) and so filled a gap, duplicates, and numbers too far ahead to believe.
#pragma once

#include <bitset>
#include <cstdint>

namespace tandem {

class WireSequence {
 public:
  // Frames within this many numbers below the highest are told apart as late or duplicate exactly; an older one is
  // counted late (its gap filled) unchecked: a link that reorders across more frames than this is no link.
  static constexpr uint64_t kWindow = 1024;
  // A number further ahead of the next expected one than this is no sender's: an attacker's, or a corrupted frame.
  // Counted apart and leaves the count alone, so that one forged frame cannot turn the rest into "late".
  static constexpr uint64_t kMostAhead = uint64_t{1} << 32;

  // One frame's number; returns false if it was refused as implausible.
  bool saw(uint64_t seq);

  uint64_t received() const { return received_; }  // frames counted in the sequence (late ones too, not duplicates)
  uint64_t lost() const { return lost_; }          // numbers skipped and not seen since: what the wire lost
  uint64_t late() const { return late_; }
  uint64_t duplicates() const { return duplicates_; }
  uint64_t implausible() const { return implausible_; }
  // The next number expected: frames the sender sent before the last one seen, received or lost.
  uint64_t expected() const { return expected_; }

 private:
  void mark(uint64_t seq) { seen_[seq % kWindow] = true; }
  bool marked(uint64_t seq) const { return seen_[seq % kWindow]; }

  uint64_t expected_ = 0;
  uint64_t received_ = 0, lost_ = 0, late_ = 0, duplicates_ = 0, implausible_ = 0;
  std::bitset<kWindow> seen_;  // by number modulo the window, for the numbers in [expected_ - kWindow, expected_)
};

}  // namespace tandem
