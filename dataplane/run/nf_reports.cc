// The NFs' own reports across their processes: read from the workers' files, kept in order.
#include "nf_reports.h"

#include <unistd.h>

#include <fstream>

namespace tandem {

bool NfReports::collect(const std::string& path, const std::string& ended, double at_s) {
  std::ifstream in(path);
  if (!in) return true;
  json reports = json::parse(in, nullptr, false);
  unlink(path.c_str());
  if (!reports.is_object()) return false;
  for (const auto& [nf, written] : reports.items()) {
    if (!written.is_object() || !written.contains("report")) return false;
    json& earlier = earlier_of(nf);
    for (const json& replaced : written.value("replaced", json::array()))
      earlier.push_back({{"ended", "new arguments"}, {"report", replaced}});
    if (ended.empty()) {
      last_[nf] = written["report"];
    } else {
      earlier.push_back({{"ended", ended}, {"at_s", at_s}, {"report", written["report"]}});
    }
  }
  return true;
}

void NfReports::lost_at_crash(const std::string& nf, double at_s) {
  earlier_of(nf).push_back({{"ended", "crash"}, {"at_s", at_s}, {"report", nullptr}});
}

json& NfReports::earlier_of(const std::string& nf) {
  auto [entry, _] = earlier_.try_emplace(nf, json::array());
  return entry->second;
}

json NfReports::last(const std::string& nf) const {
  auto found = last_.find(nf);
  return found == last_.end() ? json() : found->second;
}

json NfReports::earlier(const std::string& nf) const {
  auto found = earlier_.find(nf);
  return found == earlier_.end() ? json::array() : found->second;
}

}  // namespace tandem
