// Declared arguments of an NF type or scheduler module, checked against a spec and listed by `tandem nfs`.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace tandem {

using json = nlohmann::json;

enum class ArgType { Integer, Number, Boolean, String, Choice, List };

struct ArgSpec {
  std::string name;
  ArgType type;
  json default_value;  // null = the argument is required
  std::string help;
  std::optional<double> min = std::nullopt;
  std::optional<double> max = std::nullopt;
  std::vector<std::string> choices = {};
};

// An error in the spec, located by a path such as "chains[0].nfs[1].args.rules[2].src".
struct SpecError {
  std::string path;
  std::string message;
};

using SpecErrors = std::vector<SpecError>;

// Checks `given` against `specs`: unknown names, missing required values, types, ranges and choices.
// Returns the arguments with defaults filled in; errors are appended with `path` as prefix.
json resolve_args(const std::vector<ArgSpec>& specs, const json& given, const std::string& path, SpecErrors& errors);

json describe_args(const std::vector<ArgSpec>& specs);

}  // namespace tandem
