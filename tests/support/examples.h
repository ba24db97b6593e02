// tests/support/examples.h: the bundled examples as the suite runs them. Thread-safe: no
// shared state.
#ifndef PLUGBOARD_TESTS_SUPPORT_EXAMPLES_H_
#define PLUGBOARD_TESTS_SUPPORT_EXAMPLES_H_

#include <filesystem>
#include <stdexcept>
#include <string>

#include "tests/support/files.h"
#include "tests/support/paths.h"
#include "tests/support/sanitizer.h"

namespace plugboard::testing {

// examples/deployers.toml as this build can run it: the file itself, or, under ASan or
// TSan (kShadowMemory: no child starts under any address-space limit), a copy written in
// `dir` without its step's `memory` option.
inline std::string runnableDeployersExample(const std::filesystem::path& dir) {
  const std::filesystem::path example = sourceDir() / "examples" / "deployers.toml";
  if (!kShadowMemory) return example.string();
  std::string text = readFile(example);
  const std::string limit = ", memory = \"1G\"";
  const auto at = text.find(limit);
  if (at == std::string::npos) throw std::runtime_error("no " + limit + " in " + example.string());
  const std::filesystem::path copy = dir / "deployers.toml";
  writeFile(copy, text.erase(at, limit.size()));
  return copy.string();
}

}  // namespace plugboard::testing

#endif  // PLUGBOARD_TESTS_SUPPORT_EXAMPLES_H_
