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

TEST(ArgoTest, ParametersKeepThePluginsOrder) {
  const Outcome outcome = parseOutcome(
      R"({"phase":"Succeeded","outputs":{"parameters":{"zeta":"1","alpha":"2","mid":"3"}}})", "p");
  ASSERT_EQ(outcome.phase, Phase::kSucceeded) << outcome.message;
  EXPECT_EQ(executeTemplateReply(outcome, Millis(1000)),
            R"({"node":{"phase":"Succeeded","outputs":{"parameters":[{"name":"zeta","value":"1"},)"
            R"({"name":"alpha","value":"2"},{"name":"mid","value":"3"}]}}})");
  // Parameters named elsewhere in the result do not count; a repeated object: the last.
  const Outcome again =
      parseOutcome(R"({"phase":"Succeeded","x":{"parameters":{"q":"0"}},)"
                   R"("outputs":{"parameters":{"a":"0"},"parameters":{"b":"1","a":"2"}}})",
                   "p");
  EXPECT_EQ(again.parameter_order, (std::vector<std::string>{"b", "a"}));
  // Strings holding braces, quotes and keys, and arrays, do not confuse the reading.
  const Outcome tricky = parseOutcome(
      R"({"message":"{\"outputs\":{\"parameters\":{\"q\":1}}}","outputs":{"artifacts":[{"x":"}"}],)"
      R"("parameters":{"y":"[{","x":"\"}","w":"v"}},"phase":"Succeeded"})",
      "p");
  EXPECT_EQ(tricky.parameter_order, (std::vector<std::string>{"y", "x", "w"})) << tricky.message;
  // A name with an escape (Argo's names have none): the object's order.
  const Outcome escaped = parseOutcome(
      R"({"phase":"Succeeded","outputs":{"parameters":{"b\u0062":"1","a":"2"}}})", "p");
  EXPECT_EQ(escaped.parameter_order, std::vector<std::string>{});
  EXPECT_EQ(escaped.outputs["parameters"].size(), 2u);
  EXPECT_EQ(Json::parse(executeTemplateReply(again, Millis(1000)))["node"]["outputs"]["parameters"],
            Json::parse(R"([{"name":"b","value":"1"},{"name":"a","value":"2"}])"));
}

TEST(ArgoTest, ChecksOutputsAgainstArgosShape) {
  const auto problem = [](const char* outputs) {
    Status st = checkArgoOutputs(Json::parse(outputs));
    return st ? std::string("ok") : st.error().message();
  };
  EXPECT_EQ(problem(R"({})"), "ok");
  EXPECT_EQ(problem(R"({"result":"x","exitCode":"0","parameters":{"a":"1"},"extra":5,
      "artifacts":[{"name":"a","path":"/tmp/a","mode":420,"optional":true,
                    "s3":{"key":"k"},"archive":{"none":{}},"globalName":null}]})"),
            "ok");
  EXPECT_EQ(problem(R"({"result":3})"), "outputs.result is a number, not a string");
  EXPECT_EQ(problem(R"({"exitCode":0})"), "outputs.exitCode is a number, not a string");
  EXPECT_EQ(problem(R"({"parameters":{"a":1}})"), "outputs.parameters.a is a number, not a string");
  EXPECT_EQ(problem(R"({"parameters":[1]})"),
            "outputs.parameters is an array, not an object of strings");
  EXPECT_EQ(problem(R"({"artifacts":{"name":"a"}})"), "outputs.artifacts is an object, not a list");
  EXPECT_EQ(problem(R"({"artifacts":[{"path":"p"}]})"),
            "outputs.artifacts[0].name must be a string");
  EXPECT_EQ(problem(R"({"artifacts":[{"name":"a"},{"name":"b","optional":"yes"}]})"),
            "outputs.artifacts[1].optional is a string, not a boolean");
  EXPECT_EQ(problem(R"({"artifacts":[{"name":"a","mode":"0644"}]})"),
            "outputs.artifacts[0].mode must be a 32-bit integer");
  EXPECT_EQ(problem(R"({"artifacts":[{"name":"a","s3":"bucket"}]})"),
            "outputs.artifacts[0].s3 is a string, not an object");

  Outcome bad{Phase::kSucceeded, "done", Json{{"result", true}}, {}};
  keepArgoDecodable(bad, "tool@1.2.0");
  EXPECT_EQ(bad.phase, Phase::kError);
  EXPECT_EQ(bad.message,
            "plugin 'tool' returned outputs Argo cannot decode: outputs.result is a boolean, not a "
            "string");
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
