#include "core/loader.h"

#include <sstream>

#include <gtest/gtest.h>
#include <spdlog/sinks/ostream_sink.h>
#include <spdlog/spdlog.h>

#include "tests/support/files.h"
#include "tests/support/paths.h"

namespace plugboard::core {
namespace {

using plugboard::testing::fixture;
using plugboard::testing::isMapped;
using plugboard::testing::plugin;

std::shared_ptr<PluginLibrary> mustLoad(const std::filesystem::path& file) {
  auto lib = PluginLibrary::load(file);
  EXPECT_TRUE(lib.ok()) << lib.error().message();
  return lib.ok() ? *lib : nullptr;
}

std::string loadError(const std::filesystem::path& file) {
  auto lib = PluginLibrary::load(file);
  return lib.ok() ? "loaded" : lib.error().message();
}

TEST(LoaderTest, LoadsAndCallsAPlugin) {
  auto lib = mustLoad(plugin("hello"));
  ASSERT_TRUE(lib);
  EXPECT_EQ(lib->abiVersion(), "1.0");
  auto instance = lib->createInstance();
  ASSERT_TRUE(instance.ok()) << instance.error().message();
  auto outcome = (*instance)->call({{"rpc", "template.execute"}, {"args", {{"name", "Ada"}}}});
  EXPECT_EQ(outcome.phase, Phase::kSucceeded) << outcome.message;
  EXPECT_EQ(outcome.outputs["parameters"]["greeting"], "Hello, Ada!");
}

TEST(LoaderTest, UnmapsTheLibraryAfterTheLastInstanceIsGone) {
  const auto file = plugin("echo");
  ASSERT_FALSE(isMapped(file));
  auto lib = mustLoad(file);
  ASSERT_TRUE(lib);
  auto instance = lib->createInstance();
  ASSERT_TRUE(instance.ok());
  EXPECT_TRUE(isMapped(file));
  lib.reset();  // the instance still holds the library
  EXPECT_TRUE(isMapped(file));
  EXPECT_EQ((*instance)->call({{"args", {{"a", "b"}}}}).phase, Phase::kSucceeded);
  instance->reset();
  EXPECT_FALSE(isMapped(file));
}

TEST(LoaderTest, ForwardsPluginLogsTaggedWithItsName) {
  std::ostringstream captured;
  auto previous = spdlog::default_logger();
  auto logger = std::make_shared<spdlog::logger>(
      "capture", std::make_shared<spdlog::sinks::ostream_sink_mt>(captured));
  logger->set_level(spdlog::level::info);
  spdlog::set_default_logger(logger);
  auto lib = mustLoad(plugin("hello"));
  auto instance = lib->createInstance();
  ASSERT_TRUE(instance.ok());
  (*instance)->call({{"args", {{"name", "Grace"}}}});
  spdlog::set_default_logger(previous);
  EXPECT_NE(captured.str().find("[hello] greeting Grace"), std::string::npos) << captured.str();
}

TEST(LoaderTest, AThrowingPluginGivesAnErrorNamingIt) {
  auto lib = mustLoad(fixture("throws"));
  ASSERT_TRUE(lib);
  auto instance = lib->createInstance();
  ASSERT_TRUE(instance.ok());
  auto outcome = (*instance)->call({{"args", nullptr}});
  EXPECT_EQ(outcome.phase, Phase::kError);
  EXPECT_EQ(outcome.message, "plugin 'throws' threw: the disk is on fire");
}

TEST(LoaderTest, RefusesAnotherAbiMajorNamingBothVersions) {
  // The catalog would refuse this file before loading; load it anyway through the
  // manifest in its section to exercise the loader's own check.
  auto section = readPluginFile(fixture("abi_future"));
  ASSERT_FALSE(section.ok());
  auto manifest = parseManifest(
      R"({"name":"future","version":"1.0.0","provides":["template.execute"],"kind":"executor","abi":2})");
  auto lib = PluginLibrary::load(fixture("abi_future"), &*manifest);
  ASSERT_FALSE(lib.ok());
  EXPECT_NE(lib.error().message().find(
                "Wrong ABI version on plugin 'future' (" + fixture("abi_future").string() +
                "). Got version 2.0, supported version is 1.0."),
            std::string::npos)
      << lib.error().message();
}

TEST(LoaderTest, RefusesAManifestThatDiffersFromTheSection) {
  EXPECT_NE(loadError(fixture("mismatch")).find("differs from the one in its .plugboard section"),
            std::string::npos);
}

}  // namespace
}  // namespace plugboard::core
