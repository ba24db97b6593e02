// serve's /metrics through the real binary and real plugins: calls counted by the phase
// they ended in, the build's version, the whole text read by the Prometheus project's own
// parser; and the 404 of a misspelled plugin names the nearest one.
#include <map>
#include <string>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/plugin_dir.h"
#include "tests/support/prometheus.h"
#include "tests/support/server_process.h"

namespace plugboard::testing {
namespace {

using Json = nlohmann::json;
using ::testing::HasSubstr;

class MetricsTest : public ::testing::Test {
 protected:
  MetricsTest()
      : dir_({"hello", "fail"}, {"throws"}),
        serve_({"--plugins", dir_.plugins()}),
        client_(serve_.port()) {}
  // Calls `plugin` directly; returns the phase it answered.
  std::string call(const std::string& plugin, const std::string& args = "{}") {
    auto r = client_.request("POST", "/api/v1/plugins/" + plugin + "/template.execute", args);
    EXPECT_EQ(r.status, 200) << r.body;
    return Json::parse(r.body).value("phase", "");
  }
  PluginDir dir_;
  ServeProcess serve_;
  HttpClient client_;
};

TEST_F(MetricsTest, CountsCallsByPhaseAndParsesAsPrometheusText) {
  EXPECT_EQ(call("hello", R"({"name":"Ada"})"), "Succeeded");
  for (int i = 0; i < 4; ++i) EXPECT_EQ(call("fail", R"({"message":"no luck"})"), "Failed");
  EXPECT_EQ(call("throws"), "Error");
  const auto reply = client_.request("GET", "/metrics");
  ASSERT_EQ(reply.status, 200);
  const std::string& text = reply.body;
  EXPECT_THAT(text, HasSubstr("plugboard_calls_total{plugin=\"fail@"));
  if (!havePrometheusParser()) GTEST_SKIP() << "python3-prometheus-client is not installed";
  const ParsedMetrics parsed = parsePrometheus(text);
  ASSERT_TRUE(parsed.ok) << parsed.error << "\n" << text;
  std::map<std::string, double> by_phase;  // "plugin phase" -> calls
  std::map<std::string, double> errors;    // plugin -> plugboard_call_errors_total
  const Json* build = nullptr;
  for (const auto& s : parsed.samples) {
    if (s["name"] == "plugboard_calls_total") {
      const std::string plugin = s["labels"]["plugin"];
      by_phase[plugin.substr(0, plugin.find('@')) + " " + s["labels"]["phase"].get<std::string>()] =
          s["value"];
    }
    if (s["name"] == "plugboard_call_errors_total") {
      const std::string plugin = s["labels"]["plugin"];
      errors[plugin.substr(0, plugin.find('@'))] = s["value"];
    }
    if (s["name"] == "plugboard_build_info") build = &s;
  }
  EXPECT_EQ(by_phase["hello Succeeded"], 1);
  EXPECT_EQ(by_phase["hello Failed"], 0);
  EXPECT_EQ(by_phase["fail Failed"], 4);
  EXPECT_EQ(by_phase["fail Error"], 0);
  EXPECT_EQ(by_phase["throws Error"], 1);
  // The metric of the Error phase alone is still there, for dashboards made before.
  EXPECT_EQ(errors["throws"], 1);
  EXPECT_EQ(errors["fail"], 0);
  ASSERT_NE(build, nullptr) << text;
  EXPECT_EQ((*build)["value"], 1);
  const std::string version = plugboard({"version"}).out;
  EXPECT_THAT(version,
              HasSubstr("plugboard " + (*build)["labels"]["version"].get<std::string>() + " ("));
  EXPECT_THAT(version, HasSubstr((*build)["labels"]["compiler"].get<std::string>()));
  EXPECT_THAT(version, HasSubstr((*build)["labels"]["build_type"].get<std::string>() + ")"));
  // Every family has its help and type: the parser would call it "unknown" otherwise.
  for (const auto& s : parsed.samples) EXPECT_NE(s["type"], "unknown") << s.dump();
}

TEST_F(MetricsTest, TheListCountsFailedAndErrorApart) {
  call("fail", R"({"message":"no luck"})");
  call("fail", R"({"message":"no luck"})");
  call("throws");
  const Json list = Json::parse(client_.request("GET", "/api/v1/plugins").body);
  std::map<std::string, Json> by_name;
  for (const auto& p : list["plugins"]) by_name[p.value("name", "")] = p;
  EXPECT_EQ(by_name["fail"]["calls"], 2);
  EXPECT_EQ(by_name["fail"]["failed"], 2);
  EXPECT_EQ(by_name["fail"]["errors"], 0);
  EXPECT_EQ(by_name["throws"]["failed"], 0);
  EXPECT_EQ(by_name["throws"]["errors"], 1);
}

TEST_F(MetricsTest, AMisspelledPluginIsAnswered404WithTheNearestName) {
  auto r = client_.request("POST", "/api/v1/plugins/helo/template.execute", "{}");
  EXPECT_EQ(r.status, 404);
  EXPECT_EQ(Json::parse(r.body)["error"], "no plugin 'helo'; did you mean 'hello'?");
  auto far = client_.request("POST", "/api/v1/plugins/zzzzzz/template.execute", "{}");
  EXPECT_EQ(far.status, 404);
  EXPECT_EQ(Json::parse(far.body)["error"], "no plugin 'zzzzzz'");
}

}  // namespace
}  // namespace plugboard::testing
