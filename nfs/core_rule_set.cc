// ModSecurity's C API behind CoreRuleSet: the rules loaded once, one transaction per judged request.
#include "core_rule_set.h"

#include <modsecurity/intervention.h>
#include <modsecurity/modsecurity.h>
#include <modsecurity/rules_set.h>
#include <modsecurity/transaction.h>

#include <cctype>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

namespace tandem {

namespace msc = modsecurity;

namespace {

// Characters an exclusion's path and argument names may hold: what URLs and parameter names use, and nothing that
// ends a quoted operand (`"`), escapes (`\\`), separates ctl's rule and target (`;`) or actions (`,`), or a line.
bool one_of(char c, const char* allowed) { return c != '\0' && std::strchr(allowed, c) != nullptr; }
bool path_character(char c) { return std::isalnum(static_cast<unsigned char>(c)) || one_of(c, "/-._~%!$*()+=:@"); }
bool argument_character(char c) { return std::isalnum(static_cast<unsigned char>(c)) || one_of(c, "-._[]"); }

// The exclusions as SecRules before the CRS's: ids 10000 on, in the range the CRS leaves to local rules (1-99,999),
// phase 1 so that they act before the SQL-injection rules read ARGS.
std::string exclusion_rules(const std::vector<CrsExclusion>& exclusions) {
  std::string rules;
  for (size_t i = 0; i < exclusions.size(); i++) {
    rules += "SecRule REQUEST_FILENAME \"@beginsWith " + exclusions[i].path_prefix +
             "\" \"id:" + std::to_string(10000 + i) + ",phase:1,pass,nolog,t:none";
    for (const std::string& argument : exclusions[i].arguments)
      rules += ",ctl:ruleRemoveTargetByTag=attack-sqli;ARGS:" + argument;
    rules += "\"\n";
  }
  return rules;
}

// crs-setup.conf.example's active settings (anomaly scoring: rules log and pass, 949 blocks on the total), the
// paranoia level asked for, and the three rule files. SecRequestBodyAccess On: ModSecurity runs phase 2, where the
// CRS adds up the score, only when it may read a body (a GET has none). The client address given to every
// transaction is fixed, so the CRS's per-client collections (initcol:ip) hold one entry, whatever addresses an
// attacker sends from.
std::string configuration(int paranoia_level, const std::vector<CrsExclusion>& exclusions) {
  std::string level = std::to_string(paranoia_level);
  std::string rules = CoreRuleSet::kRulesFolder;
  return "SecRuleEngine On\n"
         "SecRequestBodyAccess On\n"
         "SecAuditEngine Off\n"
         "SecDefaultAction \"phase:1,log,auditlog,pass\"\n"
         "SecDefaultAction \"phase:2,log,auditlog,pass\"\n"
         "SecCollectionTimeout 600\n"
         "SecAction \"id:900990,phase:1,nolog,pass,t:none,setvar:tx.crs_setup_version=334\"\n"
         "SecAction \"id:900000,phase:1,nolog,pass,t:none,setvar:tx.paranoia_level=" +
         level + "\"\n" + exclusion_rules(exclusions) + "Include " + rules + "/REQUEST-901-INITIALIZATION.conf\n" +
         "Include " + rules + "/REQUEST-942-APPLICATION-ATTACK-SQLI.conf\n" + "Include " + rules +
         "/REQUEST-949-BLOCKING-EVALUATION.conf\n";
}

// ModSecurity's message for a matched rule carries `[id "942100"]`.
void note_rule(void* matched, const void* message) {
  std::string_view text(static_cast<const char*>(message));
  size_t at = text.find("[id \"");
  if (at == std::string_view::npos) return;
  uint32_t id = static_cast<uint32_t>(std::strtoul(text.data() + at + 5, nullptr, 10));
  if (id / 1000 == 949) return;  // the blocking evaluation: the sum, not a finding
  static_cast<std::vector<uint32_t>*>(matched)->push_back(id);
}

}  // namespace

std::optional<std::pair<std::string, std::string>> crs_exclusion_problem(const CrsExclusion& exclusion) {
  const std::string& path = exclusion.path_prefix;
  if (path.empty() || path[0] != '/' || path.size() > 256)
    return std::pair<std::string, std::string>{"path", "must begin with / (at most 256 characters)"};
  for (char c : path)
    if (!path_character(c))
      return std::pair<std::string, std::string>{
          "path", std::string("holds '") + c + "': letters, digits and /-._~%!$*()+=:@ only"};
  if (exclusion.arguments.empty())
    return std::pair<std::string, std::string>{"args", "must name at least one query argument"};
  for (size_t i = 0; i < exclusion.arguments.size(); i++) {
    const std::string& argument = exclusion.arguments[i];
    std::string where = "args[" + std::to_string(i) + "]";
    if (argument.empty() || argument.size() > 64)
      return std::pair<std::string, std::string>{where, "must be 1 to 64 characters"};
    for (char c : argument)
      if (!argument_character(c))
        return std::pair<std::string, std::string>{where,
                                                   std::string("holds '") + c + "': letters, digits and -._[] only"};
  }
  return std::nullopt;
}

struct CoreRuleSet::Engine {
  msc::ModSecurity* modsecurity = msc::msc_init();
  msc::RulesSet* rules = msc::msc_create_rules_set();
  uint64_t transactions = 0;
  ~Engine() {
    msc::msc_rules_cleanup(rules);
    msc::msc_cleanup(modsecurity);
  }
};

CoreRuleSet::CoreRuleSet(int paranoia_level, const std::vector<CrsExclusion>& exclusions)
    : engine_(std::make_unique<Engine>()) {
  if (paranoia_level < 1 || paranoia_level > 4) throw std::invalid_argument("paranoia level must be 1 to 4");
  for (const CrsExclusion& exclusion : exclusions)
    if (auto problem = crs_exclusion_problem(exclusion))
      throw std::invalid_argument("exclusion " + problem->first + " " + problem->second);
  msc::msc_set_log_cb(engine_->modsecurity, note_rule);
  const char* error = nullptr;
  if (msc::msc_rules_add(engine_->rules, configuration(paranoia_level, exclusions).c_str(), &error) < 0) {
    std::string why = error ? error : "unknown error";
    std::free(const_cast<char*>(error));
    throw std::runtime_error("the OWASP Core Rule Set did not load (" + why + ")");
  }
}

CoreRuleSet::~CoreRuleSet() = default;

bool CoreRuleSet::blocks(std::string_view method, std::string_view target, std::vector<uint32_t>& matched_rules) {
  matched_rules.clear();
  method_.assign(method);
  target_.assign(target);
  // A transaction id of our own: without one ModSecurity draws a random one, opening std::random_device each time.
  std::string id = std::to_string(++engine_->transactions);
  msc::Transaction* transaction =
      msc::msc_new_transaction_with_id(engine_->modsecurity, engine_->rules, id.data(), &matched_rules);
  msc::msc_process_connection(transaction, "192.0.2.1", 40000, "192.0.2.2", 80);
  msc::msc_process_uri(transaction, target_.c_str(), method_.c_str(), "1.1");
  msc::msc_process_request_headers(transaction);
  msc::msc_process_request_body(transaction);
  msc::ModSecurityIntervention intervention{};
  intervention.status = 200;
  bool blocked = msc::msc_intervention(transaction, &intervention) && intervention.disruptive;
  std::free(intervention.url);
  std::free(intervention.log);
  msc::msc_transaction_cleanup(transaction);
  return blocked;
}

}  // namespace tandem
