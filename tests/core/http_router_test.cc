// What `plugboard serve` answers, decided in-process by the router: no sockets, real
// plugin files. tests/tools/serve_test.cc covers the same endpoints over HTTP.
#include "core/serving/http_router.h"

#include <atomic>
#include <future>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <boost/asio/buffer.hpp>
#include <plugboard/host/json_text.h>

#include "tests/support/argo.h"
#include "tests/support/deep_json.h"
#include "tests/support/launch.h"
#include "tests/support/plugin_dir.h"

namespace plugboard::core {
namespace {

using plugboard::testing::argoBody;

namespace http = boost::beast::http;
using plugboard::testing::PluginDir;

// The default options with one change.
template <class F>
ServerOptions optionsWith(F change) {
  ServerOptions options;
  change(options);
  return options;
}

HttpRequest request(http::verb method, const std::string& target, std::string body = "",
                    const std::string& authorization = "") {
  HttpRequest req{method, target, 11};
  if (!authorization.empty()) req.set(http::field::authorization, authorization);
  req.body() = std::move(body);
  req.prepare_payload();
  return req;
}

Json jsonOf(const HttpResponse& res) { return Json::parse(res.body()); }

class HttpRouterTest : public ::testing::Test {
 protected:
  explicit HttpRouterTest(ServerOptions options = {})
      : runtime_({dir_.plugins()}, TrustPolicy{}, plugboard::testing::inProcess()),
        options_(std::move(options)) {
    Status started = runtime_.start();
    EXPECT_TRUE(started) << started.error().message();
    router_ = std::make_unique<HttpRouter>(runtime_, options_, *pool_, pool_->clock());
  }
  ~HttpRouterTest() override { pool_.reset(); }  // its calls answer through the router

  // The answer `req` gets, waited for.
  HttpResponse handle(const HttpRequest& req) {
    auto answer = std::make_shared<std::promise<HttpResponse>>();
    auto result = answer->get_future();
    router_->handle(req, [answer](HttpResponse res) { answer->set_value(std::move(res)); });
    return result.get();
  }

  HttpResponse post(const std::string& target, std::string body,
                    const std::string& authorization = "") {
    return handle(request(http::verb::post, target, std::move(body), authorization));
  }
  HttpResponse get(const std::string& target) {
    return handle(request(http::verb::get, target));
  }

  // Parses `raw` as the server's connections do, with the router's limits, and answers it.
  HttpResponse roundTrip(const std::string& raw) {
    HttpParser parser;
    router_->limit(parser);
    boost::system::error_code ec;
    std::size_t used = 0;
    while (!ec && !parser.is_done() && used < raw.size()) {
      used += parser.put(boost::asio::buffer(raw.data() + used, raw.size() - used), ec);
    }
    if (ec) {
      auto answer = router_->readFailed(ec);
      EXPECT_TRUE(answer.has_value()) << ec.message();
      return answer ? std::move(*answer) : HttpResponse{};
    }
    return handle(parser.release());
  }

