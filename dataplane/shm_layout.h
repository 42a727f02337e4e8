// Layout of the stats memzone that the manager creates and every worker maps: counters and control flags.
#pragma once

#include <cstdint>

namespace tandem {

inline constexpr const char* kStatsZoneName = "tandem_stats";
inline constexpr const char* kMbufPoolName = "tandem_mbufs";
inline constexpr int kMaxRings = 256;
inline constexpr int kMaxNfs = 128;
inline constexpr int kMaxWorkers = 128;

// Counters have exactly one writer each (the ring's producer or consumer, the NF's worker), so
// relaxed atomic stores suffice; readers on other cores see them within a cache-line transfer.
struct alignas(64) RingCounters {
  uint64_t enqueued;      // accepted by the ring (written by the producer)
  uint64_t dropped_full;  // offered while the ring was full, freed by the producer
  alignas(64) uint64_t dequeued;  // written by the consumer
};

struct alignas(64) NfCounters {
  uint64_t packets_in;
  uint64_t packets_out;
  uint64_t packets_dropped;
  uint64_t batches;
  uint64_t empty_polls;
  uint64_t busy_cycles;  // TSC cycles spent inside the NF's batch function
};

// How a worker gives the CPU away; written by the scheduler module before `go`.
struct YieldPolicy {
  uint32_t after_batches;  // 0 = never yield after a number of batches
  uint32_t on_empty;       // 1 = sched_yield() when every input ring of the worker is empty
};

struct alignas(64) WorkerControl {
  uint64_t heartbeat;  // incremented once per loop iteration
  int32_t pid;
  uint32_t ready;      // set by the worker once it is attached and waiting for `go`
  YieldPolicy yield;
  uint64_t yields;     // sched_yield() calls made
};

struct StatsZone {
  uint32_t go;    // manager -> workers: start polling
  uint32_t stop;  // manager -> workers: leave the loop
  RingCounters rings[kMaxRings];
  NfCounters nfs[kMaxNfs];
  WorkerControl workers[kMaxWorkers];
};

template <typename T>
inline void counter_add(T& counter, T delta) {
  __atomic_store_n(&counter, __atomic_load_n(&counter, __ATOMIC_RELAXED) + delta, __ATOMIC_RELAXED);
}

template <typename T>
inline T counter_read(const T& counter) {
  return __atomic_load_n(&counter, __ATOMIC_RELAXED);
}

template <typename T>
inline void flag_store(T& flag, T value) {
  __atomic_store_n(&flag, value, __ATOMIC_RELEASE);
}

template <typename T>
inline T flag_load(const T& flag) {
  return __atomic_load_n(&flag, __ATOMIC_ACQUIRE);
}

}  // namespace tandem
