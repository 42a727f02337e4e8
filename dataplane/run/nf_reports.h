// The NFs' own reports (what each counted: a firewall's verdicts, a URL counter's top URLs) across their processes.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tandem {

using json = nlohmann::json;

// A worker writes its NFs' reports as it ends (dataplane/worker/worker_main.cc: nf-report-<worker>-<segment>.json,
// each NF's report and those of the instances new arguments replaced in it). An NF's report covers the instance that
// wrote it; what came before it (an instance replaced by new arguments, a process replaced by a re-layout or lost
// at a crash) is kept here among the NF's earlier reports, in order, each saying how it ended.
class NfReports {
 public:
  // Reads and removes a worker's report file. Each NF's report in it is the NF's last (`ended` empty: the run's end,
  // or its chain's removal, after which nothing comes) or an earlier one that ended so at `at_s`. False, with the
  // file removed, when it cannot be read; true when there is none (a process that never wrote one).
  bool collect(const std::string& path, const std::string& ended, double at_s);
  // An NF's process died: what it had counted went with it.
  void lost_at_crash(const std::string& nf, double at_s);

  // Its last report (null where none came: its process crashed, or the NF is an application's), and the earlier.
  json last(const std::string& nf) const;
  json earlier(const std::string& nf) const;

 private:
  json& earlier_of(const std::string& nf);  // its list, made empty on first use

  std::map<std::string, json> last_;
  std::map<std::string, json> earlier_;
};

}  // namespace tandem
