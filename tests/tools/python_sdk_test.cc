// The Python SDK (sdk/python/plugboard_sdk): Python plugins driven through their stdin and
// stdout as a deployer drives them, over protocol v1 (docs/protocol.md).
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <sstream>
#include <string>
#include <vector>

#include "tests/support/files.h"
#include "tests/support/paths.h"
#include "tests/support/protocol_lines.h"
#include "tests/support/subprocess.h"

namespace plugboard::testing {
namespace {

using Json = nlohmann::json;

// Runs `python3 <script>` (or `python3 -m <module>`) with the SDK and the example plugins
// on PYTHONPATH.
RunResult python(const std::vector<std::string>& args, const std::string& input) {
  std::vector<std::string> argv = {
      "/usr/bin/env",
      "PYTHONPATH=" + (sourceDir() / "sdk/python").string() + ":" + (sourceDir() / "plugins/python").string(),
      "PYTHONDONTWRITEBYTECODE=1", "/usr/bin/python3"};
  argv.insert(argv.end(), args.begin(), args.end());
  return run(argv, input);
}

const Json kHello = {{"type", "hello"}, {"protocols", {1}}};
const Json kShutdown = {{"type", "shutdown"}};

Json execute(int id, const Json& args, const std::string& via = "name", const std::string& rpc = "template.execute") {
  return {{"type", "execute"}, {"id", id}, {"request", {{"rpc", rpc}, {"key", "k"}, {"via", via}, {"args", args}}}};
}

// A plugin written for these tests; %CONCURRENCY% is replaced.
constexpr const char* kScripted = R"PY(import logging
import os
import sys
import threading
import time

import plugboard_sdk as pb

_lock = threading.Lock()
_active = 0
_most = 0
_barrier = threading.Barrier(2, timeout=5)


def explode(message):
    raise ValueError(message)


@pb.plugin(name="scripted", version="0.1.0", provides=["template.execute"],
           concurrency="%CONCURRENCY%", aliases=["scripted-alias"])
def execute(request):
    global _active, _most
    args = request.args or {}
    with _lock:
        _active += 1
        _most = max(_most, _active)
    try:
        if "print" in args:
            print(args["print"])
            os.system("echo child-wrote-this")
        if "log" in args:
            logging.getLogger("scripted").warning(args["log"] * args.get("times", 1))
        if "raise" in args:
            explode(args["raise"])
        if "exit" in args:
            sys.exit(args["exit"])
        if "barrier" in args:
            _barrier.wait()
        if "sleep" in args:
            time.sleep(args["sleep"])
        if "wait_cancel" in args:
            if request.wait_cancelled(args["wait_cancel"]):
                return pb.error("cancelled" if request.cancelled else "flag not set")
            return pb.failed("never cancelled")
        if "blob" in args:
            return {"blob": "x" * args["blob"]}
        if "nest" in args or "nest_parameter" in args:
            nested = []
            for _ in range(args.get("nest", args.get("nest_parameter")) - 1):
                nested = [nested]
            if "nest_parameter" in args:
                return {"nested": nested}
            return pb.succeeded().with_outputs({"nested": nested})
        return {"id": args.get("id", ""), "most": _most, "numbers": [1, 2]}
    finally:
        with _lock:
            _active -= 1


if __name__ == "__main__":
    pb.run()
)PY";

class PythonSdkTest : public ::testing::Test {
 protected:
  std::string script(const std::string& concurrency = "parallel") {
    std::string text = kScripted;
    const std::string placeholder = "%CONCURRENCY%";
    text.replace(text.find(placeholder), placeholder.size(), concurrency);
    const auto path = dir_ / ("scripted_" + concurrency + ".py");
    writeFile(path, text);
    return path.string();
  }
  // The line of `needle` in the scripted plugin, 1-based.
  static int lineOf(const std::string& needle) {
    const std::string text = kScripted;
    const auto at = text.find(needle);
    return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<long>(at), '\n'));
  }
  TempDir dir_;
};

