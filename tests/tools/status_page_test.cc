// serve's status page through the real binary: the page at / and /ui, self-contained but
// for its link to /metrics; the JSON it reads, with every field it shows (the server's
// version, address and directories, calls Failed and in Error); the token rule for that
// data; reloads, without files that were never served; the page as headless Chromium
// renders it (when Debian's chromium is installed).
#include <filesystem>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/eventually.h"
#include "tests/support/files.h"
#include "tests/support/paths.h"
#include "tests/support/server_process.h"
#include "tests/support/subprocess.h"

namespace plugboard::testing {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

class StatusPageTest : public ::testing::Test {
 protected:
  StatusPageTest() {
    fs::permissions(tmp_.path(), fs::perms(0755));
    fs::create_directory(dir());
    fs::permissions(dir(), fs::perms(0755));
    fs::copy_file(plugin("multi"), dir() / "multi.so");
    writeFile(dir() / "broken.so", "not a plugin");
    writeFile(tmp_ / "token", "s3cret\n");
  }
  fs::path dir() const { return tmp_ / "plugins"; }
  std::vector<std::string> args() const {
    return {"--plugins", dir().string(), "--token-file", (tmp_ / "token").string()};
  }
  static std::map<std::string, std::string> withToken() {
    return {{"Authorization", "Bearer s3cret"}};
  }
  TempDir tmp_;
};

TEST_F(StatusPageTest, TheRootAndUiServeThePageWithoutAToken) {
  ServeProcess serve(args());
  HttpClient client(serve.port());
  for (const char* path : {"/", "/ui", "/ui?refresh=1"}) {
    auto page = client.request("GET", path);
    ASSERT_EQ(page.status, 200) << path;
    EXPECT_EQ(page.headers["Content-Type"], "text/html; charset=utf-8") << path;
    EXPECT_NE(page.headers["Content-Security-Policy"].find("default-src 'none'"),
              std::string::npos);
    EXPECT_TRUE(page.body.starts_with("<!DOCTYPE html>")) << path;
    EXPECT_NE(page.body.find("fetch(\"api/v1/plugins\""), std::string::npos);
    EXPECT_NE(page.body.find("name=\"viewport\" content=\"width=device-width"), std::string::npos);
  }
  EXPECT_EQ(client.request("POST", "/", "{}").status, 405);
  EXPECT_EQ(client.request("GET", "/uix").status, 404);
}

TEST_F(StatusPageTest, ThePageFetchesNothingFromElsewhere) {
  ServeProcess serve(args());
  HttpClient client(serve.port());
  std::string page = client.request("GET", "/").body;
  ASSERT_FALSE(page.empty());
  // One link, to this server's /metrics (a relative one: the same origin).
  const std::string metrics_link = "<a href=\"metrics\">/metrics</a>";
  const auto link = page.find(metrics_link);
  ASSERT_NE(link, std::string::npos);
  page.erase(link, metrics_link.size());
  // No URL with a scheme or a protocol-relative one (the page has no // at all), and
  // nothing loaded by attribute, stylesheet or import.
  for (const char* outside : {"http:", "https:", "//", "src=", "href=", "url(", "@import", "<link",
                              "<iframe", "<img", "import("}) {
    EXPECT_EQ(page.find(outside), std::string::npos) << outside;
  }
}

TEST_F(StatusPageTest, ItsDataNeedsTheTokenAndHoldsWhatThePageShows) {
  ServeProcess serve(args());
  HttpClient client(serve.port());
  EXPECT_EQ(client.request("GET", "/api/v1/plugins").status, 403);
  EXPECT_EQ(client.request("GET", "/api/v1/plugins", "", {{"Authorization", "Bearer nope"}}).status,
            403);
  ASSERT_EQ(
      client.request("POST", "/api/v1/plugins/multi/text.count", R"({"text":"a b c"})", withToken())
          .status,
      200);
  auto listed = client.request("GET", "/api/v1/plugins", "", withToken());
  ASSERT_EQ(listed.status, 200);
  const Json list = Json::parse(listed.body);
  const Json* multi = nullptr;
  const Json* refused = nullptr;
  for (const auto& p : list["plugins"]) {
    if (p.value("name", "") == "multi") multi = &p;
    if (p.value("file", "").ends_with("broken.so")) refused = &p;
  }
  ASSERT_NE(multi, nullptr) << list.dump(2);
  EXPECT_EQ((*multi)["version"], "1.0.0");
  EXPECT_EQ((*multi)["state"], "loaded");
  EXPECT_EQ((*multi)["deployer"], "native");
  EXPECT_EQ((*multi)["calls"], 1);
  EXPECT_EQ((*multi)["errors"], 0);
  EXPECT_EQ((*multi)["draining_versions"], Json::array());
  for (const char* q : {"p50", "p99"}) {
    const Json& v = (*multi)["latency_seconds"][q];
    ASSERT_TRUE(v.is_number()) << q << ": " << list.dump(2);
    EXPECT_GT(v.get<double>(), 0) << q;
    EXPECT_LE(v.get<double>(), 30) << q;
  }
  ASSERT_NE(refused, nullptr) << list.dump(2);
  EXPECT_EQ((*refused)["state"], "error");
  EXPECT_EQ((*refused)["source"], "plugin_dir");
  EXPECT_FALSE((*refused)["error"].get<std::string>().empty());
  EXPECT_EQ(list["conflicts"], Json::array());
  EXPECT_EQ(list["reloads"], Json({{"total", 0}, {"recent", Json::array()}}));
}

TEST_F(StatusPageTest, ItsDataHoldsTheVersionUptimeAddressAndDirectories) {
  ServeProcess serve(args());
  HttpClient client(serve.port());
  const Json server =
      Json::parse(client.request("GET", "/api/v1/plugins", "", withToken()).body)["server"];
  const std::string version = plugboard({"version"}).out;
  EXPECT_NE(version.find("plugboard " + server["version"].get<std::string>() + " ("),
            std::string::npos)
      << server.dump(2) << version;
  EXPECT_TRUE(server["commit"].is_null() ||
              version.find("commit " + server["commit"].get<std::string>()) != std::string::npos)
      << server.dump(2);
  EXPECT_EQ(server["listen"], "127.0.0.1:" + std::to_string(serve.port()));
  EXPECT_EQ(server["plugin_dirs"], Json::array({dir().string()}));
  EXPECT_TRUE(server["uptime_seconds"].is_number_integer());
  EXPECT_GE(server["uptime_seconds"].get<long>(), 0);
  EXPECT_TRUE(server["started_at"].get<std::string>().ends_with("Z"));  // UTC
}

TEST_F(StatusPageTest, ARefusedFileThatGoesIsNotListedAsRemoved) {
  ServeProcess serve(args());
  HttpClient client(serve.port());
  const auto list = [&] {
    return Json::parse(client.request("GET", "/api/v1/plugins", "", withToken()).body);
  };
  const auto listed = [](const Json& l, const fs::path& file) {
    for (const auto& p : l["plugins"]) {
      if (p.value("file", "") == file.string()) return true;
    }
    return false;
  };
  // A second multi 1.0.0: refused, the first keeps its name and version.
  const fs::path copy = dir() / "multi-copy.so";
  fs::copy_file(plugin("multi"), tmp_ / "staging.so");
  fs::rename(tmp_ / "staging.so", copy);
  ASSERT_TRUE(eventually([&] { return listed(list(), copy); })) << list().dump(2);
  fs::remove(copy);
  ASSERT_TRUE(eventually([&] { return !listed(list(), copy); })) << list().dump(2);
  // A change after it: once it is listed, what the removal recorded is listed too.
  fs::copy_file(plugin("hello"), tmp_ / "staging.so");
  fs::rename(tmp_ / "staging.so", dir() / "hello.so");
  Json reloads;
  ASSERT_TRUE(eventually([&] {
    reloads = list()["reloads"];
    for (const auto& r : reloads["recent"]) {
      if (r["plugin"] == "hello") return true;
    }
    return false;
  })) << reloads.dump(2);
  for (const auto& r : reloads["recent"]) {
    EXPECT_NE(r["file"], copy.string()) << "never served, yet listed: " << reloads.dump(2);
  }
  EXPECT_GE(reloads["total"].get<int>(), 1);
}

TEST_F(StatusPageTest, AReloadIsListedWithItsDuration) {
  ServeProcess serve(args());
  HttpClient client(serve.port());
  fs::copy_file(plugin("hello"), tmp_ / "staging.so");
  fs::rename(tmp_ / "staging.so", dir() / "hello.so");
  Json reloads;
  ASSERT_TRUE(eventually([&] {
    reloads =
        Json::parse(client.request("GET", "/api/v1/plugins", "", withToken()).body)["reloads"];
    return reloads["total"] == 1 && reloads["recent"].size() == 1;
  })) << reloads.dump(2);
  const Json& r = reloads["recent"][0];
  EXPECT_EQ(r["plugin"], "hello");
  EXPECT_EQ(r["from"], nullptr);
  EXPECT_EQ(r["to"], "1.2.0");
  EXPECT_EQ(r["file"], (dir() / "hello.so").string());
  EXPECT_TRUE(r["took_ms"].is_number_integer());
  EXPECT_TRUE(r["at"].get<std::string>().ends_with("Z"));
}

TEST_F(StatusPageTest, ABrowserShowsThePluginTheRefusedFileAndTheCall) {
  if (run({"sh", "-c", "command -v chromium"}).exit_code != 0) {
    GTEST_SKIP() << "chromium is not installed (tools/setup.sh installs it)";
  }
  // No token: a browser run headless cannot type one.
  ServeProcess serve({"--plugins", dir().string()});
  HttpClient client(serve.port());
  ASSERT_EQ(client.request("POST", "/api/v1/plugins/multi/text.count", R"({"text":"a b c"})").status,
            200);
  // The page's script runs and its request is answered within the virtual time budget.
  auto dom = run({"chromium", "--headless", "--no-sandbox", "--disable-gpu",
                  "--user-data-dir=" + (tmp_ / "chromium").string(), "--virtual-time-budget=5000",
                  "--dump-dom", "http://127.0.0.1:" + std::to_string(serve.port()) + "/ui"});
  ASSERT_EQ(dom.exit_code, 0) << dom.err;
  const std::string& page = dom.out;
  EXPECT_NE(page.find("<td data-label=\"Plugin\">multi</td>"), std::string::npos) << page;
  EXPECT_NE(page.find("<td data-label=\"Calls\" class=\"num\">1</td>"), std::string::npos)
      << page;
  EXPECT_NE(page.find("<td data-label=\"Deployer\">native</td>"), std::string::npos);
  EXPECT_NE(page.find((dir() / "broken.so").string()), std::string::npos) << page;
  EXPECT_NE(page.find("id=\"status\" class=\"\">updated"), std::string::npos) << page;
  // Failed and Error apart; the server's version, address and directories; times in UTC.
  EXPECT_NE(page.find("<th>Failed</th><th>Errors</th>"), std::string::npos) << page;
  EXPECT_NE(page.find("<td data-label=\"Failed\" class=\"num\">0</td>"), std::string::npos);
  EXPECT_NE(page.find("id=\"version\">plugboard "), std::string::npos) << page;
  EXPECT_NE(page.find("listening on 127.0.0.1:" + std::to_string(serve.port())),
            std::string::npos);
  EXPECT_NE(page.find("plugin directories: " + dir().string()), std::string::npos);
  EXPECT_NE(page.find(" UTC</span>"), std::string::npos) << page;
  EXPECT_NE(page.find("<a href=\"metrics\">/metrics</a>"), std::string::npos);
  EXPECT_NE(page.find("none since the start"), std::string::npos);
}

}  // namespace
}  // namespace plugboard::testing
