// Numbering frames onto a wire and counting them off it.
#include "wire_link.h"

#include <time.h>

#include <algorithm>
#include <limits>

#include "link_trailer.h"

namespace tandem {

uint64_t wall_clock_ns() {
  timespec now{};
  clock_gettime(CLOCK_REALTIME, &now);
  return static_cast<uint64_t>(now.tv_sec) * 1000000000ull + static_cast<uint64_t>(now.tv_nsec);
}

uint16_t WireLink::stamp(rte_mbuf** pkts, uint16_t count, uint64_t now_ns) {
  uint16_t kept = 0;
  for (uint16_t i = 0; i < count; i++) {
    if (!append_link_trailer(pkts[i], {next_seq_ + kept, now_ns})) {
      no_room_++;
      rte_pktmbuf_free(pkts[i]);
      continue;
    }
    pkts[kept++] = pkts[i];
  }
  return kept;
}

void WireLink::take(rte_mbuf** pkts, uint16_t count, uint64_t now_ns) {
  for (uint16_t i = 0; i < count; i++) {
    std::optional<LinkTrailer> trailer = take_link_trailer(pkts[i]);
    if (!trailer) {
      foreign_++;
      continue;
    }
    if (!sequence_.saw(trailer->seq)) continue;
    // Unsigned difference read as signed: a sender's clock ahead of ours gives a negative delay, not a huge one.
    int64_t delay = static_cast<int64_t>(now_ns - trailer->sent_ns);
    delay_min_ns_ = delay_count_ == 0 ? delay : std::min(delay_min_ns_, delay);
    delay_max_ns_ = delay_count_ == 0 ? delay : std::max(delay_max_ns_, delay);
    // Saturating: a forged stamp must not overflow the sum (signed overflow is undefined).
    if (__builtin_add_overflow(delay_sum_ns_, delay, &delay_sum_ns_))
      delay_sum_ns_ = delay > 0 ? std::numeric_limits<int64_t>::max() : std::numeric_limits<int64_t>::min();
    delay_count_++;
  }
}

json WireLink::report() const {
  json delay = json::object();
  if (delay_count_ > 0)
    delay = {{"mean_ns", static_cast<double>(delay_sum_ns_) / static_cast<double>(delay_count_)},
             {"min_ns", delay_min_ns_},
             {"max_ns", delay_max_ns_},
             {"clock", "CLOCK_REALTIME of the sender and of this host"}};
  return {{"sent", next_seq_},
          {"no_room", no_room_},
          {"received", sequence_.received()},
          {"lost", sequence_.lost()},
          {"late", sequence_.late()},
          {"duplicates", sequence_.duplicates()},
          {"implausible", sequence_.implausible()},
          {"expected", sequence_.expected()},
          {"foreign", foreign_},
          {"delay", delay}};
}

}  // namespace tandem
