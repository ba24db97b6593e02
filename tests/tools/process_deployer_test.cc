// The process deployer, through the real module: plugins in child processes of their own
// (plugboard-host), calls in flight at once, crashes, hangs and protocol errors that end
// only the child, restarts, limits and environment, and nothing left behind on close.
#include <signal.h>
#include <sys/types.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <spdlog/sinks/base_sink.h>
#include <spdlog/spdlog.h>

#include "core/launch/deployer.h"
#include "tests/support/cancel.h"
#include "tests/support/eventually.h"
#include "tests/support/files.h"
#include "tests/support/paths.h"
#include "tests/support/sanitizer.h"
#include "tests/support/text.h"

namespace plugboard::core {
namespace {

namespace fs = std::filesystem;
using plugboard::testing::has;
using plugboard::testing::cancelWhileRunning;
using plugboard::testing::deployerDir;
using plugboard::testing::fixture;
using plugboard::testing::fixtureDir;
using plugboard::testing::kShadowMemory;
using plugboard::testing::TempDir;
using Clock = std::chrono::steady_clock;

// The process deployer, loaded from the build's deployer directory with `configs`.
struct ProcessDeployer {
  explicit ProcessDeployer(std::map<std::string, Json> configs = {})
      : set(Catalog::scan({deployerDir()}, {}, "deployer"), std::move(configs)) {
    const CatalogEntry* entry = set.find("process");
    if (entry == nullptr)
      throw std::runtime_error("no process deployer in " + deployerDir().string());
    auto loaded = set.module(*entry);
    if (!loaded) throw std::runtime_error(loaded.error().message());
    module = *loaded;
  }
  Expected<std::unique_ptr<PluginHandle>> tryOpen(const fs::path& plugin,
                                                  const Json& options = Json::object()) {
    return module->open({{"path", plugin.string()}}, options);
  }
  std::unique_ptr<PluginHandle> open(const fs::path& plugin, const Json& options = Json::object()) {
    auto handle = tryOpen(plugin, options);
    if (!handle) throw std::runtime_error(handle.error().message());
    return std::move(*handle);
  }

  DeployerSet set;
  std::shared_ptr<DeployerModule> module;
};

std::string request(const Json& args, const std::string& key = "k") {
  return Json{{"rpc", "template.execute"}, {"key", key}, {"via", "name"}, {"args", args}}.dump();
}

Outcome call(PluginHandle& handle, const Json& args, const std::string& key = "k") {
  return handle.callText(request(args, key), handle.newCallId());
}

std::string param(const Outcome& o, const char* name) {
  return o.outputs.value("parameters", Json::object()).value(name, "");
}

Json fakeHost(const char* mode) {
  return {{"host", (fixtureDir() / "fake_host.sh").string()}, {"env", {{"FAKE_HOST", mode}}}};
}

// Captures what the runtime logs (plugin log lines and stderr come through the deployer).
class LogCapture {
 public:
  LogCapture() : previous_(spdlog::default_logger()), sink_(std::make_shared<Sink>()) {
    auto logger = std::make_shared<spdlog::logger>("capture", sink_);
    logger->set_level(spdlog::level::debug);
    spdlog::set_default_logger(logger);
  }
  ~LogCapture() { spdlog::set_default_logger(previous_); }
  std::string text() const {
    std::lock_guard lock(sink_->text_mu);
    return sink_->text;
  }

