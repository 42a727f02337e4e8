// Tests of the generator's ready-made frames: each is the frame build_frame makes, and a budget bounds them.
#include "frame_templates.h"

#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include <netinet/in.h>

namespace tandem {
namespace {

std::vector<uint8_t> built(uint16_t size, const FrameShape& shape, uint32_t flow, uint16_t chain) {
  std::vector<uint8_t> frame(size - kFcsBytes, 0);
  build_frame(frame.data(), size, shape, flow_address(flow, chain));
  return frame;
}

TEST(FrameTemplates, EachFrameIsTheOneBuildFrameMakesWithAZeroPayload) {
  for (uint8_t protocol : {uint8_t{IPPROTO_UDP}, uint8_t{IPPROTO_TCP}})
    for (FrameShape shape : {FrameShape{.protocol = protocol}, FrameShape{.protocol = protocol, .ip_version = 6},
                             FrameShape{.protocol = protocol, .ip_version = 6, .vlan = 100}}) {
      FrameTemplates templates({128, 1518, 128, 256}, 5, shape, 3);
      for (uint16_t size : {128, 256, 1518})
        for (uint32_t flow = 0; flow < 5; flow++) {
          const uint8_t* frame = templates.frame(size, flow);
          ASSERT_NE(frame, nullptr) << size << " " << flow;
          std::vector<uint8_t> expected = built(size, shape, flow, 3);
          EXPECT_EQ(std::memcmp(frame, expected.data(), expected.size()), 0) << "size " << size << " flow " << flow;
        }
    }
}

TEST(FrameTemplates, AFrameTooSmallForItsHeadersIsRefused) {
  EXPECT_THROW(FrameTemplates({64}, 1, FrameShape{.protocol = IPPROTO_TCP, .ip_version = 6}, 0), std::invalid_argument);
  EXPECT_NO_THROW(FrameTemplates({78}, 1, FrameShape{.protocol = IPPROTO_TCP, .ip_version = 6}, 0));
}

TEST(FrameTemplates, SizesNotAskedForAreBuiltByTheCaller) {
  FrameTemplates templates({64, 1518}, 2, FrameShape{}, 0);
  EXPECT_EQ(templates.frame(128, 0), nullptr);
  EXPECT_EQ(templates.frame(1500, 1), nullptr);
  EXPECT_EQ(FrameTemplates().frame(64, 0), nullptr);
}

TEST(FrameTemplates, TooManyFlowsForTheBudgetGetNone) {
  // 64 B frames take one 64-byte line each: 4 flows fit in 256 bytes, 5 do not.
  EXPECT_NE(FrameTemplates({64}, 4, FrameShape{.protocol = IPPROTO_UDP}, 0, 256).frame(64, 3), nullptr);
  FrameTemplates over({64}, 5, FrameShape{}, 0, 256);
  EXPECT_EQ(over.frame(64, 0), nullptr);
  EXPECT_EQ(over.bytes(), 0u);
}

}  // namespace
}  // namespace tandem
