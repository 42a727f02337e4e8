// Reading and differencing the /proc scheduling counters of worker processes.
#include "os_counters.h"

#include <time.h>
#include <unistd.h>

#include <fstream>
#include <sstream>

#include "schedulers/mechanisms/schedstat.h"

namespace tandem {

namespace {

std::string proc_path(pid_t pid, const char* file) { return "/proc/" + std::to_string(pid) + "/" + file; }

// Finds "key<sep>value" in a /proc file of such lines.
std::optional<uint64_t> keyed_value(const std::string& path, const std::string& key) {
  std::ifstream in(path);
  std::string line;
  while (std::getline(in, line)) {
    if (line.compare(0, key.size(), key) != 0) continue;
    auto colon = line.find(':', key.size());
    if (colon == std::string::npos) continue;
    std::istringstream value(line.substr(colon + 1));
    double number;  // /proc/PID/sched prints some fields as decimals
    if (value >> number) return static_cast<uint64_t>(number);
  }
  return std::nullopt;
}

double monotonic_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace

OsSample sample_os_counters(pid_t pid) {
  OsSample s;
  s.when_s = monotonic_seconds();
  s.voluntary_switches = keyed_value(proc_path(pid, "status"), "voluntary_ctxt_switches");
  s.involuntary_switches = keyed_value(proc_path(pid, "status"), "nonvoluntary_ctxt_switches");
  s.migrations = keyed_value(proc_path(pid, "sched"), "se.nr_migrations");
  if (std::optional<SchedStat> schedstat = read_schedstat(pid)) {
    s.cpu_ns = schedstat->run_ns;
    s.wait_ns = schedstat->wait_ns;
  }
  std::ifstream stat(proc_path(pid, "stat"));
  std::string content((std::istreambuf_iterator<char>(stat)), std::istreambuf_iterator<char>());
  if (auto paren = content.rfind(')'); paren != std::string::npos && paren + 2 < content.size()) {
    s.state = content[paren + 2];
    // After the name: state is field 3, utime and stime fields 14 and 15.
    std::istringstream fields(content.substr(paren + 2));
    std::string field;
    for (int n = 3; n <= 15 && fields >> field; n++) {
      if (n == 14) s.user_ticks = std::stoull(field);
      if (n == 15) s.system_ticks = std::stoull(field);
    }
  }
  return s;
}

json os_rates(const OsSample& begin, const OsSample& end) {
  json out = json::object();
  json unavailable = json::array();
  double seconds = end.when_s - begin.when_s;
  auto rate = [&](const char* name, const std::optional<uint64_t>& a, const std::optional<uint64_t>& b, double scale) {
    if (!a || !b || seconds <= 0) {
      unavailable.push_back(name);
      return;
    }
    out[name] = static_cast<double>(*b - *a) * scale / seconds;
  };
  rate("voluntary_switches_per_s", begin.voluntary_switches, end.voluntary_switches, 1);
  rate("involuntary_switches_per_s", begin.involuntary_switches, end.involuntary_switches, 1);
  rate("cpu_share", begin.cpu_ns, end.cpu_ns, 1e-9);              // seconds on CPU per second
  rate("runnable_wait_share", begin.wait_ns, end.wait_ns, 1e-9);  // seconds waiting to run per second
  rate("migrations_per_s", begin.migrations, end.migrations, 1);
  static const double tick_seconds = 1.0 / static_cast<double>(sysconf(_SC_CLK_TCK));
  rate("user_share", begin.user_ticks, end.user_ticks, tick_seconds);        // seconds in user space per second
  rate("system_share", begin.system_ticks, end.system_ticks, tick_seconds);  // seconds in the kernel per second
  out["unavailable"] = unavailable;
  return out;
}

}  // namespace tandem
