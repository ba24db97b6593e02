// The SDK as a third party uses it: installed with `cmake --install`, found with
// find_package(plugboard), a plugin built with plugboard_add_plugin() and a deployer
// built with plugboard_add_deployer() and the host kit, both out of the tree.
#include <sstream>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/files.h"
#include "tests/support/paths.h"
#include "tests/support/run_report.h"
#include "tests/support/sdk_project.h"
#include "tests/support/subprocess.h"

namespace plugboard::testing {
namespace {

TEST(SdkInstallTest, AnOutOfTreePluginBuildsAgainstTheInstalledSdkAndRuns) {
  TempDir tmp;
  const auto prefix = tmp / "prefix";
  const auto build = tmp / "build";
  auto installed = installBuild(prefix);
  ASSERT_EQ(installed.exit_code, 0) << installed.out << installed.err;
  ASSERT_TRUE(std::filesystem::exists(prefix / "include/plugboard/sdk.hpp"));
  // Everything lands under the prefix: the package's /etc/plugboard/plugboard.toml is the
  // package's only (an absolute path would write this machine's /etc).
  std::istringstream lines(installed.out);
  for (std::string line; std::getline(lines, line);) {
    for (const std::string verb : {"-- Installing: ", "-- Up-to-date: "}) {
      if (line.starts_with(verb))
        EXPECT_TRUE(line.substr(verb.size()).starts_with(prefix.string())) << line;
    }
  }

  auto built = buildProject(sourceDir() / "examples/out-of-tree-plugin", build, prefix);
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

  auto called = run(
      {plugboard, "call", "shout", "--plugins", build.string(), "--args", R"({"text":"hello"})"});
  ASSERT_EQ(called.exit_code, 0) << called.err;
  EXPECT_EQ(called.out, "Succeeded\n  text = HELLO!\n");

  // A deployer of a new artifact kind, built against the installed SDK and host kit,
  // runs the plugin for a workflow step that names it.
  EXPECT_TRUE(std::filesystem::exists(prefix / "include/plugboard/host/native.h"));
  EXPECT_TRUE(std::filesystem::exists(prefix / "lib/libplugboard_host.a"));
  const auto deployers = tmp / "deployers";
  auto deployer_built =
      buildProject(sourceDir() / "examples/out-of-tree-deployer", deployers, prefix);
  ASSERT_EQ(deployer_built.exit_code, 0) << deployer_built.out << deployer_built.err;
  ASSERT_TRUE(std::filesystem::exists(deployers / "wrapped.so"));
  // The kit it links stays out of its dynamic symbol table.
  auto exported = run({"nm", "-D", "--defined-only", (deployers / "wrapped.so").string()});
  EXPECT_NE(exported.out.find("plugboard_deployer_v1"), std::string::npos) << exported.out;
  EXPECT_EQ(exported.out.find("9plugboard4host"), std::string::npos) << exported.out;

  const auto registry = tmp.write("registry.toml", "[plugins.shout.\"0.1.0\"]\nwrapped = \"" +
                                                       (build / "shout.so").string() + "\"\n");
  const auto workflow = tmp.write("wf.toml", R"(
name = "wrapped"
[[steps]]
id = "loud"
plugin = "shout"
deploy = "wrapped"
args = { text = "wrapped" }
)");
  std::filesystem::create_directory(tmp / "no-plugins");  // shout is the registry's only
  auto ran =
      run({plugboard, "run", workflow, "--registry", registry, "--deployers", deployers.string(),
           "--plugins", (tmp / "no-plugins").string(), "--output", "json"});
  ASSERT_EQ(ran.exit_code, 0) << ran.out << ran.err;
  const auto step = reportStep(nlohmann::json::parse(ran.out), "loud");
  EXPECT_EQ(step["phase"], "Succeeded") << ran.out;
  EXPECT_EQ(step["outputs"]["parameters"]["text"], "WRAPPED!") << ran.out;
}

}  // namespace
}  // namespace plugboard::testing
