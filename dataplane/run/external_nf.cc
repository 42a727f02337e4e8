// External NFs: the port the manager makes for an unmodified DPDK application, its process, and its counters.
#include "external_nf.h"

#include <dirent.h>
#include <fcntl.h>
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
#include "supervised_spawn.h"

namespace tandem {

namespace {
// The line the manager writes into an application's log before the output of its restarted process.
constexpr const char* kRestartMarker = "tandem-manager: the application was started again after its process died";
}  // namespace

void create_pools_for_external_apps() {
  for (unsigned i = 0; i < rte_socket_count(); i++) {
    int socket_id = rte_socket_id_by_idx(i);
    std::string name = "mb_pool_" + std::to_string(socket_id);  // testpmd's mbuf_poolname_build()
    if (rte_mempool_lookup(name.c_str()) != nullptr) continue;
    if (rte_pktmbuf_pool_create(name.c_str(), 511, 0, 0, RTE_MBUF_DEFAULT_BUF_SIZE, socket_id) == nullptr)
      throw std::runtime_error("cannot create the mbuf pool external NFs look up: " +
                               std::string(rte_strerror(rte_errno)));
  }
}

ExternalNf::ExternalNf(const Deployment& run, const NfConfig& nf, const WorkerPlan& plan, rte_ring* in, rte_ring* out)
    : run_(run), nf_config_(nf), plan_(plan), nf_(nf.index), in_(in), out_(out) {
  const std::string& nf_name = nf_config_.name;
  // net_ring's ATTACH action does not work across processes (../shared/DESIGN.md): the primary makes the port
  // from the rings themselves, and the secondary finds it through the shared ethdev data.
  std::string port_name = "net_ring_tandem" + std::to_string(nf_);
  // A chain added to a service and refused leaves its application's port (DPDK's shared port data is not taken
  // back: Run::give_up_addition), under the index a later chain's NF then takes: this port is named apart.
  // (rte_eth_from_rings makes a virtual device named "net_ring_" and the name given.)
  uint16_t taken = 0;
  for (int attempt = 1; attempt < 1000 && rte_eth_dev_get_port_by_name(("net_ring_" + port_name).c_str(), &taken) == 0;
       attempt++)
    port_name = "net_ring_tandem" + std::to_string(nf_) + "_" + std::to_string(attempt);
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
  log_path_ = run_.paths.run_dir + "/external-" + nf_name + ".log";
}

ExternalNf::~ExternalNf() {
  if (stdin_fd_ >= 0) close(stdin_fd_);
}

pid_t ExternalNf::relaunch() {
  if (stdin_fd_ >= 0) close(stdin_fd_);  // the dead process's
  stdin_fd_ = -1;
  thread_ = 0;
  return launch(main_lcore_id_, forwarding_lcore_id_);
}

pid_t ExternalNf::launch(int main_lcore_id, int forwarding_lcore_id, bool on_control_core) {
  const NfConfig& nf = nf_config_;
  bool again = main_lcore_id_ >= 0;
  main_lcore_id_ = main_lcore_id;
  forwarding_lcore_id_ = forwarding_lcore_id;
  // testpmd snapshots the port's counters as it starts forwarding and never resets them: they go on across its
  // processes, and what one process received and did not send is told from the counts at its start.
  PortCounts at_launch = counts().value_or(PortCounts{});
  received_at_launch_ = at_launch.received;
  sent_at_launch_ = at_launch.sent;
  std::string binary = resolve_executable(nf.args["binary"].get<std::string>());
  if (binary.empty())
    throw std::runtime_error("NF " + nf.name + ": " + nf.args["binary"].get<std::string>() + " is not executable");
  std::vector<std::string> args = {
      binary, "--proc-type=secondary", "--file-prefix=" + run_.paths.file_prefix, "--huge-dir=" + run_.paths.huge_dir,
      "--lcores=" + std::to_string(main_lcore_id) + "@" + std::to_string(run_.control_core) + "," +
          std::to_string(forwarding_lcore_id) + "@" + std::to_string(on_control_core ? run_.control_core : plan_.core),
      "--main-lcore=" + std::to_string(main_lcore_id), "--no-pci", "--no-telemetry", "--log-level=lib.eal:error", "--",
      "--portmask=0x" +
          [&] {
            char hex[32];
            snprintf(hex, sizeof hex, "%llx", 1ULL << port_);
            return std::string(hex);
          }(),
      "--port-topology=loop",  // one port: receive on it, send on it
      "--nb-cores=1", "--forward-mode=" + nf.args["forward_mode"].get<std::string>(),
      "--burst=" + std::to_string(run_.burst),
      // By default testpmd reads its receive queues empty and frees what it finds
      // before it forwards: packets the accounting would lose.
      "--no-flush-rx", "--no-lsc-interrupt", "--no-rmv-interrupt", "--no-mlockall"};
  int stdin_pipe[2];
  if (pipe2(stdin_pipe, O_CLOEXEC) != 0) throw std::runtime_error(std::string("pipe failed: ") + strerror(errno));
  // A restarted application's output follows its dead process's, after a line that settle_drops looks for.
  int log = open(log_path_.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC | (again ? O_APPEND : O_TRUNC), 0644);
  if (log < 0) throw std::runtime_error("cannot write " + log_path_ + ": " + strerror(errno));
  if (again) {
    std::string marker = std::string(kRestartMarker) + "\n";
    ssize_t written = write(log, marker.data(), marker.size());
    (void)written;  // a log without the line still has the dead process's lines, which carry no statistics
  }
  pid_ = spawn_supervised(binary, args, {.stdin_from = stdin_pipe[0], .stdout_to = log, .stderr_to = log});
  close(stdin_pipe[0]);
  close(log);
  stdin_fd_ = stdin_pipe[1];
  return pid_;
}

pid_t ExternalNf::forwarding_thread() {
  if (thread_ != 0 || pid_ <= 0) return thread_;
  std::string task_dir = "/proc/" + std::to_string(pid_) + "/task";
  std::string wanted = "rte-worker-" + std::to_string(forwarding_lcore_id_);
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

std::optional<ExternalNf::PortCounts> ExternalNf::counts() const {
  rte_eth_stats port_stats{};
  if (rte_eth_stats_get(port_, &port_stats) != 0) return std::nullopt;
  return PortCounts{port_stats.ipackets + received_uncounted_, port_stats.opackets + sent_uncounted_};
}

void ExternalNf::move_to_its_core() const {
  std::string error = thread_ == 0 ? "not found" : pin_to_core(thread_, plan_.core);
  if (!error.empty())
    throw std::runtime_error("cannot move its forwarding thread to core " + std::to_string(plan_.core) + ": " + error);
}

void ExternalNf::mirror_counters(StatsZone& stats) const {
  std::optional<PortCounts> now = counts();
  if (!now) return;
  const Segment& segment = plan_.segments.front();
  counter_store(stats.rings[segment.in_rings.at(0)].dequeued, now->received);
  counter_store(stats.rings[segment.out_rings.at(0)].enqueued, now->sent);
  counter_store(stats.nfs[nf_].packets_in, now->received);
  counter_store(stats.nfs[nf_].packets_out, now->sent);
}

bool ExternalNf::cut_mid_operation() const {
  return in_->cons.head != in_->cons.tail || out_->prod.head != out_->prod.tail;
}

uint64_t ExternalNf::catch_up_counts() {
  std::optional<PortCounts> now = counts();
  if (!now) return 0;
  // net_ring counts a burst after its ring operation; the rings' 32-bit tails count every operation (the lag is a
  // burst at most, far below 2^31).
  uint32_t received_behind = in_->cons.tail - static_cast<uint32_t>(now->received);
  uint32_t sent_behind = out_->prod.tail - static_cast<uint32_t>(now->sent);
  if (received_behind >= (1u << 31)) received_behind = 0;
  if (sent_behind >= (1u << 31)) sent_behind = 0;
  received_uncounted_ += received_behind;
  sent_uncounted_ += sent_behind;
  return uint64_t{received_behind} + sent_behind;
}

uint64_t ExternalNf::unsent_since_launch() const {
  std::optional<PortCounts> now = counts();
  if (!now) return 0;
  return (now->received - received_at_launch_) - (now->sent - sent_at_launch_);
}

std::optional<std::string> ExternalNf::settle_drops(StatsZone& stats) const {
  std::optional<PortCounts> now = counts();
  if (!now) return "NF " + nf_config_.name + ": its port's statistics are unreadable";
  uint64_t received = now->received - received_at_launch_, sent = now->sent - sent_at_launch_;
  uint64_t freed = received - sent;
  counter_store(stats.rings[plan_.segments.front().out_rings.at(0)].dropped_full, freed);
  // testpmd prints, per port, "Forward statistics for port P" and then "TX-dropped: N": the last process's
  // block follows the last restart's marker (a process that died printed none).
  std::ifstream log(log_path_);
  std::string header = "Forward statistics for port " + std::to_string(port_) + " ";
  bool in_block = false;
  std::optional<uint64_t> reported;
  for (std::string line; std::getline(log, line);) {
    if (line == kRestartMarker) {
      in_block = false;
      reported.reset();
    }
    if (line.find(header) != std::string::npos) in_block = true;
    size_t at = line.find("TX-dropped:");
    if (!in_block || at == std::string::npos || reported) continue;
    reported = std::strtoull(line.c_str() + at + 11, nullptr, 10);
  }
  if (!reported || *reported == freed) return std::nullopt;  // no statistics printed: the port's counters stand
  return "NF " + nf_config_.name + ": its port received " + std::to_string(received) + " and sent " +
         std::to_string(sent) + " packets, but the application reports " + std::to_string(*reported) + " dropped";
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
