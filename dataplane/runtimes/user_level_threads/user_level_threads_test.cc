// Tests of the Boost.Context user-level threads: order of turns, completion, errors, and the switch cost.
#include "user_level_threads.h"

#include <gtest/gtest.h>

#include <chrono>
#include <stdexcept>
#include <string>

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

// Not a speed test: it prints the cost of a switch (the brief's ~11 ns) and only fails on something absurd
// (a system call per switch would be ~100x slower than the bound).
TEST(UserLevelThreads, ASwitchStaysInUserSpace) {
  UserLevelThreads threads;
  constexpr int kTurns = 200000;
  for (int t = 0; t < 2; t++)
    threads.spawn([](UserLevelThreads::Yield& yield) {
      for (int i = 0; i < kTurns; i++) yield();
    });
  auto start = std::chrono::steady_clock::now();
  while (threads.run_round()) {
  }
  double ns =
      std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count() / threads.switches();
  std::printf("user-level switch (resume + yield): %.1f ns\n", ns);
  EXPECT_LT(ns, 2000.0);
}

}  // namespace
}  // namespace tandem