 private:
  struct Sink : spdlog::sinks::base_sink<std::mutex> {
    void sink_it_(const spdlog::details::log_msg& msg) override {
      std::lock_guard lock(text_mu);
      text.append(msg.payload.data(), msg.payload.size());
      text += '\n';
    }
    void flush_() override {}
    mutable std::mutex text_mu;
    std::string text;
  };
  std::shared_ptr<spdlog::logger> previous_;
  std::shared_ptr<Sink> sink_;
};

// Processes whose parent is this one (running or zombie).
std::vector<pid_t> childrenOfThisProcess() {
  std::vector<pid_t> out;
  for (const auto& entry : fs::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "stat");
    std::string stat;
    if (!std::getline(in, stat)) continue;
    const auto close = stat.rfind(')');
    if (close == std::string::npos) continue;
    char state = 0;
    int ppid = 0;
    if (std::sscanf(stat.c_str() + close + 1, " %c %d", &state, &ppid) == 2 && ppid == ::getpid()) {
      out.push_back(std::stoi(name));
    }
  }
  return out;
}

std::size_t entriesIn(const char* dir) {
  return static_cast<std::size_t>(
      std::distance(fs::directory_iterator(dir), fs::directory_iterator()));
}

TEST(ProcessDeployerTest, ListsEveryOptionInItsManifest) {
  ProcessDeployer process;
  const Manifest& m = process.module->manifest();
  EXPECT_EQ(m.deploys, std::vector<std::string>{"native"});
  for (const char* key : {"host", "memory", "cpu_time", "open_files", "env", "cwd", "config",
                          "cancel_grace", "start_timeout", "frame_limit", "restart_at_open_files",
                          "restart_at_threads", "restart_after_calls"}) {
    ASSERT_TRUE(m.config.contains(key)) << key;
    EXPECT_TRUE(m.config[key].contains("type")) << key;
    EXPECT_TRUE(m.config[key].contains("description")) << key;
  }
}

TEST(ProcessDeployerTest, SaysHelloAndRunsCallsInAChildProcess) {
  ProcessDeployer process;
  LogCapture log;
  auto scripted = process.open(fixture("scripted"));
  EXPECT_EQ(scripted->manifest().name, "scripted");
  // A request may hold raw newlines between its tokens; the frame must not.
  Outcome o = scripted->callText(
      "{\n  \"rpc\": \"template.execute\",\n  \"key\": \"kk\",\r\n  \"args\": "
      "{\"message\": \"hi\", \"log\": \"hello log\", \"print\": \"stray print\\n\"}\n}",
      scripted->newCallId());
  EXPECT_EQ(o.phase, Phase::kSucceeded) << o.message;
  EXPECT_EQ(o.message, "hi");
  EXPECT_EQ(param(o, "key"), "kk");
  EXPECT_EQ(call(*scripted, {{"phase", "Failed"}, {"message", "no"}}).phase, Phase::kFailed);

  auto crashy = process.open(fixture("crashy"));
  Outcome report = call(*crashy, Json::object());
  ASSERT_EQ(report.phase, Phase::kSucceeded) << report.message;
  EXPECT_NE(param(report, "pid"), std::to_string(::getpid()));
  // The plugin's log lines come through the protocol; its prints through stderr.
  scripted.reset();
  EXPECT_TRUE(has(log.text(), "[scripted] hello log")) << log.text();
  EXPECT_TRUE(has(log.text(), "[scripted] stderr: stray print")) << log.text();
}

TEST(ProcessDeployerTest, APluginMayLogWhileItLoads) {
  ProcessDeployer process;
  LogCapture log;
  auto crashy = process.open(fixture("crashy"), {{"config", {{"log", "loading crashy"}}}});
  EXPECT_EQ(call(*crashy, Json::object()).phase, Phase::kSucceeded);
  EXPECT_TRUE(has(log.text(), "[crashy] loading crashy")) << log.text();
}

TEST(ProcessDeployerTest, RunsSeveralCallsAtOnceInOneChild) {
  ProcessDeployer process;
  auto scripted = process.open(fixture("scripted"));
  std::vector<Outcome> outcomes(4);
  std::vector<std::thread> threads;
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] {
      const std::string key = "k" + std::to_string(i);
      outcomes[i] = call(*scripted, {{"sleep_ms", 200}, {"id", key}, {"message", key}}, key);
    });
  }
  for (auto& t : threads) t.join();
  for (int i = 0; i < 4; ++i) {
    EXPECT_EQ(outcomes[i].phase, Phase::kSucceeded) << outcomes[i].message;
    EXPECT_EQ(outcomes[i].message, "k" + std::to_string(i));
    EXPECT_EQ(param(outcomes[i], "key"), "k" + std::to_string(i));
    EXPECT_EQ(param(outcomes[i], "calls"), "1");
  }
  // They overlap, in one child: the probe counts the calls inside it, and one that finds
  // another there fails.
  auto probe = process.open(fixture("parallel_probe"));
  std::vector<Phase> phases(4);
  threads.clear();
  for (int i = 0; i < 4; ++i) {
    threads.emplace_back([&, i] { phases[i] = call(*probe, {{"ms", 1000}}).phase; });
  }
  for (auto& t : threads) t.join();
  EXPECT_GT(std::count(phases.begin(), phases.end(), Phase::kFailed), 0);
}

