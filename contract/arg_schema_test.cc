// Tests of argument checking: unknown names, types, ranges, choices, required values and defaults.
#include "arg_schema.h"

#include <gtest/gtest.h>

namespace tandem {
namespace {

const std::vector<ArgSpec> kSpecs = {
    {.name = "cycles", .type = ArgType::Integer, .default_value = 50, .help = "", .min = 0, .max = 1000},
    {.name = "mode", .type = ArgType::Choice, .default_value = "a", .help = "", .choices = {"a", "b"}},
    {.name = "needed", .type = ArgType::Number, .default_value = json(), .help = ""},
};

TEST(ArgSchema, FillsDefaultsAndKeepsGivenValues) {
  SpecErrors errors;
  json resolved = resolve_args(kSpecs, {{"needed", 1.5}, {"mode", "b"}}, "x", errors);
  EXPECT_TRUE(errors.empty());
  EXPECT_EQ(resolved["cycles"], 50);
  EXPECT_EQ(resolved["mode"], "b");
  EXPECT_EQ(resolved["needed"], 1.5);
}

TEST(ArgSchema, ReportsEachProblemWithItsPath) {
  SpecErrors errors;
  resolve_args(kSpecs, {{"cycles", 5000}, {"mode", "c"}, {"colour", 1}}, "chains[0].nfs[1].args", errors);
  ASSERT_EQ(errors.size(), 4u);
  EXPECT_EQ(errors[0].path, "chains[0].nfs[1].args.colour");
  EXPECT_NE(errors[0].message.find("unknown argument"), std::string::npos);
  EXPECT_EQ(errors[1].path, "chains[0].nfs[1].args.cycles");
  EXPECT_NE(errors[1].message.find("between 0 and 1000"), std::string::npos);
  EXPECT_EQ(errors[2].path, "chains[0].nfs[1].args.mode");
  EXPECT_EQ(errors[3].path, "chains[0].nfs[1].args.needed");
  EXPECT_NE(errors[3].message.find("required"), std::string::npos);
}

TEST(ArgSchema, RejectsWrongTypes) {
  SpecErrors errors;
  resolve_args(kSpecs, {{"cycles", 1.5}, {"needed", "many"}}, "a", errors);
  ASSERT_EQ(errors.size(), 2u);
  EXPECT_NE(errors[0].message.find("integer"), std::string::npos);
  EXPECT_NE(errors[1].message.find("number"), std::string::npos);
}

}  // namespace
}  // namespace tandem
