// tests/support/plugin_dir.h: a temporary plugin directory holding links to chosen
// example plugins and fixtures, for tests that drive the binary.
#ifndef PLUGBOARD_TESTS_SUPPORT_PLUGIN_DIR_H_
#define PLUGBOARD_TESTS_SUPPORT_PLUGIN_DIR_H_

#include <filesystem>
#include <initializer_list>
#include <string>

#include "tests/support/files.h"
#include "tests/support/paths.h"

namespace plugboard::testing {

class PluginDir {
 public:
  // Every example plugin plus the fixtures scripted, serial_probe and parallel_probe.
  PluginDir() : PluginDir({"hello", "echo", "fail", "multi", "legacy", "sleep"},
                          {"scripted", "serial_probe", "parallel_probe"}) {}
  PluginDir(std::initializer_list<const char*> plugins, std::initializer_list<const char*> fixtures) {
    std::filesystem::create_directory(dir_ / "plugins");
    for (const char* p : plugins) link(plugin(p));
    for (const char* f : fixtures) link(fixture(f));
  }
  std::string plugins() const { return (dir_ / "plugins").string(); }
  // Writes `text` to a file in the directory (not among the plugins) and returns its path.
  std::string write(const std::string& name, const std::string& text) const {
    return dir_.write(name, text);
  }

 private:
  void link(const std::filesystem::path& target) {
    std::filesystem::create_symlink(target, dir_ / "plugins" / target.filename());
  }
  TempDir dir_;
};

}  // namespace plugboard::testing

#endif  // PLUGBOARD_TESTS_SUPPORT_PLUGIN_DIR_H_
