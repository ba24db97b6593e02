#include "core/launch/registry.h"

#include <gtest/gtest.h>

#include "tests/support/paths.h"

namespace plugboard::core {
namespace {

constexpr const char* kRegistry = R"(
[plugins.sysbench."1.2.0"]
native    = "lib/sysbench.so"
python    = { module = "sysbench_plugin", path = "python/" }
container = { image = "localhost/sysbench:1.2.0" }

[plugins.sysbench."1.10.0"]
container = { image = "localhost/sysbench:1.10.0" }

[plugins.sysbench."2.0.0-rc.1"]
native = "/opt/sysbench-2.so"
)";

Registry registry() {
  auto r = Registry::parse(kRegistry, "/etc/plugboard/registry.toml");
  EXPECT_TRUE(r.ok()) << r.error().message();
  return *r;
}

TEST(RegistryTest, MapsEachVersionToItsArtifactsWithPathsRelativeToTheFile) {
  auto e = registry().resolve("sysbench", "1.2.0");
  ASSERT_TRUE(e.ok()) << e.error().message();
  EXPECT_EQ(e->artifacts.at("native"), Json({{"path", "/etc/plugboard/lib/sysbench.so"}}));
  EXPECT_EQ(e->artifacts.at("python"), Json({{"module", "sysbench_plugin"}, {"path", "/etc/plugboard/python/"}}));
  EXPECT_EQ(e->artifacts.at("container"), Json({{"image", "localhost/sysbench:1.2.0"}}));
}

TEST(RegistryTest, ResolvesExactVersionsPrefixesAndTheHighest) {
  const Registry r = registry();
  EXPECT_EQ(r.resolve("sysbench", "")->version.text(), "2.0.0-rc.1");
  EXPECT_EQ(r.resolve("SysBench", "1")->version.text(), "1.10.0");
  EXPECT_EQ(r.resolve("sysbench", "1.2")->version.text(), "1.2.0");
  EXPECT_EQ(r.resolve("sysbench", "3").error().message(),
            "no version of 'sysbench' matches '3' (registered: 2.0.0-rc.1, 1.10.0, 1.2.0)");
  EXPECT_EQ(r.resolve("nope", "").error().message(),
            "'nope' is neither in the registry nor in the plugin directories");
}

TEST(RegistryTest, PluginsInPluginDirectoriesActAsNativeEntries) {
  auto catalog = Catalog::scan({plugboard::testing::pluginDir()});
  auto e = registry().resolve("hello", "1", &catalog);
  ASSERT_TRUE(e.ok()) << e.error().message();
  EXPECT_EQ(e->version.text(), "1.2.0");
  EXPECT_EQ(e->artifacts.size(), 1u);
  EXPECT_EQ(e->artifacts.at("native")["path"], plugboard::testing::plugin("hello").string());
}

TEST(RegistryTest, NamesTheFileLineAndProblem) {
  auto error = [](const char* text) {
    auto r = Registry::parse(text, "reg.toml");
    return r.ok() ? std::string("ok") : r.error().message();
  };
  EXPECT_EQ(error("plugin = {}"), "reg.toml:1:1: 'plugin' is not a registry key (expected plugins)");
  EXPECT_EQ(error("[plugins.x.\"one\"]\nnative = \"x.so\""),
            "reg.toml:1:12: plugins.x: invalid version 'one': expected MAJOR.MINOR.PATCH, e.g. 1.2.0");
  EXPECT_EQ(error("[plugins.x.\"1.0.0\"]\nnative = 5"), "reg.toml:2:10: x@1.0.0: artifact 'native' must be a path or a table");
  EXPECT_NE(error("[plugins.x.\"1.0.0\"]\n").find("must be a table of artifacts by deployer kind"), std::string::npos);
}

}  // namespace
}  // namespace plugboard::core
