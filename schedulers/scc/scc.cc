// The SCC scheduler module (SCC, Sec. 5.2): every NF its own process under batch CFS with a nice value that sets
// its quantum (Eq. 1), or RR with a timeslice; the chain's cores reserved for it; the slices the NFs really get
// measured from schedstat and reported beside what Eq. 1 promised.
#include <map>
#include <optional>

#include "quantum.h"
#include "schedulers/mechanisms/kernel_policy.h"
#include "schedulers/mechanisms/schedstat.h"
#include "schedulers/scheduler.h"

namespace tandem {

namespace {

class SccScheduler final : public Scheduler {
 public:
  explicit SccScheduler(const json& options)
      : policy_(KernelPolicy::from_options(options.at("policy").get<std::string>(), options)),
        timeslice_ms_(options.at("timeslice_ms").get<int>()),
        profile_mode_(options.at("mode").get<std::string>() == "profile"),
        reserve_cores_(options.at("reserve_cores").get<bool>()),
        switch_core_(options.at("switch_core").get<int>()) {}

  void attach(SchedulerView& view) override {
    // Profile mode hands the processes to the profiler (run --profile) as they are: no policy of its own.
    if (!profile_mode_)
      for (pid_t pid : view.worker_pids()) policy_.apply(pid);
    sample(view, at_attach_);
  }
  uint64_t tick_period_ns() const override { return 100'000'000; }
  void tick(SchedulerView& view, uint64_t) override { sample(view, latest_); }
  void detach(SchedulerView& view) override {
    sample(view, latest_);
    for (pid_t pid : view.worker_pids()) KernelPolicy::restore(pid);
  }

  json report(const SchedulerView& view) const override {
    json out = {{"mode", profile_mode_ ? "profile" : "run-time"},
                {"policy", policy_.name},
                {"reserved_cores", reserve_cores_},
                {"plan", switch_core_ < 0 ? "uniprocessor"
                                          : "multiprocessor (switch on core " + std::to_string(switch_core_) + ")"}};
    if (policy_.realtime()) {
      out["priority"] = policy_.priority;
      out["timeslice_ms"] = timeslice_ms_ > 0 ? json(timeslice_ms_) : json("the machine's");
    } else {
      out["nice"] = policy_.nice;
      // What the paper's kernel (3.13) would have granted; today's scheduler weighs nice instead.
      out["eq1_quantum_ms"] = eq1_quantum_ms(policy_.nice);
    }
    json measured = json::object();
    for (size_t w = 0; w < view.deployment.workers.size(); w++) {
      auto begin = at_attach_.find(w), end = latest_.find(w);
      if (begin == at_attach_.end() || end == latest_.end()) continue;
      const SchedStat& a = begin->second;
      const SchedStat& b = end->second;
      uint64_t slices = b.timeslices - a.timeslices, run = b.run_ns - a.run_ns, wait = b.wait_ns - a.wait_ns;
      measured[view.deployment.workers[w].name] = {
          {"timeslices", slices},
          {"mean_slice_ms", slices ? json(static_cast<double>(run) / static_cast<double>(slices) / 1e6) : json()},
          {"wait_per_run", run ? json(static_cast<double>(wait) / static_cast<double>(run)) : json()}};
    }
    out["measured"] = measured;
    return out;
  }

  json live_metrics(const SchedulerView& view) const override {
    json nfs = json::object();
    for (const auto& [w, stat] : latest_)
      nfs[view.deployment.workers[w].name] = {{"timeslices_total", stat.timeslices}};
    return {{"nfs", nfs}};
  }

 private:
  void sample(const SchedulerView& view, std::map<size_t, SchedStat>& into) {
    for (size_t w = 0; w < view.worker_pids().size(); w++)
      if (pid_t pid = view.worker_pids()[w]; pid > 0)
        if (std::optional<SchedStat> stat = read_schedstat(pid)) into[w] = *stat;
  }

  KernelPolicy policy_;
  int timeslice_ms_;
  bool profile_mode_;
  bool reserve_cores_;
  int switch_core_;
  std::map<size_t, SchedStat> at_attach_, latest_;  // by worker
};

const SchedulerRegistration scc({
    .name = "scc",
    .help = "SCC: every NF its own process under batch CFS with a long quantum (nice) or RR with a timeslice, on "
            "cores reserved for the chain; reports the slices the NFs got. For kernel-I/O chains (io: kernel) and DPDK "
            "ones.",
    .options =
        {
            {.name = "policy",
             .type = ArgType::Choice,
             .default_value = "batch",
             .help = "batch (SCHED_BATCH), cfs (SCHED_OTHER) or rr (SCHED_RR)",
             .choices = {"batch", "cfs", "rr"}},
            {.name = "nice",
             .type = ArgType::Integer,
             .default_value = -19,
             .help = "nice value of every NF under batch or cfs: the quantum of Eq. 1 (-19: the paper's longest)",
             .min = -20,
             .max = 19},
            {.name = "priority",
             .type = ArgType::Integer,
             .default_value = 1,
             .help = "real-time priority under rr",
             .min = 1,
             .max = 99},
            {.name = "timeslice_ms",
             .type = ArgType::Integer,
             .default_value = 0,
             .help = "rr's timeslice (/proc/sys/kernel/sched_rr_timeslice_ms for the run); 0 keeps the machine's",
             .min = 0,
             .max = 1000},
            {.name = "reserve_cores",
             .type = ArgType::Boolean,
             .default_value = true,
             .help = "take the NFs' cores away from every other task on the machine for the run (their affinity), and "
                     "give them back after"},
            {.name = "switch_core",
             .type = ArgType::Integer,
             .default_value = -1,
             .help = "where a switched chain's switch runs (link: bridge, ovs, ovs-userspace): -1 = on the NFs' core "
                     "(SCC's "
                     "uniprocessor plan), N = on core N (its multiprocessor plan)",
             .min = -1,
             .max = 1023},
            {.name = "mode",
             .type = ArgType::Choice,
             .default_value = "run-time",
             .help = "run-time: schedule the chain; profile: leave the NFs under the default policy for the profiler "
                     "(run --profile)",
             .choices = {"run-time", "profile"}},
        },
    .requirements =
        [](const json& options) {
          MachineRequirements needs;
          bool rr = options.at("policy") == "rr";
          needs.need_if(rr, MachineResource::RtUnthrottled);
          if (int slice = options.at("timeslice_ms").get<int>(); rr && slice > 0)
            needs.need(MachineResource::RrTimesliceMs, slice);
          needs.need_if(options.at("reserve_cores").get<bool>(), MachineResource::ReservedCores);
          // The switch of a kernel-I/O chain is the kernel's or Open vSwitch's: the control plane places it.
          needs.need(MachineResource::KernelLinks, json{{"switch_core", options.at("switch_core")}});
          return needs;
        },
    .create = [](const json& options) { return std::make_unique<SccScheduler>(options); },
    .external_nfs = true,
    .kernel_io_nfs = true,
});

}  // namespace
}  // namespace tandem
