// Checking of declared arguments against what a spec gives.
#include "arg_schema.h"

#include <cmath>

namespace tandem {

namespace {

const char* type_name(ArgType type) {
  switch (type) {
    case ArgType::Integer:
      return "integer";
    case ArgType::Number:
      return "number";
    case ArgType::Boolean:
      return "boolean";
    case ArgType::String:
      return "string";
    case ArgType::Choice:
      return "choice";
    case ArgType::List:
      return "list";
  }
  return "?";
}

std::string range_text(const ArgSpec& spec) {
  std::string text;
  auto fmt = [](double v) {
    json j = (std::floor(v) == v) ? json(static_cast<long long>(v)) : json(v);
    return j.dump();
  };
  if (spec.min && spec.max) return "between " + fmt(*spec.min) + " and " + fmt(*spec.max);
  if (spec.min) return "at least " + fmt(*spec.min);
  if (spec.max) return "at most " + fmt(*spec.max);
  return text;
}

void check_value(const ArgSpec& spec, const json& value, const std::string& where, SpecErrors& errors) {
  switch (spec.type) {
    case ArgType::Integer:
      if (!value.is_number_integer()) {
        errors.push_back({where, "must be an integer, got " + value.dump()});
        return;
      }
      break;
    case ArgType::Number:
      if (!value.is_number()) {
        errors.push_back({where, "must be a number, got " + value.dump()});
        return;
      }
      break;
    case ArgType::Boolean:
      if (!value.is_boolean()) errors.push_back({where, "must be true or false, got " + value.dump()});
      return;
    case ArgType::String:
      if (!value.is_string()) errors.push_back({where, "must be a string, got " + value.dump()});
      return;
    case ArgType::Choice: {
      std::string options;
      for (const auto& c : spec.choices) options += (options.empty() ? "" : ", ") + c;
      if (!value.is_string()) {
        errors.push_back({where, "must be one of " + options + ", got " + value.dump()});
        return;
      }
      for (const auto& c : spec.choices)
        if (value.get<std::string>() == c) return;
      errors.push_back({where, "must be one of " + options + ", got " + value.dump()});
      return;
    }
    case ArgType::List:
      if (!value.is_array()) errors.push_back({where, "must be a list, got " + value.dump()});
      return;
  }
  double v = value.get<double>();
  if ((spec.min && v < *spec.min) || (spec.max && v > *spec.max))
    errors.push_back({where, "must be " + range_text(spec) + ", got " + value.dump()});
}

}  // namespace

json resolve_args(const std::vector<ArgSpec>& specs, const json& given, const std::string& path, SpecErrors& errors) {
  json resolved = json::object();
  if (!given.is_null() && !given.is_object()) {
    errors.push_back({path, "must be a mapping of argument names to values"});
    return resolved;
  }
  if (given.is_object()) {
    for (const auto& [name, value] : given.items()) {
      bool known = false;
      for (const auto& spec : specs) known = known || spec.name == name;
      if (!known) {
        std::string names;
        for (const auto& spec : specs) names += (names.empty() ? "" : ", ") + spec.name;
        errors.push_back({path + "." + name, "unknown argument (known: " + (names.empty() ? "none" : names) + ")"});
      }
    }
  }
  for (const auto& spec : specs) {
    std::string where = path + "." + spec.name;
    if (given.is_object() && given.contains(spec.name)) {
      check_value(spec, given[spec.name], where, errors);
      resolved[spec.name] = given[spec.name];
    } else if (spec.default_value.is_null()) {
      errors.push_back({where, "is required"});
    } else {
      resolved[spec.name] = spec.default_value;
    }
  }
  return resolved;
}

json describe_args(const std::vector<ArgSpec>& specs) {
  json out = json::array();
  for (const auto& spec : specs) {
    json arg = {{"name", spec.name}, {"type", type_name(spec.type)}, {"help", spec.help}};
    arg["default"] = spec.default_value;
    if (spec.min) arg["min"] = *spec.min;
    if (spec.max) arg["max"] = *spec.max;
    if (!spec.choices.empty()) arg["choices"] = spec.choices;
    out.push_back(arg);
  }
  return out;
}

}  // namespace tandem
