// serve's live runtime in-process (core/routing/live_runtime.h through openLiveRuntime()):
// generations, draining of an old version while a call holds it, and a broken change that
// leaves the previous version serving; the watcher's debounce on virtual time (a
// ManualClock), with takeChanges() called as serve's main thread calls it: no sleeps.
#include "core/routing/live_runtime.h"

#include <poll.h>

#include <gtest/gtest.h>

#include "core/base/clock.h"
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

// A live runtime, not started, over dir/plugins holding a copy of hello.so.
Expected<std::unique_ptr<LiveRuntime>> helloRuntime(const fs::path& dir) {
  fs::create_directory(dir / "plugins");
  fs::copy_file(plugin("hello"), dir / "plugins/hello.so");
  Config config;
  config.plugin_dirs = {dir / "plugins"};
  config.deployer_dirs = {plugboard::testing::deployerDir()};
  return openLiveRuntime(config);
}

TEST(LiveRuntimeTest, AChangedPluginIsANewGenerationAndTheOldOneDrainsWhileHeld) {
  TempDir dir;
  auto runtime = helloRuntime(dir.path());
  ASSERT_TRUE(runtime.ok()) << runtime.error().message();
  ManualClock clock;
  ASSERT_TRUE((*runtime)->start(clock).ok());
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

// Whether the runtime's descriptor is readable now (what serve's main thread waits for).
bool readable(const LiveRuntime& live) {
  pollfd fd{live.watchDescriptor(), POLLIN, 0};
  return ::poll(&fd, 1, 0) == 1;
}

// A change is applied once the directories were quiet for the debounce, timed on the clock
// the runtime was given: each change restarts it, and nothing is applied before it fires.
TEST(LiveRuntimeTest, ChangesAreAppliedOnceQuietForTheDebounceOnTheGivenClock) {
  TempDir dir;
  auto runtime = helloRuntime(dir.path());
  ASSERT_TRUE(runtime.ok()) << runtime.error().message();
  LiveRuntime& live = **runtime;
  ManualClock clock;
  const Millis debounce(200);
  ASSERT_TRUE(live.start(clock, debounce).ok());
  ASSERT_GE(live.watchDescriptor(), 0);
  EXPECT_FALSE(readable(live));
  EXPECT_FALSE(live.takeChanges());
  const std::string version = live.current()->catalog().find("hello")->manifest.version.text();

  // inotify queues the events before the rename returns.
  const std::string newer = version.substr(0, version.size() - 1) + "9";
  copyWithEdit(plugin("hello"), dir / "plugins/hello.new", "\"version\":\"" + version + "\"",
               "\"version\":\"" + newer + "\"");
  fs::rename(dir / "plugins/hello.new", dir / "plugins/hello.so");
  EXPECT_TRUE(readable(live));
  EXPECT_FALSE(live.takeChanges());  // the debounce starts
  EXPECT_FALSE(readable(live));
  clock.advance(debounce - Millis(1));
  EXPECT_FALSE(readable(live));
  EXPECT_FALSE(live.takeChanges());
  EXPECT_EQ(live.reloads(), 0);

  // Another change restarts it.
  plugboard::testing::writeFile(dir / "plugins/notes.txt", "not a plugin either");
  EXPECT_FALSE(live.takeChanges());
  clock.advance(Millis(1));  // the first timer's time: it no longer counts
  EXPECT_FALSE(readable(live));
  EXPECT_FALSE(live.takeChanges());
  clock.advance(debounce - Millis(2));
  EXPECT_FALSE(live.takeChanges());
  EXPECT_EQ(live.reloads(), 0);
  EXPECT_EQ(live.current()->catalog().find("hello")->manifest.version.text(), version);

  clock.advance(Millis(1));  // quiet for the whole debounce: due
  EXPECT_TRUE(readable(live));
  EXPECT_TRUE(live.takeChanges());
  EXPECT_EQ(live.reloads(), 1);
  EXPECT_EQ(live.current()->catalog().find("hello")->manifest.version.text(), newer);
  EXPECT_FALSE(live.takeChanges());  // applied once

  // After stop() nothing is watched, and a timer armed before it does nothing.
  plugboard::testing::writeFile(dir / "plugins/more.txt", "x");
  EXPECT_FALSE(live.takeChanges());
  EXPECT_EQ(clock.pending(), 1u);
  live.stop();
  EXPECT_EQ(live.watchDescriptor(), -1);
  EXPECT_FALSE(live.takeChanges());
  clock.advance(debounce * 2);
  EXPECT_EQ(clock.pending(), 0u);
  EXPECT_EQ(live.reloads(), 1);
}

}  // namespace
}  // namespace plugboard::core
