// plugboard serve with Python plugins that only the registry knows, in both modes of the
// python deployer: routed by name, started again when their file changes, and a broken
// change leaves the version started before serving; and a Python plugin dropped into a
// plugin directory, refused with the registry entry that serves it.
#include <sys/stat.h>

#include <chrono>
#include <filesystem>
#include <map>
#include <string>
#include <thread>

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

std::string greeter(const std::string& word) {
  return "import os\nimport plugboard_sdk as pb\n\n"
         "@pb.plugin(name=\"greeter\", version=\"1.0.0\", provides=[\"template.execute\"])\n"
         "def execute(request):\n"
         "    return pb.succeeded({\"greeting\": \"" +
         word +
         ", \" + request.args[\"name\"] + \"!\",\n"
         "                         \"pid\": str(os.getpid())})\n";
}

// Replaces `file` as editors and deploy tools do: a new file renamed over the old one.
void replaceFile(const std::filesystem::path& file, const std::string& text) {
  writeFile(file.string() + ".tmp", text);
  std::filesystem::rename(file.string() + ".tmp", file);
}

Json parameters(HttpClient& client, const std::string& key, const Json& args) {
  auto r = client.request("POST", "/api/v1/template.execute", argoBody(key, args));
  EXPECT_EQ(r.status, 200) << r.body;
  const Json node = Json::parse(r.body, nullptr, false).value("node", Json::object());
  Json out = {{"phase", node.value("phase", "")}, {"message", node.value("message", "")}};
  for (const auto& p : node.value("outputs", Json::object()).value("parameters", Json::array())) {
    out[p["name"].get<std::string>()] = p["value"];
  }
  return out;
}

// Calls greeter for Ada until it answers `greeting` (true), or gives up (false); `answer`
// is the last answer. Each call is new work: the same body again would get the kept
// outcome of the first.
bool greetsWith(HttpClient& client, const std::string& greeting, Json& answer) {
  int poll = 0;
  return eventually([&] {
    answer = parameters(client, "greeter", {{"name", "Ada"}, {"poll", ++poll}});
    return answer["greeting"] == greeting;
  });
}

class ServePythonTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ServePythonTest, AChangedPythonPluginIsStartedAgainAndABrokenOneLeavesTheOldServing) {
  // Not hello: its alias "greeter" would make the key ambiguous (a name and an alias).
  PluginDir dir({"echo"}, {});
  TempDir py;
  const auto file = py.path() / "greeter.py";
  writeFile(file, greeter("Hello"));
  writeFile(py.path() / "registry.toml",
            "[plugins.greeter.\"1.0.0\"]\npython = { path = \"" + file.string() + "\" }\n");
  const std::string config =
      dir.write("plugboard.toml", "registry = \"" + (py.path() / "registry.toml").string() +
                                      "\"\n[deploy]\ngreeter = { deployer = \"python\", mode = \"" +
                                      GetParam() + "\" }\n");
  ServeProcess serve({"--plugins", dir.plugins(), "--config", config, "--log-level", "info"});
  HttpClient client(serve.port());

  const Json first = parameters(client, "greeter", {{"name", "Ada"}});
  ASSERT_EQ(first["phase"], "Succeeded") << first << serve.output();
  EXPECT_EQ(first["greeting"], "Hello, Ada!");
  EXPECT_EQ(parameters(client, "echo", {{"name", "Ada"}})["phase"], "Succeeded");
  // Process mode: a child of its own; embedded: the runtime's process.
  EXPECT_EQ(first["pid"] == std::to_string(serve.pid()), GetParam() == "embedded") << first;

  replaceFile(file, greeter("Howdy"));
  Json answer;
  EXPECT_TRUE(greetsWith(client, "Howdy, Ada!", answer)) << answer << serve.output();
  if (GetParam() == "process") {
    EXPECT_NE(answer["pid"], first["pid"]);  // a new child
  }

