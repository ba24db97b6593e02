// plugboard exec: Argo's ExecuteTemplateArgs in, ExecuteTemplateReply out. The cases are
// the ones Argo's agent is tested with, plus ours.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/argo.h"
#include "tests/support/plugin_dir.h"
#include "tests/support/subprocess.h"

namespace plugboard::testing {
namespace {

using Json = nlohmann::json;

class ExecTest : public ::testing::Test {
 protected:
  // Sends a template whose plugin object is {key: args}; returns the reply.
  Json exec(const std::string& key, const Json& args, std::vector<std::string> extra = {}) {
    return execBody(argoBody(key, args), extra);
  }
  Json execBody(const std::string& body, std::vector<std::string> extra = {}) {
    std::vector<std::string> args = {"exec", "--plugins", dir_.plugins()};
    args.insert(args.end(), extra.begin(), extra.end());
    last_ = plugboard(args, body);
    return Json::parse(last_.out);
  }

  PluginDir dir_{{"hello", "echo", "fail", "multi", "legacy", "sleep"}, {"scripted"}};
  RunResult last_;
};

TEST_F(ExecTest, NamedPluginSucceeds) {
  auto reply = exec("hello", {{"name", "Argo"}});
  EXPECT_EQ(last_.exit_code, 0) << last_.err;
  EXPECT_EQ(reply, Json::parse(R"({"node":{"phase":"Succeeded","message":"Hello, Argo!",
      "outputs":{"parameters":[{"name":"greeting","value":"Hello, Argo!"}]}}})"));
}

TEST_F(ExecTest, SucceededIsNotRequeuedWhateverItAsks) {
  for (int requeue_ms : {0, 3'600'000}) {
    auto reply = exec("scripted", {{"requeue_ms", requeue_ms}});
    EXPECT_EQ(reply["node"]["phase"], "Succeeded");
    EXPECT_FALSE(reply.contains("requeue")) << reply.dump();
  }
}

TEST_F(ExecTest, RunningIsRequeuedEvenWithoutADelay) {
  auto own = exec("scripted", {{"phase", "Running"}, {"requeue_ms", 90'000}});
  EXPECT_EQ(own["node"]["phase"], "Running");
  EXPECT_EQ(own["requeue"], "1m30s");
  auto none = exec("scripted", {{"phase", "Running"}}, {"--poll-interval", "5s"});
  EXPECT_EQ(none["requeue"], "5s");
}

TEST_F(ExecTest, UnknownNameIsHandledByAPolledProvider) {
  auto reply = exec("someone-executor-plugin", {{"only_key", "someone-executor-plugin"}});
  EXPECT_EQ(reply["node"]["phase"], "Succeeded") << reply.dump();
  EXPECT_EQ(last_.exit_code, 0);
}

TEST_F(ExecTest, UnknownNameThatNobodyHandlesFails) {
  // Only polite plugins installed: scripted declines a key that is not the one it is told
  // to expect, the legacy plugin declines args without its marker.
  PluginDir polite{{"legacy"}, {"scripted"}};
  Json body = {{"template", {{"plugin", {{"nobody", {{"only_key", "somebody"}}}}}}}};
  auto r = run({binary().string(), "exec", "--plugins", polite.plugins()}, body.dump());
  auto reply = Json::parse(r.out);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_EQ(reply["node"]["phase"], "Failed");
  EXPECT_NE(reply["node"]["message"].get<std::string>().find("no plugin executed the template"),
            std::string::npos);
}

TEST_F(ExecTest, NamedPluginThatDeclinesFails) {
  auto reply = exec("scripted", {{"only_key", "someone-else"}});
  EXPECT_EQ(reply["node"]["phase"], "Failed");
  EXPECT_EQ(reply["node"]["message"], "plugin 'scripted' could not execute the template");
}

TEST_F(ExecTest, BothNamesReachTheLegacyPlugin) {
  for (const char* key : {"legacy-executor-plugin", "legacy"}) {
    auto reply = exec(key, {{"legacy", {{"x", 1}}}});
    EXPECT_EQ(reply["node"]["phase"], "Succeeded") << key;
    EXPECT_EQ(reply["node"]["message"], "handled by the legacy plugin") << key;
  }
}

TEST_F(ExecTest, AThrowingPluginGivesAnErrorNamingIt) {
  auto reply = exec("scripted", {{"throw", "bad day"}});
  EXPECT_EQ(reply["node"]["phase"], "Error");
  EXPECT_EQ(reply["node"]["message"], "plugin 'scripted' threw: bad day");
  EXPECT_EQ(last_.exit_code, 1);
}

TEST_F(ExecTest, ADeadlineCancelsTheCall) {
  auto reply = exec("sleep", {{"seconds", 30}}, {"--timeout", "200ms"});
  EXPECT_EQ(reply["node"]["phase"], "Failed");
  // The plugin's own answer to the cancel is kept beside the deadline.
  EXPECT_EQ(reply["node"]["message"],
            "deadline of 200ms passed; the call was cancelled; it answered: cancelled while sleeping");
}

TEST_F(ExecTest, BadBodiesGetAJsonErrorAndExitStatus2) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"not json", "the body is not valid JSON"},
      {R"({"template":{"plugin":{}}})", "template.plugin: expected exactly one key, got 0"},
      {R"({"template":{"plugin":{"a":{},"b":{}}}})", "template.plugin: expected exactly one key, got 2"},
      {R"({"workflow":{}})", "template: expected an object"},
  };
  for (const auto& [body, error] : cases) {
    auto reply = execBody(body);
    EXPECT_EQ(last_.exit_code, 2) << body;
    EXPECT_EQ(reply, Json({{"error", error}})) << body;
  }
}

}  // namespace
}  // namespace plugboard::testing
