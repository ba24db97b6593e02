// plugboard-host: a native plugin served over the out-of-process protocol, driven through
// its stdin and stdout as a deployer drives it.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sstream>

#include "tests/support/paths.h"
#include "tests/support/protocol_lines.h"
#include "tests/support/subprocess.h"

namespace plugboard::testing {
namespace {

using Json = nlohmann::json;

std::string host() { return (buildDir() / "plugboard-host").string(); }

const Json kHello = {{"type", "hello"}, {"protocols", {1}}};

Json execute(int id, const Json& args) {
  return {{"type", "execute"}, {"id", id}, {"request", {{"rpc", "template.execute"}, {"key", "scripted"}, {"via", "name"}, {"args", args}}}};
}

TEST(HostTest, GreetsRunsCallsAndKeepsStrayOutputOffTheChannel) {
  auto r = run({host(), fixture("scripted").string()},
               lines({kHello, execute(1, {{"id", "a"}, {"print", "stray print\n"}, {"log", "hello log"}}),
                      execute(2, {{"phase", "Failed"}, {"message", "no"}}), {{"type", "shutdown"}}}));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  auto messages = parseLines(r.out);
  ASSERT_FALSE(messages.empty());
  EXPECT_EQ(messages[0]["type"], "hello");
  EXPECT_EQ(messages[0]["protocol"], 1);
  EXPECT_EQ(messages[0]["manifest"]["name"], "scripted");
  const Json* one = resultFor(messages, 1);
  const Json* two = resultFor(messages, 2);
  ASSERT_TRUE(one && two) << r.out;
  EXPECT_EQ((*one)["result"]["phase"], "Succeeded");
  EXPECT_EQ((*two)["result"], Json({{"phase", "Failed"}, {"message", "no"}}));  // as the plugin answered
  bool logged = false;
  for (const auto& m : messages) logged = logged || (m["type"] == "log" && m["message"] == "hello log");
  EXPECT_TRUE(logged) << r.out;
  EXPECT_NE(r.err.find("stray print"), std::string::npos);  // on stderr, not the channel
}

// The channel on descriptors 3 and 4, as the container deployer passes it: the shell
// puts the test's stdin and stdout there and gives the program /dev/null and stderr.
RunResult runOnFds3And4(const std::vector<std::string>& argv, const std::string& input,
                        const std::string& fds = "3,4") {
  std::vector<std::string> shell = {"/bin/sh", "-c",
                                    "exec 3<&0 4>&1 </dev/null >&2; PLUGBOARD_PROTOCOL_FDS=" + fds +
                                        " exec \"$@\"",
                                    "sh"};
  shell.insert(shell.end(), argv.begin(), argv.end());
  return run(shell, input);
}

TEST(HostTest, ServesTheChannelOnTheDescriptorsPlugboardProtocolFdsNames) {
  auto r = runOnFds3And4({host(), fixture("scripted").string()},
                         lines({kHello, execute(1, {{"id", "a"}, {"print", "stray print\n"}}), {{"type", "shutdown"}}}));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const auto messages = parseLines(r.out);
  const Json* one = resultFor(messages, 1);
  ASSERT_TRUE(one) << r.out << r.err;
  EXPECT_EQ((*one)["result"]["phase"], "Succeeded");
  EXPECT_NE(r.err.find("stray print"), std::string::npos);

  auto wrong = runOnFds3And4({host(), fixture("scripted").string()}, lines({kHello}), "3,77");
  EXPECT_EQ(wrong.exit_code, 2);
  EXPECT_NE(wrong.err.find("PLUGBOARD_PROTOCOL_FDS='3,77' does not name two open descriptors"), std::string::npos)
      << wrong.err;
}

TEST(HostTest, KeepsEveryFrameWithinTheLimitTheHelloSets) {
  const Json hello = {{"type", "hello"}, {"protocols", {1}}, {"frame_limit", 4096}};
  auto r = run({host(), fixture("hog").string()}, lines({hello,
                                                         execute(1, {{"result_bytes", 5000}}),
                                                         execute(2, {{"log_bytes", 10000}}),
                                                         {{"type", "shutdown"}}}));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  expectFramesKeptWithin(4096, "hog", r.out);
}

TEST(HostTest, ReadsFramesUpToTheLimitTheHelloSets) {
  const std::string padding(20 << 20, 'p');  // over the default limit of 16 MiB
  const Json hello = {{"type", "hello"}, {"protocols", {1}}, {"frame_limit", 24 << 20}};
  auto r = run({host(), fixture("hog").string()},
               lines({hello, execute(1, {{"padding", padding}}), {{"type", "shutdown"}}}));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const auto messages = parseLines(r.out);
  const Json* one = resultFor(messages, 1);
  ASSERT_TRUE(one) << r.out.substr(0, 400);
  EXPECT_EQ((*one)["result"]["phase"], "Succeeded") << *one;
}

// A result its frame would nest beyond the runtime's limit is that call's Error; the channel
// stays in step for the next call.
TEST(HostTest, AnswersAResultTooDeepForItsFrameWithAnError) {
  const auto call = [](int id, const Json& args) {
    return Json{{"type", "execute"}, {"id", id}, {"request", {{"args", args}}}};
  };
  // {"phase":"Succeeded","outputs":{"nested":[...]}}: two levels more than its arrays.
  auto r = run({host(), fixture("scripted").string()},
               lines({kHello, call(1, {{"nest", 509}}), call(2, {{"nest", 510}}), call(3, {}),
                      {{"type", "shutdown"}}}));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const auto messages = parseLines(r.out);
  const Json* fits = resultFor(messages, 1);
  const Json* deep = resultFor(messages, 2);
  const Json* next = resultFor(messages, 3);
  ASSERT_TRUE(fits && deep && next) << r.out;
  EXPECT_EQ((*fits)["result"]["phase"], "Succeeded");
  EXPECT_EQ((*deep)["result"]["phase"], "Error");
  EXPECT_EQ((*deep)["result"]["message"],
            "plugin 'scripted' returned a result nested deeper than 511 levels");
  EXPECT_EQ((*next)["result"]["phase"], "Succeeded");
}

TEST(HostTest, CancelStopsARunningCall) {
  auto r = run({host(), plugin("sleep").string()},
               lines({kHello,
                      {{"type", "execute"}, {"id", 7}, {"request", {{"rpc", "template.execute"}, {"args", {{"seconds", 60}}}}}},
                      {{"type", "cancel"}, {"id", 7}}}));
  EXPECT_EQ(r.exit_code, 0) << r.err;
  const auto messages = parseLines(r.out);
  const Json* seven = resultFor(messages, 7);
  ASSERT_TRUE(seven) << r.out;
  EXPECT_EQ((*seven)["result"]["phase"], "Error");
}

TEST(HostTest, RefusesProtocolErrorsAndUnloadablePlugins) {
  auto garbage = run({host(), plugin("hello").string()}, "this is not a frame\n");
  EXPECT_EQ(garbage.exit_code, 2);
  EXPECT_NE(garbage.err.find("not a protocol message"), std::string::npos) << garbage.err;
  auto early = run({host(), plugin("hello").string()}, lines({execute(1, Json::object())}));
  EXPECT_EQ(early.exit_code, 2);
  EXPECT_NE(early.err.find("'execute' before 'hello'"), std::string::npos) << early.err;
  auto version = run({host(), plugin("hello").string()}, lines({{{"type", "hello"}, {"protocols", {7}}}}));
  EXPECT_EQ(version.exit_code, 2);
  EXPECT_NE(version.err.find("offers protocols [7]; this host speaks 1"), std::string::npos) << version.err;
  auto missing = run({host(), "/nonexistent/plugin.so"}, lines({kHello}));
  EXPECT_EQ(missing.exit_code, 3);
  EXPECT_NE(missing.err.find("/nonexistent/plugin.so"), std::string::npos) << missing.err;
  EXPECT_TRUE(missing.out.empty());
}

}  // namespace
}  // namespace plugboard::testing
