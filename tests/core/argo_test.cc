#include "core/argo.h"

#include <gtest/gtest.h>

namespace plugboard::core {
namespace {

TEST(ArgoTest, ParsesExecuteTemplateArgs) {
  const std::string body = R"({"workflow":{"metadata":{"name":"wf","namespace":"ns","uid":"u"}},
      "template":{"name":"t","container":{"args":[1,{"x":null}]},"plugin":{"hello-executor-plugin":{"name":"Ada"}}},
      "extra":[true]})";
  auto r = parseExecuteTemplateArgs(body);
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->key, "hello-executor-plugin");
  EXPECT_EQ(r->args, Json({{"name", "Ada"}}));
  EXPECT_EQ(r->rpc, "template.execute");
  EXPECT_EQ(r->context_text, body);  // the plugin sees the body as Argo sent it
}

TEST(ArgoTest, RejectsBadShapes) {
  EXPECT_EQ(parseExecuteTemplateArgs("{").error().message(), "the body is not valid JSON");
  EXPECT_EQ(parseExecuteTemplateArgs("[]").error().message(), "the body must be a JSON object");
  EXPECT_EQ(parseExecuteTemplateArgs(R"({"workflow":{}})").error().message(),
            "template: expected an object");
  EXPECT_EQ(parseExecuteTemplateArgs(R"({"workflow":"wf","template":{"plugin":{"a":{}}}})").error().message(),
            "workflow: expected an object");
  EXPECT_EQ(parseExecuteTemplateArgs(R"({"template":{"name":"t","plugin":[]}})").error().message(),
            "template.plugin: expected an object with exactly one key, the plugin's name");
  // Members that are dropped while parsing must still be valid JSON.
  EXPECT_EQ(parseExecuteTemplateArgs(R"({"workflow":{"metadata":{"name":wf}},"template":{"plugin":{"a":{}}}})")
                .error()
                .message(),
            "the body is not valid JSON");
  EXPECT_EQ(parseExecuteTemplateArgs(R"({"template":{"plugin":{}}})").error().message(),
            "template.plugin: expected exactly one key, got 0");
  EXPECT_EQ(parseExecuteTemplateArgs(R"({"template":{"plugin":{"a":{},"b":{}}}})").error().message(),
            "template.plugin: expected exactly one key, got 2");
}

TEST(ArgoTest, SucceededIsNeverRequeued) {
  Outcome o{Phase::kSucceeded, "ok", {{"parameters", {{"b", "2"}, {"a", "1"}}}}, Millis(3'600'000)};
  Json reply = Json::parse(executeTemplateReply(o, Millis(1000)));
  EXPECT_EQ(reply, Json::parse(R"({"node":{"phase":"Succeeded","message":"ok",
      "outputs":{"parameters":[{"name":"a","value":"1"},{"name":"b","value":"2"}]}}})"));
}

TEST(ArgoTest, RepliesEscapeTextAndKeepOtherOutputs) {
  Outcome o{Phase::kFailed, "line \"one\"\n\ttwo \xc3\xa9",
            {{"parameters", {{"q\"uote", 3}}}, {"artifacts", Json::array({{{"name", "log"}}})}}, {}};
  Json reply = Json::parse(executeTemplateReply(o, Millis(1000)));
  EXPECT_EQ(reply["node"]["message"], "line \"one\"\n\ttwo \xc3\xa9");
  EXPECT_EQ(reply["node"]["outputs"]["parameters"], Json::parse(R"([{"name":"q\"uote","value":3}])"));
  EXPECT_EQ(reply["node"]["outputs"]["artifacts"], Json::parse(R"([{"name":"log"}])"));
  EXPECT_FALSE(reply.contains("requeue"));
  // A plugin that declined a named call: Argo knows no such phase.
  EXPECT_EQ(Json::parse(executeTemplateReply({Phase::kNotHandled, "", Json::object(), {}}, Millis(1000))),
            Json::parse(R"({"node":{"phase":"Failed"}})"));
}

TEST(ArgoTest, RunningIsRequeuedAfterItsDelayOrThePollInterval) {
  EXPECT_EQ(Json::parse(executeTemplateReply({Phase::kRunning, "", Json::object(), Millis(90'000)}, Millis(1000)))
                ["requeue"],
            "1m30s");
  EXPECT_EQ(Json::parse(executeTemplateReply({Phase::kRunning, "", Json::object(), {}}, Millis(1000)))["requeue"],
            "1s");
}

}  // namespace
}  // namespace plugboard::core
