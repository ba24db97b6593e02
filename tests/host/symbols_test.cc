// What the bundled deployer modules and the plugins export: their entry point, and no
// code of the runtime's core or of the host kit, which they link statically with hidden
// visibility. A symbol of either in a module's dynamic symbol table would bind to, or
// interpose on, another module's copy at run time.
#include <filesystem>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "plugboard/abi.h"
#include "tests/support/paths.h"
#include "tests/support/sanitizer.h"
#include "tests/support/subprocess.h"

namespace plugboard::testing {
namespace {

namespace fs = std::filesystem;

std::vector<fs::path> modulesIn(const fs::path& dir) {
  std::vector<fs::path> out;
  for (const auto& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() == ".so") out.push_back(entry.path());
  }
  return out;
}

std::vector<std::string> linesOf(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) {
    if (!line.empty()) out.push_back(line);
  }
  return out;
}

// libstdc++'s own template instantiations (std::, __gnu_cxx::) keep default visibility
// whatever the module's: its headers say so. Mangled, after a special-name prefix
// (typeinfo, its name, a vtable, a guard variable, a function's static), they start with
// the std or __gnu_cxx nested name.
bool isStandardLibrarys(std::string_view mangled) {
  if (!mangled.starts_with("_Z")) return false;
  mangled.remove_prefix(2);
  for (std::string_view special : {"TI", "TS", "TV", "GV", "Z"}) {
    if (mangled.starts_with(special)) {
      mangled.remove_prefix(special.size());
      break;
    }
  }
  if (mangled.starts_with("Z")) mangled.remove_prefix(1);  // the static of a guard variable
  if (mangled.starts_with("N")) {
    mangled.remove_prefix(1);
    if (mangled.starts_with("K")) mangled.remove_prefix(1);
  }
  for (std::string_view ns : {"St", "Sa", "Sb", "Ss", "Si", "So", "Sd", "9__gnu_cxx"}) {
    if (mangled.starts_with(ns)) return true;
  }
  return false;
}

// Every defined dynamic symbol of `module` that is neither `entry` nor the standard
// library's, demangled; and those of the core or the kit in any case.
std::vector<std::string> unexpectedExports(const fs::path& module, std::string_view entry) {
  const auto nm = run({"nm", "-D", "--defined-only", "--format=posix", module.string()});
  EXPECT_EQ(nm.exit_code, 0) << nm.err;
  std::string names;
  for (const auto& line : linesOf(nm.out)) {
    const std::string name = line.substr(0, line.find(' '));
    // UBSan's function check (-fsanitize=function, part of the ASan+UBSan build) gives every
    // function the type info of its type, and exports it: "typeinfo [name] for void (int)".
    const bool function_typeinfo = name.starts_with("_ZTIF") || name.starts_with("_ZTSF");
    if (kSanitizer == "address" && function_typeinfo) continue;
    names += name + "\n";
  }
  const auto filt = run({"c++filt"}, names);
  EXPECT_EQ(filt.exit_code, 0) << filt.err;
  const auto mangled = linesOf(names), demangled = linesOf(filt.out);
  EXPECT_EQ(mangled.size(), demangled.size());
  std::vector<std::string> out;
  for (std::size_t i = 0; i < mangled.size() && i < demangled.size(); ++i) {
    const bool ours = demangled[i].find("plugboard::core::") != std::string::npos ||
                      demangled[i].find("plugboard::host::") != std::string::npos;
    if (ours || (mangled[i] != entry && !isStandardLibrarys(mangled[i])))
      out.push_back(demangled[i]);
  }
  return out;
}

TEST(SymbolsTest, TheStandardLibraryFilterKnowsItsOwnAndNoOneElses) {
  EXPECT_TRUE(isStandardLibrarys("_ZNSt8__detail18__to_chars_10_implImEEvPcjT_"));
  EXPECT_TRUE(isStandardLibrarys("_ZTISt16_Sp_counted_baseILN9__gnu_cxx12_Lock_policyE2EE"));
  EXPECT_TRUE(isStandardLibrarys("_ZZNSt19_Sp_make_shared_tag5_S_tiEvE5__tag"));
  EXPECT_FALSE(
      isStandardLibrarys("_ZN9plugboard4host13NativeLibrary4loadERKNSt10filesystem7__"
                         "cxx114pathERKNSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE"));
  EXPECT_FALSE(isStandardLibrarys("_ZN3fmt2v96detail9vformat_toIcEEvRNS1_6bufferIT_EE"));
  EXPECT_FALSE(isStandardLibrarys("plugboard_helper"));
}

TEST(SymbolsTest, DeployerModulesExportOnlyTheirEntryPoint) {
  const auto modules = modulesIn(deployerDir());
  ASSERT_GE(modules.size(), 4u) << "the bundled deployers in " << deployerDir();
  for (const auto& module : modules) {
    const auto extra = unexpectedExports(module, PLUGBOARD_DEPLOYER_ALIAS_NAME);
    std::string listed;
    for (const auto& s : extra) listed += "\n  " + s;
    EXPECT_TRUE(extra.empty()) << module << " exports" << listed;
  }
}

TEST(SymbolsTest, PluginsExportOnlyTheirEntryPoint) {
  const auto modules = modulesIn(pluginDir());
  ASSERT_GE(modules.size(), 6u) << "the bundled plugins in " << pluginDir();
  for (const auto& module : modules) {
    const auto extra = unexpectedExports(module, PLUGBOARD_ENTRY_ALIAS_NAME);
    std::string listed;
    for (const auto& s : extra) listed += "\n  " + s;
    EXPECT_TRUE(extra.empty()) << module << " exports" << listed;
  }
}

}  // namespace
}  // namespace plugboard::testing
