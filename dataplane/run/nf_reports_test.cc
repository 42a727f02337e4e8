// Tests of the NFs' reports kept across their processes: files as workers write them, read in the order their
// processes ended.
#include "nf_reports.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

namespace tandem {
namespace {

class NfReportsTest : public ::testing::Test {
 protected:
  std::string write(const std::string& name, const std::string& text) {
    std::string path = (dir_ / name).string();
    std::ofstream(path) << text;
    return path;
  }
  std::filesystem::path dir_ = std::filesystem::temp_directory_path() / ("nf-reports-" + std::to_string(getpid()));
  void SetUp() override { std::filesystem::create_directories(dir_); }
  void TearDown() override { std::filesystem::remove_all(dir_); }
};

TEST_F(NfReportsTest, AProcessReplacedThenTheLastOneKeepEveryInstanceInOrder) {
  NfReports reports;
  // The first process: its first instance replaced by new arguments, then the process by a re-layout at 2.5 s.
  std::string first = write("a.json", R"({"fw": {"report": {"allowed": 5}, "replaced": [{"allowed": 3}]}})");
  EXPECT_TRUE(reports.collect(first, "re-layout", 2.5));
  EXPECT_FALSE(std::filesystem::exists(first));  // read once: a later layout's worker of that index writes anew
  reports.lost_at_crash("fw", 4.0);
  EXPECT_TRUE(reports.collect(write("b.json", R"({"fw": {"report": {"allowed": 7}, "replaced": []}})"), "", 0));

  EXPECT_EQ(reports.last("fw"), json({{"allowed", 7}}));
  json expected = json::array({
      {{"ended", "new arguments"}, {"report", {{"allowed", 3}}}},
      {{"ended", "re-layout"}, {"at_s", 2.5}, {"report", {{"allowed", 5}}}},
      {{"ended", "crash"}, {"at_s", 4.0}, {"report", nullptr}},
  });
  EXPECT_EQ(reports.earlier("fw"), expected);
}

TEST_F(NfReportsTest, AnNfWithoutReportsHasNoneAndAMissingFileIsNoError) {
  NfReports reports;
  EXPECT_TRUE(reports.collect((dir_ / "never-written.json").string(), "", 0));
  EXPECT_TRUE(reports.last("fw").is_null());
  EXPECT_EQ(reports.earlier("fw"), json::array());
}

TEST_F(NfReportsTest, AFileThatCannotBeReadIsSaidAndRemoved) {
  NfReports reports;
  std::string cut = write("cut.json", R"({"fw": {"report": {"allo)");
  EXPECT_FALSE(reports.collect(cut, "", 0));
  EXPECT_FALSE(std::filesystem::exists(cut));
  EXPECT_FALSE(reports.collect(write("old.json", R"({"fw": {"allowed": 1}})"), "", 0));  // no "report"
}

}  // namespace
}  // namespace tandem