TEST_F(PythonSdkTest, GreetsWithTheManifestAndAnswersACall) {
  auto r = python({"-m", "pyhello"}, lines({kHello, execute(1, {{"name", "Ada"}}), kShutdown}));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto messages = parseLines(r.out);
  ASSERT_FALSE(messages.empty()) << r.err;
  ASSERT_EQ(messages[0]["type"], "hello");
  EXPECT_EQ(messages[0]["protocol"], 1);
  const Json& manifest = messages[0]["manifest"];
  EXPECT_EQ(manifest["kind"], "executor");
  EXPECT_EQ(manifest["name"], "pyhello");
  EXPECT_EQ(manifest["version"], "1.0.0");
  EXPECT_EQ(manifest["abi"], 1);
  EXPECT_EQ(manifest["provides"], Json({"template.execute"}));
  EXPECT_EQ(manifest["concurrency"], "parallel");
  EXPECT_EQ(manifest["schemas"]["template.execute"]["input"]["required"], Json({"name"}));
  EXPECT_EQ(manifest["schemas"]["template.execute"]["input"]["properties"]["name"]["type"], "string");
  const Json* one = resultFor(messages, 1);
  ASSERT_TRUE(one) << r.out;
  EXPECT_EQ((*one)["result"], Json({{"phase", "Succeeded"},
                                    {"message", "Hello, Ada!"},
                                    {"outputs", {{"parameters", {{"greeting", "Hello, Ada!"}}}}}}));
  bool logged = false;
  for (const auto& m : messages) {
    logged = logged || (m["type"] == "log" && m["message"] == "greeting Ada" && m["id"] == 1 && m["level"] == "info");
  }
  EXPECT_TRUE(logged) << r.out;
}

TEST_F(PythonSdkTest, TheLauncherServesOnTheDescriptorsPlugboardProtocolFdsNames) {
  // As the container deployer passes the channel: descriptors 3 and 4, stdout not used.
  auto r = python({"-c",
                   "import os, sys; os.dup2(0, 3); os.dup2(1, 4); os.dup2(2, 1);"
                   "os.environ['PLUGBOARD_PROTOCOL_FDS'] = '3,4';"
                   "sys.argv = ['plugboard_sdk', '--path', '" +
                       (sourceDir() / "plugins/python/hello.py").string() +
                       "'];"
                       "import runpy; runpy.run_module('plugboard_sdk', run_name='__main__')"},
                  lines({kHello, execute(1, {{"name", "Ada"}}), kShutdown}));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const auto messages = parseLines(r.out);
  ASSERT_FALSE(messages.empty()) << r.err;
  EXPECT_EQ(messages[0]["manifest"]["name"], "hello");
  const Json* one = resultFor(messages, 1);
  ASSERT_TRUE(one) << r.out;
  EXPECT_EQ((*one)["result"]["message"], "Hello, Ada!");
}

TEST_F(PythonSdkTest, SaysItIsNotPolledAndRefusesRpcsItDoesNotProvide) {
  auto r = python({(sourceDir() / "plugins/python/pyhello.py").string()},
                  lines({kHello, execute(1, {{"name", "Ada"}}, "poll"),
                         execute(2, {{"name", "Ada"}}, "name", "other.rpc"), {{"type", "cancel"}, {"id", 42}},
                         execute(3, {{"name", "Bo"}}, "direct")}));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto messages = parseLines(r.out);
  const Json* one = resultFor(messages, 1);
  const Json* two = resultFor(messages, 2);
  const Json* three = resultFor(messages, 3);
  ASSERT_TRUE(one && two && three) << r.out << r.err;
  // Whether it is polled is its manifest's "polled", which the runtime applies; the SDK
  // no longer declines a polled call itself.
  EXPECT_EQ(messages[0]["manifest"]["polled"], false) << r.out;
  EXPECT_EQ((*one)["result"]["phase"], "Succeeded");
  EXPECT_EQ((*two)["result"]["phase"], "Error");
  EXPECT_NE((*two)["result"]["message"].get<std::string>().find("'other.rpc'"), std::string::npos) << r.out;
  EXPECT_EQ((*three)["result"]["message"], "Hello, Bo!");  // the cancel for an unknown id was ignored
}

TEST_F(PythonSdkTest, RunsCallsConcurrentlyAndMatchesResultsById) {
  const auto start = std::chrono::steady_clock::now();
  auto r = python({script()}, lines({kHello, execute(1, {{"id", "slow"}, {"barrier", true}, {"sleep", 0.3}}),
                                     execute(2, {{"id", "fast"}, {"barrier", true}}), kShutdown}));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(4));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto messages = parseLines(r.out);
  const Json* one = resultFor(messages, 1);
  const Json* two = resultFor(messages, 2);
  ASSERT_TRUE(one && two) << r.out << r.err;
  EXPECT_EQ((*one)["result"]["outputs"]["parameters"]["id"], "slow");
  EXPECT_EQ((*two)["result"]["outputs"]["parameters"]["id"], "fast");
  EXPECT_EQ((*two)["result"]["outputs"]["parameters"]["most"], "2");  // both ran at once
  EXPECT_EQ((*two)["result"]["outputs"]["parameters"]["numbers"], "[1,2]");  // JSON text
  EXPECT_LT(two, one) << "the fast call answered first";
  EXPECT_EQ(messages[0]["manifest"]["aliases"], Json({"scripted-alias"}));
}

