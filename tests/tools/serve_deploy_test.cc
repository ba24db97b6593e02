// plugboard serve with plugins run through deployers: crash isolation per request, and
// deployer modules installed while it runs.
#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/argo.h"
#include "tests/support/eventually.h"
#include "tests/support/files.h"
#include "tests/support/paths.h"
#include "tests/support/plugin_dir.h"
#include "tests/support/server_process.h"
#include "tests/support/subprocess.h"

namespace plugboard::testing {
namespace {

using Json = nlohmann::json;

Json node(HttpClient& client, const std::string& key, const Json& args) {
  auto r = client.request("POST", "/api/v1/template.execute", argoBody(key, args));
  EXPECT_EQ(r.status, 200) << r.body;
  return Json::parse(r.body, nullptr, false).value("node", Json::object());
}

TEST(ServeDeployTest, APluginRunInProcessModeCrashesItsRequestOnlyAndComesBack) {
  PluginDir dir({"hello"}, {"crashy"});
  const std::string config = dir.write("plugboard.toml", "[deploy]\ncrashy = \"process\"\n");
  ServeProcess serve({"--plugins", dir.plugins(), "--config", config});
  HttpClient client(serve.port());
  const Json crashed = node(client, "crashy", {{"crash", "segv"}});
  EXPECT_EQ(crashed["phase"], "Error");
  EXPECT_NE(crashed.value("message", "").find("killed by signal 11 (SIGSEGV)"), std::string::npos)
      << crashed;
  EXPECT_EQ(node(client, "hello", {{"name", "Ada"}})["phase"], "Succeeded");
  const Json again = node(client, "crashy", Json::object());  // a new child
  EXPECT_EQ(again["phase"], "Succeeded") << again;
  EXPECT_NE(again["outputs"]["parameters"][0]["value"], std::to_string(serve.pid()));
}

TEST(ServeDeployTest, ADeployerModuleInstalledWhileServingBecomesUsable) {
  PluginDir dir({"hello"}, {"crashy"});
  TempDir deployers;
  std::filesystem::create_symlink(deployerDir() / "native.so", deployers.path() / "native.so");
  const std::string config =
      dir.write("plugboard.toml", "[deploy]\ncrashy = \"process\"\n[deployers.process]\nhost = \"" +
                                      (buildDir() / "plugboard-host").string() + "\"\n");
  ServeProcess serve(
      {"--plugins", dir.plugins(), "--config", config, "--deployers", deployers.path().string()});
  HttpClient client(serve.port());
  const Json missing = node(client, "crashy", Json::object());
  EXPECT_EQ(missing["phase"], "Error");
  EXPECT_NE(missing.value("message", "")
                .find("configured to run through deployer 'process', which is not installed"),
            std::string::npos)
      << missing;
  EXPECT_EQ(node(client, "hello", {{"name", "Ada"}})["phase"], "Succeeded");

  std::filesystem::copy_file(deployerDir() / "process.so", deployers.path() / "process.so.tmp");
  std::filesystem::rename(deployers.path() / "process.so.tmp", deployers.path() / "process.so");
  Json answer;
  EXPECT_TRUE(eventually([&] {
    answer = node(client, "crashy", Json::object());
    return answer["phase"] == "Succeeded";
  })) << answer << serve.output();
}

TEST(ServeDeployTest, TheStarDeployerIsolatesAPluginThatAbortsWhenLoaded) {
  PluginDir dir({"hello"}, {"crash_on_load"});
  const std::string config = dir.write("plugboard.toml", "[deploy]\n\"*\" = \"process\"\n");
  ServeProcess serve({"--plugins", dir.plugins(), "--config", config, "--poll-unknown"});
  HttpClient client(serve.port());
  EXPECT_EQ(node(client, "hello", {{"name", "Ada"}})["phase"], "Succeeded");
  const Json crashed = node(client, "crash-on-load", Json::object());
  EXPECT_EQ(crashed["phase"], "Error");
  const std::string message = crashed.value("message", "");
  EXPECT_NE(message.find("crash-on-load"), std::string::npos) << crashed;
  EXPECT_NE(message.find("SIGABRT"), std::string::npos) << crashed;
  EXPECT_EQ(node(client, "hello", {{"name", "Ada"}})["phase"], "Succeeded");
  // Polled for a key hosted elsewhere, a candidate that cannot be started is passed over
  // and the key answered {}.
  auto elsewhere =
      client.request("POST", "/api/v1/template.execute", argoBody("slack", Json::object()));
  EXPECT_EQ(elsewhere.body, "{}");
  EXPECT_EQ(client.request("GET", "/healthz").status, 200);
  EXPECT_EQ(serve.stop(), 0);  // it was still running, and exits cleanly
}

TEST(ServeDeployTest, APollStartsNoPluginInsideTheServerUnlessPlacedThereOnPurpose) {
  // No [deploy]: every plugin would run in-process. A poll (a key no plugin has) must not
  // load crash-on-load, whose initializer aborts, into serve: it is started in a child.
  PluginDir dir({"hello", "legacy"}, {"crash_on_load"});
  ServeProcess serve({"--plugins", dir.plugins(), "--poll-unknown", "--log-level", "info"});
  HttpClient client(serve.port());
  // Nobody takes it: crash-on-load's child died at its start and was passed over.
  auto elsewhere =
      client.request("POST", "/api/v1/template.execute", argoBody("slack", Json::object()));
  EXPECT_EQ(elsewhere.body, "{}");
  EXPECT_EQ(client.request("GET", "/healthz").status, 200);
  // legacy takes a template that holds its marker, from a child process of its own.
  auto taken = client.request("POST", "/api/v1/template.execute",
                              argoBody("slack", {{"legacy", true}}));
  const Json node_taken = Json::parse(taken.body, nullptr, false)["node"];
  EXPECT_EQ(node_taken["phase"], "Succeeded") << taken.body;
  EXPECT_EQ(node(client, "hello", {{"name", "Ada"}})["phase"], "Succeeded");
  EXPECT_EQ(serve.stop(), 0);
  EXPECT_NE(serve.output().find("plugin crash-on-load@1.0.0 through deployer 'process'"),
            std::string::npos)
      << serve.output();
  EXPECT_NE(serve.output().find("started plugin legacy-executor-plugin@0.9.0 through deployer 'process'"),
            std::string::npos)
      << serve.output();
}

TEST(ServeDeployTest, ExecPollsNoPluginInsideItsProcessEither) {
  PluginDir dir({"hello"}, {"crash_on_load"});
  auto r = plugboard({"exec", "--plugins", dir.plugins()}, argoBody("slack", Json::object()));
  EXPECT_LT(r.exit_code, 128) << r.err;  // not killed by crash-on-load's abort
  EXPECT_NE(r.err.find("crash-on-load@1.0.0 through deployer 'process'"), std::string::npos)
      << r.err;
  EXPECT_NE(r.out.find("no plugin executed the template"), std::string::npos) << r.out;
}

TEST(ServeDeployTest, APollWithoutADeployerThatRunsPluginsApartIsRefusedWithTheWayOut) {
  PluginDir dir({"hello"}, {"crash_on_load"});
  TempDir deployers;  // native alone
  std::filesystem::copy_file(deployerDir() / "native.so", deployers / "native.so");
  auto r = plugboard({"exec", "--plugins", dir.plugins(), "--deployers", deployers.path().string()},
                     argoBody("slack", Json::object()));
  EXPECT_LT(r.exit_code, 128) << r.err;
  EXPECT_NE(r.err.find("plugin crash-on-load@1.0.0 is not started for a poll: its deployer "
                       "'native' would run it inside this server"),
            std::string::npos)
      << r.err;
  EXPECT_NE(r.err.find("[deploy] crash-on-load = \"native\" allows it on purpose"),
            std::string::npos)
      << r.err;
  // Placed in-process on purpose, it is: and takes exec down, named by its last line.
  const std::string config = dir.write("plugboard.toml", "[deploy]\n\"crash-on-load\" = \"native\"\n");
  auto placed = plugboard({"exec", "--plugins", dir.plugins(), "--config", config},
                          argoBody("slack", Json::object()));
  EXPECT_GT(placed.exit_code, 128) << placed.err;
  EXPECT_NE(placed.err.find("crash_on_load.so, while it was loaded"), std::string::npos)
      << placed.err;
}

}  // namespace
}  // namespace plugboard::testing