  PluginDir dir_{{"hello", "echo", "multi", "legacy", "sleep"}, {"scripted"}};
  std::unique_ptr<WorkPool> pool_ = std::make_unique<WorkPool>(8);
  LiveRuntime runtime_;
  ServerOptions options_;
  std::unique_ptr<HttpRouter> router_;
};

TEST_F(HttpRouterTest, ExecutesTemplatesTheArgoWay) {
  auto named = post("/api/v1/template.execute", argoBody("hello", {{"name", "Argo"}}));
  ASSERT_EQ(named.result_int(), 200);
  EXPECT_EQ(named[http::field::content_type], "application/json");
  EXPECT_EQ(jsonOf(named), Json::parse(R"({"node":{"phase":"Succeeded","message":"Hello, Argo!",
      "outputs":{"parameters":[{"name":"greeting","value":"Hello, Argo!"}]}}})"));
  // Not hosted here: {} so that Argo's agent asks its other sidecars.
  auto elsewhere = post("/api/v1/template.execute", argoBody("slack", {{"only_key", "scripted"}}));
  EXPECT_EQ(elsewhere.result_int(), 200);
  EXPECT_EQ(elsewhere.body(), "{}");
  auto declined = post("/api/v1/template.execute", argoBody("legacy", {{"x", 1}}));
  EXPECT_EQ(jsonOf(declined)["node"]["phase"], "Failed");
  EXPECT_EQ(jsonOf(declined)["node"]["message"], "plugin 'legacy' could not execute the template");
  // Running is requeued after the poll interval when the plugin names no delay.
  auto running = post("/api/v1/template.execute", argoBody("scripted", {{"phase", "Running"}}));
  EXPECT_EQ(jsonOf(running)["requeue"], formatGoDuration(defaults::kPollInterval));
  auto own = post("/api/v1/template.execute",
                  argoBody("scripted", {{"phase", "Running"}, {"requeue_ms", 250}}));
  EXPECT_EQ(jsonOf(own)["requeue"], "250ms");
}

// A body nested some tens of thousands of levels deep (well under the body limit) would
// break the stack of the thread that copies or writes it: it is refused before.
TEST_F(HttpRouterTest, RefusesBodiesNestedBeyondTheLimit) {
  const std::string deep = plugboard::testing::nestedArrays(plugboard::testing::kStackBreakingDepth);
  auto direct = post("/api/v1/plugins/echo/template.execute", deep);
  EXPECT_EQ(direct.result_int(), 400);
  EXPECT_EQ(jsonOf(direct)["error"], "the body is nested deeper than 512 levels");
  auto argo = post("/api/v1/template.execute", R"({"template":{"plugin":{"echo":)" + deep + "}}}");
  EXPECT_EQ(argo.result_int(), 400);
  EXPECT_EQ(jsonOf(argo)["error"], "the body is nested deeper than 512 levels");
  // At the limit, the call is made.
  auto limit = post("/api/v1/plugins/echo/template.execute",
                    plugboard::testing::nestedArrays(host::kMaxJsonDepth));
  EXPECT_EQ(limit.result_int(), 200);
  EXPECT_EQ(jsonOf(limit)["phase"], "Succeeded");
  // A plugin's result nested beyond the limit is its Error.
  auto result = post("/api/v1/plugins/scripted/template.execute", R"({"nest":600})");
  EXPECT_EQ(result.result_int(), 200);
  EXPECT_EQ(jsonOf(result)["phase"], "Error");
  EXPECT_EQ(jsonOf(result)["message"],
            "plugin 'scripted' returned an invalid result: nested deeper than 512 levels");
}

// The JSON library takes a NUL byte between tokens for the end of the text: the object
// before it passed for the body, and the whole body went on to the plugin (where a child
// process of the process deployer read a broken frame and died with its calls in flight).
TEST_F(HttpRouterTest, RefusesBodiesHoldingANulByte) {
  using namespace std::string_literals;
  const std::string body = R"({"template":{"plugin":{"hello":{"name":"x"}}}})"s + '\0' + "}";
  auto argo = post("/api/v1/template.execute", body);
  EXPECT_EQ(argo.result_int(), 400);
  EXPECT_EQ(jsonOf(argo)["error"], "the body holds a NUL byte, which JSON never does");
  auto direct = post("/api/v1/plugins/echo/template.execute", "{}"s + '\0' + "x");
  EXPECT_EQ(direct.result_int(), 400);
  EXPECT_EQ(jsonOf(direct)["error"], "the body holds a NUL byte, which JSON never does");
}

TEST_F(HttpRouterTest, AnswersEachKindOfBadRequest) {
  auto other = post("/api/v1/template.archive", "{}");
  EXPECT_EQ(other.result_int(), 404);
  EXPECT_EQ(jsonOf(other)["error"], "no method 'template.archive'");
  auto path = get("/elsewhere?x=1");
  EXPECT_EQ(path.result_int(), 404);
  EXPECT_EQ(jsonOf(path)["error"], "no such path: /elsewhere");
  EXPECT_EQ(get("/api/v1/template.execute").result_int(), 405);
  EXPECT_EQ(post("/api/v1/plugins", "").result_int(), 405);
  EXPECT_EQ(get("/api/v1/plugins/multi/text.count").result_int(), 405);
  auto bad_json = post("/api/v1/template.execute", "{nope");
  EXPECT_EQ(bad_json.result_int(), 400);
  EXPECT_EQ(jsonOf(bad_json)["error"], "the body is not valid JSON");
  auto two_keys = post("/api/v1/template.execute", R"({"template":{"plugin":{"a":{},"b":{}}}})");
  EXPECT_EQ(two_keys.result_int(), 400);
  EXPECT_EQ(jsonOf(two_keys)["error"], "template.plugin: expected exactly one key, got 2");
}

TEST_F(HttpRouterTest, ProbesAndMetricsAnswerText) {
  auto health = get("/healthz");
  EXPECT_EQ(health.result_int(), 200);
  EXPECT_EQ(health.body(), "ok\n");
  EXPECT_EQ(get("/readyz").body(), "ready\n");
  auto metrics = get("/metrics");
  EXPECT_EQ(metrics.result_int(), 200);
  EXPECT_EQ(metrics[http::field::content_type], "text/plain; version=0.0.4");
  EXPECT_NE(metrics.body().find("plugboard_reloads_total 0\n"), std::string::npos)
      << metrics.body();
}

TEST_F(HttpRouterTest, CallsPluginsDirectlyListsThemAndCountsCalls) {
  auto direct = post("/api/v1/plugins/multi/text.count", R"({"text":"a b c"})");
  ASSERT_EQ(direct.result_int(), 200);
  EXPECT_EQ(jsonOf(direct)["outputs"]["parameters"]["words"], "3");
  EXPECT_EQ(jsonOf(direct)["plugin"], "multi@1.0.0");
  EXPECT_EQ(jsonOf(post("/api/v1/plugins/echo/template.execute", ""))["phase"],
            "Succeeded");  // no body: {}
  auto nobody = post("/api/v1/plugins/nobody/x", "{}");
  EXPECT_EQ(nobody.result_int(), 404);
  EXPECT_EQ(jsonOf(nobody)["error"], "no plugin 'nobody'");
  auto no_rpc = post("/api/v1/plugins/multi", "{}");
  EXPECT_EQ(no_rpc.result_int(), 404);
  EXPECT_EQ(jsonOf(no_rpc)["error"], "use /api/v1/plugins/<name>/<rpc>");
  EXPECT_EQ(post("/api/v1/plugins/multi/", "{}").result_int(), 404);
  auto bad = post("/api/v1/plugins/multi/text.count", "{nope");
  EXPECT_EQ(bad.result_int(), 400);
  EXPECT_EQ(jsonOf(bad)["error"], "the body is not valid JSON");

  auto list = jsonOf(get("/api/v1/plugins"));
  std::map<std::string, Json> by_name;
  for (const auto& p : list["plugins"]) by_name[p.value("name", "")] = p;
  ASSERT_EQ(by_name.count("multi"), 1u) << list.dump();
  EXPECT_EQ(by_name["multi"]["state"], "loaded");
  EXPECT_EQ(by_name["multi"]["calls"], 1);
  EXPECT_TRUE(by_name["multi"]["loaded_at"].is_string());
  EXPECT_EQ(by_name["multi"]["provides"], Json({"text.upper", "text.count"}));
  EXPECT_EQ(by_name["hello"]["state"], "available");
  EXPECT_TRUE(by_name["hello"]["loaded_at"].is_null());
  // Latency percentiles from the histogram /metrics exports: none before the first call.
  const Json& latency = by_name["multi"]["latency_seconds"];
  ASSERT_TRUE(latency["p50"].is_number()) << list.dump();
  EXPECT_GT(latency["p50"].get<double>(), 0);
  EXPECT_LE(latency["p50"].get<double>(), latency["p99"].get<double>());
  EXPECT_EQ(by_name["hello"]["latency_seconds"], Json({{"p50", nullptr}, {"p99", nullptr}}));
  EXPECT_EQ(list["reloads"], Json({{"total", 0}, {"recent", Json::array()}}));

  const std::string metrics = get("/metrics").body();
  EXPECT_NE(metrics.find("plugboard_calls_total{plugin=\"multi@1.0.0\"} 1\n"), std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("plugboard_call_duration_seconds_count{plugin=\"multi@1.0.0\"} 1\n"),
            std::string::npos);
  EXPECT_NE(metrics.find("# TYPE plugboard_call_duration_seconds histogram"), std::string::npos);
}

TEST_F(HttpRouterTest, CountsResponsesByStatusForMetrics) {
  router_->countResponse(get("/healthz"));
  router_->countResponse(get("/healthz"));
  router_->countResponse(get("/nowhere"));
  const std::string metrics = get("/metrics").body();
  EXPECT_NE(metrics.find("plugboard_http_responses_total{code=\"200\"} 2\n"), std::string::npos)
      << metrics;
  EXPECT_NE(metrics.find("plugboard_http_responses_total{code=\"404\"} 1\n"), std::string::npos)
      << metrics;
}

TEST_F(HttpRouterTest, RefusesBodiesOverTheLimitAndOversizedOrMalformedRequests) {
  const std::string small = argoBody("echo", {{"a", "b"}});
  auto ok = roundTrip("POST /api/v1/template.execute HTTP/1.1\r\nHost: x\r\nContent-Length: " +
                      std::to_string(small.size()) + "\r\n\r\n" + small);
  EXPECT_EQ(ok.result_int(), 200);
  const std::string big(defaults::kBodyLimit + 1, ' ');
  auto too_big = roundTrip("POST /api/v1/template.execute HTTP/1.1\r\nHost: x\r\nContent-Length: " +
                           std::to_string(big.size()) + "\r\n\r\n" + big);
  EXPECT_EQ(too_big.result_int(), 413);
  EXPECT_EQ(jsonOf(too_big)["error"],
            "the body is larger than " + std::to_string(defaults::kBodyLimit) + " bytes");
  auto headers = roundTrip(
      "GET /healthz HTTP/1.1\r\nX-Big: " + std::string(defaults::kHeaderLimit, 'x') + "\r\n\r\n");
  EXPECT_EQ(headers.result_int(), 431);
  auto garbage = roundTrip("THIS IS NOT HTTP\r\n\r\n");
  EXPECT_EQ(garbage.result_int(), 400);
  EXPECT_EQ(jsonOf(garbage)["error"].get<std::string>().rfind("malformed HTTP request: ", 0), 0u);
  // A peer that went away gets no answer.
  EXPECT_FALSE(router_->readFailed(http::error::end_of_stream).has_value());
}

TEST_F(HttpRouterTest, RefusesNewWorkWhileDraining) {
  router_->drain();
  auto refused = post("/api/v1/template.execute", argoBody("echo", Json::object()));
  EXPECT_EQ(refused.result_int(), 503);
  EXPECT_EQ(jsonOf(refused)["error"], "the server is shutting down");
  EXPECT_EQ(get("/healthz").result_int(), 503);
  EXPECT_EQ(router_->waitForCalls(Millis(0)), 0);
  // A read that fails during shutdown is not answered.
  EXPECT_FALSE(router_->readFailed(http::error::bad_version).has_value());
}

class HttpRouterSmallLimitTest : public HttpRouterTest {
 protected:
  HttpRouterSmallLimitTest() : HttpRouterTest(optionsWith([](auto& o) { o.body_limit = 2000; })) {}
};

TEST_F(HttpRouterSmallLimitTest, TheConfiguredBodyLimitApplies) {
  auto refused = roundTrip(
      "POST /api/v1/template.execute HTTP/1.1\r\nHost: x\r\nContent-Length: 2001\r\n\r\n" +
      std::string(2001, ' '));
  EXPECT_EQ(refused.result_int(), 413);
  EXPECT_EQ(jsonOf(refused)["error"], "the body is larger than 2000 bytes");
  EXPECT_EQ(
      roundTrip(
          "POST /api/v1/template.execute HTTP/1.1\r\nHost: x\r\nContent-Length: 2000\r\n\r\n" +
          std::string(2000, ' '))
          .result_int(),
      400);  // read, then refused as JSON
}

class HttpRouterTokenTest : public HttpRouterTest {
 protected:
  HttpRouterTokenTest() : HttpRouterTest(optionsWith([](auto& o) { o.token = "s3cret"; })) {}
};

TEST_F(HttpRouterTokenTest, RequiresTheBearerTokenOnTheApiOnly) {
  const std::string body = argoBody("hello", Json::object());
  auto missing = post("/api/v1/template.execute", body);
  EXPECT_EQ(missing.result_int(), 403);
  EXPECT_EQ(jsonOf(missing)["error"], "missing or wrong bearer token in the Authorization header");
  EXPECT_EQ(post("/api/v1/template.execute", body, "Bearer wrong").result_int(), 403);
  EXPECT_EQ(post("/api/v1/template.execute", body, "Bearer s3cret-and-more").result_int(), 403);
  EXPECT_EQ(post("/api/v1/template.execute", body, "s3cret").result_int(), 403);
  EXPECT_EQ(post("/api/v1/template.execute", body, "Bearer s3cret").result_int(), 200);
  EXPECT_EQ(handle(request(http::verb::get, "/api/v1/plugins")).result_int(), 403);
  EXPECT_EQ(post("/api/v1/plugins/echo/template.execute", "{}").result_int(), 403);
  // An unknown method is not revealed without the token.
  EXPECT_EQ(post("/api/v1/template.archive", "{}").result_int(), 403);
  // Probes and metrics need none.
  EXPECT_EQ(get("/healthz").result_int(), 200);
  EXPECT_EQ(get("/readyz").result_int(), 200);
  EXPECT_EQ(get("/metrics").result_int(), 200);
}

class HttpRouterDeadlineTest : public HttpRouterTest {
 protected:
  HttpRouterDeadlineTest()
      : HttpRouterTest(optionsWith([](auto& o) { o.default_timeout = Millis(50); })) {}
};

TEST_F(HttpRouterDeadlineTest, ACallPastTheDeadlineIsCancelledAndAnsweredFailed) {
  auto res = post("/api/v1/template.execute", argoBody("scripted", {{"sleep_ms", 5000}}));
  ASSERT_EQ(res.result_int(), 200);
  EXPECT_EQ(jsonOf(res)["node"]["phase"], "Failed");
  // What the plugin answered when asked to stop is kept beside the deadline.
  EXPECT_EQ(jsonOf(res)["node"]["message"],
            "deadline of 50ms passed; the call was cancelled; it answered: cancelled after call 1");
  // The pool is free again: the next call runs.
  auto next = post("/api/v1/template.execute", argoBody("echo", Json::object()));
  EXPECT_EQ(jsonOf(next)["node"]["phase"], "Succeeded");
}

// Loaded plugins of the router's current generation.
std::vector<std::string> loadedPlugins(LiveRuntime& runtime) {
  std::vector<std::string> loaded;
  const auto dispatcher = runtime.current();
  for (const auto& e : dispatcher->catalog().entries()) {
    if (dispatcher->isLoaded(e)) loaded.push_back(e.manifest.name);
  }
  return loaded;
}

TEST_F(HttpRouterTest, AKeyNoHostedPluginHasIsAnsweredEmptyWithoutLoadingAnything) {
  // scripted would answer (and legacy would be asked) if the hosted plugins were polled.
  auto res = post("/api/v1/template.execute", argoBody("slack", {{"phase", "Error"}}));
  EXPECT_EQ(res.result_int(), 200);
  EXPECT_EQ(res.body(), "{}");
  EXPECT_EQ(loadedPlugins(runtime_), std::vector<std::string>{});
  EXPECT_EQ(get("/metrics").body().find("plugboard_poll_errors_total{"), std::string::npos);
  // A hosted key still loads its plugin, and only that one.
  post("/api/v1/template.execute", argoBody("hello", Json::object()));
  EXPECT_EQ(loadedPlugins(runtime_), std::vector<std::string>{"hello"});
}

TEST_F(HttpRouterTest, OutputsArgoCannotDecodeBecomeAnErrorNamingThePluginAndTheMember) {
  auto bad = post("/api/v1/template.execute", argoBody("scripted", {{"outputs", {{"result", 3}}}}));
  ASSERT_EQ(bad.result_int(), 200);
  EXPECT_EQ(jsonOf(bad)["node"]["phase"], "Error");
  EXPECT_EQ(jsonOf(bad)["node"]["message"],
            "plugin 'scripted' returned outputs Argo cannot decode: outputs.result is a number, "
            "not a string");
  auto good = post("/api/v1/template.execute",
                   argoBody("scripted", {{"outputs", {{"result", "3"}, {"exitCode", "0"}}}}));
  EXPECT_EQ(jsonOf(good)["node"]["phase"], "Succeeded");
  EXPECT_EQ(jsonOf(good)["node"]["outputs"], Json({{"result", "3"}, {"exitCode", "0"}}));
}

class HttpRouterPollUnknownTest : public HttpRouterTest {
 protected:
  HttpRouterPollUnknownTest()
      : HttpRouterTest(optionsWith([](auto& o) {
          o.poll_unknown = true;
          o.default_timeout = Millis(200);
        })) {}
};

TEST_F(HttpRouterPollUnknownTest, PolledErrorsAndDeadlinesAreCountedAndAnsweredEmpty) {
  // A polled plugin that takes the template answers it.
  auto taken = post("/api/v1/template.execute", argoBody("slack", {{"only_key", "slack"}}));
  EXPECT_EQ(jsonOf(taken)["node"]["phase"], "Succeeded");
  // Its Error, or its deadline, is not an error node: the template may be another sidecar's.
  auto error = post("/api/v1/template.execute", argoBody("slack", {{"phase", "Error"}}));
  EXPECT_EQ(error.result_int(), 200);
  EXPECT_EQ(error.body(), "{}");
  auto late = post("/api/v1/template.execute", argoBody("slack", {{"sleep_ms", 5000}}));
  EXPECT_EQ(late.result_int(), 200);
  EXPECT_EQ(late.body(), "{}");
  const std::string metrics = get("/metrics").body();
  EXPECT_NE(metrics.find("plugboard_poll_errors_total{plugin=\"scripted@1.0.0\"} 2\n"),
            std::string::npos)
      << metrics;
  // A named plugin's Error is still its node.
  auto named = post("/api/v1/template.execute", argoBody("scripted", {{"phase", "Error"}}));
  EXPECT_EQ(jsonOf(named)["node"]["phase"], "Error");
}

class HttpRouterReplyDeadlineTest : public HttpRouterTest {
 protected:
  HttpRouterReplyDeadlineTest()
      : HttpRouterTest(optionsWith([](auto& o) { o.reply_deadline = Millis(100); })) {}

