// Faults in plugin processes, through `plugboard serve` and real plugins run by the `process`
// and `python` deployers (tests/fixtures/hog.cc, tests/fixtures/python/hog.py): a child that
// leaks descriptors or threads, or has served its calls, is replaced at its limit; one that
// runs out of memory fails its call naming the limit and the next call gets a new child; a
// result or a request over the protocol's frame limit fails its call alone. Calls in flight
// in the same child (neighbours waiting in the plugin for a file to appear) succeed, and
// every test ends with serve still serving.
#include <chrono>
#include <filesystem>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/argo.h"
#include "tests/support/eventually.h"
#include "tests/support/files.h"
#include "tests/support/paths.h"
#include "tests/support/plugin_dir.h"
#include "tests/support/sanitizer.h"
#include "tests/support/server_process.h"

namespace plugboard::testing {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

// What serve answered for one template: phase, message and output parameters.
struct Node {
  std::string phase, message;
  std::map<std::string, std::string> params;
  std::string param(const std::string& name) const {
    auto it = params.find(name);
    return it == params.end() ? "" : it->second;
  }
};

std::ostream& operator<<(std::ostream& out, const Node& n) {
  return out << n.phase << ": " << n.message.substr(0, 400);
}

Node call(HttpClient& client, const std::string& key, const Json& args) {
  const HttpReply r = client.request("POST", "/api/v1/template.execute", argoBody(key, args));
  Node n;
  if (r.status != 200) {
    n.message = "HTTP " + std::to_string(r.status) + ": " + r.body;
    return n;
  }
  const Json node = Json::parse(r.body, nullptr, false).value("node", Json::object());
  n.phase = node.value("phase", "");
  n.message = node.value("message", "");
  for (const auto& p : node.value("outputs", Json::object()).value("parameters", Json::array())) {
    n.params[p.value("name", "")] = p.value("value", "");
  }
  return n;
}

// A `memory` limit (RLIMIT_AS) leaves a sanitizer's runtime no room for its shadow memory
// (tests/support/sanitizer.h): the memory cases test how the runtime handles plugins built
// without one.
#define SKIP_UNDER_SHADOW_MEMORY()       \
  if (plugboard::testing::kShadowMemory) \
  GTEST_SKIP() << "a memory limit leaves the sanitizer no room"

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The two plugins under test: the native hog through the process deployer, the Python hog
// through the python deployer in process mode.
struct Kind {
  std::string name;      // for the test's name
  std::string key;       // the plugin's name
  std::string deployer;  // its deployer
};

void PrintTo(const Kind& kind, std::ostream* out) { *out << kind.name; }

const Kind kNative{"native", "hog", "process"};
const Kind kPython{"python", "pyhog", "python"};

class FaultProcessTest : public ::testing::Test {
 protected:
  // Starts serve with `kind`'s plugin run by its deployer with `options` (TOML members
  // after the deployer's name, e.g. `memory = "128M"`).
  void start(const Kind& kind, const std::string& options) {
    const std::string registry = dir_.write(
        "registry.toml", "[plugins.pyhog.\"1.0.0\"]\npython = { path = \"" +
                             (sourceDir() / "tests/fixtures/python/hog.py").string() + "\" }\n");
    const std::string config =
        dir_.write("plugboard.toml", "registry = \"" + registry + "\"\n[deploy]\n" + kind.key +
                                         " = { deployer = \"" + kind.deployer + "\"" +
                                         (options.empty() ? "" : ", " + options) + " }\n");
    key_ = kind.key;
    serve_ = std::make_unique<ServeProcess>(std::vector<std::string>{
        "--plugins", plugins_.plugins(), "--config", config, "--log-level", "info"});
    client_ = std::make_unique<HttpClient>(serve_->port());
  }

  Node call(const Json& args) { return testing::call(*client_, key_, args); }

  // Ends the test: serve still answers probes and calls, and stops cleanly. Returns its
  // output (the log).
  std::string expectServingAndStop() {
    EXPECT_EQ(client_->request("GET", "/healthz").status, 200);
    const Node hello = testing::call(*client_, "hello", {{"name", "Ada"}});
    EXPECT_EQ(hello.phase, "Succeeded") << hello;
    const Node again = call({{"after", "the fault"}});
    EXPECT_EQ(again.phase, "Succeeded") << again;
    client_.reset();
    EXPECT_EQ(serve_->stop(), 0) << serve_->output();
    return serve_->output();
  }

