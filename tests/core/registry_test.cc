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

// A name@version that a plugin directory and the registry both have is one plugin: the
// directory's file is its native artifact, beside the registry's other kinds.
TEST(RegistryTest, BothSourcesOfANameAndVersionAreOnePlugin) {
  auto catalog = Catalog::scan({plugboard::testing::pluginDir()});
  auto r = Registry::parse(R"(
[plugins.hello."1.2.0"]
python = { path = "hello.py" }
container = { image = "localhost/hello:1.2.0" }
)", "/srv/registry.toml");
  ASSERT_TRUE(r.ok()) << r.error().message();
  for (const std::string version : {"", "1", "1.2.0"}) {
    auto e = r->resolve("hello", version, &catalog);
    ASSERT_TRUE(e.ok()) << e.error().message();
    EXPECT_EQ(e->version.text(), "1.2.0");
    ASSERT_EQ(e->artifacts.size(), 3u) << version;
    EXPECT_EQ(e->artifacts.at("native")["path"], plugboard::testing::plugin("hello").string());
    EXPECT_EQ(e->artifacts.at("python")["path"], "/srv/hello.py");
    EXPECT_EQ(e->artifacts.at("container")["image"], "localhost/hello:1.2.0");
  }
  // Without the catalog, the registry's artifacts alone.
  EXPECT_EQ(r->resolve("hello", "")->artifacts.count("native"), 0u);
  // A plugin file under another path (serve's private copy) is the native artifact.
  const CatalogEntry* hello = catalog.find("hello");
  ASSERT_NE(hello, nullptr);
  const RegistryEntry merged = r->withPluginFile(*hello, "/run/copy/7-hello.so");
  EXPECT_EQ(merged.artifacts.at("native")["path"], "/run/copy/7-hello.so");
  EXPECT_EQ(merged.artifacts.at("python")["path"], "/srv/hello.py");
}

// The conflict rule: when both have a native artifact, the plugin directory's file wins.
TEST(RegistryTest, ThePluginDirectorysFileWinsOverARegistryNativeArtifactOfTheSameVersion) {
  auto catalog = Catalog::scan({plugboard::testing::pluginDir()});
  auto r = Registry::parse(R"(
[plugins.hello."1.2.0"]
native = "/opt/other/hello.so"
python = { path = "hello.py" }
)", "/srv/registry.toml");
  ASSERT_TRUE(r.ok()) << r.error().message();
  auto e = r->resolve("hello", "1.2.0", &catalog);
  ASSERT_TRUE(e.ok()) << e.error().message();
  EXPECT_EQ(e->artifacts.at("native")["path"], plugboard::testing::plugin("hello").string());
  EXPECT_EQ(e->artifacts.at("python")["path"], "/srv/hello.py");
  // With no plugin file of that version, the registry's native artifact stands.
  EXPECT_EQ(r->resolve("hello", "1.2.0")->artifacts.at("native")["path"], "/opt/other/hello.so");
}

// Versions are resolved over both sources: the highest match of either.
TEST(RegistryTest, VersionsAreResolvedOverBothSources) {
  auto catalog = Catalog::scan({plugboard::testing::pluginDir()});  // hello 1.2.0
  auto r = Registry::parse(R"(
[plugins.hello."1.3.0"]
python = { path = "hello-1.3.py" }
[plugins.hello."1.1.0"]
python = { path = "hello-1.1.py" }
)", "/srv/registry.toml");
  ASSERT_TRUE(r.ok()) << r.error().message();
  auto highest = r->resolve("hello", "", &catalog);
  ASSERT_TRUE(highest.ok());
  EXPECT_EQ(highest->version.text(), "1.3.0");
  EXPECT_EQ(highest->artifacts.count("native"), 0u);
  auto one_two = r->resolve("hello", "1.2", &catalog);
  ASSERT_TRUE(one_two.ok()) << one_two.error().message();
  EXPECT_EQ(one_two->version.text(), "1.2.0");
  EXPECT_EQ(one_two->artifacts.size(), 1u);
  EXPECT_EQ(r->resolve("hello", "1.1", &catalog)->artifacts.at("python")["path"],
            "/srv/hello-1.1.py");
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