TEST(ProcessDeployerTest, ASegfaultEndsTheCallAndTheNextCallStartsANewChild) {
  ProcessDeployer process;
  auto crashy = process.open(fixture("crashy"));
  const std::string first = param(call(*crashy, Json::object()), "pid");
  Outcome crashed = call(*crashy, {{"crash", "segv"}});
  EXPECT_EQ(crashed.phase, Phase::kError);
  EXPECT_TRUE(
      has(crashed.message, "plugin 'crashy' (process) crashed: killed by signal 11 (SIGSEGV)"))
      << crashed.message;
  Outcome again = call(*crashy, Json::object());
  ASSERT_EQ(again.phase, Phase::kSucceeded) << again.message;
  EXPECT_NE(param(again, "pid"), first);
}

TEST(ProcessDeployerTest, AnAbortIsReportedAsSIGABRT) {
  ProcessDeployer process;
  auto crashy = process.open(fixture("crashy"));
  Outcome o = call(*crashy, {{"crash", "abort"}});
  EXPECT_EQ(o.phase, Phase::kError);
  EXPECT_TRUE(has(o.message, "plugin 'crashy' (process) crashed: killed by signal 6 (SIGABRT)"))
      << o.message;
}

TEST(ProcessDeployerTest, AnExitMidCallIsReportedWithItsCode) {
  ProcessDeployer process;
  auto crashy = process.open(fixture("crashy"));
  Outcome o = call(*crashy, {{"crash", "exit"}});
  EXPECT_EQ(o.phase, Phase::kError);
  EXPECT_TRUE(has(o.message, "plugin 'crashy' (process) exited with code 7")) << o.message;
  EXPECT_EQ(call(*crashy, Json::object()).phase, Phase::kSucceeded);
}

TEST(ProcessDeployerTest, EveryCallInFlightEndsWhenTheChildCrashes) {
  ProcessDeployer process;
  auto crashy = process.open(fixture("crashy"));
  Outcome slow;
  TempDir dir;
  const std::string started = (dir.path() / "started").string();
  std::thread waiting([&] { slow = call(*crashy, {{"started", started}, {"sleep_ms", 3000}}); });
  for (int i = 0; i < 1000 && !fs::exists(started); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_TRUE(fs::exists(started)) << "the slow call never started";
  const auto start = Clock::now();
  Outcome crashed = call(*crashy, {{"crash", "segv"}});
  waiting.join();
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(2));
  for (const Outcome* o : {&crashed, &slow}) {
    EXPECT_EQ(o->phase, Phase::kError);
    EXPECT_TRUE(has(o->message, "(SIGSEGV)")) << o->message;
  }
}

TEST(ProcessDeployerTest, ThePluginsOwnStdoutDoesNotReachTheChannel) {
  ProcessDeployer process;
  auto crashy = process.open(fixture("crashy"));
  // plugboard-host moved the plugin's file descriptor 1 to stderr.
  EXPECT_EQ(call(*crashy, {{"crash", "garbage"}}).phase, Phase::kSucceeded);
  auto scripted = process.open(fixture("scripted"));
  EXPECT_EQ(call(*scripted, {{"print", "{\"type\":\"hello\"}\n"}}).phase, Phase::kSucceeded);
}

TEST(ProcessDeployerTest, ProtocolErrorsKillTheChildAndEndTheCall) {
  ProcessDeployer process;
  const std::map<std::string, std::string> expected = {
      {"garbage",
       "broke the protocol: not a protocol message (a JSON object per line): 'this is not a "
       "protocol frame'"},
      {"hello-twice", "broke the protocol: it said 'hello' twice"},
      {"oversized", "broke the protocol: a protocol frame exceeds the limit of 16777216 bytes"},
      {"unknown-type", "broke the protocol: unknown message type 'teleport' from the plugin"},
  };
  for (const auto& [mode, message] : expected) {
    auto fake = process.open(fixture("scripted"), fakeHost(mode.c_str()));
    EXPECT_EQ(fake->manifest().name, "fake");
    for (int attempt = 0; attempt < 2; ++attempt) {  // the second call starts a new child
      Outcome o = call(*fake, Json::object());
      EXPECT_EQ(o.phase, Phase::kError);
      EXPECT_TRUE(has(o.message, "plugin 'fake' (process) " + message))
          << mode << ": " << o.message;
    }
  }
}

