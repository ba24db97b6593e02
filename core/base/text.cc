#include "core/base/text.h"

#include <algorithm>

#include <nlohmann/json.hpp>

namespace plugboard::core {

std::string join(const std::vector<std::string>& items, std::string_view separator,
                 std::string_view empty) {
  if (items.empty()) return std::string(empty);
  std::string out = items.front();
  for (std::size_t i = 1; i < items.size(); ++i) {
    out += separator;
    out += items[i];
  }
  return out;
}

std::string toLower(std::string_view s) {
  std::string out(s);
  std::transform(out.begin(), out.end(), out.begin(), [](unsigned char c) {
    return static_cast<char>(c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c);
  });
  return out;
}

namespace {

// The optimal-string-alignment form of Damerau-Levenshtein: each swap of two neighbours
// counts once, and no substring is edited twice.
std::size_t editDistance(std::string_view a, std::string_view b) {
  std::vector<std::vector<std::size_t>> d(a.size() + 1, std::vector<std::size_t>(b.size() + 1));
  for (std::size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (std::size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t cost = a[i - 1] == b[j - 1] ? 0 : 1;
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.size()][b.size()];
}

// Names longer than this are not compared (the table is their lengths' product).
constexpr std::size_t kLongestCompared = 256;

}  // namespace

std::optional<std::string> nearestName(std::string_view given,
                                       std::span<const std::string> candidates) {
  if (given.empty() || given.size() > kLongestCompared) return std::nullopt;
  const std::string lower = toLower(given);
  std::optional<std::string> best;
  std::size_t best_distance = 0;
  for (const std::string& candidate : candidates) {
    if (candidate == given || candidate.size() > kLongestCompared) continue;
    const std::size_t longer = std::max(given.size(), candidate.size());
    const std::size_t cutoff = std::clamp<std::size_t>(longer / 3, 1, 3);
    const std::size_t distance = editDistance(lower, toLower(candidate));
    if (distance > cutoff || (best && distance >= best_distance)) continue;
    best = candidate;
    best_distance = distance;
  }
  return best;
}

std::string didYouMean(std::string_view given, std::span<const std::string> candidates) {
  const auto nearest = nearestName(given, candidates);
  return nearest ? "; did you mean '" + *nearest + "'?" : "";
}

// Plain ASCII (the usual names, keys and messages) is quoted directly; anything that might
// need escaping goes through the JSON library.
void appendJsonString(std::string& out, std::string_view s) {
  const bool plain = std::all_of(s.begin(), s.end(), [](char c) {
    return c >= 0x20 && c != '"' && c != '\\' && static_cast<unsigned char>(c) < 0x80;
  });
  if (!plain) {
    out += nlohmann::json(std::string(s))
               .dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
    return;
  }
  out += '"';
  out += s;
  out += '"';
}

}  // namespace plugboard::core
