// Tests of the Boost.Context user-level threads: order of turns, completion, errors, and the switch cost.
#include "user_level_threads.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <boost/context/fiber.hpp>
#include <boost/context/protected_fixedsize_stack.hpp>
#include <chrono>
#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

#include "switch_cost.h"

namespace tandem {
namespace {

TEST(UserLevelThreads, ThreadsTakeTurnsInSpawnOrder) {
  UserLevelThreads threads;
  std::string trace;
  for (char name : std::string("abc"))
    threads.spawn([&trace, name](UserLevelThreads::Yield& yield) {
      for (int turn = 0; turn < 3; turn++) {
        trace += name;
        yield();
      }
    });
  while (threads.run_round()) {
  }
  EXPECT_EQ(trace, "abcabcabc");
}

TEST(UserLevelThreads, AFinishedThreadLeavesTheRoundToTheOthers) {
  UserLevelThreads threads;
  std::string trace;
  threads.spawn([&](UserLevelThreads::Yield&) { trace += 's'; });  // returns at once
  threads.spawn([&](UserLevelThreads::Yield& yield) {
    for (int turn = 0; turn < 3; turn++) {
      trace += 'l';
      yield();
    }
  });
  int rounds = 0;
  while (threads.run_round()) rounds++;
  EXPECT_EQ(trace, "slll");
  EXPECT_EQ(rounds, 3);  // the fourth round finds the long thread returning
}

TEST(UserLevelThreads, AnExceptionInAThreadReachesTheScheduler) {
  UserLevelThreads threads;
  threads.spawn([](UserLevelThreads::Yield& yield) {
    yield();
    throw std::runtime_error("nf broke");
  });
  EXPECT_TRUE(threads.run_round());
  EXPECT_THROW(threads.run_round(), std::runtime_error);
}

// Stacks are real: a thread's locals survive its yields.
TEST(UserLevelThreads, LocalsSurviveASwitch) {
  UserLevelThreads threads;
  long sums[2] = {0, 0};
  for (int t = 0; t < 2; t++)
    threads.spawn([&sums, t](UserLevelThreads::Yield& yield) {
      long local[64];
      for (int i = 0; i < 64; i++) local[i] = i * (t + 1);
      yield();
      for (long v : local) sums[t] += v;
    });
  while (threads.run_round()) {
  }
  EXPECT_EQ(sums[0], 2016);
  EXPECT_EQ(sums[1], 4032);
}

using Clock = std::chrono::steady_clock;

// The same turns on two bare Boost.Context fibers, on the same guarded stacks: the primitive UserLevelThreads wraps.
double ns_per_switch_of_bare_fibers(int turns) {
  namespace context = boost::context;
  std::vector<context::fiber> fibers;
  for (int t = 0; t < 2; t++)
    fibers.emplace_back(std::allocator_arg, context::protected_fixedsize_stack(256 * 1024),
                        [turns](context::fiber&& scheduler) {
                          for (int i = 0; i < turns; i++) scheduler = std::move(scheduler).resume();
                          return std::move(scheduler);
                        });
  uint64_t resumes = 0;
  auto start = Clock::now();
  for (bool any = true; any;) {
    any = false;
    for (context::fiber& fiber : fibers) {
      if (!fiber) continue;
      fiber = std::move(fiber).resume();
      resumes++;
      any = any || static_cast<bool>(fiber);
    }
  }
  return std::chrono::duration<double, std::nano>(Clock::now() - start).count() / static_cast<double>(resumes);
}

// A switch costs what the Boost.Context switch under it costs, plus a little bookkeeping: it stays in user space.
// Each side is the fastest of several interleaved repeats (preemption and a stolen vCPU only add time), so the ratio
// holds still on a host, but not across hosts: 20.8 against 11.3 ns (1.84x) in 6 of 6 runs on an AMD EPYC guest,
// 39.7-41.5 against 15.1-15.9 ns (2.6x) and once 30.8 against 10.1 (3.04x) on an Intel Xeon guest, where 3x failed.
// 4x leaves a third above the highest seen and fails a switch that costs 1.5x what it does there, let alone a
// system call per switch. The fixed bound catches what the ratio cannot (both made slow alike): 100 ns is 2.4x what
// the AMD guest takes.
TEST(UserLevelThreads, ASwitchCostsABareFiberSwitchInUserSpace) {
  constexpr int kTurns = 20000, kRepeats = 7;
  double threads_ns = 1e9, bare_ns = 1e9;
  for (int r = 0; r < kRepeats; r++) {
    bare_ns = std::min(bare_ns, ns_per_switch_of_bare_fibers(kTurns));
    threads_ns = std::min(threads_ns, ns_per_user_level_switch(kTurns));
  }
  std::printf("user-level switch (resume + yield): %.1f ns; a bare Boost.Context fiber's: %.1f ns\n", threads_ns,
              bare_ns);
  EXPECT_LT(threads_ns, 4.0 * bare_ns);
  EXPECT_LT(threads_ns, 100.0);
}

}  // namespace
}  // namespace tandem