TEST(ProcessDeployerTest, AResultForACallThatDoesNotExistIsIgnored) {
  ProcessDeployer process;
  auto fake = process.open(fixture("scripted"), fakeHost("unknown-id"));
  const Outcome o = call(*fake, Json::object());
  EXPECT_EQ(o.phase, Phase::kSucceeded) << o.message;
  EXPECT_EQ(o.message, "answered");
}

TEST(ProcessDeployerTest, ACancelledCallThatDoesNotAnswerIsKilledAfterTheGrace) {
  ProcessDeployer process;
  auto scripted = process.open(fixture("scripted"), {{"cancel_grace", "200ms"}});
  const std::uint64_t id = scripted->newCallId();
  const auto start = Clock::now();
  Outcome o = cancelWhileRunning(
      [&] {
        return scripted->callText(request({{"sleep_ms", 20000}, {"ignore_cancel", true}}), id);
      },
      [&] { scripted->cancel(id); });
  EXPECT_LT(Clock::now() - start, std::chrono::seconds(5));
  EXPECT_EQ(o.phase, Phase::kError);
  EXPECT_TRUE(has(
      o.message, "plugin 'scripted' (process) did not answer a cancel within 200ms and was killed"))
      << o.message;
  EXPECT_EQ(call(*scripted, Json::object()).phase, Phase::kSucceeded);
}

TEST(ProcessDeployerTest, ACancelledCallThatAnswersKeepsItsChild) {
  ProcessDeployer process;
  auto scripted = process.open(fixture("scripted"));
  const std::uint64_t id = scripted->newCallId();
  Outcome o = cancelWhileRunning(
      [&] { return scripted->callText(request({{"sleep_ms", 20000}, {"id", "same"}}), id); },
      [&] { scripted->cancel(id); });
  EXPECT_EQ(o.phase, Phase::kError);
  EXPECT_EQ(o.message, "cancelled after call 1");
  scripted->cancel(id);  // after the call: does nothing
  // The same child: scripted counts calls per id in its memory.
  EXPECT_EQ(param(call(*scripted, {{"id", "same"}}), "calls"), "2");
}

TEST(ProcessDeployerTest, EnvCwdConfigAndLimitsReachTheChild) {
  TempDir dir;
  ProcessDeployer process(
      {{"process",
        {{"env", {{"PB_TEST_A", "from-config"}, {"PB_TEST_B", "b"}}}, {"open_files", 64}}}});
  Json options = {{"env", {{"PB_TEST_A", "from-step"}}},
                  {"cwd", dir.path().string()},
                  {"config", {{"greeting", "hi"}}},
                  {"memory", "1G"}};
  // Under ASan or TSan the child could not start with any address-space limit (their shadow
  // memory): the memory limit is left to the normal build.
  if (kShadowMemory) options.erase("memory");
  auto crashy = process.open(fixture("crashy"), options);
  Outcome a = call(*crashy, {{"getenv", "PB_TEST_A"}});
  ASSERT_EQ(a.phase, Phase::kSucceeded) << a.message;
  EXPECT_EQ(param(a, "env"), "from-step");
  EXPECT_EQ(param(a, "cwd"), fs::canonical(dir.path()).string());
  EXPECT_EQ(Json::parse(param(a, "config")), Json({{"greeting", "hi"}}));
  EXPECT_EQ(param(a, "nofile"), "64");
  if (!kShadowMemory) {
    EXPECT_EQ(param(a, "as"), std::to_string(1ULL << 30));
  }
  EXPECT_EQ(param(call(*crashy, {{"getenv", "PB_TEST_B"}}), "env"), "b");
  EXPECT_EQ(param(call(*crashy, {{"getenv", "PATH"}}), "env"), std::getenv("PATH"));  // inherited
}

