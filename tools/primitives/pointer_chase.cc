// Building the shuffled pointer cycle and timing the chase through it.
#include "pointer_chase.h"

#include <numeric>
#include <random>

#include "clock.h"

namespace tandem {

std::vector<size_t> random_cycle(size_t slots, uint64_t seed) {
  std::vector<size_t> order(slots);
  std::iota(order.begin(), order.end(), 0);
  std::mt19937_64 random(seed);
  std::shuffle(order.begin() + 1, order.end(), random);  // slot 0 starts the cycle
  std::vector<size_t> next(slots);
  for (size_t i = 0; i < slots; i++) next[order[i]] = order[(i + 1) % slots];
  return next;
}

Measurement pointer_chase_ns(size_t bytes, size_t stride, int repetitions) {
  size_t slots = bytes / stride;
  if (slots < 2) return unsupported("a working set of " + std::to_string(bytes) + " B holds fewer than two strides");
  std::vector<char> memory(bytes + 64);
  char* base = memory.data() + (64 - reinterpret_cast<uintptr_t>(memory.data()) % 64) % 64;  // cache-line aligned
  std::vector<size_t> next = random_cycle(slots, 42 + bytes + stride);
  for (size_t i = 0; i < slots; i++) *reinterpret_cast<char**>(base + i * stride) = base + next[i] * stride;
  // Enough loads to make the clock's cost negligible and to pass the cycle several times.
  size_t loads = std::max<size_t>(1 << 20, 4 * slots);
  Measurement result;
  char* p = base;
  for (size_t i = 0; i < slots; i++) p = *reinterpret_cast<char**>(p);  // warm the TLB and caches once
  for (int r = 0; r < repetitions; r++) {
    uint64_t start = now_ns();
    for (size_t i = 0; i < loads; i++) p = *reinterpret_cast<char**>(p);
    uint64_t spent = now_ns() - start;
    result.samples_ns.push_back(static_cast<double>(spent) / static_cast<double>(loads));
  }
  asm volatile("" : : "r"(p) : "memory");  // the chase's result is used: the loop stays
  return result;
}

}  // namespace tandem
