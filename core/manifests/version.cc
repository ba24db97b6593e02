#include "core/manifests/version.h"

#include <charconv>
#include <vector>

namespace plugboard::core {
namespace {

bool parseNumber(std::string_view s, std::uint64_t& out) {
  if (s.empty() || (s.size() > 1 && s[0] == '0')) return false;
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && end == s.data() + s.size();
}

std::vector<std::string_view> split(std::string_view s, char sep) {
  std::vector<std::string_view> parts;
  for (;;) {
    auto pos = s.find(sep);
    parts.push_back(s.substr(0, pos));
    if (pos == std::string_view::npos) return parts;
    s.remove_prefix(pos + 1);
  }
}

bool isNumeric(std::string_view s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
}

// Semantic Versioning 2.0, rule 11: compare dot-separated pre-release identifiers.
std::strong_ordering comparePre(std::string_view a, std::string_view b) {
  if (a == b) return std::strong_ordering::equal;
  if (a.empty()) return std::strong_ordering::greater;
  if (b.empty()) return std::strong_ordering::less;
  auto pa = split(a, '.');
  auto pb = split(b, '.');
  for (std::size_t i = 0; i < pa.size() && i < pb.size(); ++i) {
    const bool na = isNumeric(pa[i]), nb = isNumeric(pb[i]);
    if (na && nb) {
      if (pa[i].size() != pb[i].size()) return pa[i].size() <=> pb[i].size();
    } else if (na != nb) {
      return na ? std::strong_ordering::less : std::strong_ordering::greater;
    }
    if (auto c = pa[i].compare(pb[i]); c != 0) return c <=> 0;
  }
  return pa.size() <=> pb.size();
}

}  // namespace

Expected<Version> Version::parse(std::string_view text) {
  auto bad = [&] {
    return Error("invalid version '" + std::string(text) +
                 "': expected MAJOR.MINOR.PATCH, e.g. 1.2.0");
  };
  Version v;
  v.text_ = std::string(text);
  std::string_view core = text.substr(0, text.find('+'));
  if (auto dash = core.find('-'); dash != std::string_view::npos) {
    v.pre_ = std::string(core.substr(dash + 1));
    core = core.substr(0, dash);
    if (v.pre_.empty()) return bad();
  }
  auto parts = split(core, '.');
  if (parts.size() != 3 || !parseNumber(parts[0], v.major_) ||
      !parseNumber(parts[1], v.minor_) || !parseNumber(parts[2], v.patch_)) {
    return bad();
  }
  return v;
}

bool Version::matchesPrefix(std::string_view prefix) const {
  if (prefix == text_) return true;
  auto parts = split(prefix, '.');
  const std::uint64_t mine[3] = {major_, minor_, patch_};
  if (parts.size() > 3) return false;
  for (std::size_t i = 0; i < parts.size(); ++i) {
    std::uint64_t n = 0;
    if (!parseNumber(parts[i], n) || n != mine[i]) return false;
  }
  return parts.size() < 3 || pre_.empty();
}

std::strong_ordering Version::operator<=>(const Version& other) const {
  if (auto c = major_ <=> other.major_; c != 0) return c;
  if (auto c = minor_ <=> other.minor_; c != 0) return c;
  if (auto c = patch_ <=> other.patch_; c != 0) return c;
  return comparePre(pre_, other.pre_);
}

}  // namespace plugboard::core
