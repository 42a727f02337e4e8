// HTTP request lines put back together across TCP segments, per flow, as the server's TCP stack would: an HTTP μNF
// judges the whole line however a client (or an attacker) cuts it. Bounded: a line, the flows followed and their
// idle time all have limits, and what goes past them is refused rather than let through unread.
#pragma once

#include <array>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>

#include <rte_mbuf.h>

#include "http_request.h"

namespace tandem {

class RequestLineStreams {
 public:
  // A request line longer than this is refused, as servers refuse one (nginx's 8 KiB buffer, HTTP 414).
  static constexpr size_t kMaxLine = 8192;
  static constexpr size_t kDefaultMaxFlows = 4096;
  // A server gives up on a request whose line has not come whole within a minute (nginx's client_header_timeout):
  // only a flow idle for longer may be forgotten to make room for another (forgetting one that is not would let the
  // rest of its line through unread).
  static constexpr double kDefaultIdleSeconds = 60;

  enum class Verdict {
    kNotHttp,        // no request line starts or continues in this segment
    kComplete,       // a whole request line: `line` holds it (alone or completing earlier segments of the flow)
    kPartial,        // the start or a piece of a request line still without its end: nothing to judge yet
    kRetransmitted,  // bytes of the flow's request line that were taken (and judged) before: the server has them
    kOutOfOrder,     // beyond a gap in a request line: its bytes cannot be read in order (a retransmission fills it)
    kTooLong,        // the request line would grow past kMaxLine
    kTableFull,      // a request line starts in a new flow while kMaxFlows flows are followed and none is idle
  };
  struct Segment {
    Verdict verdict = Verdict::kNotHttp;
    std::optional<HttpRequestLine> line;  // with kComplete; views valid until the next call
    bool spanned = false;                 // with kComplete: the line came in more than one segment
  };

  explicit RequestLineStreams(size_t max_flows = kDefaultMaxFlows, double idle_seconds = kDefaultIdleSeconds);

  // Reads one frame (Ethernet, IPv4 or IPv6, TCP). A flow's bytes move on only with kPartial and kRetransmitted;
  // a kComplete line is taken only by `take_line()`, so a caller that drops the segment instead is asked again
  // about its retransmission.
  Segment feed(rte_mbuf* m, uint64_t now_tsc);
  // The kComplete line of the last feed() passed: the flow's bytes move past it.
  void take_line();

  size_t flows() const { return flows_.size(); }

 private:
  struct Key {
    std::array<uint8_t, 16> src{}, dst{};
    uint16_t src_port = 0, dst_port = 0;
    uint8_t version = 0;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& key) const;
  };
  struct Flow {
    std::string line;       // the request line's bytes so far, in order
    uint32_t next_seq = 0;  // the sequence number of the byte after them
    bool done = false;      // the line was complete and taken: segments before next_seq are retransmissions
    uint64_t last_seen_tsc = 0;
  };
  // Room for one more flow: an idle one is forgotten if the table is full. False if none is.
  bool make_room(uint64_t now_tsc);

  size_t max_flows_;
  uint64_t idle_cycles_;
  std::unordered_map<Key, Flow, KeyHash> flows_;
  // What take_line() commits: the flow, and where its bytes end once the line is taken.
  std::optional<Key> pending_key_;
  uint32_t pending_next_seq_ = 0;
  std::string joined_;  // a line completing earlier segments: their bytes and this segment's
};

// Whether `bytes` can still be the beginning of a request line ("GE", "GET /a", "GET /a HTTP/1."): a method's
// prefix, then a URL, then a prefix of "HTTP/1.0" or "HTTP/1.1", with no line end yet.
bool could_start_request_line(std::string_view bytes);

}  // namespace tandem
