// fuzz/registry.cc: the registry file (core/launch/registry.h), read and then asked for
// each plugin it lists, by exact version, by the version's first number and by none.
#include <string>

#include "core/launch/registry.h"
#include "fuzz/support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using plugboard::core::Registry;
  auto registry = Registry::parse(plugboard::fuzz::asText(data, size), "/srv/registry.toml");
  if (!registry) {
    FUZZ_CHECK(!registry.error().message().empty());
    return 0;
  }
  for (const auto& entry : registry->entries()) {
    FUZZ_CHECK(!entry.artifacts.empty());
    for (const auto& [kind, artifact] : entry.artifacts) FUZZ_CHECK(artifact.is_object());
    auto exact = registry->resolve(entry.name, entry.version.text());
    FUZZ_CHECK(exact.ok());
    FUZZ_CHECK(exact->version == entry.version);
    FUZZ_CHECK(registry->resolve(entry.name, std::to_string(entry.version.major())).ok());
    FUZZ_CHECK(registry->resolve(entry.name, "").ok());
  }
  return 0;
}
