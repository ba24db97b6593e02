// serve's bulkheads (core/serving/bulkheads.h), through the real binary and real plugins:
// a plugin whose calls hang, or spin, is refused once its bound is reached, and hello,
// called meanwhile, is answered every time, never refused nor told Running. No timing
// is asserted: bench/bulkhead_bench.sh measures hello's throughput and latency beside them.
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/argo.h"
#include "tests/support/eventually.h"
#include "tests/support/plugin_dir.h"
#include "tests/support/prometheus.h"
#include "tests/support/server_process.h"

namespace plugboard::testing {
namespace {

using nlohmann::json;
using ::testing::HasSubstr;

// An Argo request for `key` whose workflow uid is `uid`: each uid is a call of its own.
std::string body(const std::string& key, const json& args, const std::string& uid) {
  json b = json::parse(argoBody(key, args));
  b["workflow"]["metadata"]["uid"] = uid;
  return b.dump();
}

constexpr int kBad = 100;  // connections on the bad plugin, as in the bench
constexpr int kCalls = 4;  // its bound of calls in flight
constexpr int kQueue = 2;  // and of queued calls
constexpr int kHello = 4;  // connections calling hello meanwhile
constexpr int kHelloEach = 50;

class ServeBulkheadTest : public ::testing::TestWithParam<const char*> {
 protected:
  // The bad plugin's args: "hang" sleeps without looking at its cancellation, "spin" burns
  // CPU until the process ends (tests/fixtures/crashy.cc).
  static json badArgs(const std::string& how) {
    return how == "hang" ? json{{"sleep_ms", 600'000}} : json{{"crash", "spin"}};
  }

  PluginDir dir_{{"hello"}, {"crashy"}};
  // Short waits in the queue (half the reply deadline) so the queued calls are refused
  // soon; the bad plugin's bound from the file, hello's the default.
  std::string config_ = dir_.write("serve.toml", R"(
reply_deadline = "2s"
grace_period = "1s"
[plugin_limits.crashy]
calls = 4
queue = 2
)");
};

TEST_P(ServeBulkheadTest, ABadPluginIsRefusedAtItsBoundAndHelloIsAnsweredEveryTime) {
  ServeProcess serve({"--config", config_, "--plugins", dir_.plugins(), "--no-watch"});
  const std::string how = GetParam();

  std::mutex mu;
  std::map<std::string, int> bad;  // "status phase-or-error" -> count
  std::vector<std::string> refusals;
  std::vector<std::thread> bad_threads;
  for (int i = 0; i < kBad; ++i) {
    bad_threads.emplace_back([&, i] {
      HttpClient client(serve.port());
      const auto r = client.request("POST", "/api/v1/template.execute",
                                    body("crashy", badArgs(how), how + std::to_string(i)));
      std::lock_guard lock(mu);
      if (r.status == 503) {
        ++bad["503"];
        refusals.push_back(r.body);
      } else {
        ++bad[std::to_string(r.status) + " " +
              json::parse(r.body, nullptr, false).value("/node/phase"_json_pointer, "?")];
      }
    });
  }
  // Every bad call has either its place or its refusal before hello is called.
  HttpClient probe(serve.port());
  const auto crashy = [&] {
    const json list = json::parse(probe.request("GET", "/api/v1/plugins").body);
    for (const auto& p : list["plugins"]) {
      if (p.value("name", "") == "crashy") return p;
    }
    return json::object();
  };
  // Not ASSERT: the threads must be joined whatever happens.
  EXPECT_TRUE(eventually(
      [&] {
        const json p = crashy();
        return p.value("in_flight", 0) == kCalls &&
               p.value("queued", 0) + p.value("refused", 0) == kBad - kCalls;
      },
      std::chrono::seconds(30)))
      << probe.request("GET", "/api/v1/plugins").body;
  EXPECT_THAT(probe.request("GET", "/readyz").body,
              HasSubstr("crashy@1.0.0: 4/4 calls in flight, "));

  std::map<std::string, int> hello;  // "status phase" -> count
  std::vector<std::thread> hello_threads;
  for (int t = 0; t < kHello; ++t) {
    hello_threads.emplace_back([&, t] {
      HttpClient client(serve.port());
      for (int n = 0; n < kHelloEach; ++n) {
        const auto r = client.request("POST", "/api/v1/template.execute",
                                      body("hello", {{"name", "Ada"}},
                                           "hello-" + std::to_string(t) + "-" + std::to_string(n)));
        const std::string phase =
            json::parse(r.body, nullptr, false).value("/node/phase"_json_pointer, r.body);
        std::lock_guard lock(mu);
        ++hello[std::to_string(r.status) + " " + phase];
      }
    });
  }
  for (auto& t : hello_threads) t.join();
  EXPECT_EQ(hello, (std::map<std::string, int>{{"200 Succeeded", kHello * kHelloEach}}));

  for (auto& t : bad_threads) t.join();
  // The calls that got a place started and are answered Running at the reply deadline;
  // the others, at once or after their wait in the queue, are refused with 503.
  EXPECT_EQ(bad, (std::map<std::string, int>{{"200 Running", kCalls}, {"503", kBad - kCalls}}));
  for (const auto& r : refusals) {
    EXPECT_THAT(r, HasSubstr("plugin 'crashy@1.0.0'"));
    EXPECT_THAT(r, HasSubstr("try again later"));
  }

  // The plugin list, /readyz and /metrics say the same.
  EXPECT_THAT(probe.request("GET", "/readyz").body,
              HasSubstr("crashy@1.0.0: 4/4 calls in flight, 0/2 queued, 96 refused\n"));
  const json plugins = json::parse(probe.request("GET", "/api/v1/plugins").body)["plugins"];
  for (const auto& p : plugins) {
    if (p["name"] == "crashy") {
      EXPECT_EQ(p["in_flight"], kCalls);
      EXPECT_EQ(p["queued"], 0);
      EXPECT_EQ(p["refused"], kBad - kCalls);
      EXPECT_EQ(p["limits"], (json{{"calls", kCalls}, {"queue", kQueue}}));
    }
    if (p["name"] == "hello") {
      EXPECT_EQ(p["refused"], 0);
      EXPECT_EQ(p["limits"], (json{{"calls", 16}, {"queue", 256}}));
    }
  }
  const std::string text = probe.request("GET", "/metrics").body;
  if (!havePrometheusParser()) GTEST_SKIP() << "python3-prometheus-client is not installed";
  const ParsedMetrics parsed = parsePrometheus(text);
  ASSERT_TRUE(parsed.ok) << parsed.error << "\n" << text;
  std::map<std::string, double> seen;  // "name plugin [label]" -> value
  for (const auto& s : parsed.samples) {
    const std::string name = s["name"];
    if (!name.starts_with("plugboard_plugin_calls")) continue;
    std::string key = name + " " + s["labels"]["plugin"].get<std::string>();
    if (s["labels"].contains("reason")) key += " " + s["labels"]["reason"].get<std::string>();
    if (s["labels"].contains("bound")) key += " " + s["labels"]["bound"].get<std::string>();
    seen[key] = s["value"];
  }
  EXPECT_EQ(seen["plugboard_plugin_calls_in_flight crashy@1.0.0"], kCalls);
  EXPECT_EQ(seen["plugboard_plugin_calls_queued crashy@1.0.0"], 0);
  EXPECT_EQ(seen["plugboard_plugin_calls_limit crashy@1.0.0 in_flight"], kCalls);
  EXPECT_EQ(seen["plugboard_plugin_calls_limit crashy@1.0.0 queued"], kQueue);
  EXPECT_EQ(seen["plugboard_plugin_calls_refused_total crashy@1.0.0 full"], kBad - kCalls - kQueue);
  EXPECT_EQ(seen["plugboard_plugin_calls_refused_total crashy@1.0.0 waited"], kQueue);
  EXPECT_EQ(seen["plugboard_plugin_calls_refused_total hello@1.2.0 full"], 0);
  EXPECT_EQ(seen["plugboard_plugin_calls_refused_total hello@1.2.0 waited"], 0);
}

INSTANTIATE_TEST_SUITE_P(HangingAndSpinning, ServeBulkheadTest, ::testing::Values("hang", "spin"));

}  // namespace
}  // namespace plugboard::testing
