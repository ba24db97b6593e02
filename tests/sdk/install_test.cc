// The SDK as a third party uses it: installed with `cmake --install`, found with
// find_package(plugboard), a plugin built with plugboard_add_plugin() out of the tree.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/files.h"
#include "tests/support/paths.h"
#include "tests/support/subprocess.h"

namespace plugboard::testing {
namespace {

TEST(SdkInstallTest, AnOutOfTreePluginBuildsAgainstTheInstalledSdkAndRuns) {
  TempDir tmp;
  const auto prefix = tmp / "prefix";
  const auto build = tmp / "build";
  auto installed = run({PLUGBOARD_CMAKE, "--install", buildDir().string(), "--prefix",
                        prefix.string()});
  ASSERT_EQ(installed.exit_code, 0) << installed.out << installed.err;
  ASSERT_TRUE(std::filesystem::exists(prefix / "include/plugboard/sdk.hpp"));

  auto configured = run({PLUGBOARD_CMAKE, "-S", (sourceDir() / "examples/out-of-tree-plugin").string(),
                         "-B", build.string(), "-G", "Ninja", "-DCMAKE_BUILD_TYPE=Release",
                         "-DCMAKE_PREFIX_PATH=" + prefix.string()});
  ASSERT_EQ(configured.exit_code, 0) << configured.out << configured.err;
  auto built = run({PLUGBOARD_CMAKE, "--build", build.string()});
  ASSERT_EQ(built.exit_code, 0) << built.out << built.err;
  ASSERT_TRUE(std::filesystem::exists(build / "shout.so"));

  // The installed plugin must not carry STB_GNU_UNIQUE symbols, or it could never unload.
  auto symbols = run({"readelf", "-sW", (build / "shout.so").string()});
  EXPECT_EQ(symbols.out.find("UNIQUE"), std::string::npos);

  const std::string plugboard = (prefix / "bin/plugboard").string();
  auto listed = run({plugboard, "plugins", "list", "--plugins", build.string(), "--json"});
  ASSERT_EQ(listed.exit_code, 0) << listed.err;
  auto doc = nlohmann::json::parse(listed.out);
  ASSERT_EQ(doc["plugins"].size(), 1u) << listed.out;
  EXPECT_EQ(doc["plugins"][0]["name"], "shout");
  EXPECT_EQ(doc["plugins"][0]["state"], "available");

  auto loaded = run({plugboard, "inspect", (build / "shout.so").string(), "--load"});
  EXPECT_EQ(loaded.exit_code, 0) << loaded.out << loaded.err;

  auto called = run({plugboard, "call", "shout", "--plugins", build.string(), "--args",
                     R"({"text":"hello"})"});
  ASSERT_EQ(called.exit_code, 0) << called.err;
  EXPECT_EQ(called.out, "Succeeded\n  text = HELLO!\n");
}

}  // namespace
}  // namespace plugboard::testing
