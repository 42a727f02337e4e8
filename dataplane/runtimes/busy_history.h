// How busy an NF was since a moment in the recent past: its last batches' end times and cumulative busy cycles,
// so that a traced packet can tell how much of its wait in the NF's input the NF spent on other packets.
#pragma once

#include <array>
#include <cstdint>

#include "contract/hop_trace.h"

namespace tandem {

class BusyHistory {
 public:
  // Entries remembered, each at least kSpacingCycles apart: a millisecond or more back; a wait longer than that is
  // reported as unknown, never guessed.
  static constexpr size_t kBatches = 1024;

  // Batches ending within this many TSC cycles of the last entry's end share it (~1 µs): the split of a wait is
  // that exact, and the history touches a new cache line every few microseconds, not every batch (a 16 KB ring
  // written batch by batch cost the NFs ~3 % of their throughput in L1 misses).
  static constexpr uint64_t kSpacingCycles = 2048;

  // A batch that ended at `end_tsc` after `spent` cycles of work.
  void record(uint64_t end_tsc, uint64_t spent) {
    busy_ += spent;
    if (next_ > 0) {
      Entry& last = ends_[(next_ - 1) % kBatches];
      // The first entry is never moved later: before it, busy_since counts every batch, which must stay exact.
      if (end_tsc - last.end_tsc < kSpacingCycles && next_ > 1) {
        last = {end_tsc, busy_};
        return;
      }
    }
    ends_[next_ % kBatches] = {end_tsc, busy_};
    next_++;
  }
  // Cycles of work in batches that ended after `since_tsc` (up to now); kBusyUnknown when the remembered batches do not
  // reach back that far.
  uint64_t busy_since(uint64_t since_tsc) const {
    size_t kept = next_ < kBatches ? next_ : kBatches;
    // Newest first: a traced packet waited microseconds, so the answer is a few entries back.
    for (size_t back = 1; back <= kept; back++) {
      const Entry& entry = ends_[(next_ - back) % kBatches];
      if (entry.end_tsc <= since_tsc) return busy_ - entry.busy;
    }
    return next_ <= kBatches ? busy_ : kBusyUnknown;  // nothing ended before it: every batch so far counts, if all are kept
  }
 private:
  struct Entry {
    uint64_t end_tsc, busy;
  };
  std::array<Entry, kBatches> ends_{};
  uint64_t next_ = 0;
  uint64_t busy_ = 0;
};

}  // namespace tandem
