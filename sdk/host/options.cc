#include "plugboard/host/options.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace plugboard::host {
namespace {

bool isDigit(char c) { return c >= '0' && c <= '9'; }
char lower(char c) { return c >= 'A' && c <= 'Z' ? static_cast<char>(c - 'A' + 'a') : c; }

Error tooLong(std::string_view text) {
  return Error("invalid duration '" + std::string(text) + "': longer than 100 years");
}

Error badSize(std::string_view text) {
  return Error("invalid size '" + std::string(text) +
               "': use a number of bytes or one with K, M, G or T, e.g. 256M or 1GiB");
}

}  // namespace

Expected<Millis> parseDuration(std::string_view text) {
  auto bad = [&] {
    return Error("invalid duration '" + std::string(text) +
                 "': use a number with ms, s, m or h, e.g. 500ms, 30s, 1m30s");
  };
  if (text.empty()) return bad();
  double total_ms = 0;
  std::size_t i = 0;
  while (i < text.size()) {
    std::size_t start = i;
    while (i < text.size() && (isDigit(text[i]) || text[i] == '.')) ++i;
    if (i == start) return bad();
    const std::string number(text.substr(start, i - start));
    char* end = nullptr;
    const double value = std::strtod(number.c_str(), &end);
    if (end != number.c_str() + number.size()) return bad();
    std::size_t unit_start = i;
    while (i < text.size() && text[i] >= 'a' && text[i] <= 'z') ++i;
    const std::string_view unit = text.substr(unit_start, i - unit_start);
    double scale;
    if (unit == "ms") {
      scale = 1;
    } else if (unit == "s" || (unit.empty() && start == 0 && i == text.size())) {
      scale = 1000;
    } else if (unit == "m") {
      scale = 60'000;
    } else if (unit == "h") {
      scale = 3'600'000;
    } else {
      return bad();
    }
    total_ms += value * scale;
  }
  // Also false for an infinite total (a number of hundreds of digits).
  if (!(total_ms <= static_cast<double>(kMaxDuration.count()))) return tooLong(text);
  return Millis(static_cast<long long>(std::llround(total_ms)));
}

Expected<Millis> durationFromSeconds(long long seconds) {
  if (seconds < 0) return Error("invalid duration " + std::to_string(seconds) + ": negative");
  if (seconds > kMaxDuration.count() / 1000) return tooLong(std::to_string(seconds));
  return Millis(seconds * 1000);
}

std::string formatGoDuration(Millis d) {
  long long ms = d.count();
  if (ms == 0) return "0s";
  std::string sign = ms < 0 ? "-" : "";
  ms = std::llabs(ms);
  if (ms < 1000) return sign + std::to_string(ms) + "ms";
  const long long h = ms / 3'600'000, m = ms / 60'000 % 60, s = ms / 1000 % 60, frac = ms % 1000;
  std::string out = sign;
  if (h > 0) out += std::to_string(h) + "h";
  if (h > 0 || m > 0) out += std::to_string(m) + "m";
  out += std::to_string(s);
  if (frac > 0) {
    char buf[8];
    std::snprintf(buf, sizeof buf, ".%03lld", frac);
    std::string f = buf;
    while (f.back() == '0') f.pop_back();
    out += f;
  }
  return out + "s";
}

Expected<std::uint64_t> parseSize(std::string_view text) {
  std::uint64_t n = 0;
  std::size_t i = 0;
  for (; i < text.size() && isDigit(text[i]); ++i) {
    const unsigned digit = static_cast<unsigned>(text[i] - '0');
    if (n > (UINT64_MAX - digit) / 10) return badSize(text);
    n = n * 10 + digit;
  }
  if (i == 0) return badSize(text);
  std::string unit;
  for (char c : text.substr(i)) unit += lower(c);
  if (unit.empty() || unit == "b") return n;
  const auto power = std::string_view("kmgt").find(unit[0]);
  const std::string_view suffix = std::string_view(unit).substr(1);
  if (power == std::string_view::npos || (!suffix.empty() && suffix != "b" && suffix != "ib")) {
    return badSize(text);
  }
  const unsigned shift = 10 * static_cast<unsigned>(power + 1);
  if (n > (UINT64_MAX >> shift)) return badSize(text);
  return n << shift;
}

Expected<std::uint64_t> parseSizeValue(const nlohmann::json& value) {
  if (value.is_number_unsigned()) return value.get<std::uint64_t>();
  if (value.is_number_integer()) {
    const auto n = value.get<std::int64_t>();
    if (n >= 0) return static_cast<std::uint64_t>(n);
  }
  if (value.is_string()) return parseSize(value.get_ref<const std::string&>());
  return badSize(value.dump());
}

}  // namespace plugboard::host
