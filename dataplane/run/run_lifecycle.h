// A run's lifecycle, the manager's (DPDK primary) entry: owns memory and rings, starts workers, runs generator, sink
// and scheduler ticks; and tandem-manager's exit codes.
#pragma once

#include <cstdio>

#include "contract/arg_schema.h"

namespace tandem {

// Exit codes of tandem-manager, which the control plane maps to its own.
inline constexpr int kExitOk = 0;
inline constexpr int kExitRunFailed = 1;  // an NF crashed or hung, or set-up failed; partial results written
inline constexpr int kExitBadSpec = 2;
inline constexpr int kExitInterrupted = 130;

// Runs the deployment described by `doc`; progress and events go to `events` as JSON lines, and a service's live
// changes come from `commands_fd` (-1: none).
int run_deployment(const json& doc, FILE* events, int commands_fd = -1);

}  // namespace tandem
