#include "core/serving/argo.h"

#include <optional>

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

// What the body means when parsed whole into a value: the key and args, or the error.
std::string expectedFromValue(const std::string& body) {
  Json j = Json::parse(body, nullptr, false);
  if (j.is_discarded()) return "error: the body is not valid JSON";
  if (!j.is_object()) return "error: the body must be a JSON object";
  if (j.contains("workflow") && !j["workflow"].is_object()) return "error: workflow: expected an object";
  if (!j.contains("template") || !j["template"].is_object()) return "error: template: expected an object";
  const Json& plugin = j["template"].value("plugin", Json());
  if (!plugin.is_object()) return "error: template.plugin: expected an object with exactly one key, the plugin's name";
  if (plugin.size() != 1) return "error: template.plugin: expected exactly one key, got " + std::to_string(plugin.size());
  return plugin.begin().key() + " " + plugin.begin().value().dump();
}

TEST(ArgoTest, ReadsTheBodyAsAParsedValueWould) {
  for (const std::string body : {
           R"({"template":{"plugin":{"k":{"a":[1,{"b":[[],{}],"c":null}],"d":"x"}}}})",
           R"({"template":{"plugin":{"k":[1,[2,[3]],{"x":{"y":{}}}]}}})",
           R"({"template":{"plugin":{"k":"text"}}})",
           R"({"template":{"plugin":{"k":-1.5e3}}})",
           R"({"template":{"plugin":{"k":1,"k":{"again":true}}}})",
           R"({"template":{"plugin":{"a":1}},"template":{"plugin":{"b":2}}})",
           R"({"template":{"plugin":{"a":1},"plugin":{"b":{}}}})",
           R"({"template":{"plugin":{"a":1},"plugin":{}}})",
           R"({"template":{"name":"t","inputs":{"plugin":{"x":1}},"plugin":{"k":{"plugin":{"y":2}}}}})",
           R"({"workflow":{"template":{"plugin":{"no":1}}},"template":{"plugin":{"k":0}}})",
           R"({"template":[{"plugin":{"k":1}}]})",
           R"({"template":{"plugin":[{"k":1}]}})",
           R"({"template":{"plugin":{"k":1}},"workflow":[]})",
           R"({"template":{"plugin":{"k":1}}} trailing)",
           R"({"template":{"plugin":{"k":{"unterminated":[1,2}}}})",
           R"("just a string")",
           R"({})",
       }) {
    auto r = parseExecuteTemplateArgs(body);
    const std::string got = r.ok() ? r->key + " " + r->args.dump() : "error: " + r.error().message();
    EXPECT_EQ(got, expectedFromValue(body)) << body;
  }
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

TEST(ArgoTest, RunningOrPendingIsNeverRequeuedAfterZero) {
  // Argo calls again only when requeue > 0: a zero delay would leave the node Running.
  for (const Phase phase : {Phase::kRunning, Phase::kPending}) {
    for (const std::optional<Millis> requeue :
         {std::optional<Millis>{}, std::optional<Millis>{Millis(0)}}) {
      const Json reply =
          Json::parse(executeTemplateReply({phase, "", Json::object(), requeue}, Millis(2000)));
      EXPECT_EQ(reply["requeue"], "2s") << phaseName(phase);
      EXPECT_EQ(reply["node"]["phase"], phaseName(phase));
    }
  }
}

TEST(ArgoTest, PendingRoundTripsWithItsRequeue) {
  const Outcome o =
      parseOutcome(R"({"phase":"Pending","message":"queued","requeue_ms":5000})", "p");
  ASSERT_EQ(o.phase, Phase::kPending);
  EXPECT_EQ(o.toJson()["phase"], "Pending");
  const Json reply = Json::parse(executeTemplateReply(o, Millis(1000)));
  EXPECT_EQ(reply,
            Json::parse(R"({"node":{"phase":"Pending","message":"queued"},"requeue":"5s"})"));
}

}  // namespace
}  // namespace plugboard::core