  // A change that does not compile: the version started before keeps answering, and the
  // plugin list says why the new one was refused.
  replaceFile(file, "import plugboard_sdk as pb\ndef broken(:\n");
  EXPECT_TRUE(eventually([&] {
    return client.request("GET", "/api/v1/plugins").body.find("SyntaxError") != std::string::npos;
  })) << client.request("GET", "/api/v1/plugins").body << serve.output();
  EXPECT_EQ(parameters(client, "greeter", {{"name", "Bob"}})["greeting"], "Howdy, Bob!");
  // The list (and the status page) names each plugin's deployer, and tells the refusal
  // apart from a refused plugin file.
  const Json listed = Json::parse(client.request("GET", "/api/v1/plugins").body);
  std::map<std::string, std::string> deployers, sources;
  for (const auto& p : listed["plugins"]) {
    if (p.contains("name")) deployers[p["name"]] = p["deployer"];
    if (!p.contains("name")) sources[p["error"]] = p["source"];
  }
  EXPECT_EQ(deployers,
            (std::map<std::string, std::string>{{"echo", "native"}, {"greeter", "python"}}))
      << listed.dump(2);
  ASSERT_EQ(sources.size(), 1u) << listed.dump(2);
  EXPECT_NE(sources.begin()->first.find("SyntaxError"), std::string::npos);
  EXPECT_EQ(sources.begin()->second, "registry");
  EXPECT_EQ(serve.stop(), 0);
}

// The registry file itself changes: read again; broken: the previous one stays in use.
TEST(ServeRegistryTest, AChangedRegistryIsReadAgainAndABrokenOneKeepsThePrevious) {
  PluginDir dir({"echo"}, {});  // not hello, whose alias is "greeter"
  TempDir py;
  writeFile(py.path() / "hello_greeter.py", greeter("Hello"));
  writeFile(py.path() / "howdy_greeter.py", greeter("Howdy"));
  const auto registry = py.path() / "registry.toml";
  const auto pointingAt = [&](const char* module) {
    return "[plugins.greeter.\"1.0.0\"]\npython = { path = \"" + (py.path() / module).string() +
           "\" }\n";
  };
  writeFile(registry, pointingAt("hello_greeter.py"));
  const std::string config = dir.write("plugboard.toml", "registry = \"" + registry.string() + "\"\n");
  ServeProcess serve({"--plugins", dir.plugins(), "--config", config, "--log-level", "info"});
  HttpClient client(serve.port());
  EXPECT_EQ(parameters(client, "greeter", {{"name", "Ada"}})["greeting"], "Hello, Ada!")
      << serve.output();

  replaceFile(registry, pointingAt("howdy_greeter.py"));
  Json answer;
  EXPECT_TRUE(greetsWith(client, "Howdy, Ada!", answer)) << answer << serve.output();

  replaceFile(registry, "[plugins.greeter\nthis is not TOML\n");
  EXPECT_TRUE(eventually([&] {
    return client.request("GET", "/api/v1/plugins").body.find(registry.string()) !=
           std::string::npos;
  })) << client.request("GET", "/api/v1/plugins").body << serve.output();
  EXPECT_EQ(parameters(client, "greeter", {{"name", "Bob"}})["greeting"], "Howdy, Bob!")
      << serve.output();
  EXPECT_EQ(serve.stop(), 0);
}

