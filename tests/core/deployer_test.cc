// Deployer modules through the real native deployer .so: discovery without loading,
// option checks, plugins opened through a deployer and called like in-process ones.
#include "core/launch/deployer.h"

#include <gtest/gtest.h>

#include "tests/support/files.h"
#include "tests/support/paths.h"

namespace plugboard::core {
namespace {

using plugboard::testing::deployerDir;
using plugboard::testing::plugin;
using plugboard::testing::pluginDir;

TEST(DeployerTest, DeployerDirectoriesAreScannedLikePluginDirectories) {
  auto deployers = Catalog::scan({deployerDir()}, {}, "deployer");
  const CatalogEntry* native = deployers.find("native");
  ASSERT_NE(native, nullptr);
  EXPECT_EQ(native->manifest.kind, "deployer");
  EXPECT_EQ(native->manifest.deploys, std::vector<std::string>{"native"});
  EXPECT_TRUE(native->manifest.config.contains("config"));
  // Each kind of module belongs in its own kind of directory.
  auto as_plugins = Catalog::scan({deployerDir()});
  EXPECT_EQ(as_plugins.find("native"), nullptr);
  ASSERT_FALSE(as_plugins.problems().empty());
  EXPECT_NE(as_plugins.problems()[0].message.find("is a deployer module, not a plugin"), std::string::npos);
  auto as_deployers = Catalog::scan({pluginDir()}, {}, "deployer");
  EXPECT_TRUE(as_deployers.entries().empty());
  EXPECT_NE(as_deployers.problems()[0].message.find("is a plugin, not a deployer module"), std::string::npos);
}

TEST(DeployerTest, ADeployerBuiltForAnotherAbiIsRefusedAndTheOthersKeepWorking) {
  plugboard::testing::TempDir dir;
  plugboard::testing::copyWithEdit(deployerDir() / "native.so", dir.path() / "native.so", "\"abi\":1}", "\"abi\":2}");
  std::filesystem::create_symlink(deployerDir() / "process.so", dir.path() / "process.so");
  DeployerSet set(Catalog::scan({dir.path()}, {}, "deployer"), {});
  EXPECT_EQ(set.find("native"), nullptr);
  ASSERT_EQ(set.catalog().problems().size(), 1u);
  EXPECT_EQ(set.catalog().problems()[0].message,
            "deployer 'native' was built for plugboard ABI 2, this runtime supports ABI 1; rebuild it against this SDK");
  ASSERT_NE(set.find("process"), nullptr);
  auto module = set.module(*set.find("process"));
  ASSERT_TRUE(module.ok()) << module.error().message();
  auto handle = (*module)->open({{"path", plugin("hello").string()}});
  ASSERT_TRUE(handle.ok()) << handle.error().message();
  EXPECT_EQ((*handle)->callText(R"({"rpc":"template.execute","key":"hello","via":"name","args":{"name":"Ada"}})",
                                (*handle)->newCallId())
                .phase,
            Phase::kSucceeded);
}

TEST(DeployerTest, OpensAPluginThroughTheNativeDeployerAndCallsIt) {
  DeployerSet set(Catalog::scan({deployerDir()}, {}, "deployer"), {});
  auto kinds = set.forKind("native");
  ASSERT_FALSE(kinds.empty());
  auto module = set.module(*kinds[0]);
  ASSERT_TRUE(module.ok()) << module.error().message();
  auto handle = (*module)->open({{"path", plugin("hello").string()}});
  ASSERT_TRUE(handle.ok()) << handle.error().message();
  EXPECT_EQ((*handle)->manifest().name, "hello");
  Outcome o = (*handle)->callText(R"({"rpc":"template.execute","key":"hello","via":"name","args":{"name":"Ada"}})",
                                  (*handle)->newCallId());
  EXPECT_EQ(o.phase, Phase::kSucceeded) << o.message;
  EXPECT_EQ(o.outputs["parameters"]["greeting"], "Hello, Ada!");
}

TEST(DeployerTest, OpenFailuresNameTheDeployerAndTheCause) {
  DeployerSet set(Catalog::scan({deployerDir()}, {}, "deployer"), {});
  auto module = set.module(*set.find("native"));
  ASSERT_TRUE(module.ok());
  auto missing = (*module)->open({{"path", "/nonexistent/x.so"}});
  ASSERT_FALSE(missing.ok());
  EXPECT_NE(missing.error().message().find("deployer 'native' could not start"), std::string::npos);
  EXPECT_NE(missing.error().message().find("/nonexistent/x.so"), std::string::npos);
  auto no_path = (*module)->open(Json::object());
  ASSERT_FALSE(no_path.ok());
  EXPECT_NE(no_path.error().message().find("no 'path'"), std::string::npos) << no_path.error().message();
  auto bad_option = (*module)->open({{"path", plugin("hello").string()}}, {{"memory", "1G"}});
  ASSERT_FALSE(bad_option.ok());
  EXPECT_EQ(bad_option.error().message(), "deployer 'native' has no option 'memory' (it takes: config)");
}

TEST(DeployerTest, ChecksOptionsAgainstTheManifest) {
  auto m = parseManifest(R"({"kind":"deployer","name":"d","version":"1.0.0","abi":1,"deploys":["x"],
      "config":{"memory":{"type":"size"},"cpu":{"type":"duration"},"env":{"type":"string-map"},
                "args":{"type":"string-list"},"n":{"type":"integer"}}})");
  ASSERT_TRUE(m.ok()) << m.error().message();
  EXPECT_TRUE(checkDeployerOptions(*m, {{"memory", "256M"}, {"cpu", "2s"}, {"env", {{"A", "1"}}},
                                        {"args", {"a", "b"}}, {"n", 3}})
                  .ok());
  EXPECT_TRUE(checkDeployerOptions(*m, {{"memory", 1048576}}).ok());
  EXPECT_EQ(checkDeployerOptions(*m, {{"memory", "lots"}}).error().message(),
            "deployer 'd' option 'memory' must be a size such as 256M or a number of bytes, got \"lots\"");
  EXPECT_EQ(checkDeployerOptions(*m, {{"cpu", "soon"}}).error().message(),
            "deployer 'd' option 'cpu' must be a duration such as 30s, got \"soon\"");
  EXPECT_EQ(checkDeployerOptions(*m, {{"env", {{"A", 1}}}}).error().message(),
            "deployer 'd' option 'env' must be a table of strings, got {\"A\":1}");
  EXPECT_FALSE(checkDeployerOptions(*m, {{"n", "3"}}).ok());
}

TEST(DeployerTest, ADeployerManifestMustSayWhatItDeploys) {
  auto m = parseManifest(R"({"kind":"deployer","name":"d","version":"1.0.0","abi":1})");
  ASSERT_FALSE(m.ok());
  EXPECT_EQ(m.error().message(), "manifest of deployer 'd' has no 'deploys' (the artifact kinds it deploys)");
  auto bad_config = parseManifest(R"({"kind":"deployer","name":"d","version":"1.0.0","abi":1,"deploys":["x"],
      "config":{"memory":{"type":"bytes"}}})");
  ASSERT_FALSE(bad_config.ok());
  EXPECT_NE(bad_config.error().message().find("config key 'memory'"), std::string::npos);
}

}  // namespace
}  // namespace plugboard::core
