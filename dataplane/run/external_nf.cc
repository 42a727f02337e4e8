// External NFs: the port the manager makes for an unmodified DPDK application, its process, and its counters.
#include "external_nf.h"

#include <dirent.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cstring>
#include <fstream>
#include <stdexcept>

#include <rte_errno.h>
#include <rte_eth_ring.h>
#include <rte_ethdev.h>
#include <rte_mbuf.h>

#include "contract/eal_args.h"
#include "nfs/external.h"

namespace tandem {

void create_pool_for_external_apps(unsigned socket_id) {
  std::string name = "mb_pool_" + std::to_string(socket_id);  // testpmd's mbuf_poolname_build()
  if (rte_mempool_lookup(name.c_str()) != nullptr) return;
  if (rte_pktmbuf_pool_create(name.c_str(), 511, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, static_cast<int>(socket_id)) ==
      nullptr)
    throw std::runtime_error("cannot create the mbuf pool external NFs look up: " +
                             std::string(rte_strerror(rte_errno)));
}

ExternalNf::ExternalNf(const Deployment& deployment, const WorkerPlan& plan, rte_ring* in, rte_ring* out)
    : deployment_(deployment), plan_(plan), nf_(plan.segments.front().nfs.front()) {
  const std::string& nf_name = deployment.nfs[nf_].name;
  // net_ring's ATTACH action does not work across processes (../shared/DESIGN.md): the primary makes the port
  // from the rings themselves, and the secondary finds it through the shared ethdev data.
  std::string port_name = "net_ring_tandem" + std::to_string(nf_);
  int port = rte_eth_from_rings(port_name.c_str(), &in, 1, &out, 1, rte_socket_id());
  if (port < 0)
    throw std::runtime_error("cannot make the ring port of external NF " + nf_name + ": " + rte_strerror(rte_errno));
  port_ = static_cast<uint16_t>(port);
  rte_eth_conf conf{};
  rte_mempool* pool = rte_mempool_lookup(kMbufPoolName);
  int rc = rte_eth_dev_configure(port_, 1, 1, &conf);
  if (rc == 0) rc = rte_eth_rx_queue_setup(port_, 0, 0, rte_socket_id(), nullptr, pool);
  if (rc == 0) rc = rte_eth_tx_queue_setup(port_, 0, 0, rte_socket_id(), nullptr);
  if (rc == 0) rc = rte_eth_dev_start(port_);  // a secondary may not start a port: testpmd gets it started
  if (rc != 0)
    throw std::runtime_error("cannot start the ring port of external NF " + nf_name + ": " + rte_strerror(-rc));
  log_path_ = deployment.paths.run_dir + "/external-" + nf_name + ".log";
}

ExternalNf::~ExternalNf() {
  if (stdin_fd_ >= 0) close(stdin_fd_);
}

pid_t ExternalNf::launch(int main_lcore_id) {
  const NfConfig& nf = deployment_.nfs[nf_];
  std::string binary = resolve_executable(nf.args["binary"].get<std::string>());
  if (binary.empty())
    throw std::runtime_error("NF " + nf.name + ": " + nf.args["binary"].get<std::string>() + " is not executable");
  std::vector<std::string> args = {
      binary, "--proc-type=secondary", "--file-prefix=" + deployment_.paths.file_prefix,
      "--huge-dir=" + deployment_.paths.huge_dir,
      "--lcores=" + std::to_string(main_lcore_id) + "@" + std::to_string(deployment_.control_core) + "," +
          std::to_string(plan_.lcore_id) + "@" + std::to_string(plan_.core),
      "--main-lcore=" + std::to_string(main_lcore_id), "--no-pci", "--no-telemetry", "--log-level=lib.eal:error", "--",
      "--portmask=0x" +
          [&] {
            char hex[32];
            snprintf(hex, sizeof hex, "%llx", 1ULL << port_);
            return std::string(hex);
          }(),
      "--port-topology=loop",  // one port: receive on it, send on it
      "--nb-cores=1", "--forward-mode=" + nf.args["forward_mode"].get<std::string>(),
      "--burst=" + std::to_string(deployment_.burst),
      // By default testpmd reads its receive queues empty and frees what it finds
      // before it forwards: packets the accounting would lose.
      "--no-flush-rx", "--no-lsc-interrupt", "--no-rmv-interrupt", "--no-mlockall"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);

  int stdin_pipe[2];
  if (pipe2(stdin_pipe, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe failed: ") + strerror(errno));
  int log = open(log_path_.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (log < 0) throw std::runtime_error("cannot write " + log_path_ + ": " + strerror(errno));
  pid_t parent = getpid();
  pid_ = fork();
  if (pid_ < 0) throw std::runtime_error(std::string("fork failed: ") + strerror(errno));
  if (pid_ == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);  // a busy poller must never outlive the manager
    if (getppid() != parent) _exit(1);
    dup2(stdin_pipe[0], STDIN_FILENO);
    dup2(log, STDOUT_FILENO);
    dup2(log, STDERR_FILENO);
    signal(SIGINT, SIG_IGN);  // the manager decides when NFs stop
    without_address_randomisation();
    execv(binary.c_str(), argv.data());
    fprintf(stderr, "tandem-manager: cannot execute %s: %s\n", binary.c_str(), strerror(errno));
    _exit(127);
  }
  close(stdin_pipe[0]);
  close(log);
  stdin_fd_ = stdin_pipe[1];
  return pid_;
}

pid_t ExternalNf::forwarding_thread() {
  if (thread_ != 0 || pid_ <= 0) return thread_;
  std::string task_dir = "/proc/" + std::to_string(pid_) + "/task";
  std::string wanted = "rte-worker-" + std::to_string(plan_.lcore_id);
  DIR* dir = opendir(task_dir.c_str());
  if (dir == nullptr) return 0;
  pid_t found = 0;
  while (dirent* entry = readdir(dir)) {
    if (entry->d_name[0] == '.') continue;
    std::string comm;
    std::getline(std::ifstream(task_dir + "/" + entry->d_name + "/comm"), comm);
    if (comm == wanted) found = atoi(entry->d_name);
  }
  closedir(dir);
  if (found == 0) return 0;
  // EAL's worker threads sleep until the application launches work on them, so a running one is forwarding;
  // but a new worker also runs briefly before its first sleep, and may wait runnable for milliseconds behind
  // the NFs on its core. Taken for forwarding then, testpmd's start-up (up to a second on a busy control core)
  // ran under the scheduler with an NF that could not run: only a thread that has also spent more CPU time
  // than that start takes is one that polls.
  std::string prefix = task_dir + "/" + std::to_string(found);
  std::string stat;
  std::getline(std::ifstream(prefix + "/stat"), stat);
  size_t close_paren = stat.rfind(')');
  if (close_paren == std::string::npos || close_paren + 2 >= stat.size() || stat[close_paren + 2] != 'R') return 0;
  // schedstat: time on the CPU (ns), time waiting, timeslices; a kernel without it leaves only the state to go by.
  uint64_t on_cpu_ns = 0;
  if (std::ifstream(prefix + "/schedstat") >> on_cpu_ns && on_cpu_ns < kPollingEvidenceNs) return 0;
  thread_ = found;
  return thread_;
}

void ExternalNf::mirror_counters(StatsZone& stats) const {
  rte_eth_stats port_stats{};
  if (rte_eth_stats_get(port_, &port_stats) != 0) return;
  const Segment& segment = plan_.segments.front();
  counter_store(stats.rings[segment.in_rings.at(0)].dequeued, port_stats.ipackets);
  counter_store(stats.rings[segment.out_rings.at(0)].enqueued, port_stats.opackets);
  counter_store(stats.nfs[nf_].packets_in, port_stats.ipackets);
  counter_store(stats.nfs[nf_].packets_out, port_stats.opackets);
}

std::optional<std::string> ExternalNf::settle_drops(StatsZone& stats) const {
  rte_eth_stats port_stats{};
  if (rte_eth_stats_get(port_, &port_stats) != 0)
    return "NF " + deployment_.nfs[nf_].name + ": its port's statistics are unreadable";
  uint64_t received = port_stats.ipackets, sent = port_stats.opackets;
  uint64_t freed = received - sent;
  counter_store(stats.rings[plan_.segments.front().out_rings.at(0)].dropped_full, freed);
  // testpmd prints, per port, "Forward statistics for port P" and then "TX-dropped: N".
  std::ifstream log(log_path_);
  std::string header = "Forward statistics for port " + std::to_string(port_) + " ";
  bool in_block = false;
  for (std::string line; std::getline(log, line);) {
    if (line.find(header) != std::string::npos) in_block = true;
    size_t at = line.find("TX-dropped:");
    if (!in_block || at == std::string::npos) continue;
    uint64_t reported = std::strtoull(line.c_str() + at + 11, nullptr, 10);
    if (reported == freed) return std::nullopt;
    return "NF " + deployment_.nfs[nf_].name + ": its port received " + std::to_string(received) + " and sent " +
           std::to_string(sent) + " packets, but the application reports " + std::to_string(reported) + " dropped";
  }
  return std::nullopt;  // another application, or it printed no statistics: the port's counters stand alone
}

std::string ExternalNf::log_tail(int lines) const {
  std::ifstream log(log_path_);
  std::vector<std::string> last;
  for (std::string line; std::getline(log, line);) {
    if (line.empty()) continue;
    last.push_back(line);
    if (static_cast<int>(last.size()) > lines) last.erase(last.begin());
  }
  std::string joined;
  for (const std::string& line : last) joined += (joined.empty() ? "" : " | ") + line;
  return joined.empty() ? "no output" : joined;
}

void ExternalNf::request_stop() {
  if (stdin_fd_ < 0) return;
  ssize_t written = write(stdin_fd_, "\n", 1);  // EPIPE when it is gone already: nothing to ask then
  (void)written;
  close(stdin_fd_);
  stdin_fd_ = -1;
}

}  // namespace tandem