  // A call that waits in the plugin until release(), on a connection of its own.
  class Neighbour {
   public:
    Neighbour(FaultProcessTest& test, const std::string& name)
        : started_(test.dir_ / ("started-" + name)), go_(test.dir_ / "go") {
      thread_ = std::thread([this, port = test.serve_->port(), key = test.key_] {
        HttpClient client(port);
        node_ = testing::call(client, key,
                              {{"started", started_.string()}, {"wait_for", go_.string()}});
      });
    }
    ~Neighbour() {
      if (thread_.joinable()) release();
    }
    // True once the call runs in the plugin.
    bool waitStarted() const {
      return eventually([&] { return fs::exists(started_); }, std::chrono::seconds(60));
    }
    // Lets every neighbour go on; returns this one's answer.
    Node release() {
      writeFile(go_, "go");
      thread_.join();
      return node_;
    }

   private:
    fs::path started_, go_;
    Node node_;
    std::thread thread_;
  };

  std::vector<std::string> leakUntilReplacedWhileACallWaits(const std::string& what);

  // After a call failed for want of memory in the child `pid`: the call that waited there
  // finishes in it, the next call gets a new child, and serve goes on.
  void expectItFinishedThereAndTheNextCallGetsANewChild(Neighbour& neighbour,
                                                        const std::string& pid) {
    const Node waited = neighbour.release();
    EXPECT_EQ(waited.phase, "Succeeded") << waited;
    EXPECT_EQ(waited.param("pid"), pid);
    const Node next = call({{"i", "next"}});
    EXPECT_EQ(next.phase, "Succeeded") << next;
    EXPECT_NE(next.param("pid"), pid);
    expectServingAndStop();
  }

