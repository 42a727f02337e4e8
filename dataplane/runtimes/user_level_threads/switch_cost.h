// What one user-level switch costs on this machine: Bubble's turn from one NF to the next, in user space.
#pragma once

namespace tandem {

// Nanoseconds per resume + yield of two UserLevelThreads taking turns `turns` times each.
double ns_per_user_level_switch(int turns);

}  // namespace tandem