TEST(ProcessDeployerTest, TheChildGetsNoDescriptorOfOursAndWhatItStartsDiesWithIt) {
  // A descriptor the runtime holds without close-on-exec must not reach the child.
  int ours[2];
  ASSERT_EQ(::pipe(ours), 0);
  ProcessDeployer process;
  auto crashy = process.open(fixture("crashy"));
  const Outcome o = call(*crashy, {{"sleeper", true}});
  ::close(ours[0]);
  ::close(ours[1]);
  ASSERT_EQ(o.phase, Phase::kSucceeded) << o.message;
  // stdin, stdout, stderr, and the host's own (close-on-exec) copy of the channel and
  // the eventfd that wakes its I/O thread.
  EXPECT_EQ(param(o, "fds"), "0 1 2 3 4");
  const pid_t sleeper = std::stoi(param(o, "sleeper"));
  const auto gone = [sleeper] {
    if (::kill(sleeper, 0) != 0) return true;
    std::ifstream stat("/proc/" + std::to_string(sleeper) + "/stat");
    std::string line;
    std::getline(stat, line);
    return line.empty() || line.find(") Z ") != std::string::npos;  // a zombie is dead
  };
  EXPECT_FALSE(gone());
  EXPECT_EQ(call(*crashy, {{"crash", "segv"}}).phase, Phase::kError);
  EXPECT_TRUE(plugboard::testing::eventually(gone)) << "the sleep the plugin started outlived it";
}

TEST(ProcessDeployerTest, ACpuTimeLimitKillsASpinningChild) {
  ProcessDeployer process;
  auto crashy = process.open(fixture("crashy"), {{"cpu_time", "1s"}});
  Outcome o = call(*crashy, {{"crash", "spin"}});
  EXPECT_EQ(o.phase, Phase::kError);
  EXPECT_TRUE(has(o.message, "(SIGXCPU): it used up its CPU time (option 'cpu_time' allows 1s)"))
      << o.message;
}

TEST(ProcessDeployerTest, OpenFailuresNameThePluginAndTheCause) {
  ProcessDeployer process;
  auto tiny = process.tryOpen(fixture("crashy"), {{"memory", "1M"}});
  ASSERT_FALSE(tiny.ok());
  EXPECT_TRUE(has(tiny.error().message(), "did not start")) << tiny.error().message();
  EXPECT_TRUE(has(tiny.error().message(), "option 'memory' limits it to 1M"))
      << tiny.error().message();

  auto no_host = process.tryOpen(fixture("crashy"), {{"host", "/nonexistent/plugboard-host"}});
  ASSERT_FALSE(no_host.ok());
  EXPECT_TRUE(
      has(no_host.error().message(), "plugin " + fixture("crashy").string() +
                                         " did not start: cannot run /nonexistent/plugboard-host: "
                                         "No such file or directory"))
      << no_host.error().message();

  auto missing = process.tryOpen("/nonexistent/plugin.so");
  ASSERT_FALSE(missing.ok());
  EXPECT_TRUE(has(missing.error().message(),
                  "plugin /nonexistent/plugin.so did not start: plugboard-host exited with code 3: "
                  "plugboard-host: "))
      << missing.error().message();

  auto bad_cwd = process.tryOpen(fixture("crashy"), {{"cwd", "/nonexistent/dir"}});
  ASSERT_FALSE(bad_cwd.ok());
  EXPECT_TRUE(has(bad_cwd.error().message(),
                  "cannot change to the directory '/nonexistent/dir' (option 'cwd')"))
      << bad_cwd.error().message();

  auto early = process.tryOpen(fixture("crashy"), fakeHost("exit-early"));
  ASSERT_FALSE(early.ok());
  EXPECT_TRUE(
      has(early.error().message(), "fake_host.sh exited with code 5: fake host: refusing to start"))
      << early.error().message();

  auto wrong_version = process.tryOpen(fixture("crashy"), fakeHost("wrong-version"));
  ASSERT_FALSE(wrong_version.ok());
  EXPECT_TRUE(has(wrong_version.error().message(),
                  "fake_host.sh broke the protocol: it chose protocol 2, which was not offered "
                  "(this runtime speaks 1)"))
      << wrong_version.error().message();

  Json silent = fakeHost("silent");
  silent["start_timeout"] = "300ms";
  auto mute = process.tryOpen(fixture("crashy"), silent);
  ASSERT_FALSE(mute.ok());
  EXPECT_TRUE(has(mute.error().message(), "fake_host.sh did not answer 'hello' within 300ms"))
      << mute.error().message();
}

