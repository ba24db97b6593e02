// core/manifests/version.h: semantic versions of plugins ("1.2.0", "2.0.0-rc.1").
//
// Ordering follows Semantic Versioning 2.0: numeric major.minor.patch, a pre-release
// sorts before its release, build metadata ("+...") is ignored. Value type.
#ifndef PLUGBOARD_CORE_MANIFESTS_VERSION_H_
#define PLUGBOARD_CORE_MANIFESTS_VERSION_H_

#include <compare>
#include <cstdint>
#include <string>
#include <string_view>

#include "core/base/expected.h"

namespace plugboard::core {

class Version {
 public:
  static Expected<Version> parse(std::string_view text);

  std::uint64_t major() const { return major_; }
  std::uint64_t minor() const { return minor_; }
  std::uint64_t patch() const { return patch_; }
  const std::string& text() const { return text_; }

  // True when `prefix` ("1", "1.2", "1.2.3") names this version or a family holding it.
  bool matchesPrefix(std::string_view prefix) const;

  std::strong_ordering operator<=>(const Version& other) const;
  bool operator==(const Version& other) const { return (*this <=> other) == 0; }

 private:
  std::uint64_t major_ = 0, minor_ = 0, patch_ = 0;
  std::string pre_;   // pre-release identifiers, empty for a release
  std::string text_;  // as written
};

}  // namespace plugboard::core

#endif  // PLUGBOARD_CORE_MANIFESTS_VERSION_H_