  TempDir dir_;
  PluginDir plugins_{{"hello"}, {"hog"}};
  std::string key_;
  std::unique_ptr<ServeProcess> serve_;
  std::unique_ptr<HttpClient> client_;
};

bool processExists(const std::string& pid) { return fs::exists("/proc/" + pid); }

// With one call waiting in the first child, leaks one `what` per call until the child is
// replaced (every call succeeds: the child is replaced before it reaches its hard limit),
// then checks that the waiting call finished in the first child and that child ended.
// Returns the pids seen in order, the first child's first.
std::vector<std::string> FaultProcessTest::leakUntilReplacedWhileACallWaits(
    const std::string& what) {
  const Node first = call({{"i", "first"}});
  EXPECT_EQ(first.phase, "Succeeded") << first;
  if (first.phase != "Succeeded") return {};
  const std::string first_pid = first.param("pid");
  Neighbour neighbour(*this, "a");
  EXPECT_TRUE(neighbour.waitStarted());

  std::vector<std::string> pids{first_pid};
  for (int i = 0; i < 400; ++i) {
    const Node n = call({{"leak", what}, {"i", i}});
    EXPECT_EQ(n.phase, "Succeeded") << "call " << i << ": " << n;
    if (n.phase != "Succeeded") break;
    pids.push_back(n.param("pid"));
    if (pids.back() != first_pid) break;
  }
  EXPECT_NE(pids.back(), first_pid) << "not replaced after " << pids.size() - 1 << " leaking calls";

  const Node waited = neighbour.release();
  EXPECT_EQ(waited.phase, "Succeeded") << waited;
  EXPECT_EQ(waited.param("pid"), first_pid);  // finished in the child it started in
  EXPECT_TRUE(eventually([&] { return !processExists(first_pid); }, std::chrono::seconds(60)))
      << "the replaced child lingers";
  return pids;
}

// --- a child that leaks, or has served its calls, is replaced; calls in flight finish

TEST_F(FaultProcessTest, AChildLeakingDescriptorsIsReplacedAtItsLimitAndItsCallsInFlightFinish) {
  start(kNative, "restart_at_open_files = 48, open_files = 256");
  const auto pids = leakUntilReplacedWhileACallWaits("fd");
  ASSERT_FALSE(pids.empty());
  // It held more than 48 descriptors only briefly (counted every 10 ms at most), never 256.
  EXPECT_GT(pids.size() - 1, 30u);
  const Node next = call({{"i", "next"}});
  EXPECT_EQ(next.param("pid"), pids.back()) << next;
  const std::string log = expectServingAndStop();
  EXPECT_TRUE(contains(log, "plugin 'hog' (process) holds ")) << log;
  // The waiting call is in flight; so may be the next leaking call, sent as soon as the
  // result before it arrived, when the count after that result is taken.
  EXPECT_TRUE(contains(log,
                       "open descriptors (option 'restart_at_open_files' is 48): the next "
                       "call starts a new child; 1 call in flight finishes in this one") ||
              contains(log,
                       "open descriptors (option 'restart_at_open_files' is 48): the next "
                       "call starts a new child; 2 calls in flight finish in this one"))
      << log;
}

TEST_F(FaultProcessTest, AChildLeakingThreadsIsReplacedAtItsLimitAndItsCallsInFlightFinish) {
  start(kNative, "restart_at_threads = 32");
  leakUntilReplacedWhileACallWaits("thread");
  const std::string log = expectServingAndStop();
  EXPECT_TRUE(contains(log, "threads (option 'restart_at_threads' is 32)")) << log;
}

TEST_F(FaultProcessTest, AChildIsReplacedAfterTheCallsItMayServe) {
  start(kNative, "restart_after_calls = 4");
  std::vector<std::string> pids;
  for (int i = 0; i < 10; ++i) {
    const Node n = call({{"i", i}});
    ASSERT_EQ(n.phase, "Succeeded") << n;
    pids.push_back(n.param("pid"));
  }
  for (int i = 0; i < 10; ++i) EXPECT_EQ(pids[i], pids[i / 4 * 4]) << "call " << i;
  EXPECT_EQ(std::set<std::string>(pids.begin(), pids.end()).size(), 3u);
  const std::string log = expectServingAndStop();
  EXPECT_TRUE(contains(log, "has been given 4 calls (option 'restart_after_calls')")) << log;
}

// --- a child out of memory

TEST_F(FaultProcessTest,
       AnAllocationOverTheMemoryLimitFailsItsCallNamingItAndTheNextCallGetsANewChild) {
  SKIP_UNDER_SHADOW_MEMORY();
  start(kNative, "memory = \"256M\"");
  const Node first = call({{"i", "first"}});
  ASSERT_EQ(first.phase, "Succeeded") << first;
  const std::string pid = first.param("pid");
  Neighbour neighbour(*this, "a");
  ASSERT_TRUE(neighbour.waitStarted());

  Node failed;
  for (int i = 0; i < 40 && failed.phase.empty(); ++i) {
    const Node n = call({{"leak_mb", 16}, {"i", i}});
    if (n.phase != "Succeeded") failed = n;
  }
  EXPECT_EQ(failed.phase, "Error") << failed;
  EXPECT_TRUE(contains(failed.message,
                       "plugin 'hog' (process) ran out of memory (option 'memory' "
                       "limits it to 256M): plugin 'hog' threw: std::bad_alloc"))
      << failed;
  expectItFinishedThereAndTheNextCallGetsANewChild(neighbour, pid);
}

TEST_F(FaultProcessTest, AChildThatCrashesOutOfMemoryIsReportedWithTheLimit) {
  SKIP_UNDER_SHADOW_MEMORY();
  start(kNative, "memory = \"256M\"");
  const Node crashed = call({{"malloc_mb", 1024}});
  EXPECT_EQ(crashed.phase, "Error") << crashed;
  EXPECT_TRUE(contains(crashed.message,
                       "crashed: killed by signal 11 (SIGSEGV); option 'memory' limits its "
                       "address space to 256M, which it may have run out of"))
      << crashed;
  EXPECT_EQ(call({{"i", "next"}}).phase, "Succeeded");
  expectServingAndStop();
}

TEST_F(FaultProcessTest, APythonMemoryErrorFailsItsCallNamingTheLimitAndTheNextCallGetsANewChild) {
  SKIP_UNDER_SHADOW_MEMORY();
  start(kPython, "memory = \"512M\"");
  const Node first = call({{"i", "first"}});
  ASSERT_EQ(first.phase, "Succeeded") << first;
  const std::string pid = first.param("pid");
  Neighbour neighbour(*this, "a");
  ASSERT_TRUE(neighbour.waitStarted());

  const Node failed = call({{"allocate_mb", 1024}});
  EXPECT_EQ(failed.phase, "Error") << failed;
  EXPECT_TRUE(contains(failed.message,
                       "plugin 'pyhog' (python) ran out of memory (option "
                       "'memory' limits it to 512M): plugin 'pyhog' raised "
                       "MemoryError"))
      << failed;
  expectItFinishedThereAndTheNextCallGetsANewChild(neighbour, pid);
}

// --- one message over the protocol's frame limit

class FrameLimitTest : public FaultProcessTest, public ::testing::WithParamInterface<Kind> {};

TEST_P(FrameLimitTest, AResultOverTheFrameLimitFailsItsCallAloneAndTheNeighboursSucceed) {
  start(GetParam(), "");
  const Node first = call({{"i", "first"}});
  ASSERT_EQ(first.phase, "Succeeded") << first;
  const std::string pid = first.param("pid");
  Neighbour one(*this, "one"), two(*this, "two");
  ASSERT_TRUE(one.waitStarted());
  ASSERT_TRUE(two.waitStarted());

  const Node big = call({{"result_bytes", 20 << 20}});
  EXPECT_EQ(big.phase, "Error") << big;
  EXPECT_TRUE(contains(big.message, "plugin '" + key_ +
                                        "' returned a result too large for the "
                                        "protocol: its frame of "))
      << big;
  EXPECT_TRUE(contains(big.message,
                       "exceeds the frame limit of 16777216 bytes (the deployer's "
                       "option 'frame_limit')"))
      << big;
  for (Neighbour* n : {&one, &two}) {
    const Node waited = n->release();
    EXPECT_EQ(waited.phase, "Succeeded") << waited;
    EXPECT_EQ(waited.param("pid"), pid);
  }
  const Node next = call({{"i", "next"}});
  EXPECT_EQ(next.param("pid"), pid) << "the child was restarted: " << next;
  expectServingAndStop();
}

TEST_P(FrameLimitTest, TheFrameLimitIsConfigurableAndBindsRequestsToo) {
  start(GetParam(), "frame_limit = \"64K\"");
  const Node first = call({{"i", "first"}});
  ASSERT_EQ(first.phase, "Succeeded") << first;
  const std::string pid = first.param("pid");
  Neighbour one(*this, "one");
  ASSERT_TRUE(one.waitStarted());

  const Node fits = call({{"result_bytes", 60000}});
  EXPECT_EQ(fits.phase, "Succeeded") << fits;
  EXPECT_EQ(fits.param("blob").size(), 60000u);
  const Node big = call({{"result_bytes", 70000}});
  EXPECT_EQ(big.phase, "Error") << big;
  EXPECT_TRUE(contains(big.message, "exceeds the frame limit of 65536 bytes")) << big;
  // The runtime is the sending side of a request: it refuses to send one over the limit.
  const Node request = call({{"padding", std::string(70000, 'p')}});
  EXPECT_EQ(request.phase, "Error") << request;
  EXPECT_TRUE(contains(request.message,
                       "is more than the protocol's frame limit of 65536 bytes "
                       "allows (option 'frame_limit'); it was not sent"))
      << request;

  const Node waited = one.release();
  EXPECT_EQ(waited.phase, "Succeeded") << waited;
  EXPECT_EQ(waited.param("pid"), pid);
  EXPECT_EQ(call({{"i", "next"}}).param("pid"), pid);
  expectServingAndStop();
}

TEST_P(FrameLimitTest, AFrameLimitAboveTheDefaultLetsALargerResultThrough) {
  start(GetParam(), "frame_limit = \"24M\"");
  const Node big = call({{"result_bytes", 17 << 20}});
  EXPECT_EQ(big.phase, "Succeeded") << big;
  EXPECT_EQ(big.param("blob").size(), 17u << 20);
  expectServingAndStop();
}

INSTANTIATE_TEST_SUITE_P(Plugins, FrameLimitTest, ::testing::Values(kNative, kPython),
                         [](const auto& info) { return info.param.name; });

}  // namespace
}  // namespace plugboard::testing
