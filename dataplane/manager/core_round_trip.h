// How long one cache line takes to go from the control core to an NF core and back: the cost every packet
// pays twice (rings, mbufs), measured around each run because this VM's host moves it by ~4x (README, Results).
#pragma once

#include <optional>

namespace tandem {

// Mean round trip in ns over `rounds` hand-overs of one cache line between a thread pinned to `here` (the
// caller's core) and one pinned to `there`. Empty when a core cannot be used or a round does not finish
// within `deadline_ms` (say, a real-time task owns `there`): no number is better than a wrong one.
std::optional<double> cache_line_round_trip_ns(int here, int there, int rounds = 20000, int deadline_ms = 200);

}  // namespace tandem
