// Faults while `plugboard serve` hot-loads plugins: a full file system for the private
// copies, SIGKILL in the middle of a swap, a thousand reloads under load, the plugin
// directory deleted and made again, and two files claiming the same plugin. Each ends with
// the runtime serving and nothing lost.
#include <signal.h>
#include <sys/mount.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <optional>
#include <random>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/files.h"
#include "tests/support/live_plugins.h"
#include "tests/support/paths.h"
#include "tests/support/sanitizer.h"
#include "tests/support/server_process.h"
#include "tests/support/text.h"

namespace plugboard::testing {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;
using namespace std::chrono_literals;

// What `/proc/<pid>` says about a process: open descriptors, threads, resident memory.
struct Usage {
  int fds = 0;
  int threads = 0;
  long rss_kib = 0;
};

Usage usageOf(pid_t pid) {
  Usage u;
  const fs::path proc = "/proc/" + std::to_string(pid);
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(proc / "fd")) ++u.fds;
  std::ifstream status(proc / "status");
  for (std::string line; std::getline(status, line);) {
    if (line.starts_with("Threads:")) u.threads = std::stoi(line.substr(8));
    if (line.starts_with("VmRSS:")) u.rss_kib = std::stol(line.substr(6));
  }
  return u;
}

class HotLoadFaultTest : public ::testing::Test {
 protected:
  HotLoadFaultTest() {
    fs::permissions(tmp_.path(), fs::perms(0755));
    fs::create_directory(dir());
    fs::permissions(dir(), fs::perms(0755));
    fs::create_directory(runtimeParent());
    // serve makes its private copies under $TMPDIR: here, where the test can count them.
    if (const char* old = std::getenv("TMPDIR")) old_tmpdir_ = old;
    ::setenv("TMPDIR", runtimeParent().c_str(), 1);
    writeFile(tmp_ / "hello-1.3.0.so",
              withEdit(readFile(plugin("hello")), R"("version":"1.2.0")", R"("version":"1.3.0")"));
  }
  ~HotLoadFaultTest() override {
    if (old_tmpdir_) {
      ::setenv("TMPDIR", old_tmpdir_->c_str(), 1);
    } else {
      ::unsetenv("TMPDIR");
    }
  }
  fs::path dir() const { return tmp_ / "plugins"; }
  fs::path runtimeParent() const { return tmp_ / "tmp"; }
  // Installs `from` as dir()/name the way `mv` does: written beside, renamed in.
  void installByMove(const fs::path& from, const std::string& name) {
    fs::copy_file(from, tmp_ / ".staging", fs::copy_options::overwrite_existing);
    fs::rename(tmp_ / ".staging", dir() / name);
  }
  // The runtime directories under runtimeParent().
  std::vector<fs::path> runtimeDirs() const {
    std::vector<fs::path> out;
    for (const auto& e : fs::directory_iterator(runtimeParent())) {
      if (e.path().filename().string().starts_with("plugboard-runtime-")) out.push_back(e.path());
    }
    return out;
  }
  // The plugin copies in the runtime directories.
  std::vector<fs::path> copies() const {
    std::vector<fs::path> out;
    for (const auto& d : runtimeDirs()) {
      for (const auto& e : fs::directory_iterator(d)) {
        if (e.path().extension() == ".so") out.push_back(e.path());
      }
    }
    return out;
  }
  // A config file that makes serve apply a change after `debounce` of quiet.
  std::string configWith(const std::string& debounce) {
    return tmp_.write("plugboard.toml", "reload_debounce = \"" + debounce + "\"\n");
  }

  TempDir tmp_;
  std::optional<std::string> old_tmpdir_;
};

