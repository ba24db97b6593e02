#include "core/manifests/runtime_dir.h"

#include <plugboard/host/owner.h>

namespace plugboard::core {
namespace fs = std::filesystem;
namespace {

constexpr std::string_view kPrefix = "plugboard-runtime-";

}  // namespace

Expected<fs::path> makeRuntimeDir(const fs::path& parent) {
  auto dir = host::makeOwnedDirectory(parent, kPrefix);
  if (!dir) {
    std::string m = dir.error().message();  // "cannot create a directory in ...: why"
    constexpr std::string_view kWhat = "cannot create a directory";
    if (m.starts_with(kWhat)) m.replace(0, kWhat.size(), "cannot create a runtime directory");
    return Error(m, Error::Code::kIo);
  }
  return *dir;
}

std::vector<fs::path> removeDeadRuntimeDirs(const fs::path& parent) {
  return host::removeDeadDirectories(parent, kPrefix);
}

}  // namespace plugboard::core
