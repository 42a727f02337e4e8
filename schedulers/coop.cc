// coop: the papers' intrusive cooperative baseline: every NF yields after k batches (k > 0) and when its input is
// empty.
#include "mechanisms/kernel_policy.h"
#include "scheduler.h"

namespace tandem {
namespace {

class CooperativeScheduler final : public Scheduler {
 public:
  CooperativeScheduler(KernelPolicy policy, uint32_t k, bool on_empty)
      : policy_(std::move(policy)), k_(k), on_empty_(on_empty) {}

  void attach(SchedulerView& view) override {
    // The yield points live in the worker runtime; this module only tells it when to use them.
    for (size_t w = 0; w < view.worker_pids().size(); w++) {
      view.hints.set_yield_policy(w, {.after_batches = k_, .on_empty = on_empty_ ? 1u : 0u});
      policy_.apply(view.worker_pids()[w]);
    }
  }
  void detach(SchedulerView& view) override {
    for (pid_t pid : view.worker_pids()) KernelPolicy::restore(pid);
  }
  json report(const SchedulerView& view) const override {
    uint64_t yields = 0;
    for (size_t w = 0; w < view.worker_pids().size(); w++) yields += view.hints.yields(w);
    return {{"policy", policy_.name}, {"k", k_}, {"yield_on_empty", on_empty_}, {"yields", yields}};
  }

 private:
  KernelPolicy policy_;
  uint32_t k_;
  bool on_empty_;
};

std::vector<ArgSpec> coop_options() {
  std::vector<ArgSpec> options = {
      {.name = "k",
       .type = ArgType::Integer,
       .default_value = 8,
       .help = "yield after this many batches (UNiS: 8); 0 = only on empty input (Bubble's \"CFS & sched_yield\")",
       .min = 0,
       .max = 1 << 20},
      {.name = "yield_on_empty",
       .type = ArgType::Boolean,
       .default_value = true,
       .help = "also yield when the input ring is empty"},
      {.name = "policy",
       .type = ArgType::Choice,
       .default_value = "fifo",
       .help = "kernel policy under the yields (uNF found FIFO best)",
       .choices = {"cfs", "batch", "rr", "fifo"}},
      {.name = "priority",
       .type = ArgType::Integer,
       .default_value = 1,
       .help = "RT priority for rr and fifo",
       .min = 1,
       .max = 99},
      {.name = "nice",
       .type = ArgType::Integer,
       .default_value = 0,
       .help = "nice value for cfs and batch",
       .min = -20,
       .max = 19},
  };
  return options;
}

const SchedulerRegistration registration({
    .name = "coop",
    .help =
        "Cooperative: each NF process yields (sched_yield) after k batches and on empty input, over a kernel policy.",
    .options = coop_options(),
    .requirements =
        [](const json& options) {
          return MachineRequirements().need_if(KernelPolicy::is_realtime(options["policy"].get<std::string>()),
                                               MachineResource::RtUnthrottled);
        },
    .create =
        [](const json& options) {
          return std::make_unique<CooperativeScheduler>(KernelPolicy::from_options(options["policy"], options),
                                                        options["k"].get<uint32_t>(),
                                                        options["yield_on_empty"].get<bool>());
        },
});

}  // namespace
}  // namespace tandem
