// One way to start a plugin: every command (validate, call, run, exec, serve) applies the
// configured trust policy and the configuration's [deploy] the same way, because all of
// them start plugins through the launcher.
#include <unistd.h>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "tests/support/argo.h"
#include "tests/support/files.h"
#include "tests/support/paths.h"
#include "tests/support/run_report.h"
#include "tests/support/server_process.h"
#include "tests/support/subprocess.h"

namespace plugboard::testing {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

constexpr const char* kWorkflow = R"(name = "wf"
[[steps]]
id = "probe"
plugin = "crashy"
)";

// What one command reported of the crashy fixture's call: its pid and its parent's, or
// the command's error output when it did not succeed.
struct Seen {
  bool ok = false;
  std::string pid, ppid, err;
};

class LaunchTest : public ::testing::Test {
 protected:
  void SetUp() override {
    fs::create_directory(dir_ / "mine");
    fs::copy_file(fixture("crashy"), dir_ / "mine/crashy.so");
    dir_.write("wf.toml", kWorkflow);
  }
  std::string config(const std::string& extra) {
    return dir_.write("plugboard.toml", "plugin_dirs = [\"mine\"]\n" + extra);
  }
  Seen validate(const std::string& cfg) {
    auto r = plugboard({"validate", (dir_ / "wf.toml").string(), "--config", cfg});
    return {r.exit_code == 0, "", "", r.err};
  }
  Seen call(const std::string& cfg) {
    auto r = plugboard({"call", "crashy", "--config", cfg, "--json"});
    if (r.exit_code != 0) return {false, "", "", r.err};
    const Json p = Json::parse(r.out)["outputs"]["parameters"];
    return {true, p["pid"], p["ppid"], r.err};
  }
  Seen runWorkflow(const std::string& cfg) {
    auto r = plugboard({"run", (dir_ / "wf.toml").string(), "--config", cfg, "--output", "json"});
    if (r.exit_code != 0) return {false, "", "", r.err};
    const Json p = reportStep(Json::parse(r.out), "probe")["outputs"]["parameters"];
    return {true, p["pid"], p["ppid"], r.err};
  }
  Seen exec(const std::string& cfg) {
    auto r = plugboard({"exec", "--config", cfg}, argoBody("crashy", Json::object()));
    const Json reply = Json::parse(r.out, nullptr, false);
    if (r.exit_code != 0 || reply.is_discarded() || reply["node"]["phase"] != "Succeeded") {
      return {false, "", "", r.err + r.out};
    }
    std::map<std::string, std::string> p;
    for (const auto& param : reply["node"]["outputs"]["parameters"])
      p[param["name"]] = param["value"];
    return {true, p["pid"], p["ppid"], r.err};
  }
  // serve's answer, with serve's own pid in `err` when it succeeded.
  Seen serve(const std::string& cfg) {
    ServeProcess server({"--config", cfg, "--no-watch"});
    HttpClient client(server.port());
    auto r = client.request("POST", "/api/v1/template.execute", argoBody("crashy", Json::object()));
    const Json reply = Json::parse(r.body, nullptr, false);
    const pid_t serve_pid = server.pid();
    server.stop();
    if (r.status != 200 || reply.is_discarded() || !reply.contains("node") ||
        reply["node"]["phase"] != "Succeeded") {
      return {false, "", "", server.output() + r.body};
    }
    std::map<std::string, std::string> p;
    for (const auto& param : reply["node"]["outputs"]["parameters"])
      p[param["name"]] = param["value"];
    return {true, p["pid"], p["ppid"], std::to_string(serve_pid)};
  }

  TempDir dir_;
};

TEST_F(LaunchTest, EveryCommandAppliesTheConfiguredTrustPolicy) {
  fs::permissions(dir_ / "mine/crashy.so", fs::perms(0664));
  const std::string lax = config("[trust]\nstrict = false\n");
  EXPECT_TRUE(validate(lax).ok) << validate(lax).err;
  EXPECT_TRUE(call(lax).ok) << call(lax).err;
  EXPECT_TRUE(runWorkflow(lax).ok) << runWorkflow(lax).err;
  EXPECT_TRUE(exec(lax).ok) << exec(lax).err;
  EXPECT_TRUE(serve(lax).ok) << serve(lax).err;

  // The default policy: every command refuses the file, with the same message.
  const std::string strict = config("");
  const std::string refusal = "mine/crashy.so: refused: file is writable by group (mode 0664)";
  for (const auto& [command, seen] :
       {std::pair{"validate", validate(strict)}, std::pair{"call", call(strict)},
        std::pair{"run", runWorkflow(strict)}, std::pair{"exec", exec(strict)},
        std::pair{"serve", serve(strict)}}) {
    EXPECT_FALSE(seen.ok) << command;
    EXPECT_NE(seen.err.find(refusal), std::string::npos) << command << ": " << seen.err;
  }
}

TEST_F(LaunchTest, DeployMovesAPluginIntoAChildForEveryCommand) {
  const std::string me = std::to_string(::getpid());
  // In-process by default: the plugin runs in the command's own process, our child.
  const std::string native = config("");
  for (const auto& [command, seen] :
       {std::pair{"call", call(native)}, std::pair{"run", runWorkflow(native)},
        std::pair{"exec", exec(native)}}) {
    ASSERT_TRUE(seen.ok) << command << ": " << seen.err;
    EXPECT_EQ(seen.ppid, me) << command;
  }
  const Seen served = serve(native);
  ASSERT_TRUE(served.ok) << served.err;
  EXPECT_EQ(served.pid, served.err);  // serve's own pid

  // [deploy] crashy = "process": a child of the command runs it.
  const std::string isolated = config("[deploy]\ncrashy = \"process\"\n");
  for (const auto& [command, seen] :
       {std::pair{"call", call(isolated)}, std::pair{"run", runWorkflow(isolated)},
        std::pair{"exec", exec(isolated)}}) {
    ASSERT_TRUE(seen.ok) << command << ": " << seen.err;
    EXPECT_NE(seen.ppid, me) << command;
    EXPECT_NE(seen.pid, me) << command;
  }
  const Seen child = serve(isolated);
  ASSERT_TRUE(child.ok) << child.err;
  EXPECT_EQ(child.ppid, child.err);  // a child of serve
}

}  // namespace
}  // namespace plugboard::testing
