// Tests of the validate_url μNF under both engines: attacks dropped, the rest passed, what dropped them counted.
#include "core_rule_set.h"
#include "dataplane/packets/request_frames.h"
#include "nf_test_support.h"

namespace tandem {
namespace {

TEST(ValidateUrl, DropsAttacksAndPassesEverythingElse) {
  auto nf = testing::make_nf("validate_url");
  std::vector<rte_mbuf*> frames = {
      testing::make_tcp_frame_with(http_request("/index.html"), 1),
      testing::make_tcp_frame_with(http_request("/item?id=1%27%20OR%20%271%27%3D%271"), 2),
      testing::make_frame(3, 128, IPPROTO_UDP),
      testing::make_tcp_frame_with(http_request("/p?id=1;+DROP+TABLE+users"), 4),
      testing::make_tcp_frame_with(http_request("/search?q=union+station"), 5),
  };
  std::vector<rte_mbuf*> expected_kept = {frames[0], frames[2], frames[4]};
  testing::BatchOutcome out = testing::run_batch(*nf, frames);
  EXPECT_EQ(out.kept, expected_kept);
  EXPECT_EQ(out.dropped, 2);
  json report = nf->report();
  EXPECT_EQ(report["requests_checked"], 4);
  EXPECT_EQ(report["not_http"], 1);
  EXPECT_EQ(report["dropped_by_pattern"][0], 1);  // the tautology
  EXPECT_EQ(report["dropped_by_pattern"][2], 1);  // the stacked statement
  testing::free_all(out.kept);
}

TEST(ValidateUrl, TakesItsOwnPatternsAndRefusesOnesHyperscanCannotCompile) {
  auto nf = testing::make_nf("validate_url", {{"patterns", {"^/admin"}}});
  std::vector<rte_mbuf*> frames = {testing::make_tcp_frame_with(http_request("/admin/users")),
                                   testing::make_tcp_frame_with(http_request("/item?id=1'+or+'1'='1"))};
  testing::BatchOutcome out = testing::run_batch(*nf, frames);
  EXPECT_EQ(out.dropped, 1);
  EXPECT_EQ(out.kept, std::vector<rte_mbuf*>{frames[1]});  // the built-in signatures are replaced, not added to
  testing::free_all(out.kept);

  SpecErrors errors;
  nf_types().at("validate_url").check({{"patterns", {"ok", "(a)\\1", 7}}}, "chains[0].nfs[1].args", errors);
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_EQ(errors[0].path, "chains[0].nfs[1].args.patterns[1]");
  EXPECT_NE(errors[0].message.find("Hyperscan"), std::string::npos);
  EXPECT_EQ(errors[1].path, "chains[0].nfs[1].args.patterns[2]");
}

// A request cut into IP fragments would be read whole by the server, never by the NF: every TCP fragment is dropped.
TEST(ValidateUrl, DropsTheFragmentsOfTcpPacketsAndPassesOtherFragments) {
  auto nf = testing::make_nf("validate_url");
  auto fragment = [](rte_mbuf* m, uint16_t offset_and_flags) {
    auto* ip = rte_pktmbuf_mtod_offset(m, rte_ipv4_hdr*, sizeof(rte_ether_hdr));
    ip->fragment_offset = rte_cpu_to_be_16(offset_and_flags);
    return m;
  };
  std::vector<rte_mbuf*> frames = {
      fragment(testing::make_tcp_frame_with(http_request("/item?id=1%27%20OR"), 1), RTE_IPV4_HDR_MF_FLAG),  // first
      fragment(testing::make_tcp_frame_with("%20%271%27%3D%271 HTTP/1.1\r\n\r\n", 1), 4),                   // later
      fragment(testing::make_frame(2, 128, IPPROTO_UDP), RTE_IPV4_HDR_MF_FLAG),
      testing::make_ipv6_frame(IPPROTO_TCP, "GET /",
                               {testing::fragment_at(3)}),  // a later IPv6 fragment: protocol unsaid
      testing::make_tcp_frame_with(http_request("/index.html"), 3),
  };
  std::vector<rte_mbuf*> expected_kept = {frames[2], frames[4]};
  testing::BatchOutcome out = testing::run_batch(*nf, frames);
  EXPECT_EQ(out.kept, expected_kept);
  EXPECT_EQ(nf->report()["dropped_fragments"], 3);
  testing::free_all(out.kept);
}

// The crs engine: the OWASP Core Rule Set under ModSecurity judges the request line, decoding the URL itself.
TEST(ValidateUrl, TheCoreRuleSetEngineDropsWhatItsRulesFindAndNamesThem) {
  auto nf = testing::make_nf("validate_url", {{"engine", "crs"}});
  std::vector<rte_mbuf*> frames = {
      testing::make_tcp_frame_with(http_request("/index.html"), 1),
      testing::make_tcp_frame_with(http_request("/item?id=1%20AND%205678%3D5678"), 2),  // the signatures miss it
      testing::make_tcp_frame_with(http_request("/search?q=O%27Reilly+books"), 3),
      testing::make_tcp_frame_with(http_request("/item?id=1%20UNION%20ALL%20SELECT%20NULL%2CNULL--"), 4),
      testing::make_frame(5, 128, IPPROTO_UDP),
  };
  std::vector<rte_mbuf*> expected_kept = {frames[0], frames[2], frames[4]};
  testing::BatchOutcome out = testing::run_batch(*nf, frames);
  EXPECT_EQ(out.kept, expected_kept);
  json report = nf->report();
  EXPECT_EQ(report["requests_checked"], 4);
  EXPECT_EQ(report["dropped_by_crs"], 2);
  EXPECT_FALSE(report.contains("dropped_by_pattern"));
  uint64_t findings = 0;
  for (const auto& [id, count] : report["crs_rules_matched"].items()) {
    EXPECT_EQ(id.substr(0, 3), "942") << id;  // SQL-injection rules only: the blocking evaluation is not a finding
    findings += count.get<uint64_t>();
  }
  EXPECT_GE(findings, 2u);
  testing::free_all(out.kept);

  auto signatures = testing::make_nf("validate_url");  // the same boolean-based probe passes the signatures
  std::vector<rte_mbuf*> probe = {testing::make_tcp_frame_with(http_request("/item?id=1%20AND%205678%3D5678"))};
  testing::BatchOutcome passed = testing::run_batch(*signatures, probe);
  EXPECT_EQ(passed.dropped, 0);
  testing::free_all(passed.kept);
}

TEST(ValidateUrl, TheCoreRuleSetEngineRefusesPatternsAndLevelsItHasNot) {
  SpecErrors errors;
  nf_types().at("validate_url").check({{"engine", "crs"}, {"patterns", {"x"}}, {"paranoia_level", 2}}, "args", errors);
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0].path, "args.patterns");
  EXPECT_THROW(CoreRuleSet(5), std::invalid_argument);
  for (int level = 1; level <= 4; level++) EXPECT_NO_THROW(CoreRuleSet{level}) << level;
}