// A full file system (here: the file-size limit of the serve process, which fails the
// copy's write with EFBIG as a full one fails it with ENOSPC): the new version is refused
// with the reason, the old one keeps serving, and the unfinished copy does not stay.
TEST_F(HotLoadFaultTest, APrivateCopyThatCannotBeWrittenLeavesTheOldVersionServing) {
  installByMove(plugin("hello"), "hello.so");
  ServeProcess serve({"--plugins", dir().string()});
  HttpClient client(serve.port());
  ASSERT_EQ(answering(client, "hello"), "hello@1.2.0");
  ASSERT_EQ(copies().size(), 1u);

  const rlimit small{64 << 10, RLIM_INFINITY};  // far smaller than a copy of hello
  ASSERT_EQ(::prlimit(serve.pid(), RLIMIT_FSIZE, &small, nullptr), 0);
  installByMove(tmp_ / "hello-1.3.0.so", "hello.so");
  EXPECT_TRUE(waitForError(client, "File too large")) << pluginList(client).dump();
  EXPECT_EQ(answering(client, "hello"), "hello@1.2.0");
  EXPECT_EQ(copies().size(), 1u) << "an unfinished copy was left behind";

  // Room again: the next change of the file brings the new version.
  const rlimit unlimited{RLIM_INFINITY, RLIM_INFINITY};
  ASSERT_EQ(::prlimit(serve.pid(), RLIMIT_FSIZE, &unlimited, nullptr), 0);
  installByMove(tmp_ / "hello-1.3.0.so", "hello.so");
  EXPECT_TRUE(waitFor(client, "hello", "hello@1.3.0"));
  EXPECT_FALSE(listsError(client, "File too large"));
  EXPECT_EQ(serve.stop(), 0);
  EXPECT_TRUE(has(serve.output(), "hello.so: refused: cannot make a private copy in "))
      << serve.output();
  EXPECT_TRUE(has(serve.output(), "File too large; the previous version keeps serving"));
}

// The same on a file system that is really full: a tmpfs too small for a second copy.
// Mounting needs privileges; without them the case above stands for it.
TEST_F(HotLoadFaultTest, AFullFileSystemLeavesTheOldVersionServing) {
  if (kSanitizer == "thread") {
    GTEST_SKIP() << "ThreadSanitizer keeps a file of its own in TMPDIR (tsan.rodata.<pid>, "
                    "unlinked but mapped), which takes the room this case measures; the "
                    "RLIMIT_FSIZE case covers the same path";
  }
  const auto size = fs::file_size(plugin("hello"));
  const std::string options = "size=" + std::to_string(size + size / 2) + ",mode=0755";
  if (::mount("tmpfs", runtimeParent().c_str(), "tmpfs", 0, options.c_str()) != 0) {
    GTEST_SKIP() << "cannot mount a tmpfs here: " << std::strerror(errno);
  }
  struct Unmount {
    fs::path at;
    ~Unmount() { ::umount2(at.c_str(), MNT_DETACH); }
  } unmount{runtimeParent()};
  installByMove(plugin("hello"), "hello.so");
  {
    ServeProcess serve({"--plugins", dir().string()});
    HttpClient client(serve.port());
    ASSERT_EQ(answering(client, "hello"), "hello@1.2.0");
    installByMove(tmp_ / "hello-1.3.0.so", "hello.so");
    EXPECT_TRUE(waitForError(client, "No space left on device")) << pluginList(client).dump();
    EXPECT_EQ(answering(client, "hello"), "hello@1.2.0");
    EXPECT_EQ(copies().size(), 1u) << "an unfinished copy was left behind";

    const std::string larger = "size=" + std::to_string(3 * size) + ",mode=0755";
    ASSERT_EQ(::mount("tmpfs", runtimeParent().c_str(), "tmpfs", MS_REMOUNT, larger.c_str()), 0)
        << std::strerror(errno);
    installByMove(tmp_ / "hello-1.3.0.so", "hello.so");
    EXPECT_TRUE(waitFor(client, "hello", "hello@1.3.0"));
    EXPECT_EQ(serve.stop(), 0);
    EXPECT_TRUE(has(serve.output(), "No space left on device; the previous version keeps serving"))
        << serve.output();
  }
  EXPECT_TRUE(runtimeDirs().empty());
}