namespace plugboard::testing {
namespace {

// The pids of the processes whose parent is `parent`.
std::vector<pid_t> childrenOf(pid_t parent) {
  std::vector<pid_t> out;
  for (const auto& entry : std::filesystem::directory_iterator("/proc")) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream in(entry.path() / "stat");
    std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto close = stat.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream fields(stat.substr(close + 2));
    std::string state;
    pid_t ppid = 0;
    fields >> state >> ppid;
    if (ppid == parent) out.push_back(std::stoi(name));
  }
  return out;
}

// Whether `pid` runs (a zombie waiting for its new parent to reap it does not).
bool alive(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto close = stat.rfind(')');
  return close != std::string::npos && stat.size() > close + 2 && stat[close + 2] != 'Z';
}

TEST(ServeDeployTest, AHungPluginsChildEndsWithServe) {
  PluginDir dir({}, {"crashy"});
  const std::string config = dir.write("plugboard.toml", "[deploy]\ncrashy = \"process\"\n");
  ServeProcess serve({"--plugins", dir.plugins(), "--config", config, "--grace-period", "1s"});
  // A call that ignores its cancellation for a minute.
  const std::string started = dir.write("started", "");
  std::filesystem::remove(started);
  std::thread caller([&] {
    HttpClient client(serve.port());
    client.request("POST", "/api/v1/template.execute",
                   argoBody("crashy", {{"started", started}, {"sleep_ms", 60'000}}));
  });
  ASSERT_TRUE(eventually([&] { return std::filesystem::exists(started); })) << serve.output();
  const std::vector<pid_t> children = childrenOf(serve.pid());
  ASSERT_EQ(children.size(), 1u);
  serve.stop(SIGTERM);
  // The child saw its channel end and went within its second, not after the ten a
  // shutdown gives calls in flight (nor at the end of the minute).
  EXPECT_TRUE(eventually([&] { return !alive(children[0]); }, std::chrono::seconds(5)))
      << "plugboard-host " << children[0] << " outlived serve";
  caller.join();
}

}  // namespace
}  // namespace plugboard::testing
