// Tests of RequestLineStreams: request lines split across TCP segments put back together as a server's TCP would
// (in order, retransmissions once, nothing past a gap), within their bounds; and validate_url judging them whole.
#include <rte_tcp.h>

#include "dataplane/packets/request_frames.h"
#include "nf_test_support.h"
#include "nfs/request_line_stream.h"

namespace tandem {
namespace {

using Verdict = RequestLineStreams::Verdict;

// Flow `flow`'s segment at sequence number `seq` carrying `payload` (an untagged IPv4 frame: TCP at byte 34), its IP
// length the segment's own (a short one's frame is padded to 64 bytes). Checksums are left stale: nothing here reads
// them.
rte_mbuf* segment(const std::string& payload, uint32_t seq, uint32_t flow = 1, uint8_t flags = RTE_TCP_ACK_FLAG) {
  rte_mbuf* m = testing::make_tcp_frame_with(payload, flow);
  auto* ip = rte_pktmbuf_mtod_offset(m, rte_ipv4_hdr*, sizeof(rte_ether_hdr));
  ip->total_length = rte_cpu_to_be_16(static_cast<uint16_t>(sizeof(rte_ipv4_hdr) + 20 + payload.size()));
  auto* tcp = rte_pktmbuf_mtod_offset(m, rte_tcp_hdr*, sizeof(rte_ether_hdr) + sizeof(rte_ipv4_hdr));
  tcp->sent_seq = rte_cpu_to_be_32(seq);
  tcp->tcp_flags = flags;
  return m;
}

// Feeds one segment and frees it; the verdict and, for a complete line, its URL.
std::pair<Verdict, std::string> feed(RequestLineStreams& streams, rte_mbuf* m, uint64_t now = 0) {
  RequestLineStreams::Segment result = streams.feed(m, now);
  std::string url = result.line ? std::string(result.line->url) : "";
  rte_pktmbuf_free(m);
  return {result.verdict, url};
}

TEST(RequestLineStreams, TellsTheStartOfARequestLineFromOtherBytes) {
  for (const char* start :
       {"G", "GE", "GET", "GET ", "GET /a", "GET /a ", "GET /a HTTP/1.", "GET /a HTTP/1.1\r", "DEL"})
    EXPECT_TRUE(could_start_request_line(start)) << start;
  for (const char* other :
       {"", "X", "GETS", "GET  /a", "GET /a b", "GET /a HTTP/2", "SSH-2.0", "GET /a\nb", "GET /\x01"})
    EXPECT_FALSE(could_start_request_line(other)) << other;
}

TEST(RequestLineStreams, PutsASplitLineBackTogetherAndJudgesItWhole) {
  RequestLineStreams streams;
  EXPECT_EQ(feed(streams, segment("GET /item?id=1%27%20OR", 1000)).first, Verdict::kPartial);
  auto [verdict, url] = feed(streams, segment("%20%271%27%3D%271 HTTP/1.1\r\nHost: a\r\n\r\n", 1022));
  EXPECT_EQ(verdict, Verdict::kComplete);
  EXPECT_EQ(url, "/item?id=1%27%20OR%20%271%27%3D%271");
  // Cut between the line end's two bytes.
  EXPECT_EQ(feed(streams, segment("GET /x HTTP/1.1\r", 5000, 2)).first, Verdict::kPartial);
  EXPECT_EQ(feed(streams, segment("\nHost: a\r\n\r\n", 5016, 2)),
            std::make_pair(Verdict::kComplete, std::string("/x")));
  // A line whole in one segment, as nearly every client sends it, keeps no state.
  EXPECT_EQ(feed(streams, segment(http_request("/whole"), 9000, 3)).first, Verdict::kComplete);
  EXPECT_EQ(streams.flows(), 2u);
}

TEST(RequestLineStreams, ReadsNothingPastAGapAndEachByteOnce) {
  RequestLineStreams streams;
  EXPECT_EQ(feed(streams, segment("GET /a", 100)).first, Verdict::kPartial);
  EXPECT_EQ(feed(streams, segment("c HTTP/1.1\r\n", 107)).first, Verdict::kOutOfOrder);  // "b" has not come
  EXPECT_EQ(feed(streams, segment("GET /a", 100)).first, Verdict::kRetransmitted);
  // A retransmission overlapping the new bytes: only those after what was taken count.
  EXPECT_EQ(feed(streams, segment("/ab", 104)).first, Verdict::kPartial);
  EXPECT_EQ(feed(streams, segment("c HTTP/1.1\r\n", 107)), std::make_pair(Verdict::kComplete, std::string("/abc")));
}

TEST(RequestLineStreams, AsksAgainUntilTheLineIsTakenThenLetsTheFlowGo) {
  RequestLineStreams streams;
  EXPECT_EQ(feed(streams, segment("GET /evil", 0)).first, Verdict::kPartial);
  // Not taken (its judge dropped it): the same segment, sent again, is judged again.
  EXPECT_EQ(feed(streams, segment("' HTTP/1.1\r\n", 9)).first, Verdict::kComplete);
  EXPECT_EQ(feed(streams, segment("' HTTP/1.1\r\n", 9)).first, Verdict::kComplete);
  // Taken: sent again, it was judged before; what comes after is like any other flow's bytes.
  streams.take_line();
  EXPECT_EQ(feed(streams, segment("' HTTP/1.1\r\n", 9)).first, Verdict::kRetransmitted);
  EXPECT_EQ(feed(streams, segment("Host: a\r\n\r\n", 21)).first, Verdict::kNotHttp);
  EXPECT_EQ(streams.flows(), 0u);
}

TEST(RequestLineStreams, ForgetsWhatIsNoRequestLineAConnectionThatEndsAndOneThatStartsAgain) {
  RequestLineStreams streams;
  EXPECT_EQ(feed(streams, segment("GET /a", 0, 1)).first, Verdict::kPartial);
  EXPECT_EQ(feed(streams, segment(" b c\r\n", 6, 1)).first, Verdict::kNotHttp);  // "GET /a b c": no request line
  EXPECT_EQ(feed(streams, segment("POST /f", 0, 2)).first, Verdict::kPartial);
  EXPECT_EQ(feed(streams, segment("", 7, 2, RTE_TCP_FIN_FLAG | RTE_TCP_ACK_FLAG)).first, Verdict::kNotHttp);
  EXPECT_EQ(feed(streams, segment("PUT /g", 0, 3)).first, Verdict::kPartial);
  EXPECT_EQ(feed(streams, segment("", 50, 3, RTE_TCP_SYN_FLAG)).first, Verdict::kNotHttp);
  EXPECT_EQ(streams.flows(), 0u);
}

TEST(RequestLineStreams, RefusesALineTooLongAndANewFlowWhenFullOfBusyOnes) {
  RequestLineStreams streams(2, 1.0);
  std::string url(RequestLineStreams::kMaxLine - 4, 'a');
  EXPECT_EQ(feed(streams, segment("GET /" + url.substr(0, 1000), 0)).first, Verdict::kPartial);
  uint32_t seq = 1005;
  Verdict last = Verdict::kPartial;
  for (size_t at = 1000; at < url.size() && last == Verdict::kPartial; at += 1000, seq += 1000)
    last = feed(streams, segment(url.substr(at, 1000), seq)).first;
  EXPECT_EQ(last, Verdict::kTooLong);
  EXPECT_EQ(feed(streams, segment("GET /b", 0, 2)).first, Verdict::kPartial);
  EXPECT_EQ(feed(streams, segment("GET /c", 0, 3)).first, Verdict::kTableFull);  // two followed, none idle
  uint64_t later = 2 * rte_get_tsc_hz();                                         // both idle past a second
  EXPECT_EQ(feed(streams, segment("GET /c", 0, 3), later).first, Verdict::kPartial);
}

TEST(RequestLineStreams, FollowsIpv6FlowsToo) {
  RequestLineStreams streams;
  rte_mbuf* first = testing::make_ipv6_frame(IPPROTO_TCP, "GET /six");  // sequence number 1
  EXPECT_EQ(feed(streams, first).first, Verdict::kPartial);
  rte_mbuf* second = testing::make_ipv6_frame(IPPROTO_TCP, " HTTP/1.1\r\n");
  rte_pktmbuf_mtod_offset(second, rte_tcp_hdr*, 14 + 40)->sent_seq = rte_cpu_to_be_32(1 + 8);
  EXPECT_EQ(feed(streams, second), std::make_pair(Verdict::kComplete, std::string("/six")));
}

TEST(ValidateUrl, DropsAnAttackSplitAcrossSegmentsWhereItCompletesAndPassesASplitBenignRequest) {
  auto nf = testing::make_nf("validate_url");
  std::vector<rte_mbuf*> frames = {
      segment("GET /item?id=1%27%20OR", 0, 1),                          // passes: nothing to judge yet
      segment("GET /search?q=uni", 0, 2),                               // passes
      segment("%20%271%27%3D%271 HTTP/1.1\r\nHost: a\r\n\r\n", 22, 1),  // completes the tautology: dropped
      segment("on+station HTTP/1.1\r\nHost: a\r\n\r\n", 17, 2),         // completes a benign request: passes
      segment("%20%271%27%3D%271 HTTP/1.1\r\nHost: a\r\n\r\n", 22, 1),  // its retransmission: dropped again
      segment("GET /late", 0, 3),
      segment("x HTTP/1.1\r\n\r\n", 20, 3),  // past a gap: dropped
  };
  std::vector<rte_mbuf*> expected_kept = {frames[0], frames[1], frames[3], frames[5]};
  testing::BatchOutcome out = testing::run_batch(*nf, frames);
  EXPECT_EQ(out.kept, expected_kept);
  json report = nf->report();
  EXPECT_EQ(report["requests_checked"], 3);
  EXPECT_EQ(report["reassembled"], 3);
  EXPECT_EQ(report["dropped_by_pattern"][0], 2);
  EXPECT_EQ(report["dropped_out_of_order"], 1);
  EXPECT_EQ(report["partial_segments"], 3);
  testing::free_all(out.kept);
}

}  // namespace
}  // namespace tandem
