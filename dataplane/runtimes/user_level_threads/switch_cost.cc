// Two user-level threads taking turns, timed: the switch the unit test bounds and tandem-primitives reports.
#include "switch_cost.h"

#include <chrono>

#include "user_level_threads.h"

namespace tandem {

double ns_per_user_level_switch(int turns) {
  UserLevelThreads threads;
  for (int t = 0; t < 2; t++)
    threads.spawn([turns](UserLevelThreads::Yield& yield) {
      for (int i = 0; i < turns; i++) yield();
    });
  auto start = std::chrono::steady_clock::now();
  while (threads.run_round()) {
  }
  return std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - start).count() /
         static_cast<double>(threads.switches());
}

}  // namespace tandem
