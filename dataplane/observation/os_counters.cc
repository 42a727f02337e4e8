// Reading and differencing the /proc scheduling counters of worker processes.
#include "os_counters.h"

#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include <cstdlib>
#include <sstream>

#include "schedulers/mechanisms/schedstat.h"

namespace tandem {

namespace {

std::string proc_path(pid_t pid, const char* file) { return "/proc/" + std::to_string(pid) + "/" + file; }

// A /proc file's text, read with one open and plain reads: the loop's progress samples every worker this way four
// times a second, and a stream per key (status was opened twice) cost ~0.13 ms a worker on the control core.
// Empty where the task is gone.
std::string proc_text(pid_t pid, const char* file) {
  std::string text;
  int fd = open(proc_path(pid, file).c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return text;
  char buffer[4096];
  for (ssize_t got; (got = read(fd, buffer, sizeof buffer)) > 0;) text.append(buffer, static_cast<size_t>(got));
  close(fd);
  return text;
}

// The number after "key" and its colon, on the line of `text` that starts with it ("key:\t12" in status, "key   :
// 12.000" in sched, which prints some fields as decimals).
std::optional<uint64_t> keyed_value(const std::string& text, const std::string& key) {
  for (size_t line = 0; line < text.size();) {
    size_t end = text.find('\n', line);
    if (end == std::string::npos) end = text.size();
    if (text.compare(line, key.size(), key) == 0) {
      size_t colon = text.find(':', line + key.size());
      if (colon < end) {
        const char* value = text.c_str() + colon + 1;
        char* parsed = nullptr;
        double number = std::strtod(value, &parsed);
        if (parsed != value) return static_cast<uint64_t>(number);
      }
    }
    line = end + 1;
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
  const std::string status = proc_text(pid, "status");
  s.voluntary_switches = keyed_value(status, "voluntary_ctxt_switches");
  s.involuntary_switches = keyed_value(status, "nonvoluntary_ctxt_switches");
  s.migrations = keyed_value(proc_text(pid, "sched"), "se.nr_migrations");
  if (std::optional<SchedStat> schedstat = read_schedstat(pid)) {
    s.cpu_ns = schedstat->run_ns;
    s.wait_ns = schedstat->wait_ns;
  }
  const std::string content = proc_text(pid, "stat");
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
