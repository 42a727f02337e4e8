// Bubble's scale decision: when a local scheduler's measured utilisation exceeds mu, move one of its NFs to
// an under-utilised one.
#pragma once

#include <optional>
#include <string>
#include <vector>

namespace tandem::bubble {

struct NfLoad {
  int nf = 0;       // global NF index
  double load = 0;  // fraction of a core, from the last measurement window
};

// One local scheduler (a worker process of user-level threads) and the NFs it holds, in order-table order.
struct SchedulerLoad {
  int worker = 0;
  double utilisation = 0;  // sum of its NFs' loads
  std::vector<NfLoad> nfs;
};

struct Migration {
  int nf = 0;
  int from = 0;  // worker indexes
  int to = 0;
};

struct ScaleDecision {
  int worker = 0;  // the overloaded scheduler
  std::optional<Migration> migration;
  std::string reason;  // why no NF moved, when none did
};

// For every scheduler above mu, in order: the destination is the least-utilised other scheduler below mu;
// the NF moved is the last one in the source's order table whose load fits under mu there (moving the tail
// keeps the head of each chain where it was). A scheduler with a single NF is never emptied. At most one
// NF moves per scheduler per window, so the next window measures the effect before anything else moves.
std::vector<ScaleDecision> decide_scaling(const std::vector<SchedulerLoad>& schedulers, double mu);

}  // namespace tandem::bubble
