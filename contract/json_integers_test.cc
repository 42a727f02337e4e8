// Tests of the range-checked integer fields: in range as integers or integral floats, refused otherwise by name.
#include "json_integers.h"

#include <gtest/gtest.h>

namespace tandem {
namespace {

using nlohmann::json;

TEST(JsonIntegers, TakesIntegersAndIntegralFloatsInRange) {
  EXPECT_EQ(integer_at<int>(json(-5), "f"), -5);
  EXPECT_EQ(integer_at<uint16_t>(json(65535), "f"), 65535);
  EXPECT_EQ(integer_at<uint16_t>(json(512.0), "f"), 512);
  EXPECT_EQ(integer_at<uint64_t>(json(UINT64_MAX), "f"), UINT64_MAX);
  EXPECT_EQ(integer_or<uint32_t>(json::object(), "absent", 7u), 7u);
}

TEST(JsonIntegers, RefusesWhatAConversionWouldMangleNamingTheField) {
  for (const json& bad : {json(3.55556e61), json(65536), json(-1), json(-1.0), json(2.5), json("8"), json(nullptr)}) {
    try {
      (void)integer_at<uint16_t>(bad, "traffic.sizes");
      ADD_FAILURE() << "accepted " << bad.dump();
    } catch (const std::runtime_error& e) {
      EXPECT_NE(std::string(e.what()).find("traffic.sizes: must be an integer from 0 to 65535"), std::string::npos);
    }
  }
  EXPECT_THROW(integer_at<int>(json(2147483648.0), "f"), std::runtime_error);  // INT_MAX + 1, exact in a double
  EXPECT_THROW(integer_at<int64_t>(json(9.3e18), "f"), std::runtime_error);
  EXPECT_THROW(integer_or<int>(json{{"burst", 1e300}}, "burst", 32), std::runtime_error);
}

}  // namespace
}  // namespace tandem
