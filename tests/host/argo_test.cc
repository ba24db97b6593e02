// The host kit's Argo messages for clients of Argo plugin sidecars: the ExecuteTemplateArgs
// built from a plugboard request, and the plugboard result read from an
// ExecuteTemplateReply, with every malformed reply refused with its reason.
#include <plugboard/host/argo.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

namespace plugboard::host {
namespace {

using Json = nlohmann::json;

TEST(ArgoMessagesTest, ArgsKeepTheWorkflowAndTemplateAndHoldThePluginsKeyWithTheStepsArgs) {
  const Json request = Json::parse(
      R"({"rpc":"template.execute","key":"hi-executor-plugin","via":"name","args":{"n":1},)"
      R"("workflow":{"metadata":{"name":"wf","uid":"u"}},)"
      R"("template":{"name":"t","inputs":{},"plugin":{"hi-executor-plugin":{"old":true}}}})");
  const Json body = Json::parse(executeTemplateArgs(request, "hi", "step"));
  EXPECT_EQ(body, Json::parse(R"({"workflow":{"metadata":{"name":"wf","uid":"u"}},)"
                              R"("template":{"name":"t","inputs":{},"plugin":{"hi":{"n":1}}}})"));
  // From a run: no template name but the step's; no workflow: empty metadata.
  const Json bare = Json::parse(executeTemplateArgs(Json::parse(R"({"args":null})"), "hi", "step"));
  EXPECT_EQ(
      bare,
      Json::parse(R"({"workflow":{"metadata":{}},"template":{"name":"step","plugin":{"hi":{}}}})"));
}

TEST(ArgoMessagesTest, ARepliesNodeBecomesTheResult) {
  auto r = resultOfExecuteTemplateReply(
      R"({"node":{"phase":"Succeeded","message":"ok","outputs":{"parameters":[)"
      R"({"name":"a","value":"x"},{"name":"n","value":3},{"name":"empty"}],"result":"r"}}})");
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(Json::parse(*r),
            Json::parse(R"({"phase":"Succeeded","message":"ok","outputs":)"
                        R"({"parameters":{"a":"x","n":"3","empty":""},"result":"r"}})"));
  r = resultOfExecuteTemplateReply(R"({"node":{"phase":"Running"},"requeue":"1m30s"})");
  ASSERT_TRUE(r) << r.error().message();
  EXPECT_EQ(Json::parse(*r), Json::parse(R"({"phase":"Running","requeue_ms":90000})"));
  EXPECT_EQ(*resultOfExecuteTemplateReply("{}"), R"({"phase":"NotHandled"})");
  EXPECT_EQ(*resultOfExecuteTemplateReply(R"({"node":null})"), R"({"phase":"NotHandled"})");
  // Argo's own sidecars answer null for a template that is not theirs (the e2e hello).
  EXPECT_EQ(*resultOfExecuteTemplateReply("null"), R"({"phase":"NotHandled"})");
  EXPECT_EQ(*resultOfExecuteTemplateReply(" null\n"), R"({"phase":"NotHandled"})");
}

TEST(ArgoMessagesTest, MalformedRepliesAreRefusedWithTheirReason) {
  const std::pair<std::string, const char*> cases[] = {
      {"not json", "the reply is not JSON"},
      {"[]", "the reply is not a JSON object"},
      {"\"null\"", "the reply is not a JSON object"},
      {R"({"node":{"phase":"Exploded"}})", "node.phase is \"Exploded\""},
      {R"({"node":{}})", "node.phase is missing"},
      {R"({"node":{"phase":"Succeeded","outputs":{"parameters":{"a":"b"}}}})",
       "outputs.parameters is an object, not a list"},
      {R"({"node":{"phase":"Succeeded","outputs":{"parameters":[{"name":"a","value":[1]}]}}})",
       "outputs.parameters[0].value is an array, not a string"},
      {R"({"node":{"phase":"Succeeded","outputs":{"exitCode":0}}})",
       "node.outputs.exitCode is a number, not a string"},
      {R"({"node":{"phase":"Running"},"requeue":"soon"})", "requeue:"},
      {std::string("{\"node\":null}\0x", 15), "NUL"},
  };
  for (const auto& [body, reason] : cases) {
    auto r = resultOfExecuteTemplateReply(body);
    ASSERT_FALSE(r) << body;
    EXPECT_NE(r.error().message().find(reason), std::string::npos) << r.error().message();
  }
}

}  // namespace
}  // namespace plugboard::host
