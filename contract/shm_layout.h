// Layout of the stats memzone that the manager creates and every worker maps: counters and control flags.
#pragma once

#include <cstdint>

namespace tandem {

inline constexpr const char* kStatsZoneName = "tandem_stats";
inline constexpr const char* kMbufPoolName = "tandem_mbufs";
// What a run holds at once: an NF's hop stamp (NfConfig::hop) is a byte of the packet's record and a bit of its
// branch hop set (contract/packet_meta.h), and a worker's DPDK lcore id (WorkerPlan::lcore_id) is below
// RTE_MAX_LCORE (128; lcore 0 is the manager's). A service gives a removed chain's stamps and lcore ids again once its
// packets drained and its processes are gone.
inline constexpr int kMaxRings = 256;
inline constexpr int kMaxNfs = 128;
inline constexpr int kMaxWorkers = 127;
inline constexpr int kMaxChains = 128;
// What a service holds over its life: every NF, ring, chain and worker keeps its counters in the stats zone by its
// deployment index, which is never given twice, so that a removed chain's figures stay in the results, exact, beside
// the chains that came after it. (Some 10 MB of hugepage memory, mapped once by every process.)
inline constexpr int kLifetimeRings = 16384;
inline constexpr int kLifetimeNfs = 8192;
inline constexpr int kLifetimeWorkers = 8192;
inline constexpr int kLifetimeChains = 8192;
// A worker runs one NF or more: so a run's workers, however its chains come and go, have their slots. (A re-layout's
// new processes take slots beside the running ones: it checks them itself.)
static_assert(kLifetimeWorkers >= kLifetimeNfs, "every NF may run in a worker of its own");

// Counters have exactly one writer each (the ring's producer or consumer, the NF's worker), so
// relaxed atomic stores suffice; readers on other cores see them within a cache-line transfer.
struct alignas(64) RingCounters {
  uint64_t enqueued;              // accepted by the ring (written by the producer)
  uint64_t dropped_full;          // offered while the ring was full, freed by the producer
  alignas(64) uint64_t dequeued;  // written by the consumer
  // A kernel link (a veth between NF processes, contract/deployment.h RingConfig::kernel), also the consumer's:
  // frames that reached its socket and those the socket dropped with its queue full (PACKET_STATISTICS, read
  // once every sender has stopped), frames without Tandem's record (foreign: freed, not counted as dequeued),
  // and the mbufs it holds as receive buffers (the pool's check counts them as in use).
  uint64_t socket_arrived;
  uint64_t socket_dropped;
  uint64_t foreign;
  uint64_t receive_buffers;
  uint32_t socket_counted;  // 1 once socket_arrived and socket_dropped are final
  // Nonzero while receive buffers are taken from the pool or handed on as frames, until receive_buffers says so
  // again: a consumer killed meanwhile held a number no counter tells (the manager then does not restart it).
  uint32_t receive_buffers_changing;
};

struct alignas(64) NfCounters {
  uint64_t packets_in;
  uint64_t packets_out;
  uint64_t packets_dropped;
  uint64_t batches;
  uint64_t empty_polls;
  uint64_t busy_cycles;  // TSC cycles spent inside the NF's batch function
  // The same less what the kernel took: a batch the process was descheduled in counts at most kPreemptedFactor x
  // its usual cost (segment.cc). The autoscaler's idle rule reads it: work, not wall time.
  uint64_t work_cycles;
  // Per-packet service time as the NF runtime sees it (NF code plus, for a segment's first NF, the ring
  // I/O), over the batches the process was not descheduled in (see dataplane/runtimes/segment.cc): NFVnice's intrusive
  // mode reads it.
  uint64_t service_cycles;
  uint64_t service_packets;
  // Bubble's load measurement, counted only while the worker's load window is open: TSC cycles from
  // a receive that got packets to the send after it (load), and the same including empty polls (what
  // counting busy polling would give).
  uint64_t load_cycles;
  uint64_t poll_cycles;
  // Journal of the segment this NF heads: the mbufs its runtime is handing back to the pool right now
  // (already counted as dropped), 0 otherwise. A process killed inside the free leaves it nonzero, and the
  // manager then knows the pool's shared state was cut mid-update (see dataplane/ports/free_counted.cc).
  uint64_t mbufs_being_freed;
  // Packets this NF sent to an output gate that the chain's graph gives no edge (dropped by its labelled egress).
  uint64_t label_miss;
  // A parallel group's copies of a packet, one reference each: made by this NF's branch port (a fork's), and
  // dropped without a release by its marker (a branch's last NF's) because a sibling branch releases the packet.
  uint64_t forked;
  uint64_t merged;
};

// Per-NF control for workers that host several NFs as user-level threads (Bubble): the scheduler module
// writes batch_size and owner; a worker runs the NF only while it holds it (running_on == its index).
struct alignas(64) NfControl {
  uint32_t batch_size;  // packets the NF may take per turn (its share of the core)
  int32_t owner;        // worker that should run the NF; changed by the module to migrate it
  int32_t running_on;   // worker that holds the NF now, -1 = none (a handoff in progress)
  // Live argument changes (a service's `ctl args`): the manager writes the NF's new arguments to a file of the run
  // (contract/live_args_files.h) and raises args_wanted; each runtime that holds the NF builds an instance from them
  // beside the running one, off its core, and swaps it in between two batches (dataplane/runtimes/live_args.h).
  uint32_t args_wanted;   // manager -> runtimes: the generation of arguments to run (0: the spec's)
  uint32_t args_running;  // runtime -> manager: the generation it runs now
  uint32_t args_refused;  // runtime -> manager: a generation it could not build (why: in a file beside the args)
  // On a segment's first NF: raised with any args_wanted of the segment's NFs, so that a runtime reads one word a
  // batch, not one per NF.
  uint32_t segment_changes;
  uint64_t args_build_cycles;  // TSC cycles the last build took (on a thread of its own; the old instance ran on)
};

// How a worker gives the CPU away; written by the scheduler module before `go`.
struct YieldPolicy {
  uint32_t after_batches;   // 0 = never yield after a number of batches
  uint32_t on_empty;        // 1 = sched_yield() when every input ring of the worker is empty
  uint32_t block_on_empty;  // 1 = sleep on `idle` (a futex) when every input ring is empty, until woken
};

struct alignas(64) WorkerControl {
  uint64_t heartbeat;  // incremented once per loop iteration
  int32_t pid;
  uint32_t ready;  // set by the worker once it is attached and waiting for `go`
  YieldPolicy yield;
  uint64_t yields;       // sched_yield() calls made
  uint32_t throttled;    // scheduler -> worker: do not run (backpressure) until cleared and woken
  uint32_t idle;         // futex word of contract/idle_wait.h: 1 while the worker sleeps, 0 otherwise
  uint64_t sleeps;       // times the worker blocked (idle input or throttled)
  uint32_t load_window;  // scheduler -> worker: count load_cycles/poll_cycles while 1 (user-level-thread runtime)
  uint32_t left_loop;    // it saw `stop` and sends no more (the manager counts kernel links after every sender's)
  uint32_t leave;        // manager -> this worker alone: leave the loop as at `stop` (its chain was removed)
  // manager -> a worker started in this spare slot beside the running layout (a re-layout's), futex word:
  // kStagedGoOn or kStagedDismissed (contract/start_gate.h).
  uint32_t staged;
};

// A staged worker goes on as the worker its plan names, in that worker's slot; or exits without running.
inline constexpr uint32_t kStagedGoOn = 1;
inline constexpr uint32_t kStagedDismissed = 2;

// Per-chain entry control: a scheduler closes the entry to shed load before any NF spends work on it.
struct alignas(64) ChainControl {
  uint32_t entry_closed;        // scheduler -> generator: drop this chain's new packets at entry
  uint64_t entry_backpressure;  // packets so dropped (written by the generator)
};

// One scaled egress feeding a scaled NF's instances, written by that egress alone.
struct alignas(64) ScaleFeeder {
  uint32_t in_use;        // egress -> manager: instances its flow hash spreads over now
  uint64_t switches;      // changes of in_use the egress completed
  uint64_t held_peak;     // most packets it held at once while a change waited for the old instances
  uint64_t held_dropped;  // packets it could not hold (also counted as their ring's dropped_full)
  uint64_t held_now;      // packets it holds now (a run drains them before it stops)
};

// A scaled NF after a scaled NF is fed by each of that NF's instances (at most 8: spec.py's max_instances).
inline constexpr int kMaxScaleFeeders = 8;

// One scaled NF (μNF's auto-scaling; `scale[i]` for the NF whose instance 1 has global index i): the manager's
// autoscaler says how many instances to use; each scaled egress that feeds them follows once every flow it moves
// has left its old instance (dataplane/ports/scaled_egress.h), in the slot of its feeder
// (contract/deployment.h scale_feeders).
struct alignas(64) ScaleControl {
  uint32_t wanted;  // manager -> egresses: instances to use (0 is read as 1)
  ScaleFeeder feeders[kMaxScaleFeeders];
};

struct StatsZone {
  uint32_t go;    // manager -> workers: start polling
  uint32_t stop;  // manager -> workers: leave the loop
  // manager -> workers with packet-socket inputs: every kernel sender has left its loop; their sockets' counts are
  // final now.
  uint32_t kernel_links_quiet;
  RingCounters rings[kLifetimeRings];
  NfCounters nfs[kLifetimeNfs];
  WorkerControl workers[kLifetimeWorkers];
  ChainControl chains[kLifetimeChains];
  NfControl nf_control[kLifetimeNfs];
  ScaleControl scale[kLifetimeNfs];
};

template <typename T>
inline void counter_add(T& counter, T delta) {
  __atomic_store_n(&counter, __atomic_load_n(&counter, __ATOMIC_RELAXED) + delta, __ATOMIC_RELAXED);
}

// For counters whose single writer copies them from elsewhere (an external NF's port statistics).
template <typename T>
inline void counter_store(T& counter, T value) {
  __atomic_store_n(&counter, value, __ATOMIC_RELAXED);
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