// A real link to the Rust playground that the CRS at paranoia 1 blocks: its `code` parameter is a program.
constexpr const char* kProgramInAParameter =
    "code=%23!%5Ballow(unused)%5D%0Afn%20main()%20%7B%0Alet%20x%20%3D%20%22(%2F%2F%2F)%22.to_string()%3B%0Alet%20d%3A"
    "%20Vec%3C_%3E%20%3D%20x.split(%27%2F%27).collect()%3B%0A%0Aassert_eq!(d%2C%20%26%5B%22(%22%2C%20%22%22%2C%20%22%22"
    "%2C%20%22)%22%5D)%3B%0A%7D&edition=2021";

TEST(ValidateUrl, AnExclusionStopsTheRulesReadingOneArgumentUnderOnePathAndNowhereElse) {
  json exclusions = json::array({{{"path", "/play"}, {"args", {"code"}}}});
  auto nf = testing::make_nf("validate_url", {{"engine", "crs"}, {"crs_exclusions", exclusions}});
  std::string program = kProgramInAParameter;
  std::string other_argument = "source" + program.substr(4);  // the same program in an argument not excluded
  std::vector<rte_mbuf*> frames = {
      testing::make_tcp_frame_with(http_request("/play?" + program), 1),
      testing::make_tcp_frame_with(http_request("/?" + program), 2),  // not under /play
      testing::make_tcp_frame_with(http_request("/play?" + other_argument), 3),
      testing::make_tcp_frame_with(http_request("/play?" + program + "&id=1%20AND%205678%3D5678"), 4),
      testing::make_tcp_frame_with(http_request("/playground/run?" + program), 5),  // a path that begins with /play
  };
  std::vector<rte_mbuf*> expected_kept = {frames[0], frames[4]};
  testing::BatchOutcome out = testing::run_batch(*nf, frames);
  EXPECT_EQ(out.kept, expected_kept) << "the attack in `id` beside the excluded program is still judged";
  EXPECT_EQ(nf->report()["dropped_by_crs"], 3);
  testing::free_all(out.kept);

  auto without = testing::make_nf("validate_url", {{"engine", "crs"}});  // the same link blocked with no exclusion
  std::vector<rte_mbuf*> link = {testing::make_tcp_frame_with(http_request("/play?" + program))};
  testing::BatchOutcome blocked = testing::run_batch(*without, link);
  EXPECT_EQ(blocked.dropped, 1);
  testing::free_all(blocked.kept);
}

