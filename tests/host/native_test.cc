// The host kit's native loader, on its own (no runtime core linked): loading, calling,
// logging, unloading, and each way a file can be refused.
#include "plugboard/host/native.h"

#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/cancel.h"
#include "tests/support/files.h"
#include "tests/support/paths.h"

namespace plugboard::host {
namespace {

using nlohmann::json;
using plugboard::testing::fixture;
using plugboard::testing::isMapped;
using plugboard::testing::plugin;

std::shared_ptr<NativeLibrary> mustLoad(const std::filesystem::path& file) {
  auto lib = NativeLibrary::load(file);
  EXPECT_TRUE(lib.ok()) << lib.error().message();
  return lib.ok() ? *lib : nullptr;
}

std::string loadError(const std::filesystem::path& file, const std::string& name = "") {
  auto lib = NativeLibrary::load(file, name);
  return lib.ok() ? "loaded" : lib.error().message();
}

TEST(NativeTest, LoadsAndCallsAPluginGivingItsManifestAndResultText) {
  auto lib = mustLoad(plugin("hello"));
  ASSERT_TRUE(lib);
  EXPECT_EQ(lib->abiVersion(), "1.1");
  EXPECT_EQ(lib->name(), "hello");
  EXPECT_EQ(json::parse(lib->manifestText())["name"], "hello");
  auto instance = lib->createInstance();
  ASSERT_TRUE(instance.ok()) << instance.error().message();
  const auto result = json::parse((*instance)->execute(1, R"({"args":{"name":"Ada"}})"));
  EXPECT_EQ(result["phase"], "Succeeded") << result;
  EXPECT_EQ(result["outputs"]["parameters"]["greeting"], "Hello, Ada!");
}

TEST(NativeTest, RoutesThePluginsLogLinesToTheCallersFunction) {
  auto lib = mustLoad(plugin("hello"));
  ASSERT_TRUE(lib);
  std::mutex mu;
  std::vector<std::pair<int, std::string>> lines;
  auto instance = lib->createInstance("{}", [&](int level, std::string_view text) {
    std::lock_guard lock(mu);
    lines.emplace_back(level, std::string(text));
  });
  ASSERT_TRUE(instance.ok());
  (*instance)->execute(1, R"({"args":{"name":"Grace"}})");
  std::lock_guard lock(mu);
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0].first, PLUGBOARD_LOG_INFO);
  EXPECT_EQ(lines[0].second, "greeting Grace");
}

TEST(NativeTest, UnmapsTheLibraryAfterTheLastInstanceIsGone) {
  const auto file = plugin("echo");
  ASSERT_FALSE(isMapped(file));
  auto lib = mustLoad(file);
  ASSERT_TRUE(lib);
  auto instance = lib->createInstance();
  ASSERT_TRUE(instance.ok());
  lib.reset();  // the instance still holds the library
  EXPECT_TRUE(isMapped(file));
  instance->reset();
  EXPECT_FALSE(isMapped(file));
}

TEST(NativeTest, CancelEndsARunningCall) {
  auto lib = mustLoad(plugin("sleep"));
  ASSERT_TRUE(lib);
  auto instance = lib->createInstance();
  ASSERT_TRUE(instance.ok());
  const auto result = json::parse(plugboard::testing::cancelWhileRunning(
      [&] { return (*instance)->execute(9, R"({"args":{"seconds":60}})"); },
      [&] { (*instance)->cancel(9); }));
  EXPECT_EQ(result["phase"], "Error");
  EXPECT_EQ(result["message"], "cancelled while sleeping");
}

TEST(NativeTest, RefusesAnotherAbiMajorNamingBothVersions) {
  EXPECT_NE(loadError(fixture("abi_future"), "future")
                .find("Wrong ABI version on plugin 'future' (" + fixture("abi_future").string() +
                      "). Got version 2.0, supported version is 1.1."),
            std::string::npos);
  // Without a name, the file alone names it.
  EXPECT_NE(loadError(fixture("abi_future"))
                .find("Wrong ABI version on plugin (" + fixture("abi_future").string()),
            std::string::npos);
}

TEST(NativeTest, RefusesANewerAbiMinor) {
  EXPECT_NE(
      loadError(fixture("abi_newer_minor")).find("needs ABI 1.9, this runtime supports up to 1.1"),
      std::string::npos);
}

TEST(NativeTest, RefusesAFileWithoutTheEntryPoint) {
  const auto error = loadError(fixture("no_entry"));
  EXPECT_NE(
      error.find("entry point 'plugboard_entry_v1' not found. Was it built with PLUGBOARD_PLUGIN"),
      std::string::npos)
      << error;
}

TEST(NativeTest, RefusesADeployerModuleAsAPlugin) {
  const auto error = loadError(plugboard::testing::deployerDir() / "native.so");
  EXPECT_NE(error.find("entry point 'plugboard_entry_v1' not found"), std::string::npos) << error;
}

TEST(NativeTest, ReportsTheDynamicLoadersErrorForAnUnloadableOrMissingFile) {
  plugboard::testing::TempDir dir;
  plugboard::testing::writeFile(dir / "junk.so", "junk");
  const auto junk = loadError(dir / "junk.so");
  EXPECT_NE(junk.find("cannot load"), std::string::npos) << junk;
  const auto missing = loadError("/nonexistent/plugin.so");
  EXPECT_NE(missing.find("plugin (/nonexistent/plugin.so): cannot load: /nonexistent/plugin.so"),
            std::string::npos)
      << missing;
}

TEST(NativeTest, QuotesThePluginsReasonWhenItRefusesToStart) {
  auto lib = mustLoad(fixture("scripted"));
  ASSERT_TRUE(lib);
  auto instance = lib->createInstance("{not json");  // the SDK refuses it
  ASSERT_FALSE(instance.ok());
  EXPECT_NE(instance.error().message().find("plugin 'scripted' refused to start: "),
            std::string::npos)
      << instance.error().message();
}

}  // namespace
}  // namespace plugboard::host