TEST_F(PythonSdkTest, SerialPluginRunsOneCallAtATimeInOrder) {
  auto r = python({script("serial")}, lines({kHello, execute(1, {{"sleep", 0.1}}), execute(2, {{"sleep", 0.05}}),
                                             execute(3, Json::object())}));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto messages = parseLines(r.out);
  ASSERT_FALSE(messages.empty()) << r.err;
  EXPECT_EQ(messages[0]["manifest"]["concurrency"], "serial");
  std::vector<int> order;
  for (const auto& m : messages) {
    if (m["type"] != "result") continue;
    order.push_back(m["id"]);
    EXPECT_EQ(m["result"]["outputs"]["parameters"]["most"], "1") << m;
  }
  EXPECT_EQ(order, (std::vector<int>{1, 2, 3})) << r.out;
}

TEST_F(PythonSdkTest, KeepsPrintsAndChildOutputOffTheChannelAndForwardsLogging) {
  auto r = python({script()}, lines({kHello, execute(1, {{"print", "stray print"}, {"log", "logged line"}}), kShutdown}));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto messages = parseLines(r.out);  // every stdout line is a protocol frame
  EXPECT_TRUE(resultFor(messages, 1)) << r.out;
  EXPECT_NE(r.err.find("stray print"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("child-wrote-this"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("stray print"), std::string::npos);
  EXPECT_EQ(r.out.find("child-wrote-this"), std::string::npos);
  bool logged = false;
  for (const auto& m : messages) {
    logged = logged || (m["type"] == "log" && m["message"] == "logged line" && m["level"] == "warn" && m["id"] == 1);
  }
  EXPECT_TRUE(logged) << r.out;
}

TEST_F(PythonSdkTest, TurnsExceptionsAndSysExitIntoErrors) {
  auto r = python({script()}, lines({kHello, execute(1, {{"raise", "bad input"}}), execute(2, {{"exit", 3}}),
                                     execute(3, {{"id", "after"}}), kShutdown}));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto messages = parseLines(r.out);
  const Json* one = resultFor(messages, 1);
  const Json* two = resultFor(messages, 2);
  const Json* three = resultFor(messages, 3);
  ASSERT_TRUE(one && two && three) << r.out << r.err;
  EXPECT_EQ((*one)["result"]["phase"], "Error");
  const std::string expected = "plugin 'scripted' raised ValueError: bad input (at scripted_parallel.py:" +
                               std::to_string(lineOf("raise ValueError")) + " in explode";
  EXPECT_NE((*one)["result"]["message"].get<std::string>().find(expected), std::string::npos)
      << (*one)["result"]["message"] << "\nexpected: " << expected;
  EXPECT_EQ((*two)["result"]["phase"], "Error");
  EXPECT_NE((*two)["result"]["message"].get<std::string>().find("plugin 'scripted' called sys.exit(3)"),
            std::string::npos) << *two;
  EXPECT_EQ((*three)["result"]["phase"], "Succeeded");  // the plugin lives on
}

TEST_F(PythonSdkTest, DeliversCancelToTheRunningCall) {
  const auto start = std::chrono::steady_clock::now();
  auto r = python({script()}, lines({kHello, execute(7, {{"wait_cancel", 30}}), {{"type", "cancel"}, {"id", 7}}}));
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(5));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const auto messages = parseLines(r.out);
  const Json* seven = resultFor(messages, 7);
  ASSERT_TRUE(seven) << r.out << r.err;
  EXPECT_EQ((*seven)["result"], Json({{"phase", "Error"}, {"message", "cancelled"}}));
}

TEST_F(PythonSdkTest, RequeuesUntilCountedThenSucceeds) {
  const Json args = {{"id", "job-1"}, {"times", 3}};
  auto r = python({"-m", "pycounter"},
                  lines({kHello, execute(1, args), execute(2, args), execute(3, args), kShutdown}));
  // The three calls may run in any order; the counter answers Running twice, then Succeeded.
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto messages = parseLines(r.out);
  int running = 0, done = 0;
  for (const auto& m : messages) {
    if (m["type"] != "result") continue;
    if (m["result"]["phase"] == "Running") {
      ++running;
      EXPECT_EQ(m["result"]["requeue_ms"], 50) << m;
    } else {
      ++done;
      EXPECT_EQ(m["result"]["phase"], "Succeeded") << m;
      EXPECT_EQ(m["result"]["outputs"]["parameters"]["count"], "3") << m;
    }
  }
  EXPECT_EQ(running, 2) << r.out;
  EXPECT_EQ(done, 1) << r.out;
}

TEST_F(PythonSdkTest, RefusesProtocolErrors) {
  auto garbage = python({"-m", "pyhello"}, "this is not a frame\n");
  EXPECT_EQ(garbage.exit_code, 2);
  EXPECT_NE(garbage.err.find("not a protocol message"), std::string::npos) << garbage.err;
  EXPECT_TRUE(garbage.out.empty()) << garbage.out;
  auto early = python({"-m", "pyhello"}, lines({execute(1, Json::object())}));
  EXPECT_EQ(early.exit_code, 2);
  EXPECT_NE(early.err.find("'execute' before 'hello'"), std::string::npos) << early.err;
  auto unknown = python({"-m", "pyhello"}, lines({kHello, {{"type", "bogus"}}}));
  EXPECT_EQ(unknown.exit_code, 2);
  EXPECT_NE(unknown.err.find("unknown message type 'bogus'"), std::string::npos) << unknown.err;
  auto version = python({"-m", "pyhello"}, lines({{{"type", "hello"}, {"protocols", {7}}}}));
  EXPECT_EQ(version.exit_code, 2);
  EXPECT_NE(version.err.find("offers protocols [7]; this plugin speaks 1"), std::string::npos) << version.err;
  EXPECT_TRUE(version.out.empty()) << version.out;
  auto big = python({"-m", "pyhello"}, lines({kHello}) + std::string(17 * 1024 * 1024, 'x') + "\n");
  EXPECT_EQ(big.exit_code, 2);
  EXPECT_NE(big.err.find("exceeds the limit of 16777216"), std::string::npos) << big.err;
}

TEST_F(PythonSdkTest, KeepsEveryFrameWithinTheLimitTheHelloSets) {
  const Json hello = {{"type", "hello"}, {"protocols", {1}}, {"frame_limit", 4096}};
  auto r = python({script()},
                  lines({hello, execute(1, {{"blob", 5000}}),
                         execute(2, {{"id", "b"}, {"log", "l"}, {"times", 10000}}), kShutdown}));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  expectFramesKeptWithin(4096, "scripted", r.out);
  // The limit binds what it reads too, and a limit below 4096 is refused.
  auto big = python({script()}, lines({hello, execute(1, {{"id", std::string(5000, 'x')}})}));
  EXPECT_EQ(big.exit_code, 2);
  EXPECT_NE(big.err.find("exceeds the limit of 4096"), std::string::npos) << big.err;
  auto small =
      python({script()}, lines({{{"type", "hello"}, {"protocols", {1}}, {"frame_limit", 100}}}));
  EXPECT_EQ(small.exit_code, 2);
  EXPECT_NE(small.err.find("has a \"frame_limit\" that is not an integer of at least 4096"),
            std::string::npos)
      << small.err;
}

// A result its frame would nest beyond the runtime's limit is that call's Error, however deep
// (the JSON encoder alone would fail with a RecursionError); the channel stays in step.
TEST_F(PythonSdkTest, AnswersAResultTooDeepForItsFrameWithAnError) {
  auto r = python({script()}, lines({kHello, execute(1, {{"nest", 509}}), execute(2, {{"nest", 510}}),
                                     execute(3, {{"nest", 100000}}), execute(4, {{"id", "next"}}),
                                     execute(5, {{"nest_parameter", 100000}}), kShutdown}));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const auto messages = parseLines(r.out);
  const Json* fits = resultFor(messages, 1);
  const Json* deep = resultFor(messages, 2);
  const Json* deeper = resultFor(messages, 3);
  const Json* next = resultFor(messages, 4);
  ASSERT_TRUE(fits && deep && deeper && next) << r.out.substr(0, 400) << r.err;
  EXPECT_EQ((*fits)["result"]["phase"], "Succeeded");
  for (const Json* refused : {deep, deeper}) {
    EXPECT_EQ((*refused)["result"]["phase"], "Error");
    EXPECT_EQ((*refused)["result"]["message"],
              "plugin 'scripted' returned a result nested deeper than 511 levels");
  }
  EXPECT_EQ((*next)["result"]["outputs"]["parameters"]["id"], "next") << *next;
  // A parameter's value is written as JSON text, which no depth breaks either.
  const Json* parameter = resultFor(messages, 5);
  ASSERT_TRUE(parameter) << r.err;
  EXPECT_EQ((*parameter)["result"]["phase"], "Error");
  EXPECT_EQ((*parameter)["result"]["message"],
            "plugin 'scripted' returned parameters that are not JSON: they nest too deep")
      << *parameter;
}

TEST_F(PythonSdkTest, ExitsZeroAtShutdownOrEndOfInput) {
  auto shutdown = python({"-m", "pyhello"}, lines({kHello, kShutdown, execute(1, Json::object())}));
  EXPECT_EQ(shutdown.exit_code, 0) << shutdown.err;
  EXPECT_EQ(parseLines(shutdown.out).size(), 1u) << shutdown.out;  // hello only: nothing after shutdown
  auto eof = python({"-m", "pyhello"}, lines({kHello}));
  EXPECT_EQ(eof.exit_code, 0) << eof.err;
}

}  // namespace
}  // namespace plugboard::testing
