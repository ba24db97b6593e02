// plugboard serve picking up plugin files while it runs.
#include <unistd.h>

#include <atomic>
#include <set>
#include <chrono>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/eventually.h"
#include "tests/support/files.h"
#include "tests/support/live_plugins.h"
#include "tests/support/paths.h"
#include "tests/support/server_process.h"

namespace plugboard::testing {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;
using namespace std::chrono_literals;

class HotLoadTest : public ::testing::Test {
 protected:
  HotLoadTest() {
    fs::permissions(tmp_.path(), fs::perms(0755));
    fs::create_directory(dir());
    fs::permissions(dir(), fs::perms(0755));
    writeFile(tmp_ / "hello-1.3.0.so",
              withEdit(readFile(plugin("hello")), R"("version":"1.2.0")", R"("version":"1.3.0")"));
  }
  fs::path dir() const { return tmp_ / "plugins"; }
  // Installs `from` as dir()/name the way `mv` does: written beside, renamed in.
  void installByMove(const fs::path& from, const std::string& name) {
    fs::copy_file(from, tmp_ / ".staging", fs::copy_options::overwrite_existing);
    fs::rename(tmp_ / ".staging", dir() / name);
  }
  TempDir tmp_;
};

TEST_F(HotLoadTest, InstallsUpgradesDowngradesAndRemoves) {
  ServeProcess serve({"--plugins", dir().string(), "--log-level", "info"});
  HttpClient client(serve.port());
  EXPECT_EQ(answering(client, "hello"), "");
  installByMove(plugin("hello"), "hello.so");                       // install by mv
  ASSERT_TRUE(waitFor(client, "hello", "hello@1.2.0"));
  fs::copy_file(plugin("echo"), dir() / "echo.so");                  // install by cp
  ASSERT_TRUE(waitFor(client, "echo", "echo@1.0.0"));
  installByMove(tmp_ / "hello-1.3.0.so", "hello.so");                // upgrade
  ASSERT_TRUE(waitFor(client, "hello", "hello@1.3.0"));
  installByMove(plugin("hello"), "hello.so");                        // downgrade by replacing
  ASSERT_TRUE(waitFor(client, "hello", "hello@1.2.0"));
  fs::remove(dir() / "hello.so");                                    // delete
  ASSERT_TRUE(waitFor(client, "hello", ""));
  EXPECT_EQ(answering(client, "echo"), "echo@1.0.0");
  serve.stop();
  EXPECT_NE(serve.output().find("plugin 'hello' 1.2.0 -> 1.3.0"), std::string::npos) << serve.output();
  EXPECT_NE(serve.output().find("plugin 'hello' 1.2.0 -> (removed)"), std::string::npos);
}

TEST_F(HotLoadTest, AnotherPluginsFileCopiedOverOneIsARemovalAndAnAddition) {
  installByMove(plugin("echo"), "echo.so");
  ServeProcess serve({"--plugins", dir().string(), "--log-level", "info"});
  HttpClient client(serve.port());
  ASSERT_EQ(answering(client, "echo"), "echo@1.0.0");
  installByMove(plugin("hello"), "echo.so");  // hello's file under echo's name
  ASSERT_TRUE(waitFor(client, "hello", "hello@1.2.0"));
  EXPECT_EQ(answering(client, "echo"), "");
  serve.stop();
  // Not "plugin 'hello' 1.0.0 -> 1.2.0": 1.0.0 was echo's version.
  EXPECT_NE(serve.output().find("plugin 'echo' 1.0.0 -> (removed)"), std::string::npos)
      << serve.output();
  EXPECT_NE(serve.output().find("plugin 'hello' (new) -> 1.2.0"), std::string::npos)
      << serve.output();
  EXPECT_EQ(serve.output().find("plugin 'hello' 1.0.0"), std::string::npos) << serve.output();
}

TEST_F(HotLoadTest, ABrokenReplacementLeavesTheOldVersionServing) {
  installByMove(plugin("hello"), "hello.so");
  ServeProcess serve({"--plugins", dir().string()});
  HttpClient client(serve.port());
  ASSERT_EQ(answering(client, "hello"), "hello@1.2.0");
  writeFile(tmp_ / "broken", readFile(plugin("hello")).substr(0, 5000));  // truncated
  fs::rename(tmp_ / "broken", dir() / "hello.so");
  EXPECT_TRUE(waitForError(client, "truncated ELF file"));
  EXPECT_EQ(answering(client, "hello"), "hello@1.2.0");
  serve.stop();
  EXPECT_NE(serve.output().find("refused: truncated ELF file"), std::string::npos) << serve.output();
  EXPECT_NE(serve.output().find("the previous version keeps serving"), std::string::npos);
}

TEST_F(HotLoadTest, AFileWrittenInPlaceIsPickedUpWhenComplete) {
  installByMove(plugin("hello"), "hello.so");
  ServeProcess serve({"--plugins", dir().string()});
  HttpClient client(serve.port());
  ASSERT_EQ(answering(client, "hello"), "hello@1.2.0");
  const std::string v130 = readFile(tmp_ / "hello-1.3.0.so");
  {
    // Overwrite in place, pausing half-way for longer than the watcher's debounce: 1.2.0
    // keeps answering (nothing reloads before the writer closes the file, and a reload
    // that saw the half-written file would refuse it); the complete file replaces it.
    std::ofstream out(dir() / "hello.so", std::ios::binary | std::ios::trunc);
    out.write(v130.data(), static_cast<std::streamsize>(v130.size() / 2));
    out.flush();
    std::this_thread::sleep_for(300ms);
    EXPECT_EQ(answering(client, "hello"), "hello@1.2.0");
    out.write(v130.data() + v130.size() / 2, static_cast<std::streamsize>(v130.size() - v130.size() / 2));
  }
  EXPECT_TRUE(waitFor(client, "hello", "hello@1.3.0"));
}

TEST_F(HotLoadTest, RefusesAWorldWritableFile) {
  ServeProcess serve({"--plugins", dir().string()});
  HttpClient client(serve.port());
  fs::copy_file(plugin("echo"), tmp_ / "open.so");
  fs::permissions(tmp_ / "open.so", fs::perms(0666));
  fs::rename(tmp_ / "open.so", dir() / "echo.so");
  EXPECT_TRUE(waitForError(client, "file is writable by others (mode 0666)"));
  EXPECT_EQ(answering(client, "echo"), "");
}

TEST_F(HotLoadTest, ADirectoryCreatedLaterIsWatched) {
  const fs::path later = tmp_ / "later";
  ServeProcess serve({"--plugins", later.string()});
  HttpClient client(serve.port());
  fs::create_directory(later);
  fs::permissions(later, fs::perms(0755));
  std::this_thread::sleep_for(200ms);
  fs::copy_file(plugin("echo"), later / "echo.so");
  EXPECT_TRUE(waitFor(client, "echo", "echo@1.0.0"));
}

TEST_F(HotLoadTest, NoWatchLeavesThePluginsAsTheyWereAtTheStart) {
  ServeProcess serve({"--plugins", dir().string(), "--no-watch"});
  HttpClient client(serve.port());
  installByMove(plugin("echo"), "echo.so");
  // A watching server picks a file up 50 ms after it settles (the tests above); this one
  // is given twenty times that.
  std::this_thread::sleep_for(1s);
  EXPECT_EQ(answering(client, "echo"), "");
}

// The line serve starts with names where it picks changes up from: the plugin
// directories, the registry's files, both, or nothing with --no-watch.
TEST_F(HotLoadTest, TheFirstLineSaysWhatIsWatched) {
  installByMove(plugin("hello"), "hello.so");
  writeFile(tmp_ / "registry.toml",
            "[plugins.echo.\"1.0.0\"]\nnative = \"" + plugin("echo").string() + "\"\n");
  const std::string registry = (tmp_ / "registry.toml").string();
  const std::pair<std::vector<std::string>, std::string> cases[] = {
      {{"--plugins", dir().string()}, "1 plugins on ADDRESS, watching the plugin directories\n"},
      {{"--registry", registry}, "1 plugins on ADDRESS, watching the registry's files\n"},
      {{"--plugins", dir().string(), "--registry", registry},
       "2 plugins on ADDRESS, watching the plugin directories and the registry's files\n"},
      {{"--plugins", dir().string(), "--no-watch"}, "1 plugins on ADDRESS\n"},
  };
  for (const auto& [args, line] : cases) {
    ServeProcess serve(args);
    std::string expected = "plugboard: serving " + line;
    expected.replace(expected.find("ADDRESS"), 7,
                     "http://127.0.0.1:" + std::to_string(serve.port()));
    EXPECT_TRUE(serve.waitForOutput(expected)) << serve.output();
    EXPECT_EQ(serve.stop(), 0);
  }
}

TEST_F(HotLoadTest, AnOldVersionIsListedAsDrainingWhileItsCallRuns) {
  installByMove(fixture("scripted"), "scripted.so");
  ServeProcess serve({"--plugins", dir().string(), "--log-level", "info"});
  HttpClient slow(serve.port());
  HttpClient client(serve.port());
  std::string slow_reply;
  std::thread t([&] {
    slow_reply = slow.request("POST", "/api/v1/plugins/scripted/template.execute",
                              R"({"log":"long call started","sleep_ms":1500})")
                     .body;
  });
  EXPECT_TRUE(serve.waitForOutput("long call started")) << serve.output();
  installByMove(fixture("scripted"), "scripted.so");  // a new file: a new version to serve
  const auto draining = [&] {
    const Json list = Json::parse(client.request("GET", "/api/v1/plugins").body);
    for (const auto& p : list["plugins"]) {
      if (p.value("name", "") == "scripted") return p["draining_versions"];
    }
    return Json();
  };
  EXPECT_TRUE(eventually([&] { return draining() == Json::array({"scripted@1.0.0"}); }))
      << draining();
  t.join();
  EXPECT_EQ(Json::parse(slow_reply).value("phase", ""), "Succeeded") << slow_reply;
  EXPECT_TRUE(eventually([&] { return draining() == Json::array(); })) << draining();
}

TEST_F(HotLoadTest, ReloadUnderLoadLosesNoRequestAndUnmapsOldVersions) {
  installByMove(plugin("hello"), "hello.so");
  ServeProcess serve({"--plugins", dir().string()});
  std::atomic<bool> done{false};
  std::atomic<int> ok{0}, failed{0}, strange{0};
  std::vector<std::thread> clients;
  for (int c = 0; c < 4; ++c) {
    clients.emplace_back([&] {
      HttpClient client(serve.port());
      while (!done) {
        const std::string who = answering(client, "hello");
        if (who == "hello@1.2.0" || who == "hello@1.3.0") {
          ++ok;
        } else if (who.empty()) {
          ++failed;
        } else {
          ++strange;
        }
      }
    });
  }
  HttpClient watcher(serve.port());
  for (int swap = 0; swap < 100; ++swap) {
    const bool up = swap % 2 == 0;
    installByMove(up ? tmp_ / "hello-1.3.0.so" : plugin("hello"), "hello.so");
    const bool swapped = waitFor(watcher, "hello", up ? "hello@1.3.0" : "hello@1.2.0");
    EXPECT_TRUE(swapped) << "swap " << swap;
    if (!swapped) break;  // not ASSERT: the clients must be joined first
  }
  done = true;
  for (auto& t : clients) t.join();
  EXPECT_EQ(failed, 0);
  EXPECT_EQ(strange, 0);
  EXPECT_GT(ok, 100);
  // Only the current copy of hello may still be mapped in the server, once the old
  // versions' last calls (all answered by now) have let them go.
  std::string maps;
  EXPECT_TRUE(eventually([&] {
    maps = readFile("/proc/" + std::to_string(serve.pid()) + "/maps");
    std::set<std::string> mapped;
    for (std::size_t pos = 0; (pos = maps.find("plugboard-runtime-", pos)) != std::string::npos; ++pos) {
      mapped.insert(maps.substr(pos, maps.find('\n', pos) - pos));
    }
    return mapped.size() == 1;
  })) << maps;
}

// Nothing writable at all, as on a read-only root file system: TMPDIR, HOME and
// XDG_CACHE_HOME are a directory serve's user (nobody: root writes anywhere) cannot write.
// serve keeps its private copies in memory and hot-loads as before, in its own process and
// in child processes (plugboard-host gets the copy's descriptor), writing nothing. Swaps
// under calls reuse descriptor numbers: each call still reaches the version installed.
TEST_F(HotLoadTest, WithNothingWritableTheCopiesLiveInMemory) {
  if (::geteuid() != 0) GTEST_SKIP() << "runs serve as nobody, which needs root";
  const fs::path readonly = tmp_ / "readonly";
  fs::create_directory(readonly);
  fs::permissions(readonly, fs::perms(0555));
  writeFile(tmp_ / "echo-1.1.0.so",
            withEdit(readFile(plugin("echo")), R"("version":"1.0.0")", R"("version":"1.1.0")"));
  installByMove(plugin("hello"), "hello.so");
  installByMove(plugin("echo"), "echo.so");
  const std::string config =
      tmp_.write("plugboard.toml", "reload_debounce = \"1ms\"\n[deploy]\n\"echo\" = \"process\"\n");
  const std::string in_readonly = "=" + readonly.string();
  ServeLaunch as_nobody{{"env", "TMPDIR" + in_readonly, "HOME" + in_readonly,
                         "XDG_CACHE_HOME" + in_readonly, "setpriv", "--reuid=65534",
                         "--regid=65534", "--clear-groups", "--"},
                        {}};
  ServeProcess serve({"--plugins", dir().string(), "--config", config, "--log-level", "info"},
                     as_nobody);
  HttpClient client(serve.port());
  EXPECT_EQ(answering(client, "hello"), "hello@1.2.0");
  EXPECT_EQ(answering(client, "echo"), "echo@1.0.0");
  for (int swap = 0; swap < 20; ++swap) {
    const bool up = swap % 2 == 0;
    installByMove(up ? tmp_ / "hello-1.3.0.so" : plugin("hello"), "hello.so");
    installByMove(up ? tmp_ / "echo-1.1.0.so" : plugin("echo"), "echo.so");
    ASSERT_TRUE(waitFor(client, "hello", up ? "hello@1.3.0" : "hello@1.2.0")) << "swap " << swap;
    ASSERT_TRUE(waitFor(client, "echo", up ? "echo@1.1.0" : "echo@1.0.0")) << "swap " << swap;
  }
  const std::string maps = readFile("/proc/" + std::to_string(serve.pid()) + "/maps");
  EXPECT_NE(maps.find("/memfd:plugboard:"), std::string::npos) << maps;
  EXPECT_EQ(maps.find(dir().string()), std::string::npos) << maps;
  EXPECT_TRUE(fs::is_empty(readonly));
  EXPECT_EQ(serve.stop(), 0);
  EXPECT_NE(serve.output().find("private copies of plugins are kept in memory"), std::string::npos)
      << serve.output();
  EXPECT_EQ(serve.output().find("error"), std::string::npos) << serve.output();
}

}  // namespace
}  // namespace plugboard::testing
