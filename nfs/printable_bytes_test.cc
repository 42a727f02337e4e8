// Tests of printable_bytes: packet bytes escaped so that any of them can go into a JSON report.
#include "printable_bytes.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace tandem {
namespace {

TEST(PrintableBytes, KeepsPrintableAsciiAndEscapesEveryOtherByte) {
  EXPECT_EQ(printable_bytes("/index.html?q=a b"), "/index.html?q=a b");
  EXPECT_EQ(printable_bytes(std::string_view("/\xff\xfe\x00\n", 5)), "/\\xff\\xfe\\x00\\x0a");
  EXPECT_EQ(printable_bytes("\\x41"), "\\\\x41");  // a literal backslash cannot pass for an escaped byte
  EXPECT_NE(printable_bytes("\\xff"), printable_bytes("\xff"));
}

TEST(PrintableBytes, EveryByteValueGivesTextThatJsonCanWrite) {
  std::string all;
  for (int byte = 0; byte < 256; byte++) all += static_cast<char>(byte);
  nlohmann::json report = {{"url", printable_bytes(all)}};
  EXPECT_NO_THROW(report.dump());  // the strict default handler throws on invalid UTF-8
}

}  // namespace
}  // namespace tandem
