// The Rx stage of a port (as OpenNetVM's Rx thread and μNF's Rx service): each burst the device gives is sorted
// by chain, by the frames' source addresses where several chains share the port; frames no chain handles (not IP,
// IPv6 neighbour discovery, a source no chain takes) are passed untouched to another port or dropped, as the
// port's policy says, so that the hosts on either side still find each other.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <vector>

#include <rte_mbuf.h>

#include "contract/batch.h"
#include "ethdev_port.h"

namespace tandem {

// An IPv4 or IPv6 prefix, as a chain's `source` gives it ("198.18.1.0/24", "2001:db8::/32").
class SourcePrefix {
 public:
  // Throws std::invalid_argument naming the text if it is no prefix.
  explicit SourcePrefix(const std::string& text);
  // Whether an address of `version` (4 or 6), in network order, lies in the prefix.
  bool contains(uint8_t version, const uint8_t* address) const;

 private:
  uint8_t version_ = 4;
  std::array<uint8_t, 16> bytes_{};
  unsigned length_ = 0;
};

// What the Rx stage makes of one frame.
enum class FrameWay { Chain, Unhandled };

class PortReceiver {
 public:
  struct Route {
    int chain;
    std::vector<SourcePrefix> sources;  // none: every IP frame not taken by a route before it
    bool closed = false;                // its chain was removed: what it takes is dropped (for_removed_chains)
  };
  // `pass_to`: where unhandled frames go (null: dropped, counted as the port's unhandled_dropped).
  PortReceiver(EthdevPort& port, std::vector<Route> routes, EthdevPort* pass_to)
      : port_(port), routes_(std::move(routes)), pass_to_(pass_to) {}

  // Takes one burst of up to `burst` frames and hands each chain's frames to `deliver(chain, pkts, count)`, which
  // owns them from then on; returns how many frames were received.
  template <typename Deliver>
  uint16_t poll(uint16_t burst, Deliver&& deliver) {
    rte_mbuf* pkts[kMaxBurst];
    uint16_t received = port_.receive(pkts, burst);
    if (received == 0) return 0;
    sort(pkts, received);
    for (size_t r = 0; r < routes_.size(); r++) {
      if (by_route_count_[r] == 0) continue;
      if (routes_[r].closed) {
        port_.counters().for_removed_chains += by_route_count_[r];
        rte_pktmbuf_free_bulk(by_route_[r].data(), by_route_count_[r]);
        continue;
      }
      port_.counters().to_chains += by_route_count_[r];
      deliver(routes_[r].chain, by_route_[r].data(), by_route_count_[r]);
    }
    hand_on_unhandled();
    return received;
  }

  // The route index a frame takes, or -1: unhandled. Public for the tests.
  int route_of(rte_mbuf* frame) const;
  // A chain added to a running service takes its frames from this port too: after the routes there are (a spec's
  // check keeps a route that takes every frame from standing before it).
  void add_route(Route route);
  // A chain removed from a running service: its route stays, so that its frames are still told apart, and what it
  // takes is dropped from now on (never passed on: they would cross without the chain's NFs).
  void close_route(int chain);
  // A port removed from a running service: unhandled frames are not passed to it any more (dropped, counted).
  void stop_passing_to(const EthdevPort* port) {
    if (pass_to_ == port) pass_to_ = nullptr;
  }
  const EthdevPort& port() const { return port_; }

 private:
  void sort(rte_mbuf** pkts, uint16_t count);
  void hand_on_unhandled();

  EthdevPort& port_;
  std::vector<Route> routes_;
  EthdevPort* pass_to_;
  std::vector<std::array<rte_mbuf*, kMaxBurst>> by_route_ =
      std::vector<std::array<rte_mbuf*, kMaxBurst>>(routes_.size());
  std::vector<uint16_t> by_route_count_ = std::vector<uint16_t>(routes_.size());
  std::array<rte_mbuf*, kMaxBurst> unhandled_{};
  uint16_t unhandled_count_ = 0;
};

}  // namespace tandem
