// Tests of reading a capture for replay: frames in order, short ones padded, files that cannot be replayed named.
#include "replay_frames.h"

#include <gtest/gtest.h>

#include <cstdio>
#include <fstream>
#include <stdexcept>
#include <vector>

namespace tandem {
namespace {

// A classic little-endian pcap file of `frames` with link type `link_type`.
std::string write_pcap(const std::string& name, const std::vector<std::vector<uint8_t>>& frames,
                       uint32_t link_type = 1) {
  std::string path = ::testing::TempDir() + name;
  std::ofstream out(path, std::ios::binary);
  auto put32 = [&](uint32_t v) { out.write(reinterpret_cast<const char*>(&v), 4); };
  auto put16 = [&](uint16_t v) { out.write(reinterpret_cast<const char*>(&v), 2); };
  put32(0xa1b2c3d4);
  put16(2);
  put16(4);
  put32(0);
  put32(0);
  put32(65535);
  put32(link_type);
  for (const auto& frame : frames) {
    put32(0);
    put32(0);
    put32(static_cast<uint32_t>(frame.size()));
    put32(static_cast<uint32_t>(frame.size()));
    out.write(reinterpret_cast<const char*>(frame.data()), static_cast<std::streamsize>(frame.size()));
  }
  return path;
}

TEST(ReplayFrames, ReadsEveryFrameInOrderAndPadsShortOnes) {
  std::vector<uint8_t> arp(42, 0xab), big(100, 0xcd);
  FrameList replay = replay_frames(write_pcap("replay_ok.pcap", {arp, big}));
  ASSERT_EQ(replay.count(), 2u);
  EXPECT_EQ(replay.frame_size(0), 64);  // 42 bytes padded to the Ethernet minimum of 60, plus the FCS
  EXPECT_EQ(replay.frame_size(1), 104);
  EXPECT_EQ(replay.frame(0)[41], 0xab);
  EXPECT_EQ(replay.frame(0)[42], 0);
  EXPECT_EQ(replay.frame(1)[99], 0xcd);
}

TEST(ReplayFrames, RefusesWhatCannotBeReplayedNamingTheFile) {
  auto message = [](const std::string& path) {
    try {
      replay_frames(path);
    } catch (const std::runtime_error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  EXPECT_NE(message("/nonexistent/x.pcap").find("/nonexistent/x.pcap"), std::string::npos);
  EXPECT_NE(message(write_pcap("replay_radio.pcap", {std::vector<uint8_t>(60)}, 127)).find("not an Ethernet capture"),
            std::string::npos);
  EXPECT_NE(message(write_pcap("replay_empty.pcap", {})).find("no packets"), std::string::npos);
  EXPECT_NE(message(write_pcap("replay_jumbo.pcap", {std::vector<uint8_t>(2000)})).find("too long"), std::string::npos);
}

}  // namespace
}  // namespace tandem
