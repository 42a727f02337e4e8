// Integer fields read from JSON with their range checked: a bare get<int>() of a float out of int's range is
// undefined behaviour (found by the deployment fuzz target under UBSan).
#pragma once

#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>

#include <nlohmann/json.hpp>

namespace tandem {

// `value` as T: a JSON integer, or a float with an integral value (as some writers give whole numbers), within T's
// range; anything else throws std::runtime_error naming `field`.
template <typename T>
T integer_at(const nlohmann::json& value, const std::string& field) {
  using Limits = std::numeric_limits<T>;
  bool fits = false;
  if (value.is_number_unsigned()) {
    fits = value.get<uint64_t>() <= static_cast<uint64_t>(Limits::max());
  } else if (value.is_number_integer()) {
    auto v = value.get<int64_t>();
    fits = v >= static_cast<int64_t>(Limits::min()) &&
           (v < 0 || static_cast<uint64_t>(v) <= static_cast<uint64_t>(Limits::max()));
  } else if (value.is_number_float()) {
    double v = value.get<double>();
    // Both bounds as doubles: max() + 1 is a power of two, exact in a double, where max() itself may round up.
    fits = std::trunc(v) == v && v >= static_cast<double>(Limits::min()) &&
           v < (static_cast<double>(Limits::max() / 2 + 1) * 2.0);
  }
  if (!fits)
    throw std::runtime_error(field + ": must be an integer from " + std::to_string(Limits::min()) + " to " +
                             std::to_string(Limits::max()) + ", got " + value.dump());
  return value.is_number_float() ? static_cast<T>(value.get<double>()) : value.get<T>();
}

// `object[key]` as T (see integer_at), or `fallback` when the key is absent.
template <typename T>
T integer_or(const nlohmann::json& object, const char* key, T fallback) {
  auto found = object.find(key);
  return found == object.end() ? fallback : integer_at<T>(*found, key);
}

}  // namespace tandem