// serve killed with SIGKILL while it swaps versions under load: the next start serves what
// is installed, and removes the private copies of the dead run; it never removes those of
// a serve that still runs.
TEST_F(HotLoadFaultTest, SigkillDuringASwapLeavesNoCopiesBehind) {
  std::mt19937 random(std::random_device{}());
  fs::path killed;
  for (int run = 0; run < 3; ++run) {
    installByMove(plugin("hello"), "hello.so");
    ServeProcess serve({"--plugins", dir().string(), "--config", configWith("1ms")});
    std::atomic<bool> done{false};
    std::thread caller([&] {
      HttpClient client(serve.port());
      while (!done && !answering(client, "hello").empty()) {
      }
    });
    HttpClient client(serve.port());
    for (int swap = 0; swap < 6; ++swap) {
      const bool up = swap % 2 == 0;
      installByMove(up ? tmp_ / "hello-1.3.0.so" : plugin("hello"), "hello.so");
      ASSERT_TRUE(waitFor(client, "hello", up ? "hello@1.3.0" : "hello@1.2.0"));
    }
    installByMove(tmp_ / "hello-1.3.0.so", "hello.so");  // and kill it while it applies this
    std::this_thread::sleep_for(std::chrono::microseconds(random() % 3000));
    EXPECT_EQ(serve.stop(SIGKILL), 128 + SIGKILL);
    done = true;
    caller.join();
    // Only this run's directory is left: each start removed the one killed before it.
    const auto left = runtimeDirs();
    ASSERT_EQ(left.size(), 1u) << "run " << run;
    EXPECT_NE(left.front(), killed);
    killed = left.front();
  }

  ServeProcess next({"--plugins", dir().string()});
  HttpClient client(next.port());
  EXPECT_EQ(answering(client, "hello"), "hello@1.3.0");
  const auto left = runtimeDirs();
  ASSERT_EQ(left.size(), 1u) << "the dead run's copies are still there";
  EXPECT_NE(left.front(), killed);

  ServeProcess another({"--plugins", dir().string()});  // must leave next's copies alone
  EXPECT_EQ(runtimeDirs().size(), 2u);
  EXPECT_TRUE(fs::exists(left.front()));
  EXPECT_EQ(answering(client, "hello"), "hello@1.3.0");
  EXPECT_EQ(another.stop(), 0);
  EXPECT_EQ(next.stop(), 0);
  EXPECT_TRUE(runtimeDirs().empty());
}

// A thousand reloads of one plugin while clients call it: every call is answered, and the
// server's descriptors, threads and resident memory come back to about their level before.
TEST_F(HotLoadFaultTest, AThousandReloadsUnderLoadReturnToTheirLevel) {
  constexpr int kSwaps = 1000;
  installByMove(plugin("hello"), "hello.so");
  ServeProcess serve({"--plugins", dir().string(), "--config", configWith("1ms")});
  std::atomic<bool> done{false};
  std::atomic<int> ok{0}, failed{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < 2; ++c) {
    callers.emplace_back([&] {
      HttpClient client(serve.port());
      while (!done) {
        const std::string who = answering(client, "hello");
        (who == "hello@1.2.0" || who == "hello@1.3.0" ? ok : failed)++;
      }
    });
  }
  HttpClient watcher(serve.port());
  auto swapTo = [&](int swap) {
    const bool up = swap % 2 == 0;
    installByMove(up ? tmp_ / "hello-1.3.0.so" : plugin("hello"), "hello.so");
    return eventually(
        [&] { return answering(watcher, "hello") == (up ? "hello@1.3.0" : "hello@1.2.0"); }, 10s,
        1ms);
  };
  auto settled = [&] {  // no old version still draining
    return eventually([&] {
      const Json list = pluginList(watcher);
      for (const auto& p : list["plugins"]) {
        if (!p.value("draining_versions", Json::array()).empty()) return false;
      }
      return true;
    });
  };
  int swap = 0;
  for (; swap < 20; ++swap) ASSERT_TRUE(swapTo(swap)) << "swap " << swap;  // warm up
  ASSERT_TRUE(settled());
  const Usage before = usageOf(serve.pid());
  bool all = true;
  for (; swap < 20 + kSwaps && all; ++swap) all = swapTo(swap);
  EXPECT_TRUE(all) << "swap " << swap << " was not seen";
  ASSERT_TRUE(settled());
  // The call pool may have grown for a moment while a reload held calls up; a thread
  // beyond those the calls need ends after a second idle, so the level is waited for (a
  // thread or descriptor leaked per reload would be a thousand over).
  Usage after = usageOf(serve.pid());
  eventually([&] {
    after = usageOf(serve.pid());
    return after.threads <= before.threads + 2 && after.fds <= before.fds + 4;
  }, 5s);
  done = true;
  for (auto& t : callers) t.join();

  std::printf(
      "before: %d fds, %d threads, %ld KiB resident; after %d swaps: %d fds, %d threads, "
      "%ld KiB resident; %d calls answered meanwhile\n",
      before.fds, before.threads, before.rss_kib, swap - 20, after.fds, after.threads,
      after.rss_kib, ok.load());
  EXPECT_EQ(failed, 0);
  EXPECT_GT(ok, kSwaps);
  EXPECT_LE(after.fds, before.fds + 4);
  EXPECT_LE(after.threads, before.threads + 2);
  // A leak of 32 KiB a reload fails this. Under a sanitizer, resident memory says nothing
  // about leaks: ASan keeps freed blocks in quarantine (256 MiB) and neither keeps shadow
  // memory level as library copies come and go; there LeakSanitizer checks serve at exit.
  if (!kShadowMemory) {
    EXPECT_LE(after.rss_kib, before.rss_kib + 32 * 1024);
  }
  EXPECT_LE(copies().size(), 2u);
  EXPECT_EQ(serve.stop(), 0);
}

