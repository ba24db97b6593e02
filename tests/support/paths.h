// tests/support/paths.h: where the build put what the tests drive.
#ifndef PLUGBOARD_TESTS_SUPPORT_PATHS_H_
#define PLUGBOARD_TESTS_SUPPORT_PATHS_H_

#include <filesystem>

namespace plugboard::testing {

inline std::filesystem::path binary() { return PLUGBOARD_BIN; }
inline std::filesystem::path pluginDir() { return PLUGBOARD_PLUGIN_DIR; }
inline std::filesystem::path fixtureDir() { return PLUGBOARD_FIXTURE_DIR; }
inline std::filesystem::path sourceDir() { return PLUGBOARD_SOURCE_DIR; }
inline std::filesystem::path buildDir() { return PLUGBOARD_BUILD_DIR; }
inline std::filesystem::path deployerDir() { return buildDir() / "deployers"; }
inline std::filesystem::path plugin(const char* name) {
  return pluginDir() / (std::string(name) + ".so");
}
inline std::filesystem::path fixture(const char* name) {
  return fixtureDir() / (std::string(name) + ".so");
}

}  // namespace plugboard::testing

#endif  // PLUGBOARD_TESTS_SUPPORT_PATHS_H_