  // Sends `body` again after each Running reply, as Argo's agent does after a requeue;
  // returns the first other reply and counts the Running ones.
  Json untilDone(const std::string& body, int& running) {
    for (int i = 0; i < 200; ++i) {
      Json reply = jsonOf(post("/api/v1/template.execute", body));
      if (reply["node"]["phase"] != "Running") return reply;
      ++running;
      EXPECT_EQ(reply["requeue"], formatGoDuration(defaults::kPollInterval));
    }
    ADD_FAILURE() << "still Running";
    return {};
  }
  // How often the scripted plugin ran for `id`, counting this direct call.
  std::string callsOf(const std::string& id) {
    return jsonOf(post("/api/v1/plugins/scripted/template.execute",
                       Json{{"id", id}}.dump()))["outputs"]["parameters"]["calls"];
  }
};

TEST_F(HttpRouterReplyDeadlineTest, ACallLongerThanTheReplyDeadlineRunsOnceAndEndsWithItsResult) {
  const std::string body = argoBody("scripted", {{"id", "long"}, {"sleep_ms", 500}});
  // Answered Running at the reply deadline, while the call goes on.
  const Json answer = jsonOf(post("/api/v1/template.execute", body));
  EXPECT_EQ(answer["node"]["phase"], "Running");
  EXPECT_EQ(answer["requeue"], formatGoDuration(defaults::kPollInterval));
  // Argo sends it again: it is not called again, and the last answer is the call's result.
  int running = 0;
  const Json done = untilDone(body, running);
  EXPECT_EQ(done["node"]["phase"], "Succeeded");
  EXPECT_EQ(done["node"]["outputs"]["parameters"][0],
            Json::parse(R"({"name":"calls","value":"1"})"));
  // Sent again after its reply was lost: the same answer, not a second call.
  EXPECT_EQ(jsonOf(post("/api/v1/template.execute", body)), done);
  EXPECT_EQ(callsOf("long"), "2");  // the one template call, and this direct one
  // Another template is another call.
  const Json other = untilDone(
      argoBody("scripted", {{"id", "long"}, {"sleep_ms", 150}, {"other", true}}), running);
  EXPECT_EQ(other["node"]["outputs"]["parameters"][0]["value"], "3");
}

TEST_F(HttpRouterReplyDeadlineTest, OnlyASucceededNodeIsKeptForTheSameBodySentAgain) {
  // Running and Pending ask to be called again; Failed and Error may be retried by Argo's
  // retryStrategy with the very same body.
  for (const char* phase : {"Running", "Pending", "Failed", "Error"}) {
    const std::string id = std::string("not-kept-") + phase;
    const std::string body = argoBody("scripted", {{"id", id}, {"phase", phase}});
    EXPECT_EQ(jsonOf(post("/api/v1/template.execute", body))["node"]["phase"], phase);
    EXPECT_EQ(jsonOf(post("/api/v1/template.execute", body))["node"]["phase"], phase);
    EXPECT_EQ(callsOf(id), "3") << phase;  // both requests called it, and this direct call
  }
  const std::string body = argoBody("scripted", {{"id", "kept"}});
  post("/api/v1/template.execute", body);
  post("/api/v1/template.execute", body);
  EXPECT_EQ(callsOf("kept"), "2");
}

TEST_F(HttpRouterReplyDeadlineTest, PendingAndRunningWithoutADelayAreRequeuedAfterThePollInterval) {
  for (const char* phase : {"Running", "Pending"}) {
    for (const Json& args : {Json{{"phase", phase}}, Json{{"phase", phase}, {"requeue_ms", 0}}}) {
      const Json reply = jsonOf(post("/api/v1/template.execute", argoBody("scripted", args)));
      EXPECT_EQ(reply["node"]["phase"], phase);
      EXPECT_EQ(reply["requeue"], formatGoDuration(defaults::kPollInterval)) << args.dump();
    }
  }
}

}  // namespace
}  // namespace plugboard::core
