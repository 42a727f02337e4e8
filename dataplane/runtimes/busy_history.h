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
    auto back_entry = [&](size_t back) -> const Entry& { return ends_[(next_ - back) % kBatches]; };
    if (kept == 0 || back_entry(kept).end_tsc > since_tsc)
      return next_ <= kBatches ? busy_
                               : kBusyUnknown;  // nothing ended before it: every batch so far counts, if all are kept
    // The newest entry that ended by then, by bisection over the entries' ends (they only grow): a traced packet
    // that waited behind a busy NF spans tens of entries, and reading them one by one cost the NF its cache.
    size_t newer = 0, older = kept;  // back_entry(older) ended by then; newer is 0 or one that ended after
    while (older - newer > 1) {
      size_t middle = newer + (older - newer) / 2;
      if (back_entry(middle).end_tsc <= since_tsc)
        older = middle;
      else
        newer = middle;
    }
    return busy_ - back_entry(older).busy;
  }

 private:
  struct Entry {
    uint64_t end_tsc, busy;
  };
  // The counters before the entries, on the line the newest entries start from: every batch reads and writes them.
  uint64_t next_ = 0;
  uint64_t busy_ = 0;
  std::array<Entry, kBatches> ends_{};
};

}  // namespace tandem
