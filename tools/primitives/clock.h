// The monotonic clock in nanoseconds, for timing loops of many operations.
#pragma once

#include <time.h>

#include <cstdint>

namespace tandem {

inline uint64_t now_ns() {
  timespec t{};
  clock_gettime(CLOCK_MONOTONIC, &t);
  return static_cast<uint64_t>(t.tv_sec) * 1'000'000'000ull + static_cast<uint64_t>(t.tv_nsec);
}

}  // namespace tandem