TEST(ProcessDeployerTest, RestartsBackOffAndAFailedRestartIsReported) {
  TempDir dir;
  const fs::path copy = dir / "crashy.so";
  fs::copy_file(fixture("crashy"), copy);
  ProcessDeployer process;
  auto crashy = process.open(copy);
  EXPECT_EQ(call(*crashy, {{"crash", "segv"}}).phase, Phase::kError);
  EXPECT_EQ(call(*crashy, {{"crash", "segv"}}).phase, Phase::kError);  // restarted at once
  const auto start = Clock::now();
  EXPECT_EQ(call(*crashy, {{"crash", "segv"}}).phase, Phase::kError);  // after 100 ms
  EXPECT_EQ(call(*crashy, Json::object()).phase, Phase::kSucceeded);   // after 200 ms
  EXPECT_GE(Clock::now() - start, std::chrono::milliseconds(300));

  // An answered call resets the backoff; a restart that fails ends its call.
  fs::remove(copy);
  EXPECT_EQ(call(*crashy, {{"crash", "exit"}}).phase, Phase::kError);
  Outcome failed = call(*crashy, Json::object());
  EXPECT_EQ(failed.phase, Phase::kError);
  EXPECT_TRUE(has(failed.message, "plugin 'crashy' (process) could not be started again: plugin " +
                                      copy.string() +
                                      " did not start: plugboard-host exited with code 3"))
      << failed.message;
  fs::copy_file(fixture("crashy"), copy);
  EXPECT_EQ(call(*crashy, Json::object()).phase, Phase::kSucceeded);
}

// The threads of this process before a test starts its own. Under ThreadSanitizer a
// process's first new thread also starts the sanitizer's own background thread, which would
// count as one left behind: one is started (and ended) first.
std::size_t threadsBeforehand() {
  std::thread([] {}).join();
  return entriesIn("/proc/self/task");
}

TEST(ProcessDeployerTest, ClosingLeavesNoChildThreadOrDescriptorBehind) {
  ProcessDeployer process;
  const std::size_t threads = threadsBeforehand();
  const std::size_t fds = entriesIn("/proc/self/fd");
  {
    auto scripted = process.open(fixture("scripted"));
    auto crashy = process.open(fixture("crashy"));
    EXPECT_EQ(call(*scripted, Json::object()).phase, Phase::kSucceeded);
    EXPECT_EQ(call(*crashy, {{"crash", "segv"}}).phase, Phase::kError);
    EXPECT_EQ(call(*crashy, Json::object()).phase, Phase::kSucceeded);
    auto fake = process.open(fixture("scripted"), fakeHost("garbage"));
    EXPECT_EQ(call(*fake, Json::object()).phase, Phase::kError);
    EXPECT_FALSE(childrenOfThisProcess().empty());
  }
  EXPECT_EQ(childrenOfThisProcess(), std::vector<pid_t>{});
  EXPECT_EQ(entriesIn("/proc/self/task"), threads);
  EXPECT_EQ(entriesIn("/proc/self/fd"), fds);
}

// A replaced child keeps its calls in flight: a cancel for one of them reaches it there, not
// the child that took the next calls, and closing leaves nothing of either behind.
TEST(ProcessDeployerTest, ACallInFlightInAReplacedChildCanStillBeCancelled) {
  TempDir dir;
  ProcessDeployer process;
  const std::size_t threads = threadsBeforehand();
  {
    auto hog = process.open(fixture("hog"), {{"restart_after_calls", 1}});
    const std::uint64_t id = hog->newCallId();
    Outcome waited;
    std::thread waiting([&] {
      waited = hog->callText(request({{"started", (dir / "started").string()},
                                      {"wait_for", (dir / "never").string()}}),
                             id);
    });
    while (!fs::exists(dir / "started")) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    const Outcome next = call(*hog, Json::object());  // in a new child: the first had its call
    ASSERT_EQ(next.phase, Phase::kSucceeded) << next.message;
    hog->cancel(id);
    waiting.join();
    EXPECT_EQ(waited.phase, Phase::kError);
    EXPECT_EQ(waited.message, "cancelled");  // answered by the plugin, not a killed child
    EXPECT_EQ(childrenOfThisProcess().size(), 1u);  // the replaced child has gone
  }
  EXPECT_EQ(childrenOfThisProcess(), std::vector<pid_t>{});
  EXPECT_EQ(entriesIn("/proc/self/task"), threads);
}

}  // namespace
}  // namespace plugboard::core
