// Tests of the validate_url μNF: attacks dropped, other requests and non-HTTP packets passed, per-pattern counts.
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

}  // namespace
}  // namespace tandem