// A Python plugin dropped into a plugin directory serve watches is not run from there: it
// is listed among the refused files with the reason and the registry entry that serves
// it, and the registry entry it gives does serve it (issue 29). The plugins beside it
// keep serving; a .py that is no plugin (no plugboard_sdk) is not listed.
TEST(ServePythonFileTest, APythonPluginInAPluginDirectoryIsRefusedWithTheFix) {
  PluginDir dir({"echo"}, {});
  ServeProcess serve({"--plugins", dir.plugins()});
  HttpClient client(serve.port());
  const std::filesystem::path file = std::filesystem::path(dir.plugins()) / "greeter.py";
  writeFile(std::filesystem::path(dir.plugins()) / "helper.py", "def helper():\n    return 1\n");
  replaceFile(file, greeter("Hello"));
  const std::string expected =
      file.string() +
      ": refused: a Python plugin (it uses plugboard_sdk) is not loaded from a plugin "
      "directory, which holds native plugins (.so files): serve it through a registry entry, "
      "[plugins.greeter.\"1.0.0\"] python = { path = \"" + file.string() +
      "\" }, in the file given to --registry (or `registry` in plugboard.toml); see "
      "docs/python-plugins.md";
  EXPECT_TRUE(serve.waitForOutput(expected)) << serve.output();

  Json listed;
  EXPECT_TRUE(eventually([&] {
    listed = Json::parse(client.request("GET", "/api/v1/plugins").body, nullptr, false);
    return listed.dump().find("greeter.py") != std::string::npos;
  })) << listed;
  bool refused = false, echo = false;
  for (const auto& item : listed.value("plugins", Json::array())) {
    if (item.value("file", "") == file.string()) {
      refused = true;
      EXPECT_EQ(item["state"], "error");
      EXPECT_EQ(expected.substr(file.string().size() + 11), item.value("error", ""));
    }
    if (item.value("name", "") == "echo") echo = item.value("state", "") == "available";
    EXPECT_EQ(item.value("file", "").find("helper.py"), std::string::npos) << item;
  }
  EXPECT_TRUE(refused) << listed;
  EXPECT_TRUE(echo) << listed;
  // A direct call names the refused file instead of a bare "no plugin".
  const auto direct = client.request("POST", "/api/v1/plugins/greeter/template.execute", "{}");
  EXPECT_EQ(direct.status, 404);
  EXPECT_NE(direct.body.find("no plugin 'greeter'; " + file.string() + ": refused: a Python plugin"),
            std::string::npos)
      << direct.body;
  EXPECT_EQ(serve.stop(), 0);
  EXPECT_EQ(serve.output().find("helper.py"), std::string::npos) << serve.output();

  // `plugins list` lists it the same way (and the directory's other plugins).
  auto list = plugboard({"plugins", "list", "--plugins", dir.plugins()});
  EXPECT_EQ(list.exit_code, 0) << list.err;
  EXPECT_NE(list.out.find(expected + "\n"), std::string::npos) << list.out;
  EXPECT_NE(list.out.find("echo"), std::string::npos) << list.out;
  auto json = plugboard({"plugins", "list", "--plugins", dir.plugins(), "--json"});
  EXPECT_NE(json.out.find("a Python plugin (it uses plugboard_sdk)"), std::string::npos) << json.out;

  // The fix it names works: the registry entry it gives serves the plugin.
  const std::string fix = expected.substr(expected.find("[plugins."));
  const std::string header = fix.substr(0, fix.find("] ") + 1);
  const std::string artifact = fix.substr(header.size() + 1, fix.find(" }") + 2 - header.size() - 1);
  const std::string registry = dir.write("registry.toml", header + "\n" + artifact + "\n");
  auto called = plugboard({"call", "greeter", "--registry", registry, "--args", R"({"name":"Ada"})"});
  EXPECT_EQ(called.exit_code, 0) << called.err << "\n" << readFile(registry);
  EXPECT_NE(called.out.find("greeting = Hello, Ada!"), std::string::npos) << called.out;
}

// Only a regular file is read to see whether it is a Python plugin: a FIFO named *.py
// neither blocks the scan nor is listed, and the plugins beside it are listed.
TEST(ServePythonFileTest, AFifoNamedLikeAPythonFileDoesNotBlockTheScan) {
  PluginDir dir({"echo"}, {});
  const std::string fifo = (std::filesystem::path(dir.plugins()) / "pipe.py").string();
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0644), 0);
  auto list = plugboard({"plugins", "list", "--plugins", dir.plugins()});
  EXPECT_EQ(list.exit_code, 0) << list.err;
  EXPECT_NE(list.out.find("echo"), std::string::npos) << list.out;
  EXPECT_EQ(list.out.find("pipe.py"), std::string::npos) << list.out;
}

INSTANTIATE_TEST_SUITE_P(Modes, ServePythonTest, ::testing::Values("process", "embedded"),
                         [](const auto& info) { return info.param; });

}  // namespace
}  // namespace plugboard::testing
