// serve's live runtime in-process (core/routing/live_runtime.h through openLiveRuntime()):
// generations, draining of an old version while a call holds it, and a broken change that
// leaves the previous version serving. reload() is called directly instead of waiting for
// the watcher.
#include "core/routing/live_runtime.h"

#include <gtest/gtest.h>

#include "core/runtime/runtime.h"
#include "tests/support/files.h"
#include "tests/support/paths.h"

namespace plugboard::core {
namespace {

namespace fs = std::filesystem;
using plugboard::testing::copyWithEdit;
using plugboard::testing::plugin;
using plugboard::testing::TempDir;

Outcome callHello(Dispatcher& dispatcher) {
  DispatchRequest request;
  request.key = "hello";
  request.args = {{"name", "Ada"}};
  CallControl control;
  return dispatcher.dispatch(request, control).outcome;
}

TEST(LiveRuntimeTest, AChangedPluginIsANewGenerationAndTheOldOneDrainsWhileHeld) {
  TempDir dir;
  fs::create_directory(dir / "plugins");
  fs::copy_file(plugin("hello"), dir / "plugins/hello.so");
  Config config;
  config.plugin_dirs = {dir / "plugins"};
  config.deployer_dirs = {plugboard::testing::deployerDir()};
  auto runtime = openLiveRuntime(config);
  ASSERT_TRUE(runtime.ok()) << runtime.error().message();
  ASSERT_TRUE((*runtime)->start(/*watch=*/true).ok());
  LiveRuntime& live = **runtime;

  std::shared_ptr<Dispatcher> old = live.current();
  const std::string version = old->catalog().find("hello")->manifest.version.text();
  EXPECT_EQ(callHello(*old).phase, Phase::kSucceeded);

  // A new version replaces the file: a new generation serves it; the old one drains while
  // something (a call in flight) holds it.
  const std::string newer = version.substr(0, version.size() - 1) + "9";
  copyWithEdit(plugin("hello"), dir / "plugins/hello.new", "\"version\":\"" + version + "\"",
               "\"version\":\"" + newer + "\"");
  fs::rename(dir / "plugins/hello.new", dir / "plugins/hello.so");
  live.reload();
  std::shared_ptr<Dispatcher> next = live.current();
  ASSERT_NE(next, old);
  EXPECT_EQ(next->catalog().find("hello")->manifest.version.text(), newer);
  EXPECT_EQ(callHello(*next).phase, Phase::kSucceeded);
  EXPECT_EQ(live.draining(), std::vector<std::string>{"hello@" + version});
  old.reset();
  EXPECT_TRUE(live.draining().empty());

  // A broken change is reported, and the version before keeps serving.
  plugboard::testing::writeFile(dir / "plugins/hello.so", "not a plugin");
  live.reload();
  std::shared_ptr<Dispatcher> after = live.current();
  ASSERT_NE(after->catalog().find("hello"), nullptr);
  EXPECT_EQ(after->catalog().find("hello")->manifest.version.text(), newer);
  ASSERT_EQ(after->catalog().problems().size(), 1u);
  EXPECT_NE(after->catalog().problems()[0].message.find("not"), std::string::npos);
  EXPECT_EQ(callHello(*after).phase, Phase::kSucceeded);
  live.stop();
}

}  // namespace
}  // namespace plugboard::core
