// An external NF: a ring-backed ethdev port between its two rings, and an unmodified DPDK application
// (dpdk-testpmd) started as a secondary that forwards on that port. Its counters come from the port.
#pragma once

#include <sys/types.h>

#include <optional>
#include <string>

#include <rte_ring.h>

#include "contract/deployment.h"
#include "contract/shm_layout.h"

namespace tandem {

// testpmd in a secondary process looks up the pool it would have made ("mb_pool_<socket>") and exits when it
// is missing, although io and macswap forwarding never allocate. The manager makes a small one for it.
void create_pool_for_external_apps(unsigned socket_id);

class ExternalNf {
 public:
  // Makes and starts the port whose receive queue is `in` and transmit queue is `out` (after EAL init).
  ExternalNf(const Deployment& deployment, const WorkerPlan& plan, rte_ring* in, rte_ring* out);
  ~ExternalNf();
  ExternalNf(const ExternalNf&) = delete;
  ExternalNf& operator=(const ExternalNf&) = delete;

  // Starts the application with its forwarding lcore on the plan's core and its main lcore (which only waits
  // on stdin) on the control core; it dies with the manager. Returns its pid.
  pid_t launch(int main_lcore_id);
  // The thread that forwards, once it polls (it sleeps in EAL until forwarding starts); 0 before. This is what
  // a scheduler switches, not the process.
  pid_t forwarding_thread();
  // CPU time after which a running worker thread is taken to be polling: its own start takes well under 1 ms.
  static constexpr uint64_t kPollingEvidenceNs = 5'000'000;
  pid_t thread() const { return thread_; }  // as last found; 0 = never seen forwarding
  // Copies the port's counters into the NF's and its rings' slots of the stats zone (the manager is their
  // only writer): received = NF in = ring dequeued, sent = NF out = next ring enqueued.
  void mirror_counters(StatsZone& stats) const;
  // After a clean exit: what the application received and did not send, it freed because the next ring was full
  // (net_ring counts no send failures, so they are only known once nothing is in the application's hands);
  // they become that ring's dropped_full. Returns an error when the application's own statistics disagree.
  std::optional<std::string> settle_drops(StatsZone& stats) const;
  // Asks the application to stop forwarding and exit (a newline on its stdin, as testpmd waits for).
  void request_stop();
  const std::string& log_path() const { return log_path_; }
  // The last lines the application printed, joined with " | ", for error messages (the log goes with the run).
  std::string log_tail(int lines = 3) const;
  uint16_t port() const { return port_; }

 private:
  const Deployment& deployment_;
  const WorkerPlan& plan_;
  int nf_ = 0;
  uint16_t port_ = 0;
  int stdin_fd_ = -1;
  pid_t pid_ = 0, thread_ = 0;
  std::string log_path_;
};

}  // namespace tandem
