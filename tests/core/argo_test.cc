#include "core/argo.h"

#include <gtest/gtest.h>

namespace plugboard::core {
namespace {

TEST(ArgoTest, ParsesExecuteTemplateArgs) {
  auto r = parseExecuteTemplateArgs(R"({"workflow":{"metadata":{"name":"wf","namespace":"ns","uid":"u"}},
      "template":{"name":"t","plugin":{"hello-executor-plugin":{"name":"Ada"}}}})");
  ASSERT_TRUE(r.ok()) << r.error().message();
  EXPECT_EQ(r->key, "hello-executor-plugin");
  EXPECT_EQ(r->args, Json({{"name", "Ada"}}));
  EXPECT_EQ(r->rpc, "template.execute");
  EXPECT_EQ(r->context["workflow"]["metadata"]["name"], "wf");
  EXPECT_EQ(r->context["template"]["name"], "t");
}

TEST(ArgoTest, RejectsBadShapes) {
  EXPECT_EQ(parseExecuteTemplateArgs("{").error().message(), "the body is not valid JSON");
  EXPECT_EQ(parseExecuteTemplateArgs("[]").error().message(), "the body must be a JSON object");
  EXPECT_EQ(parseExecuteTemplateArgs(R"({"workflow":{}})").error().message(),
            "template: expected an object");
  EXPECT_EQ(parseExecuteTemplateArgs(R"({"template":{"plugin":{}}})").error().message(),
            "template.plugin: expected exactly one key, got 0");
  EXPECT_EQ(parseExecuteTemplateArgs(R"({"template":{"plugin":{"a":{},"b":{}}}})").error().message(),
            "template.plugin: expected exactly one key, got 2");
}

TEST(ArgoTest, SucceededIsNeverRequeued) {
  Outcome o{Phase::kSucceeded, "ok", {{"parameters", {{"b", "2"}, {"a", "1"}}}}, Millis(3'600'000)};
  Json reply = executeTemplateReply(o, Millis(1000));
  EXPECT_EQ(reply, Json::parse(R"({"node":{"phase":"Succeeded","message":"ok",
      "outputs":{"parameters":[{"name":"a","value":"1"},{"name":"b","value":"2"}]}}})"));
}

TEST(ArgoTest, RunningIsRequeuedAfterItsDelayOrThePollInterval) {
  EXPECT_EQ(executeTemplateReply({Phase::kRunning, "", Json::object(), Millis(90'000)}, Millis(1000))["requeue"],
            "1m30s");
  EXPECT_EQ(executeTemplateReply({Phase::kRunning, "", Json::object(), {}}, Millis(1000))["requeue"], "1s");
}

}  // namespace
}  // namespace plugboard::core
