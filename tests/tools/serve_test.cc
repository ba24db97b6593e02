// plugboard serve over real HTTP, on real plugin files.
#include <csignal>
#include <future>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/argo.h"
#include "tests/support/files.h"
#include "tests/support/paths.h"
#include "tests/support/plugin_dir.h"
#include "tests/support/server_process.h"

namespace plugboard::testing {
namespace {

using Json = nlohmann::json;

class ServeTest : public ::testing::Test {
 protected:
  PluginDir dir_;
};

TEST_F(ServeTest, ExecutesTemplatesTheArgoWay) {
  ServeProcess serve({"--plugins", dir_.plugins()});
  HttpClient client(serve.port());
  auto named =
      client.request("POST", "/api/v1/template.execute", argoBody("hello", {{"name", "Argo"}}));
  ASSERT_EQ(named.status, 200);
  EXPECT_EQ(named.headers["Content-Type"], "application/json");
  EXPECT_EQ(Json::parse(named.body),
            Json::parse(R"({"node":{"phase":"Succeeded","message":"Hello, Argo!",
      "outputs":{"parameters":[{"name":"greeting","value":"Hello, Argo!"}]}}})"));
  // Not hosted here: {} so that Argo's agent asks its other sidecars. (Every plugin here is
  // polled and declines, scripted because the key is not the one it is told to expect.)
  auto elsewhere = client.request("POST", "/api/v1/template.execute",
                                  argoBody("slack", {{"only_key", "scripted"}}));
  EXPECT_EQ(elsewhere.status, 200);
  EXPECT_EQ(elsewhere.body, "{}");
  // A named plugin that declines: a Failed node.
  auto declined =
      client.request("POST", "/api/v1/template.execute", argoBody("legacy", {{"x", 1}}));
  EXPECT_EQ(Json::parse(declined.body)["node"]["phase"], "Failed");
  EXPECT_EQ(Json::parse(declined.body)["node"]["message"],
            "plugin 'legacy' could not execute the template");
  // Running is requeued.
  auto running = client.request("POST", "/api/v1/template.execute",
                                argoBody("scripted", {{"phase", "Running"}}));
  EXPECT_EQ(Json::parse(running.body)["requeue"], "1s");
}

TEST_F(ServeTest, AnswersEachKindOfBadRequestAndKeepsServing) {
  ServeProcess serve({"--plugins", dir_.plugins(), "--body-limit", "2000"});
  HttpClient client(serve.port());
  auto other = client.request("POST", "/api/v1/template.archive", "{}");
  EXPECT_EQ(other.status, 404);
  EXPECT_EQ(Json::parse(other.body)["error"], "no method 'template.archive'");
  EXPECT_EQ(client.request("GET", "/api/v1/template.execute").status, 405);
  auto bad_json = client.request("POST", "/api/v1/template.execute", "{nope");
  EXPECT_EQ(bad_json.status, 400);
  EXPECT_EQ(Json::parse(bad_json.body)["error"], "the body is not valid JSON");
  auto two_keys = client.request("POST", "/api/v1/template.execute",
                                 R"({"template":{"plugin":{"a":{},"b":{}}}})");
  EXPECT_EQ(two_keys.status, 400);
  EXPECT_EQ(Json::parse(two_keys.body)["error"],
            "template.plugin: expected exactly one key, got 2");
  EXPECT_EQ(client.request("POST", "/api/v1/template.execute", std::string(5000, ' ')).status, 413);

  HttpClient headers(serve.port());
  EXPECT_EQ(headers.request("GET", "/healthz", "", {{"X-Big", std::string(20000, 'x')}}).status,
            431);
  HttpClient garbage(serve.port());
  EXPECT_EQ(garbage.raw("THIS IS NOT HTTP\r\n\r\n").status, 400);

  HttpClient after(serve.port());
  EXPECT_EQ(
      after.request("POST", "/api/v1/template.execute", argoBody("echo", {{"a", "b"}})).status,
      200);
}

TEST_F(ServeTest, RequiresTheBearerTokenWhenOneIsConfigured) {
  TempDir tmp;
  writeFile(tmp / "token", "s3cret\n");
  ServeProcess serve({"--plugins", dir_.plugins(), "--token-file", (tmp / "token").string()});
  HttpClient client(serve.port());
  const std::string body = argoBody("hello", Json::object());
  EXPECT_EQ(client.request("POST", "/api/v1/template.execute", body).status, 403);
  EXPECT_EQ(
      client.request("POST", "/api/v1/template.execute", body, {{"Authorization", "Bearer wrong"}})
          .status,
      403);
  EXPECT_EQ(
      client.request("POST", "/api/v1/template.execute", body, {{"Authorization", "Bearer s3cret"}})
          .status,
      200);
  // Probes and metrics need no token; the rest of /api/v1 does.
  for (const char* probe : {"/healthz", "/readyz", "/metrics"}) {
    EXPECT_EQ(client.request("GET", probe).status, 200) << probe;
  }
  EXPECT_EQ(client.request("GET", "/api/v1/plugins").status, 403);
  EXPECT_EQ(client.request("GET", "/api/v1/plugins", "", {{"Authorization", "Bearer s3cret"}}).status,
            200);
}

TEST_F(ServeTest, ACallPastTheTimeoutIsCancelledAndTheNextIsServed) {
  ServeProcess serve({"--plugins", dir_.plugins(), "--timeout", "200ms"});
  HttpClient client(serve.port());
  auto late = client.request("POST", "/api/v1/template.execute",
                             argoBody("scripted", {{"sleep_ms", 60000}}));
  const Json node = Json::parse(late.body)["node"];
  EXPECT_EQ(node["phase"], "Failed") << late.body;
  // The plugin's own answer to the cancel is kept (the scripted fixture's counts its calls).
  EXPECT_EQ(node["message"],
            "deadline of 200ms passed; the call was cancelled; it answered: cancelled after call 1")
      << late.body;
  auto next = client.request("POST", "/api/v1/template.execute", argoBody("hello", Json::object()));
  EXPECT_EQ(Json::parse(next.body)["node"]["phase"], "Succeeded") << next.body;
}

TEST_F(ServeTest, ACallStillRunningAtTheEndOfTheGracePeriodIsAbandonedAndServeExits) {
  ServeProcess serve({"--plugins", dir_.plugins(), "--grace-period", "200ms", "--log-level", "info"});
  HttpClient stubborn(serve.port());
  std::thread t([&] {
    stubborn.request("POST", "/api/v1/template.execute",
                     argoBody("scripted", {{"log", "stubborn call started"},
                                           {"sleep_ms", 60000},
                                           {"ignore_cancel", true}}));
  });
  EXPECT_TRUE(serve.waitForOutput("stubborn call started")) << serve.output();
  EXPECT_EQ(serve.stop(SIGTERM), 0);
  t.join();  // its connection ended with the process
  EXPECT_NE(serve.output().find("1 call(s) did not finish within the grace period"),
            std::string::npos)
      << serve.output();
}

TEST_F(ServeTest, ListsPluginsCallsThemDirectlyAndCountsInMetrics) {
  ServeProcess serve({"--plugins", dir_.plugins()});
  HttpClient client(serve.port());
  auto direct = client.request("POST", "/api/v1/plugins/multi/text.count", R"({"text":"a b c"})");
  ASSERT_EQ(direct.status, 200);
  EXPECT_EQ(Json::parse(direct.body)["outputs"]["parameters"]["words"], "3");
  EXPECT_EQ(client.request("POST", "/api/v1/plugins/nobody/x", "{}").status, 404);
  EXPECT_EQ(client.request("POST", "/api/v1/plugins/multi/text.count", "{nope").status, 400);

  auto list = Json::parse(client.request("GET", "/api/v1/plugins").body);
  bool found = false;
  for (const auto& p : list["plugins"]) {
    if (p.value("name", "") == "multi") {
      found = true;
      EXPECT_EQ(p["state"], "loaded");
      EXPECT_EQ(p["calls"], 1);
      EXPECT_TRUE(p["loaded_at"].is_string());
      EXPECT_EQ(p["provides"], Json({"text.upper", "text.count"}));
    }
    if (p.value("name", "") == "hello") {
      EXPECT_EQ(p["state"], "available");
    }
  }
  EXPECT_TRUE(found);
  auto metrics = client.request("GET", "/metrics");
  EXPECT_EQ(metrics.status, 200);
  EXPECT_NE(metrics.body.find("plugboard_calls_total{plugin=\"multi@1.0.0\",phase=\"Succeeded\"} 1"), std::string::npos)
      << metrics.body;
  EXPECT_NE(metrics.body.find("plugboard_call_duration_seconds_count{plugin=\"multi@1.0.0\"} 1"),
            std::string::npos);
  EXPECT_NE(metrics.body.find("# TYPE plugboard_call_duration_seconds histogram"),
            std::string::npos);
  EXPECT_EQ(client.request("GET", "/readyz").status, 200);
}

TEST_F(ServeTest, KeepAliveAndConcurrentClients) {
  ServeProcess serve({"--plugins", dir_.plugins()});
  std::vector<std::thread> clients;
  std::atomic<int> ok{0};
  for (int c = 0; c < 8; ++c) {
    clients.emplace_back([&, c] {
      HttpClient client(serve.port());  // one connection, many requests
      for (int i = 0; i < 25; ++i) {
        auto r = client.request("POST", "/api/v1/template.execute",
                                argoBody("echo", {{"n", std::to_string(c * 100 + i)}}));
        if (r.status == 200 && Json::parse(r.body)["node"]["outputs"]["parameters"][0]["value"] ==
                                   std::to_string(c * 100 + i)) {
          ++ok;
        }
      }
    });
  }
  for (auto& t : clients) t.join();
  EXPECT_EQ(ok, 200);
}

TEST_F(ServeTest, ASlowCallDoesNotHoldUpOtherConnectionsOnItsThread) {
  // One I/O thread, so both connections share its event loop: while the slow call runs, a
  // helper thread serves the loop's other connection.
  ServeProcess serve({"--plugins", dir_.plugins(), "--workers", "1", "--log-level", "info"});
  HttpClient slow(serve.port());
  HttpClient other(serve.port());
  EXPECT_EQ(other.request("GET", "/healthz").status, 200);
  std::atomic<bool> slow_done{false};
  std::thread t([&] {
    auto r = slow.request("POST", "/api/v1/template.execute",
                          argoBody("scripted", {{"log", "slow call started"}, {"sleep_ms", 2000}}));
    EXPECT_EQ(r.status, 200);
    slow_done = true;
  });
  EXPECT_TRUE(serve.waitForOutput("slow call started")) << serve.output();
  for (int i = 0; i < 20; ++i) {
    auto r = other.request("POST", "/api/v1/template.execute",
                           argoBody("echo", {{"i", std::to_string(i)}}));
    ASSERT_EQ(r.status, 200);
  }
  HttpClient fresh(serve.port());  // accepted and served meanwhile too
  EXPECT_EQ(fresh.request("GET", "/healthz").status, 200);
  EXPECT_FALSE(slow_done) << "the other connection waited for the slow call";
  t.join();
  EXPECT_TRUE(slow_done);
}

TEST_F(ServeTest, ALoopIsServedAgainAfterItsSlowCallAndHelperAreGone) {
  ServeProcess serve({"--plugins", dir_.plugins(), "--workers", "1"});
  HttpClient client(serve.port());
  for (int round = 0; round < 3; ++round) {
    // Slow enough to get a helper thread; then long enough for the helper to leave.
    auto slow =
        client.request("POST", "/api/v1/template.execute", argoBody("sleep", {{"seconds", 0.1}}));
    ASSERT_EQ(slow.status, 200);
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    auto next = std::async(std::launch::async, [&] {
      return client.request("POST", "/api/v1/template.execute",
                            argoBody("echo", {{"round", std::to_string(round)}}));
    });
    ASSERT_EQ(next.wait_for(std::chrono::seconds(5)), std::future_status::ready)
        << "the loop's thread was never woken for the next request";
    EXPECT_EQ(next.get().status, 200);
  }
}

TEST_F(ServeTest, ClosesIdleConnections) {
  ServeProcess serve({"--plugins", dir_.plugins(), "--idle-timeout", "200ms"});
  HttpClient idle(serve.port());
  EXPECT_TRUE(idle.closedByServer());
  HttpClient fresh(serve.port());
  EXPECT_EQ(fresh.request("GET", "/healthz").status, 200);
}

TEST_F(ServeTest, ShutdownLetsACallInFlightFinishAndRefusesNewWork) {
  ServeProcess serve({"--plugins", dir_.plugins(), "--grace-period", "10s", "--log-level", "info"});
  HttpClient slow(serve.port());
  HttpClient other(serve.port());
  HttpClient probe(serve.port());
  EXPECT_EQ(other.request("GET", "/healthz").status, 200);  // connected, kept alive
  EXPECT_EQ(probe.request("GET", "/readyz").status, 200);
  HttpReply slow_reply;
  std::thread t([&] {
    slow_reply = slow.request("POST", "/api/v1/template.execute",
                              argoBody("scripted", {{"log", "slow call started"}, {"sleep_ms", 1000}}));
  });
  EXPECT_TRUE(serve.waitForOutput("slow call started")) << serve.output();
  kill(serve.pid(), SIGTERM);
  EXPECT_TRUE(serve.waitForOutput("SIGTERM: shutting down")) << serve.output();
  EXPECT_EQ(probe.request("GET", "/readyz").status, 503);  // not ready: shutting down
  EXPECT_EQ(
      other.request("POST", "/api/v1/template.execute", argoBody("echo", Json::object())).status,
      503);
  t.join();
  EXPECT_EQ(serve.stop(0), 0);
  EXPECT_EQ(slow_reply.status, 200);
  EXPECT_EQ(Json::parse(slow_reply.body)["node"]["phase"], "Succeeded");
  EXPECT_NE(serve.output().find("plugboard: stopped"), std::string::npos) << serve.output();
}

// Two calls in flight at SIGTERM: the one that ends within the grace period is answered,
// the one that ignores its cancellation is the only one reported as still running.
TEST_F(ServeTest, ShutdownAnswersTheCallsThatFinishInTheGracePeriodAndCountsTheRest) {
  ServeProcess serve({"--plugins", dir_.plugins(), "--grace-period", "3s", "--log-level", "info"});
  HttpClient quick(serve.port());
  HttpClient stubborn(serve.port());
  HttpReply quick_reply;
  std::thread q([&] {
    quick_reply = quick.request(
        "POST", "/api/v1/template.execute",
        argoBody("scripted", {{"id", "quick"}, {"log", "quick call started"}, {"sleep_ms", 300}}));
  });
  std::thread s([&] {
    stubborn.request("POST", "/api/v1/template.execute",
                     argoBody("scripted", {{"id", "stubborn"},
                                           {"log", "stubborn call started"},
                                           {"sleep_ms", 60000},
                                           {"ignore_cancel", true}}));
  });
  EXPECT_TRUE(serve.waitForOutput("quick call started")) << serve.output();
  EXPECT_TRUE(serve.waitForOutput("stubborn call started")) << serve.output();
  EXPECT_EQ(serve.stop(SIGTERM), 0);
  q.join();
  s.join();  // its connection ended with the process
  EXPECT_EQ(quick_reply.status, 200) << serve.output();
  EXPECT_EQ(Json::parse(quick_reply.body)["node"]["phase"], "Succeeded") << quick_reply.body;
  EXPECT_NE(serve.output().find("1 call(s) did not finish within the grace period"),
            std::string::npos)
      << serve.output();
}

// The shared objects mapped into process `pid`.
std::set<std::string> mappedObjects(pid_t pid) {
  std::set<std::string> out;
  std::istringstream maps(readFile("/proc/" + std::to_string(pid) + "/maps"));
  for (std::string line; std::getline(maps, line);) {
    const auto slash = line.find('/');
    if (slash != std::string::npos && line.find(".so") != std::string::npos)
      out.insert(line.substr(slash));
  }
  return out;
}

// Each plugin's state in GET /api/v1/plugins, by name.
std::map<std::string, std::string> pluginStates(HttpClient& client) {
  std::map<std::string, std::string> out;
  // Named: a range-for over a member of a temporary would outlive the temporary.
  const Json listed = Json::parse(client.request("GET", "/api/v1/plugins").body);
  for (const auto& p : listed["plugins"]) out[p.value("name", "")] = p.value("state", "");
  return out;
}

TEST_F(ServeTest, ATemplateForAKeyNoHostedPluginHasLoadsNothing) {
  ServeProcess serve({"--plugins", dir_.plugins()});
  HttpClient client(serve.port());
  const auto before = mappedObjects(serve.pid());
  // scripted would answer this with an Error node if the hosted plugins were polled.
  auto elsewhere =
      client.request("POST", "/api/v1/template.execute", argoBody("slack", {{"phase", "Error"}}));
  EXPECT_EQ(elsewhere.status, 200);
  EXPECT_EQ(elsewhere.body, "{}");
  EXPECT_EQ(mappedObjects(serve.pid()), before);
  for (const auto& [name, state] : pluginStates(client)) EXPECT_EQ(state, "available") << name;
  // A hosted key loads its own plugin, and only that one.
  client.request("POST", "/api/v1/template.execute", argoBody("hello", Json::object()));
  EXPECT_GT(mappedObjects(serve.pid()).size(), before.size());
  for (const auto& [name, state] : pluginStates(client))
    EXPECT_EQ(state, name == "hello" ? "loaded" : "available") << name;
}

TEST_F(ServeTest, PollUnknownPollsTheHostedPluginsAndAnswersEmptyForTheirErrors) {
  ServeProcess serve({"--plugins", dir_.plugins(), "--poll-unknown"});
  HttpClient client(serve.port());
  auto taken = client.request("POST", "/api/v1/template.execute",
                              argoBody("slack", {{"only_key", "slack"}}));
  EXPECT_EQ(Json::parse(taken.body)["node"]["phase"], "Succeeded") << taken.body;
  auto failed =
      client.request("POST", "/api/v1/template.execute", argoBody("slack", {{"phase", "Error"}}));
  EXPECT_EQ(failed.body, "{}");
  const std::string metrics = client.request("GET", "/metrics").body;
  EXPECT_NE(metrics.find("plugboard_poll_errors_total{plugin=\"scripted@1.0.0\"} 1\n"),
            std::string::npos)
      << metrics;
}

// Argo's client sends a request again when it timed out and after each requeue; a call
// longer than the reply deadline must still run once and end with its own result.
TEST_F(ServeTest, ACallLongerThanTheReplyDeadlineRunsOnceWhileArgoSendsItAgain) {
  ServeProcess serve({"--plugins", dir_.plugins(), "--reply-deadline", "200ms"});
  const std::string body = argoBody("scripted", {{"id", "long"}, {"sleep_ms", 900}});
  // A second client sends the same body while the first waits, as after a client timeout.
  auto resent = std::async(std::launch::async, [&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    HttpClient other(serve.port());
    return Json::parse(other.request("POST", "/api/v1/template.execute", body).body);
  });
  HttpClient client(serve.port());
  int running = 0;
  Json done;
  for (int i = 0; i < 100; ++i) {
    auto reply = client.request("POST", "/api/v1/template.execute", body);
    done = Json::parse(reply.body);
    if (done["node"]["phase"] != "Running") break;
    // The first is answered while its call runs on the pool: the connection is free, and
    // stays open for the next request.
    if (i == 0) {
      EXPECT_NE(reply.headers["Connection"], "close");
    }
    ++running;
    EXPECT_EQ(done["requeue"], "1s");
  }
  EXPECT_GE(running, 1);
  // Running if it came while the call ran; on a loaded machine it may come after, and
  // then gets the call's own result. Either way it did not start a second call (below).
  const Json resent_reply = resent.get();
  if (resent_reply["node"]["phase"] != "Running") {
    EXPECT_EQ(resent_reply, done);
  }
  ASSERT_EQ(done["node"]["phase"], "Succeeded") << done.dump();
  EXPECT_EQ(done["node"]["outputs"]["parameters"][0],
            Json::parse(R"({"name":"calls","value":"1"})"));
  // Sent again after a lost reply: the same answer.
  EXPECT_EQ(Json::parse(client.request("POST", "/api/v1/template.execute", body).body), done);
  // The plugin ran once for all those requests; this direct call is its second.
  auto direct =
      client.request("POST", "/api/v1/plugins/scripted/template.execute", R"({"id":"long"})");
  EXPECT_EQ(Json::parse(direct.body)["outputs"]["parameters"]["calls"], "2");
}

}  // namespace
}  // namespace plugboard::testing