TEST(ValidateUrl, ExclusionsThatWouldRewriteTheRulesAreRefusedByName) {
  auto problems = [](const json& exclusions, const std::string& engine = "crs") {
    SpecErrors errors;
    nf_types().at("validate_url").check({{"engine", engine}, {"crs_exclusions", exclusions}}, "args", errors);
    std::vector<std::string> paths;
    for (const SpecError& error : errors) paths.push_back(error.path);
    return paths;
  };
  using Paths = std::vector<std::string>;
  EXPECT_EQ(problems(json::array({{{"path", "/"}, {"args", {"code", "q"}}}})), Paths{});
  EXPECT_EQ(problems(json::array({{{"path", "play"}, {"args", {"code"}}}})), Paths{"args.crs_exclusions[0].path"});
  EXPECT_EQ(problems(json::array({{{"path", "/a\" id:1,deny\""}, {"args", {"code"}}}})),
            Paths{"args.crs_exclusions[0].path"});
  EXPECT_EQ(problems(json::array({{{"path", "/"}, {"args", {"x;REQUEST_URI"}}}})),
            Paths{"args.crs_exclusions[0].args[0]"});
  EXPECT_EQ(problems(json::array({{{"path", "/"}, {"args", json::array()}}})), Paths{"args.crs_exclusions[0].args"});
  EXPECT_EQ(problems(json::array({{{"path", "/"}, {"args", {"a"}}, {"host", "x"}}})),
            Paths{"args.crs_exclusions[0].host"});
  EXPECT_EQ(problems(json::array({"/"})), Paths{"args.crs_exclusions[0]"});
  EXPECT_EQ(problems(json::array({{{"path", "/"}, {"args", {"code"}}}}), "signatures"), Paths{"args.crs_exclusions"});
  EXPECT_THROW(CoreRuleSet(1, {{"/", {"a,ctl:ruleEngine=Off"}}}), std::invalid_argument);
  std::string nul_path("/a\0b", 4);
  EXPECT_THROW(CoreRuleSet(1, {{nul_path, {"a"}}}), std::invalid_argument);
}

}  // namespace
}  // namespace tandem
