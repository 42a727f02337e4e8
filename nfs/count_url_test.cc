// Tests of the count_url μNF: requests counted per URL, nothing dropped or changed, a full table counted apart.
#include "dataplane/packets/request_frames.h"
#include "nf_test_support.h"

namespace tandem {
namespace {

TEST(CountUrl, CountsRequestsPerUrlAndPassesEveryPacket) {
  auto nf = testing::make_nf("count_url", {{"max_urls", 2}});
  std::vector<rte_mbuf*> frames;
  for (int i = 0; i < 3; i++) frames.push_back(testing::make_tcp_frame_with(http_request("/a"), i));
  frames.push_back(testing::make_tcp_frame_with(http_request("/b")));
  frames.push_back(testing::make_tcp_frame_with(http_request("/c")));  // a third URL: the table holds two
  frames.push_back(testing::make_frame(9, 64, IPPROTO_UDP));
  testing::BatchOutcome out = testing::run_batch(*nf, frames);
  EXPECT_EQ(out.dropped, 0);
  EXPECT_EQ(out.kept, frames);
  json report = nf->report();
  EXPECT_EQ(report["urls"], 2);
  EXPECT_EQ(report["top"][0], (json{{"url", "/a"}, {"requests", 3}}));
  EXPECT_EQ(report["top"][1], (json{{"url", "/b"}, {"requests", 1}}));
  EXPECT_EQ(report["untracked_requests"], 1);
  EXPECT_EQ(report["not_http"], 1);
  testing::free_all(out.kept);
}

TEST(CountUrl, ReportsAUrlThatIsNotUtf8EscapedAndStillWritable) {
  auto nf = testing::make_nf("count_url", {});
  std::vector<rte_mbuf*> frames = {testing::make_tcp_frame_with(http_request("/\xff\xfe")),
                                   testing::make_tcp_frame_with(http_request("/ok"))};
  testing::BatchOutcome out = testing::run_batch(*nf, frames);
  json report = nf->report();
  EXPECT_EQ(report["urls"], 2);
  // Ties go by the URL's bytes, so 0xff sorts after "/ok".
  EXPECT_EQ(report["top"][1], (json{{"url", "/\\xff\\xfe"}, {"requests", 1}}));
  EXPECT_NO_THROW(report.dump());
  testing::free_all(out.kept);
}

}  // namespace
}  // namespace tandem
