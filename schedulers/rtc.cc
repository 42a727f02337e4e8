// rtc: the run-to-completion ceiling: all NFs placed on one core run as consecutive calls in one process.
#include "mechanisms/kernel_policy.h"
#include "run_to_completion_plan.h"
#include "scheduler.h"

namespace tandem {
namespace {

class RunToCompletion final : public Scheduler {
 public:
  // idle: sleep: a worker whose every input is empty sleeps on its futex, and the manager's loop wakes it once any
  // input holds a packet: an idle core costs next to nothing, and a packet that finds it asleep waits for the
  // wake-up (a tick of `wakeup_us` and a futex wake) on top.
  // policy: the worker's kernel policy (with_lone_worker_policy).
  RunToCompletion(KernelPolicy policy, bool sleep_when_idle, double wakeup_us)
      : policy_(std::move(policy)), sleep_when_idle_(sleep_when_idle), wakeup_us_(wakeup_us) {}

  // One worker per core; on it, each maximal run of NFs of a chain joined by single edges becomes one segment.
  std::vector<WorkerPlan> plan_workers(const Deployment& deployment) const override {
    return run_to_completion_workers(
        deployment, [](const NfConfig&) { return true; }, "rtc@core");
  }
  void attach(SchedulerView& view) override {
    for (size_t w = 0; w < view.worker_pids().size(); w++) {
      policy_.apply(view.worker_pids()[w]);
      if (sleep_when_idle_) view.hints.set_yield_policy(w, {.after_batches = 0, .on_empty = 0, .block_on_empty = 1});
    }
  }
  uint64_t tick_period_ns() const override { return sleep_when_idle_ ? static_cast<uint64_t>(wakeup_us_ * 1e3) : 0; }
  void tick(SchedulerView& view, uint64_t) override {
    const std::vector<WorkerPlan>& workers = view.deployment.workers;
    for (size_t w = 0; w < workers.size() && w < view.worker_pids().size(); w++) {
      if (!view.hints.asleep(w)) continue;
      for (const Segment& segment : workers[w].segments)
        if (view.waiting(segment.nfs.front()) > 0) {
          view.hints.wake(w);
          wakeups_++;
          break;
        }
    }
  }
  void detach(SchedulerView& view) override {
    for (size_t w = 0; w < view.worker_pids().size(); w++) {
      KernelPolicy::restore(view.worker_pids()[w]);
      view.hints.set_yield_policy(w, YieldPolicy{});
      view.hints.wake(w);
    }
  }
  json report(const SchedulerView& view) const override {
    json out = policy_.describe();
    out["workers"] = view.worker_pids().size();
    out["idle"] = sleep_when_idle_ ? "sleep" : "poll";
    if (sleep_when_idle_) out["wakeups"] = wakeups_;
    return out;
  }
  json live_metrics(const SchedulerView&) const override {
    return sleep_when_idle_ ? json{{"totals", {{"wakeups_total", wakeups_}}}} : json::object();
  }

 private:
  KernelPolicy policy_;
  bool sleep_when_idle_;
  double wakeup_us_;
  uint64_t wakeups_ = 0;
};

const SchedulerRegistration registration({
    .name = "rtc",
    .help = "Run-to-completion ceiling: the NFs on a core run as consecutive function calls in one process.",
    .options = with_lone_worker_policy({
        {.name = "idle",
         .type = ArgType::Choice,
         .default_value = "poll",
         .help = "poll: the worker polls its inputs always (the ceiling); sleep: it sleeps while every input is "
                 "empty, woken by the manager once a packet arrives (an idle core costs next to nothing)",
         .choices = {"poll", "sleep"}},
        // The manager's loop generates the traffic (or takes it from the ports) and looks in the same turn: at
        // 1 us a sleeping worker's wake-up follows the enqueue within a turn or so, as if the generator woke it.
        {.name = "wakeup_us",
         .type = ArgType::Number,
         .default_value = 1.0,
         .help = "idle: sleep: how often the manager looks for packets at a sleeping worker's inputs",
         .min = 1,
         .max = 100000},
    }),
    .requirements = lone_worker_requirements,
    .create =
        [](const json& options) {
          return std::make_unique<RunToCompletion>(KernelPolicy::from_options(options["policy"], options),
                                                   options["idle"].get<std::string>() == "sleep",
                                                   options["wakeup_us"].get<double>());
        },
});

}  // namespace
}  // namespace tandem
