// Tests of the http_classifier μNF: HTTP requests and pieces of split ones on gate 1 ("http"), everything else on
// gate 0, nothing changed or dropped.
#include "dataplane/packets/request_frames.h"
#include "nf_test_support.h"

namespace tandem {
namespace {

TEST(HttpClassifier, LabelsRequestsHttpAndTheRestOther) {
  auto nf = testing::make_nf("http_classifier");
  EXPECT_EQ(nf_types().at("http_classifier").descriptor.gates, (std::vector<std::string>{"other", "http"}));
  std::vector<rte_mbuf*> frames = {
      testing::make_tcp_frame_with(http_request("/index.html"), 1),
      testing::make_frame(2, 128, IPPROTO_UDP),
      testing::make_tcp_frame_with("SSH-2.0-OpenSSH_9.2\r\n", 3),  // TCP, but not HTTP
      testing::make_tcp_frame_with(http_request("/item?id=1%27%20OR%20%271%27%3D%271"), 4),
      testing::make_tcp_frame_with("GET /cut-short", 5),       // the start of a request line split across segments
      testing::make_tcp_frame_with("GETTING STARTED\r\n", 6),  // no request line
  };
  testing::BatchOutcome out = testing::run_batch(*nf, frames);
  EXPECT_EQ(out.kept, frames);
  EXPECT_EQ(out.gates, (std::vector<uint8_t>{1, 0, 0, 1, 1, 0}));
  EXPECT_EQ(nf->report(), (json{{"http", 3}, {"other", 3}}));
  testing::free_all(out.kept);
}

}  // namespace
}  // namespace tandem