// The plugin directory deleted while serve runs, and made again: serve goes on, says the
// directory is gone, and serves its plugins again once it is back.
TEST_F(HotLoadFaultTest, ADeletedPluginDirectoryIsServedAgainWhenItIsBack) {
  installByMove(plugin("hello"), "hello.so");
  installByMove(plugin("echo"), "echo.so");
  ServeProcess serve({"--plugins", dir().string()});
  HttpClient client(serve.port());
  ASSERT_EQ(answering(client, "hello"), "hello@1.2.0");

  fs::remove_all(dir());
  EXPECT_TRUE(waitForError(client, "No such file or directory")) << pluginList(client).dump();
  EXPECT_EQ(answering(client, "hello"), "");
  EXPECT_EQ(client.request("GET", "/readyz").status, 200);

  fs::create_directory(dir());
  fs::permissions(dir(), fs::perms(0755));
  installByMove(plugin("hello"), "hello.so");
  installByMove(plugin("echo"), "echo.so");
  EXPECT_TRUE(waitFor(client, "hello", "hello@1.2.0"));
  EXPECT_TRUE(waitFor(client, "echo", "echo@1.0.0"));
  EXPECT_FALSE(listsError(client, "No such file or directory"));
  EXPECT_EQ(serve.stop(), 0);
  EXPECT_TRUE(has(serve.output(), dir().string() + ": refused: ")) << serve.output();
  EXPECT_TRUE(has(serve.output(), "No such file or directory"));
}

// A second file with the name and version of a plugin being served: the one serving goes
// on, only the newcomer is refused, with the reason.
TEST_F(HotLoadFaultTest, ASecondFileWithTheSameVersionLeavesTheServingOne) {
  installByMove(plugin("hello"), "hello.so");
  ServeProcess serve({"--plugins", dir().string()});
  HttpClient client(serve.port());
  ASSERT_EQ(answering(client, "hello"), "hello@1.2.0");

  installByMove(plugin("hello"), "hello-copy.so");
  EXPECT_TRUE(waitForError(client, "is already served from " + (dir() / "hello.so").string()))
      << pluginList(client).dump();
  EXPECT_EQ(answering(client, "hello"), "hello@1.2.0");
  EXPECT_EQ(answering(client, "greeter"), "hello@1.2.0");

  fs::remove(dir() / "hello-copy.so");
  EXPECT_TRUE(eventually([&] { return !listsError(client, "is already served from"); }));
  EXPECT_EQ(answering(client, "hello"), "hello@1.2.0");
  EXPECT_EQ(serve.stop(), 0);
  EXPECT_TRUE(has(serve.output(), (dir() / "hello-copy.so").string() +
                                      ": refused: plugin 'hello' 1.2.0 is already served from"))
      << serve.output();
}

}  // namespace
}  // namespace plugboard::testing
