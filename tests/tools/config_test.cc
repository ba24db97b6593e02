// --config FILE, as the CLI applies it: the file's settings, flags on top.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sstream>

#include "tests/support/files.h"
#include "tests/support/paths.h"
#include "tests/support/server_process.h"
#include "tests/support/subprocess.h"

namespace plugboard::testing {
namespace {

namespace fs = std::filesystem;
using Json = nlohmann::json;

class ConfigCliTest : public ::testing::Test {
 protected:
  std::string config(const std::string& text) {
    writeFile(dir_ / "plugboard.toml", text);
    return (dir_ / "plugboard.toml").string();
  }
  TempDir dir_;
};

TEST_F(ConfigCliTest, PluginDirectoriesComeFromTheFileUnlessAFlagSaysOtherwise) {
  fs::create_directory(dir_ / "mine");
  fs::copy_file(plugin("echo"), dir_ / "mine/echo.so");
  const auto cfg = config("plugin_dirs = [\"mine\"]\n");  // relative to the file
  auto from_file = plugboard({"plugins", "list", "--config", cfg, "--json"});
  ASSERT_EQ(from_file.exit_code, 0) << from_file.err;
  auto doc = Json::parse(from_file.out);
  ASSERT_EQ(doc["plugins"].size(), 1u);
  EXPECT_EQ(doc["plugins"][0]["name"], "echo");
  auto overridden = plugboard({"plugins", "list", "--config", cfg, "--plugins", pluginDir().string(), "--json"});
  EXPECT_GT(Json::parse(overridden.out)["plugins"].size(), 1u);
}

TEST_F(ConfigCliTest, TrustRulesComeFromTheFile) {
  fs::create_directory(dir_ / "mine");
  fs::copy_file(plugin("echo"), dir_ / "mine/echo.so");
  fs::permissions(dir_ / "mine/echo.so", fs::perms(0666));
  auto strict = plugboard({"call", "echo", "--config", config("plugin_dirs = [\"mine\"]\n")});
  EXPECT_EQ(strict.exit_code, 1);
  EXPECT_NE(strict.err.find("no plugin 'echo'"), std::string::npos) << strict.err;
  auto lax = plugboard({"call", "echo", "--config", config("plugin_dirs = [\"mine\"]\n[trust]\nstrict = false\n")});
  EXPECT_EQ(lax.exit_code, 0) << lax.err;
}

TEST_F(ConfigCliTest, JsonLogLinesAreValidJson) {
  const auto cfg = config("[log]\nlevel = \"info\"\nformat = \"json\"\n");
  auto r = plugboard({"call", "hello", "--config", cfg, "--plugins", pluginDir().string(), "--args",
                      R"({"name":"quote \" and \\ backslash"})"});
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::istringstream lines(r.err);
  int seen = 0;
  for (std::string line; std::getline(lines, line);) {
    auto j = Json::parse(line, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << line;
    EXPECT_TRUE(j.contains("time") && j.contains("level") && j.contains("message"));
    // The native deployer tags its plugin's lines, as every deployer does.
    if (j["message"] == "[native] [hello] greeting quote \" and \\ backslash") ++seen;
  }
  EXPECT_EQ(seen, 1) << r.err;
}

TEST_F(ConfigCliTest, FlagsOverrideTheFile) {
  const auto cfg = config("default_timeout = \"50ms\"\n[log]\nlevel = \"error\"\n");
  auto r = plugboard({"call", "hello", "--config", cfg, "--plugins", pluginDir().string(),
                      "--log-level", "info"});
  EXPECT_NE(r.err.find("loading plugin 'hello'"), std::string::npos) << r.err;
  Json body = {{"template", {{"plugin", {{"sleep", {{"seconds", 10}}}}}}}};
  auto from_file = run({binary().string(), "exec", "--config", cfg, "--plugins", pluginDir().string()},
                       body.dump());
  EXPECT_EQ(Json::parse(from_file.out)["node"]["message"],
            "deadline of 50ms passed; the call was cancelled; it answered: cancelled while sleeping");
  auto flag = run({binary().string(), "exec", "--config", cfg, "--plugins", pluginDir().string(),
                   "--timeout", "100ms"},
                  body.dump());
  EXPECT_EQ(Json::parse(flag.out)["node"]["message"],
            "deadline of 100ms passed; the call was cancelled; it answered: cancelled while sleeping");
}

// serve's settings go through the same rule: the file over the defaults, a flag over the
// file. The file's listen address cannot be bound, so serving at all shows --listen won.
TEST_F(ConfigCliTest, ServeFlagsOverrideTheFile) {
  const auto cfg = config("listen = \"256.0.0.1:80\"\nbody_limit = 2000\n");
  const std::string body(5000, ' ');
  {
    ServeProcess serve({"--plugins", pluginDir().string(), "--config", cfg});
    HttpClient client(serve.port());
    EXPECT_EQ(client.request("POST", "/api/v1/template.execute", body).status, 413);
  }
  ServeProcess serve({"--plugins", pluginDir().string(), "--config", cfg, "--body-limit", "100000"});
  HttpClient client(serve.port());
  auto reply = client.request("POST", "/api/v1/template.execute", body);
  EXPECT_EQ(reply.status, 400);  // read whole: blanks are not JSON
  EXPECT_EQ(Json::parse(reply.body)["error"], "the body is not valid JSON");
}

TEST_F(ConfigCliTest, ABadFileNamesTheKeyAndLine) {
  const auto cfg = config("watch = true\nworkerz = 2\n");
  auto r = plugboard({"plugins", "list", "--config", cfg});
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find(cfg + ":2:1: 'workerz' is not a configuration key"), std::string::npos) << r.err;
  auto missing = plugboard({"plugins", "list", "--config", (dir_ / "nope.toml").string()});
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.err.find("nope.toml: cannot read the configuration file"), std::string::npos);
}

}  // namespace
}  // namespace plugboard::testing
